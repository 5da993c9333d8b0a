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
