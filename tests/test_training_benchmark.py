"""benchmarks/training_throughput.py stays runnable: its dry run times the dry-run trainer."""

from benchmarks import training_throughput
from support.tiny_corpus import tiny_corpus


def test_training_benchmark_dry_run_reports_tokens_per_second_and_mfu(capsys, tmp_path):
    data = tmp_path / "data"
    from tests.test_train import write_gz  # the synthetic corpus layout of the train tests

    en, de, fr = (tiny_corpus(300, seed) for seed in (1, 2, 3))
    write_gz(data / "tatoeba/eng-deu.tsv.gz", [f"{e}\t{d}" for e, d in zip(en, de)])
    write_gz(data / "tatoeba/eng-fra.tsv.gz", [f"{e}\t{f}" for e, f in zip(en, fr)])
    training_throughput.main(["--dry-run", "--data-dir", str(data), "--threads", "1"])
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.startswith("this"))
    assert float(row[1].replace(",", "")) > 0  # tokens/s
    assert row[3].endswith("%")  # MFU against the measured peak
    assert "TFLOP/s" in out
