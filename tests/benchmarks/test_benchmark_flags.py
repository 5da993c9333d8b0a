"""A benchmark flag no run can use is a usage error naming it (exit status 2) before any work
(issue 59, finding 6): 0 threads, 0 steps, a --baseline that is no checkout."""

import pytest

from benchmarks import engine_layout, evaluation, latency, training_throughput


def parse(module, argv):
    if module is latency or module is engine_layout:
        return module.main(argv)
    return module.parse_args(argv)


@pytest.mark.parametrize(
    ("module", "argv", "message"),
    [
        (training_throughput, ["--threads", "0"], "argument --threads: must be at least 1, got 0"),
        (training_throughput, ["--steps", "0"], "argument --steps: must be at least 1, got 0"),
        (training_throughput, ["--baseline", "/no/such/checkout"], "not a checkout"),
        (evaluation, ["--threads", "0"], "argument --threads: must be at least 1, got 0"),
        (evaluation, ["--sentences", "-3"], "argument --sentences: must be at least 1, got -3"),
        (evaluation, ["--baseline", "/no/such/checkout"], "not a checkout (no folder core/"),
        (latency, ["--steps", "0"], "argument --steps: must be at least 1, got 0"),
        (latency, ["--threads", "1", "0"], "argument --threads: must be at least 1, got 0"),
        (latency, ["--baseline", "/no/such/checkout"], "not a checkout"),
        (engine_layout, ["--threads", "0"], "argument --threads: must be at least 1, got 0"),
    ],
)
def test_a_flag_no_run_can_use_is_a_usage_error(module, argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse(module, argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_a_checkout_is_accepted_as_baseline(tmp_path):
    (tmp_path / "core").mkdir()
    assert training_throughput.parse_args(["--baseline", str(tmp_path)]).baseline == tmp_path
