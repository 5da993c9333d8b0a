"""The history a model directory ships with: its training log (metrics.jsonl) and its snapshots
(snapshots/step_NNNNNNN.pt), which the app's training-dynamics view plays back.

A run started from scratch ships its own. A run continued from a trained model (--init-from)
counts its steps and seconds from zero, but the model it ships has the earlier model's past: so
its history is the earlier model's log and snapshots, then the earlier model itself as the
snapshot at the step this run began from, then this run's own log and snapshots with steps and
training seconds counted on from there. One step axis from the first update to the last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from core.files.checkpoint import load_model
from core.files.model_dir import ModelDir, copy_atomically, file_step
from train.loop.run_folder import RunDir

MAX_SNAPSHOTS = 5
# pretrained/ stays under 100 MB: model.pt and the snapshots (float16, each as large as model.pt)
# share 98 MB of it, the vocabulary, card, log and head survey take the rest. A float16 model of the
# shipped shape is 15.6 MB with 8,000 pieces (five snapshots fit) and 18.7 MB with 16,000 (four).
MODEL_FILES_BUDGET = 98_000_000


@dataclass(frozen=True)
class Origin:
    """Where a continued run began: the earlier model directory, its steps and training seconds."""

    model_dir: ModelDir
    steps: int
    seconds: float
    # the record of train/loop/vocabulary_transfer.py, if that moved the model onto its vocabulary
    vocabulary_transfer: dict | None = None


def ship_history(run_dir: RunDir, model_dir: ModelDir, origin: Origin | None) -> None:
    """Write ``model_dir``'s training log and snapshots for the run in ``run_dir``. Without
    snapshots there is no snapshots/ folder: the app shows its one-line note."""
    model_dir.remove_snapshots()  # an earlier export's may differ
    records = run_dir.read_metrics()
    if origin is not None:
        records = origin.model_dir.read_metrics() + [shifted(record, origin) for record in records]
        for earlier in origin.model_dir.snapshot_files():
            copy_atomically(earlier, model_dir.snapshot_file(file_step(earlier)))
        start = origin.steps, origin.seconds
        copy_snapshot(origin.model_dir.model_file, model_dir, *start)
    model_dir.write_metrics(records)
    for own in run_dir.snapshot_files():
        steps, seconds = (0, 0.0) if origin is None else (origin.steps, origin.seconds)
        _, metadata = load_model(own)
        copy_snapshot(
            own, model_dir, file_step(own) + steps, metadata.get("train_seconds", 0.0) + seconds
        )
    steps = snapshot_steps(model_dir)
    model_dir.remove_snapshots(set(steps) - set(log_spaced(steps, snapshots_that_fit(model_dir))))


def snapshots_that_fit(model_dir: ModelDir) -> int:
    """How many snapshots fit beside model.pt in MODEL_FILES_BUDGET, at most MAX_SNAPSHOTS."""
    model_bytes = model_dir.model_file.stat().st_size
    return max(1, min(MAX_SNAPSHOTS, MODEL_FILES_BUDGET // model_bytes - 1))


def snapshot_steps(model_dir: ModelDir) -> list[int]:
    return [file_step(path) for path in model_dir.snapshot_files()]


def log_spaced(steps: list[int], keep: int = MAX_SNAPSHOTS) -> list[int]:
    """At most ``keep`` of the sorted ``steps``, as evenly spread on a log axis as dropping allows:
    while there are too many, the step nearest (in log distance) to its earlier neighbour goes;
    the first step always stays."""
    kept = list(steps)
    while len(kept) > keep:
        gaps = [math.log(kept[i] / kept[i - 1]) for i in range(1, len(kept))]
        del kept[1 + gaps.index(min(gaps))]
    return kept


def shifted(record: dict, origin: Origin) -> dict:
    """A continued run's log record on the whole history's axis."""
    record = {**record, "step": record["step"] + origin.steps}
    if "elapsed_s" in record:
        record["elapsed_s"] = round(record["elapsed_s"] + origin.seconds, 1)
    return record


def copy_snapshot(source: Path, model_dir: ModelDir, step: int, seconds: float) -> None:
    """The model file ``source`` as ``model_dir``'s snapshot of ``step``."""
    model, _ = load_model(source)
    model_dir.save_snapshot(model, step, seconds)
