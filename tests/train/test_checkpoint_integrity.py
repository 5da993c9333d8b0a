"""Damage is noticed (issue 59, finding 5): a checkpoint whose tensors were changed on disk is
skipped on resume with a warning, as a truncated one is; a damaged line of the training log is
reported with the steps it lost."""

import json

import torch

from core.files.checkpoint import atomic_save
from core.files.metrics_log import DamagedLine, damaged_lines, read_metrics
from train.loop.checkpoints import load_checkpoint, newest_readable_checkpoint, state_checksum
from train.loop.run_folder import RunDir

MARK = 1.2345  # the value of the tensor whose bytes are flipped: easy to find in the file


def checkpoint_state(step: int) -> dict:
    torch.manual_seed(step)
    state = {
        "model": {"weight": torch.full((256,), MARK), "bias": torch.randn(8)},
        "optimizer": {"state": {0: {"exp_avg": torch.randn(4)}}, "param_groups": [{"lr": 0.1}]},
        "step": step,
        "rng": {"torch": torch.get_rng_state(), "python": [1, 2, 3], "python_gauss": None},
    }
    return {**state, "checksum": state_checksum(state)}


def flip_bytes_of_the_marked_tensor(path) -> None:
    data = bytearray(path.read_bytes())
    at = bytes(data).index(torch.full((256,), MARK).numpy().tobytes())
    for i in range(at + 100, at + 164):  # 64 bytes inside the tensor
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_checkpoint_with_flipped_bytes_is_skipped_with_a_warning(tmp_path):
    run = RunDir(tmp_path)
    for step in (10, 20):
        atomic_save(checkpoint_state(step), run.checkpoint_file(step))
    flip_bytes_of_the_marked_tensor(run.checkpoint_file(20))
    warnings = []
    path, state = newest_readable_checkpoint(run, warnings.append)
    assert path == run.checkpoint_file(10) and state["step"] == 10
    assert warnings == [
        f"warning: skipping a damaged checkpoint: {run.checkpoint_file(20)}: damaged (its "
        "contents do not match their checksum)"
    ]


def test_a_whole_checkpoint_passes_its_checksum_after_the_round_trip(tmp_path):
    path = tmp_path / "step_0000010.pt"
    atomic_save(checkpoint_state(10), path)
    assert load_checkpoint(path)["step"] == 10


def test_a_checkpoint_from_before_the_checksum_loads_without_a_word(tmp_path):
    run = RunDir(tmp_path)
    old = checkpoint_state(10)
    del old["checksum"]
    atomic_save(old, run.checkpoint_file(10))
    warnings = []
    _, state = newest_readable_checkpoint(run, warnings.append)
    assert state["step"] == 10 and warnings == []


def test_a_damaged_log_line_is_reported_with_the_steps_it_lost(tmp_path):
    log = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": step, "train_loss": 5.0}) for step in range(5, 45, 5)]
    lines[4] = lines[4][:9]  # the record of step 25 cut off mid-line by a failing disk
    log.write_text("\n".join(lines) + "\n")
    assert [r["step"] for r in read_metrics(log)] == [5, 10, 15, 20, 30, 35, 40]
    assert damaged_lines(log) == [DamagedLine(5, 20, 30)]
    assert str(damaged_lines(log)[0]) == (
        "line 5 is damaged: what was logged after step 20 and before step 30 is lost"
    )


def test_a_half_written_last_line_and_a_whole_log(tmp_path):
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 5}\n{"step": 10}\n{"st')
    assert str(damaged_lines(log)[0]) == "line 3 is damaged: what was logged after step 10 is lost"
    log.write_text('{"step": 5}\n\n{"step": 10}\n')
    assert damaged_lines(log) == [] and damaged_lines(tmp_path / "none.jsonl") == []
