"""The run folder (``--out``, runs/<name>): its layout (:class:`RunDir`), and which folder a run may
write in.

A run folder uses the model directory's names (core/files/model_dir.py) for what it shares with the
model directory its export writes::

    spm.model, spm.vocab         the vocabulary, trained once (SentencePiece writes both)
    truecase.en                  the truecaser, learnt once with --truecase or copied from
                                 --init-from's model (optional)
    metrics.jsonl                appended by the trainer; cut back to the last checkpoint on resume
    checkpoints/step_NNNNNNN.pt  the whole training state, to resume and to average at the end
                                 (its format: train/loop/checkpoints.py)
    snapshots/step_NNNNNNN.pt    as a model directory's, with the run's own step count
    encoded/                     the training corpus encoded once per vocabulary (its format:
                                 train/data/encoded_corpus.py)
    model/                       the model directory the export writes
    model_before_blend.pt        model/'s model.pt as the run made it, kept by train.shipping.blend
                                 before it writes a blend there (never shipped)
    attention-lab-run.json       the trainer's marker: this folder is a run's

A run may write in one it made (it holds the marker), a new or empty one, or the folder of a run
from before the marker (checkpoints/ or metrics.jsonl, no model), which it adopts. A model
directory, a file, or any other folder is refused before a byte is written, so that --out pointed
at the wrong place cannot overwrite a model nor mix two runs' records.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from core.files.checkpoint import TEMPORARY_SUFFIX, write_text_atomically
from core.files.metrics_log import append_metrics, truncate_metrics
from core.files.model_dir import (
    METRICS_FILE,
    MODEL_FILE,
    SNAPSHOT_DIR,
    TOKENIZER_FILE,
    TRUECASE_FILE,
    ModelDir,
    TrainingFiles,
    step_file,
    step_files,
)

CHECKPOINT_DIR = "checkpoints"
ENCODED_DIR = "encoded"
RUN_MODEL_DIR = "model"  # the export
UNBLENDED_MODEL_FILE = "model_before_blend.pt"  # see train/shipping/blend.py
MARKER_FILE = "attention-lab-run.json"
# What the trainer (and train.shipping.blend, train.gpu_run) write in a run folder: a folder holding
# only these was made by a trainer from before the marker.
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


@dataclass(frozen=True)
class RunDir(TrainingFiles):
    """A training run's folder (see the module docstring)."""

    @property
    def tokenizer_prefix(self) -> Path:
        """What SentencePiece's training is given: it writes <prefix>.model and <prefix>.vocab."""
        return self.tokenizer_file.with_suffix("")

    @property
    def model_dir(self) -> ModelDir:
        return ModelDir(self.path / RUN_MODEL_DIR)

    @property
    def unblended_model_file(self) -> Path:
        """The run's own model, kept before train.shipping.blend writes a blend into model/."""
        return self.path / UNBLENDED_MODEL_FILE

    @property
    def encoded_dir(self) -> Path:
        return self.path / ENCODED_DIR

    def checkpoint_file(self, step: int) -> Path:
        return self.path / CHECKPOINT_DIR / step_file(step)

    def checkpoint_files(self) -> list[Path]:
        return step_files(self.path / CHECKPOINT_DIR)

    def append_metrics(self, record: dict) -> None:
        """One line of the log; ``record`` holds its ``step``."""
        append_metrics(self.metrics_file, record)

    def truncate_metrics(self, last_step: int) -> None:
        """Forget what a killed run logged after its last checkpoint: it is redone."""
        truncate_metrics(self.metrics_file, last_step)

    def remove_earlier_run(self) -> None:
        """Delete what an earlier run in this folder wrote (its model/ aside): checkpoints,
        snapshots, log, vocabulary (its truecaser with it) and encoded corpus."""
        for folder in (self.path / CHECKPOINT_DIR, self.snapshot_dir, self.encoded_dir):
            shutil.rmtree(folder, ignore_errors=True)
        for file in (
            self.metrics_file,
            self.tokenizer_file,
            self.truecase_file,
            self.tokenizer_prefix.with_suffix(".vocab"),
        ):
            file.unlink(missing_ok=True)
