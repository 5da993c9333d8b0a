"""Which folder a run may write in: one it made (it holds the trainer's marker), a new or empty one,
or the folder of a run from before the marker (checkpoints/ or metrics.jsonl, no model), which it
adopts. A model directory, a file, or any other folder is refused before a byte is written, so
that --out pointed at the wrong place cannot overwrite a model nor mix two runs' records."""

from __future__ import annotations

import json
from pathlib import Path

from core.files.checkpoint import TEMPORARY_SUFFIX, write_text_atomically
from core.files.model_dir import (
    CHECKPOINT_DIR,
    ENCODED_DIR,
    METRICS_FILE,
    MODEL_FILE,
    RUN_MODEL_DIR,
    SNAPSHOT_DIR,
    TOKENIZER_FILE,
    TRUECASE_FILE,
    UNBLENDED_MODEL_FILE,
)

MARKER_FILE = "attention-lab-run.json"
# What the trainer (and train.blend, train.gpu_run) write in a run folder: a folder holding only
# these was made by a trainer from before the marker.
RUN_NAMES = {
    CHECKPOINT_DIR, ENCODED_DIR, METRICS_FILE, RUN_MODEL_DIR, SNAPSHOT_DIR, TOKENIZER_FILE,
    TOKENIZER_FILE.replace(".model", ".vocab"), TRUECASE_FILE, UNBLENDED_MODEL_FILE,
}  # fmt: skip


class ForeignFolder(Exception):
    """--out names a folder the trainer did not make: a model directory, a file, anything else."""


def marker(path: Path) -> Path:
    return Path(path) / MARKER_FILE


def is_earlier_run(names: set[str]) -> bool:
    """A run folder from before the marker: the trainer's checkpoints, no model beside them (a
    model directory has its model.pt at the top), or nothing but the trainer's files and the
    console logs a person tees there (*.log)."""
    if MODEL_FILE in names:
        return False
    return CHECKPOINT_DIR in names or {n for n in names if not n.endswith(".log")} <= RUN_NAMES


def check_run_folder(path: str | Path) -> None:
    """Refuse an --out the trainer may not write in (:class:`ForeignFolder`, one line naming it
    and why); a folder it may write in is left as it is (:func:`claim_run_folder` marks it)."""
    path = Path(path)
    if not path.exists():
        return
    if not path.is_dir():
        raise ForeignFolder(f"--out {path}: a file, not a folder: give a new or empty folder")
    if marker(path).is_file():
        return
    names = {p.name for p in path.iterdir() if not p.name.endswith(TEMPORARY_SUFFIX)}
    if not names or is_earlier_run(names):
        return
    what = "a model directory" if MODEL_FILE in names else "a folder the trainer did not make"
    raise ForeignFolder(
        f"--out {path}: {what} (it holds {', '.join(sorted(names)[:4])}"
        f"{', ...' if len(names) > 4 else ''}); the trainer writes only in a new or empty folder "
        f"or one of its own runs: give another --out"
    )


def claim_run_folder(path: str | Path) -> None:
    """Make the folder (checked by :func:`check_run_folder`) the run's: the marker, written once."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if not marker(path).is_file():
        text = json.dumps({"made_by": "python -m train", "format": 1}) + "\n"
        write_text_atomically(marker(path), text)
