"""Model files: written atomically, read with ``torch.load(weights_only=True)``.

A model directory holds

    model.pt     {"format", "config": dict, "state_dict": float16 tensors, "metadata": dict}
    spm.model    the SentencePiece vocabulary
    card.json    the model card, machine-readable (card.md beside it for people)

Nothing pickled beyond tensors and plain containers, so loading a file cannot run code.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from core.model import ModelConfig, Transformer

FORMAT = "attention-lab/1"
MODEL_FILE = "model.pt"
TOKENIZER_FILE = "spm.model"
CARD_FILE = "card.json"


class CheckpointError(RuntimeError):
    """A model file is missing, damaged or does not fit the model it claims to be."""


def atomic_save(obj: Any, path: str | Path) -> None:
    """torch.save to a temporary file in the same folder, then rename: a crash mid-write leaves the
    previous file intact, never a truncated one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def safe_load(path: str | Path) -> dict:
    """torch.load(weights_only=True); every failure becomes a CheckpointError naming the file."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such file")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated zip, wrong file type, disallowed pickle ...
        raise CheckpointError(f"{path}: not a readable checkpoint ({error})") from error
    if not isinstance(obj, dict):
        raise CheckpointError(f"{path}: expected a dict, found {type(obj).__name__}")
    return obj


def save_model(model: Transformer, path: str | Path, metadata: dict | None = None) -> None:
    """Store the weights as float16 (half the size); they are computed in float32 after loading."""
    state = {k: v.detach().to("cpu", torch.float16) for k, v in model.state_dict().items()}
    atomic_save(
        {
            "format": FORMAT,
            "config": dataclasses.asdict(model.config),
            "state_dict": state,
            "metadata": metadata or {},
        },
        path,
    )


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[Transformer, dict]:
    """Rebuild the model from a file written by :func:`save_model`; returns (model in eval mode,
    metadata)."""
    obj = safe_load(path)
    if obj.get("format") != FORMAT:
        raise CheckpointError(f"{path}: unknown format {obj.get('format')!r}, expected {FORMAT!r}")
    try:
        config = ModelConfig(**obj["config"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{path}: bad model config ({error})") from error
    model = Transformer(config)
    try:
        state = {k: v.float() for k, v in obj["state_dict"].items()}
        model.load_state_dict(state)
    except (KeyError, RuntimeError, AttributeError) as error:
        raise CheckpointError(f"{path}: weights do not fit the config ({error})") from error
    return model.to(device).eval(), obj.get("metadata", {})


def write_model_dir(
    path: str | Path, model: Transformer, tokenizer_file: str | Path, card: dict | None = None
) -> Path:
    """Write a loadable model directory: model.pt, spm.model and card.json."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    save_model(model, path / MODEL_FILE)
    if Path(tokenizer_file).resolve() != (path / TOKENIZER_FILE).resolve():
        shutil.copyfile(tokenizer_file, path / TOKENIZER_FILE)
    (path / CARD_FILE).write_text(json.dumps(card or {}, indent=2, ensure_ascii=False) + "\n")
    return path
