"""metrics.jsonl: one owner, tolerant of the truncated last line a killed run leaves."""

import json

from core.files.metrics_log import append_metrics, read_metrics, truncate_metrics


def test_a_truncated_last_line_is_skipped_and_the_log_stays_appendable(tmp_path):
    log = tmp_path / "metrics.jsonl"
    append_metrics(log, {"step": 1, "train_loss": 5.0})
    append_metrics(log, {"step": 2, "train_loss": 4.0})
    with open(log, "a") as f:
        f.write('{"step": 3, "train_lo')  # killed mid-write
    assert [record["step"] for record in read_metrics(log)] == [1, 2]

    truncate_metrics(log, last_step=2)  # what a resumed run does first
    append_metrics(log, {"step": 3, "train_loss": 3.0})
    assert [json.loads(line)["step"] for line in log.read_text().splitlines()] == [1, 2, 3]


def test_records_without_a_step_or_not_objects_are_skipped(tmp_path):
    log = tmp_path / "metrics.jsonl"
    log.write_text('[1, 2]\n{"loss": 1}\n{"step": 4, "val_bleu": 20.5}\n\xff\n')
    assert read_metrics(log) == [{"step": 4, "val_bleu": 20.5}]
    assert read_metrics(tmp_path / "missing.jsonl") == []


def test_truncating_keeps_records_up_to_the_checkpoint_step(tmp_path):
    log = tmp_path / "metrics.jsonl"
    for step in (10, 20, 30):
        append_metrics(log, {"step": step})
    truncate_metrics(log, last_step=20)
    assert [record["step"] for record in read_metrics(log)] == [10, 20]
