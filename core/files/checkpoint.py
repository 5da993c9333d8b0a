"""Model files: written atomically, read with ``torch.load(weights_only=True)``.

A model file (a model directory's model.pt and snapshots, see core/files/model_dir.py) is

    {"format": "attention-lab/1", "config": dict, "state_dict": float16 tensors, "metadata": dict}

Nothing pickled beyond tensors and plain containers, so loading a file cannot run code.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer

FORMAT = "attention-lab/1"
TEMPORARY_SUFFIX = ".tmp"  # atomic_save writes .<name>.<random>.tmp, then renames it

# Ranges of a model file's config, checked before a single weight is allocated: generous for any
# model this lab trains (the full preset: vocabulary 8000, d_model 256, 6 + 6 layers), far from
# what would exhaust a machine's memory.
CONFIG_RANGES = {
    "vocab_size": (1, 1_000_000),
    "d_model": (2, 16_384),
    "n_heads": (1, 1_024),
    "n_encoder_layers": (1, 128),
    "n_decoder_layers": (1, 128),
    "d_ff": (1, 65_536),
    "max_len": (1, 65_536),
}
# Numbers a config may ask for in total (weights and the positional table): 4 GB as float32. Each
# field in range can still multiply up to hundreds of GB, so the total is bounded too.
MAX_NUMBERS = 1_000_000_000
# A config value must be exactly one of these Python types (bool is not an int here).
FIELD_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


class CheckpointError(RuntimeError):
    """A model file is missing, damaged or does not fit the model it claims to be."""


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None]) -> None:
    """``write`` the file's bytes to a temporary file in the same folder, flush it to disk, then
    rename it over ``path``: a crash mid-write leaves the previous file intact, never a truncated
    one. Readable by all (0644) like any other file: the app may run as another user."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """``text`` as UTF-8, through :func:`atomic_write`."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def atomic_save(obj: Any, path: str | Path) -> None:
    """torch.save through :func:`atomic_write`."""
    atomic_write(path, lambda f: torch.save(obj, f))


def interrupted_writes(folder: str | Path) -> list[Path]:
    """The temporary files that :func:`atomic_save` calls killed mid-write left in ``folder`` and
    below; only safe to delete while nothing is writing there."""
    return sorted(Path(folder).rglob(f".*.*{TEMPORARY_SUFFIX}"))


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
    model = Transformer(checked_model_config(path, obj.get("config")))
    try:
        state = {k: v.float() for k, v in obj["state_dict"].items()}
        model.load_state_dict(state)
    except (KeyError, RuntimeError, AttributeError) as error:
        raise CheckpointError(f"{path}: weights do not fit the config ({error})") from error
    return model.to(device).eval(), obj.get("metadata", {})


def checked_model_config(path: str | Path, values: Any) -> ModelConfig:
    """The ModelConfig stored in ``path``, every value checked for type and range first, so that a
    damaged or hostile file is refused with a CheckpointError instead of allocating memory."""
    if not isinstance(values, dict):
        raise CheckpointError(f"{path}: no model config (found {type(values).__name__})")
    types = {f.name: f.type for f in dataclasses.fields(ModelConfig)}
    for name, value in values.items():
        if name not in types:
            raise CheckpointError(f"{path}: unknown model config field {name!r}")
        if type(value) not in FIELD_TYPES.get(types[name], (type(value),)):
            raise CheckpointError(f"{path}: model config {name}={value!r} is not {types[name]}")
    values = {**dataclasses.asdict(ModelConfig()), **values}
    ids = ("pad_id", "bos_id", "eos_id")  # token ids: within the vocabulary
    ranges = {**CONFIG_RANGES, **dict.fromkeys(ids, (0, values["vocab_size"] - 1))}
    for name, (low, high) in ranges.items():
        if not low <= values[name] <= high:
            raise CheckpointError(
                f"{path}: model config {name}={values[name]} is outside [{low}, {high}]"
            )
    if not 0 <= values["dropout"] < 1:
        raise CheckpointError(f"{path}: model config dropout={values['dropout']} is outside [0, 1)")
    try:
        config = ModelConfig(**values)
    except ValueError as error:  # the fields' relations: d_model even, divisible by n_heads
        raise CheckpointError(f"{path}: bad model config ({error})") from error
    if allocated_numbers(config) > MAX_NUMBERS:
        raise CheckpointError(
            f"{path}: the model config asks for {allocated_numbers(config):,} numbers, "
            f"more than the {MAX_NUMBERS:,} this lab loads"
        )
    return config


def allocated_numbers(config: ModelConfig) -> int:
    """How many numbers building a Transformer of this config allocates: its weights (embedding
    shared with the output layer) and the positional-encoding table. Counted by formula, not on
    the modules built on the meta device: that build initialises the embedding through
    torch._refs, which took 0.8 s on a first load; tests/core/test_model_files.py holds the
    formula to a built model's count for post-LN and pre-LN."""
    d, d_ff = config.d_model, config.d_ff
    attention = 4 * (d * d + d)  # W^Q, W^K, W^V, W^O with biases
    feed_forward = 2 * d * d_ff + d_ff + d
    norm = 2 * d
    encoder_layer = attention + feed_forward + 2 * norm
    decoder_layer = 2 * attention + feed_forward + 3 * norm
    final_norms = 2 * norm if config.norm_first else 0
    output_bias = config.vocab_size if config.output_bias else 0
    return (
        (config.vocab_size + config.max_len) * d
        + config.n_encoder_layers * encoder_layer
        + config.n_decoder_layers * decoder_layer
        + final_norms
        + output_bias
    )
