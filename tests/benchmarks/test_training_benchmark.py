"""benchmarks/training_throughput.py stays runnable: its dry run times the dry-run trainer."""

import gzip
import re

import pytest

from benchmarks import training_throughput
from support.tiny_corpus import tiny_corpus

pytestmark = pytest.mark.slow  # a benchmark


def test_training_benchmark_dry_run_reports_tokens_per_s_and_mfu_by_a_baseline(capsys, tmp_path):
    tatoeba = tmp_path / "data" / "tatoeba"
    tatoeba.mkdir(parents=True)
    en, de, fr = (tiny_corpus(300, seed) for seed in (1, 2, 3))
    for name, targets in (("eng-deu", de), ("eng-fra", fr)):
        with gzip.open(tatoeba / f"{name}.tsv.gz", "wt", encoding="utf-8") as tsv:
            tsv.writelines(f"{english}\t{target}\n" for english, target in zip(en, targets))
    flags = ["--dry-run", "--data-dir", str(tatoeba.parent), "--threads", "1"]
    training_throughput.main([*flags, "--baseline", str(training_throughput.REPO)])
    out = capsys.readouterr().out
    for dtype in ("bf16", "fp32"):
        row = next(line.split() for line in out.splitlines() if line.startswith(f"this {dtype}"))
        assert float(row[2].replace(",", "")) > 0  # tokens/s
        assert row[4].endswith("%")  # MFU against the measured peak of that type
        assert f"{dtype} matmul peak, measured" in out
    assert re.search(r"--dtype auto picks (bf16|fp32) on this machine", out)
    # the baseline trains in its own default type: no peak to divide by (it printed 12422%)
    baseline = next(line.split() for line in out.splitlines() if line.startswith("baseline"))
    assert float(baseline[1].replace(",", "")) > 0 and baseline[3] == "-"
