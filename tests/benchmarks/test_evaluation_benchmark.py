"""benchmarks/evaluation.py stays runnable: its dry run times evaluation on a tiny model."""

import pytest

from benchmarks import evaluation

pytestmark = pytest.mark.slow  # a benchmark: workers in subprocesses


def test_evaluation_benchmark_dry_run_compares_two_checkouts(capsys):
    evaluation.main(["--dry-run", "--baseline", str(evaluation.REPO)])  # this one, twice
    out = capsys.readouterr().out
    rows = {row[0]: row for row in map(str.split, out.splitlines()) if len(row) == 3}
    assert float(rows["this"][1]) > 0 and float(rows["baseline"][1]) > 0  # sentences/s
    assert rows["this"][2] == rows["baseline"][2]  # BLEU
    assert "BLEU identical: yes" in out and "translations identical: yes" in out
    assert f"{evaluation.DRY_RUN_SENTENCES} made-up sentences" in out
