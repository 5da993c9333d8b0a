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
import shutil
from dataclasses import dataclass
from pathlib import Path

from core.checkpoint import MODEL_FILE, load_model, save_model
from core.metrics_log import read_metrics, write_metrics
from core.snapshots import METRICS_FILE, SNAPSHOT_DIR, snapshot_name, snapshot_step

# A float16 snapshot of the shipped shape is 15.6 MB: five of them and the final model keep
# pretrained/ under its 100 MB budget.
MAX_SNAPSHOTS = 5


@dataclass(frozen=True)
class Origin:
    """Where a continued run began: the earlier model directory, its steps and training seconds."""

    model_dir: Path
    steps: int
    seconds: float


def ship_history(run_dir: Path, model_dir: Path, origin: Origin | None) -> None:
    """Write ``model_dir``'s metrics.jsonl and snapshots/ for the run in ``run_dir``."""
    shutil.rmtree(model_dir / SNAPSHOT_DIR, ignore_errors=True)  # an earlier export's may differ
    (model_dir / SNAPSHOT_DIR).mkdir(parents=True)
    records = read_metrics(run_dir / METRICS_FILE)
    if origin is not None:
        records = read_metrics(origin.model_dir / METRICS_FILE) + [
            shifted(record, origin) for record in records
        ]
        for earlier in sorted((origin.model_dir / SNAPSHOT_DIR).glob("step_*.pt")):
            shutil.copyfile(earlier, model_dir / SNAPSHOT_DIR / earlier.name)
        start = origin.steps, origin.seconds
        copy_snapshot(origin.model_dir / MODEL_FILE, model_dir / SNAPSHOT_DIR, *start)
    write_metrics(model_dir / METRICS_FILE, records)
    for own in sorted((run_dir / SNAPSHOT_DIR).glob("step_*.pt")):
        steps, seconds = (0, 0.0) if origin is None else (origin.steps, origin.seconds)
        _, metadata = load_model(own)
        copy_snapshot(
            own,
            model_dir / SNAPSHOT_DIR,
            snapshot_step(own) + steps,
            metadata.get("train_seconds", 0.0) + seconds,
        )
    for redundant in set(snapshot_steps(model_dir)) - set(log_spaced(snapshot_steps(model_dir))):
        (model_dir / SNAPSHOT_DIR / snapshot_name(redundant)).unlink()
    if not snapshot_steps(model_dir):
        (model_dir / SNAPSHOT_DIR).rmdir()  # no snapshots: the app shows its one-line note


def snapshot_steps(model_dir: Path) -> list[int]:
    return sorted(snapshot_step(path) for path in (model_dir / SNAPSHOT_DIR).glob("step_*.pt"))


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


def copy_snapshot(source: Path, folder: Path, step: int, seconds: float) -> None:
    """The model file ``source`` as the snapshot of ``step`` (float16, as save_model stores it)."""
    model, _ = load_model(source)
    save_model(model, folder / snapshot_name(step), {"step": step, "train_seconds": seconds})
