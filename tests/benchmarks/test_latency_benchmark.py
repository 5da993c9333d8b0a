"""benchmarks/latency.py stays runnable: its dry run times every case on the tiny model."""

import pytest
import torch

from benchmarks import latency

pytestmark = pytest.mark.slow  # a benchmark


def test_latency_benchmark_dry_run_times_every_case(capsys):
    threads = torch.get_num_threads()
    try:
        latency.main(["--dry-run", "--threads", "1"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("tiny")]
    assert len(rows) == 8  # greedy and beam 4, with and without trace, forced and natural length
    forced = [row for row in rows if "forced" in row]
    assert all(row[-2] == "4" for row in forced)  # the forced cases ran exactly --steps steps
    assert all(float(row[-1]) > 0 for row in rows)


def test_side_by_side_times_every_case_in_both_checkouts(capsys):
    """--baseline runs two workers (here both this checkout) and pairs their times case by case."""
    threads = torch.get_num_threads()
    try:
        latency.main(["--dry-run", "--threads", "1", "--baseline", str(latency.REPO)])
    finally:
        torch.set_num_threads(threads)
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line[:4] == "tiny"]
    assert len(rows) == 8
    for *_, after, before, ratio, middle_half in rows:
        assert float(after) > 0 and float(before) > 0 and float(ratio) > 0
        assert middle_half == "-"  # one pair: no quartiles


def test_middle_half_is_the_range_between_the_quartiles():
    assert latency.middle_half([1.0]) == "-"
    assert latency.middle_half([0.8, 0.9, 1.0, 1.1, 1.2]) == "0.85-1.15"
