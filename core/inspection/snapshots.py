"""Watching attention being learned: the model at earlier steps of its training.

A model directory keeps float16 copies of the model at log-spaced training steps beside the
final model, and its training log on the same step axis (core/files/model_dir.py lists them; the
trainer writes them, see train/loop/lineage.py). Here each snapshot translates the user's sentence,
and, so that every step's map has the same rows and columns, also reads the final model's
translation by teacher forcing (Translator.trace).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch

from core.files.model_dir import ModelDir, Snapshot
from core.inspection.head_statistics import confidence, diagonality, entropy
from core.request import Request
from core.translator import Translation, Translator


@dataclass(frozen=True)
class VocabularyChange:
    """The model was moved onto a new vocabulary during its training
    (train/loop/vocabulary_transfer.py): its snapshots up to ``at_step`` are the earlier model's,
    moved onto this vocabulary (their layers as trained, each new piece's embedding built from the
    old pieces that spell it)."""

    at_step: int
    old_vocab_size: int
    new_vocab_size: int


def vocabulary_change(model_dir: str | Path) -> VocabularyChange | None:
    """The card's record of a vocabulary change, or None when the model kept its vocabulary (or
    a hand-edited card lost part of the record: the page then says nothing of it)."""
    record = ModelDir(model_dir).read_card().get("training", {}).get("vocabulary_transfer")
    names = [field.name for field in fields(VocabularyChange)]
    if not isinstance(record, dict) or not all(isinstance(record.get(n), int) for n in names):
        return None
    return VocabularyChange(**{name: record[name] for name in names})


def load_snapshot(
    model_dir: str | Path, snapshot: Snapshot, device: str | torch.device = "cpu"
) -> Translator:
    """The snapshot as a Translator on ``device``, with the directory's vocabulary and card."""
    return Translator.load(model_dir, device, weights=snapshot.weights)


@dataclass(frozen=True)
class TrainingRecord:
    """What the training log says about one step: the training loss of the last log line at or
    before it, and the validation there if the run validated at that very step."""

    step: int
    train_loss: float | None
    validation: dict | None  # val_loss, val_bleu_de, val_chrf_de, ... as the trainer logged them


def training_record(model_dir: str | Path, step: int) -> TrainingRecord:
    records = ModelDir(model_dir).read_metrics()
    losses = [r for r in records if "train_loss" in r and r["step"] <= step]
    validations = [r for r in records if "val_loss" in r and r["step"] == step]
    return TrainingRecord(
        step,
        losses[-1]["train_loss"] if losses else None,
        validations[-1] if validations else None,
    )


@dataclass
class SnapshotView:
    """One snapshot on the user's sentence: its own translation, and its attention (and the
    log-probability it gives) on the final model's translation."""

    step: int
    translation: Translation  # the snapshot's own beam search, no trace
    forced: Translation  # the final model's output read by the snapshot, traced


def view_snapshot(
    translator: Translator, step: int, request: Request, reference: Translation
) -> SnapshotView:
    """``translator``, the snapshot at ``step``, on ``request``, of which ``reference`` is the
    final model's traced translation."""
    own = translator.translate(**request.arguments)
    return SnapshotView(step, own, translator.trace(reference))


@dataclass(frozen=True)
class HeadDynamics:
    """How each head of one kind changes over the snapshots, each array (steps, layers, heads)."""

    steps: list[int]
    entropy: np.ndarray  # Clark et al. 2019, see core.inspection.head_statistics.entropy
    confidence: np.ndarray  # Voita et al. 2019, see core.inspection.head_statistics.confidence
    diagonality: np.ndarray | None  # cross-attention only: alignment-like weight


def head_dynamics(views: list[SnapshotView], kind: str) -> HeadDynamics:
    """The statistics of every head of ``kind`` (encoder, decoder, cross) at every snapshot, on
    the final model's translation (the same rows and columns at every step)."""
    maps = [getattr(view.forced.attention, kind) for view in views]
    return HeadDynamics(
        [view.step for view in views],
        np.stack([entropy(m.weights) for m in maps]),
        np.stack([confidence(m.weights, m.key_labels) for m in maps]),
        np.stack([diagonality(m.weights) for m in maps]) if kind == "cross" else None,
    )
