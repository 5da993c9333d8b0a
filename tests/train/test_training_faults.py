"""Training survives what a kill, a failing disk or a wrong flag leaves, and says what it did."""

import gzip
import json
import shutil

import pytest

from core.files.checkpoint import safe_load
from core.files.metrics_log import read_metrics
from core.text.tokenizer import Tokenizer
from tests.training import run_train, write_tiny_data
from train.data.corpora import CorpusError, read_lines

# 6 steps, a checkpoint and a validation every 3; the dry run keeps a snapshot at step 5
FLAGS = ("--max-steps", "6", "--checkpoint-every", "3", "--eval-every", "3")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def finished_run(data_dir, tmp_path_factory):
    """A dry run trained to its end; tests copy it and damage the copy."""
    out = tmp_path_factory.mktemp("finished") / "run"
    output = finish(run_train(data_dir, out, *FLAGS))
    assert "Traceback" not in output
    return out


@pytest.fixture
def run_copy(finished_run, tmp_path):
    return shutil.copytree(finished_run, tmp_path / "run")


def finish(process, returncode=0) -> str:
    try:
        output, _ = process.communicate(timeout=600)
    finally:
        process.kill()  # after a timeout; a no-op once it has ended
    assert process.returncode == returncode, output
    return output


@pytest.mark.slow
def test_a_damaged_newest_checkpoint_is_skipped_and_interrupted_writes_removed(data_dir, run_copy):
    newest = run_copy / "checkpoints" / "step_0000006.pt"
    newest.write_bytes(newest.read_bytes()[:1000])  # as a failing disk might leave it
    stale = run_copy / "checkpoints" / ".step_0000009.pt.k3jd_x9a.tmp"  # a kill mid-write
    stale.write_bytes(b"half a checkpoint")
    output = finish(run_train(data_dir, run_copy, *FLAGS))
    assert f"skipping a damaged checkpoint: {newest}: not a readable checkpoint" in output
    assert f"resumed from {run_copy / 'checkpoints' / 'step_0000003.pt'}" in output
    assert f"removed {stale}" in output and not stale.exists()
    assert safe_load(newest)["step"] == 6  # trained again and written whole


@pytest.mark.slow
def test_no_readable_checkpoint_is_a_clear_error(data_dir, run_copy):
    for path in (run_copy / "checkpoints").glob("*.pt"):
        path.write_bytes(b"")
    output = finish(run_train(data_dir, run_copy, *FLAGS), returncode=1)
    assert f"error: no readable checkpoint in {run_copy / 'checkpoints'}" in output
    assert "--fresh" in output and "Traceback" not in output


@pytest.mark.slow
def test_resuming_with_another_architecture_says_to_start_fresh(data_dir, run_copy):
    output = finish(run_train(data_dir, run_copy, *FLAGS, "--d-model", "64"), returncode=1)
    assert "step_0000006.pt was trained with another architecture (d_model 32 -> 64)" in output
    assert "--fresh" in output and "--out" in output and "Traceback" not in output
    output = finish(run_train(data_dir, run_copy, *FLAGS, "--vocab-size", "400"), returncode=1)
    assert "(--vocab-size 500 -> 400)" in output


@pytest.mark.slow
def test_resuming_with_another_recipe_names_each_changed_flag(data_dir, run_copy):
    """A flag left out falls back to its default: the run would go on as another one."""
    output = finish(
        run_train(data_dir, run_copy, *FLAGS, "--copy-fraction", "0.5", "--seed", "7"),
        returncode=1,
    )
    assert "step_0000006.pt was trained with another recipe (" in output
    assert "--seed 1 -> 7" in output and "--copy-fraction 0.0 -> 0.5" in output
    assert "--fresh" in output and "Traceback" not in output
    # the budget may change: the same recipe with more steps goes on
    output = finish(run_train(data_dir, run_copy, "--max-steps", "7", *FLAGS[2:]))
    assert "resumed from" in output and "another recipe" not in output


@pytest.mark.slow
def test_fresh_starts_over_with_a_new_vocabulary(data_dir, run_copy):
    (run_copy / "spm.model").write_bytes(b"truncated")
    flags = ("--max-steps", "2", "--vocab-size", "400", "--fresh")
    output = finish(run_train(data_dir, run_copy, *flags))
    assert "resumed" not in output
    assert len(Tokenizer(run_copy / "spm.model")) == 400
    assert [p.name for p in (run_copy / "checkpoints").glob("*.pt")] == ["step_0000002.pt"]
    assert max(record["step"] for record in read_metrics(run_copy / "metrics.jsonl")) == 2
    # none of the first run's snapshots (step 5) may remain
    assert not (run_copy / "snapshots").exists()
    assert not (run_copy / "model" / "snapshots").exists()


@pytest.mark.slow
def test_the_validation_after_the_last_checkpoint_is_recorded_after_a_kill(data_dir, run_copy):
    metrics = run_copy / "metrics.jsonl"
    records = read_metrics(metrics)
    validated = [r for r in records if r["step"] == 6 and "val_loss" in r]
    assert len(validated) == 2  # the trained model's, then the exported average's
    # what a kill right after writing the final checkpoint leaves: no validation at step 6
    killed = [r for r in records if not (r["step"] == 6 and "val_loss" in r)]
    metrics.write_text("".join(json.dumps(r) + "\n" for r in killed))
    shutil.rmtree(run_copy / "model")
    output = finish(run_train(data_dir, run_copy, *FLAGS))
    assert "kept from its checkpoint" in output  # --dtype auto: the type it was trained in
    again = [r for r in read_metrics(metrics) if r["step"] == 6 and "val_loss" in r]
    assert again[0]["val_loss"] == validated[0]["val_loss"]
    assert len(again) == 2 and (run_copy / "model" / "model.pt").is_file()


def test_an_invalid_utf8_byte_names_the_file_and_line(tmp_path):
    corpus = tmp_path / "eng-deu.tsv.gz"
    with gzip.open(corpus, "wb") as f:
        f.write("Hi.\tHallo!\nBye.\tTsch\u00fcss!\n".encode() + b"Oh.\tOh\xff!\n")
    with pytest.raises(CorpusError, match=rf"^{corpus}, line 3: not valid UTF-8 \(byte 0xff"):
        read_lines(corpus)


def test_a_gz_file_that_is_not_gzip_names_the_file(tmp_path):
    corpus = tmp_path / "eng-deu.tsv.gz"
    corpus.write_text("Hi.\tHallo!\n")
    with pytest.raises(CorpusError, match=rf"^{corpus}, line 1: cannot be read \(Not a gzipped"):
        read_lines(corpus)


def test_lines_end_with_newline_or_crlf(tmp_path):
    corpus = tmp_path / "lines.txt"
    corpus.write_bytes(b"one\r\ntwo\nthree")
    assert read_lines(corpus) == ["one", "two", "three"]


@pytest.mark.slow
def test_a_bad_corpus_stops_training_with_a_message_not_a_traceback(data_dir, tmp_path):
    bad_data = shutil.copytree(data_dir, tmp_path / "data")
    (bad_data / "tatoeba/eng-fra.tsv.gz").write_bytes(b"plain text, not gzip")
    output = finish(run_train(bad_data, tmp_path / "run"), returncode=1)
    assert f"error: {bad_data / 'tatoeba/eng-fra.tsv.gz'}, line 1: cannot be read" in output
    assert "Traceback" not in output
