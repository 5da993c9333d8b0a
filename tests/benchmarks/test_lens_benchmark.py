"""benchmarks/lens_timings.py stays runnable: it times the lens on the tiny model, here and on a
baseline checkout (this one again)."""

import pytest

from benchmarks import lens_timings

pytestmark = pytest.mark.slow  # a benchmark: workers in subprocesses


def test_lens_benchmark_times_both_checkouts(tiny_model_dir, capsys):
    lens_timings.main(["--model", str(tiny_model_dir), "--repeat", "1", "--baseline", "."])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " output pieces " in line]
    assert [row.split(":")[0] for row in rows] == ["this", "baseline"]
    assert all("lens " in row and "budget 300 ms" in row for row in rows)
