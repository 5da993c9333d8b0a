"""Checkpoints: all it takes to continue a run exactly, read tolerantly, and the last ones
averaged into the final model (section 6.1)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path

import torch

from core.files.checkpoint import CheckpointError, safe_load
from core.files.model_dir import RunDir
from core.model.config import ModelConfig
from train.config import TrainConfig


class ResumeConflict(Exception):
    """The run folder holds a run that these flags cannot continue."""


def random_state(device: torch.device) -> dict:
    """The random generators a step draws from: Python's, the CPU's and, on a GPU, the GPU's
    (dropout there draws from it)."""
    state = {
        "torch": torch.get_rng_state(),
        "python": list(random.getstate()[1]),
        "python_gauss": random.getstate()[2],
    }
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def restore_random_state(state: dict, device: torch.device) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate((3, tuple(state["python"]), state["python_gauss"]))
    if device.type == "cuda" and "cuda" in state:  # a checkpoint written on a CPU has none
        torch.cuda.set_rng_state(state["cuda"], device)


def newest_readable_checkpoint(
    run_dir: RunDir, log: Callable[[str], None]
) -> tuple[Path, dict] | None:
    """(path, contents) of the newest checkpoint that loads; a damaged one is skipped with a
    warning. None when there is no checkpoint; an error when none of them loads."""
    found = run_dir.checkpoint_files()
    for path in reversed(found):
        try:
            return path, safe_load(path)
        except CheckpointError as error:
            log(f"warning: skipping a damaged checkpoint: {error}")
    if found:
        raise CheckpointError(
            f"no readable checkpoint in {found[0].parent}: start over with --fresh"
        )
    return None


def refuse_other_architecture(
    path: Path, state: dict, model_config: ModelConfig, config: TrainConfig
) -> None:
    """Resuming with other architecture flags cannot work: say so, instead of a size mismatch
    deep in load_state_dict. Dropout may change; it is not part of the weights."""
    saved = {**state["model_config"], "dropout": model_config.dropout}
    wanted = dataclasses.asdict(model_config)
    if not config.init_from:  # a changed flag would silently keep the old vocabulary
        saved["--vocab-size"] = state["train_config"]["vocab_size"]
        wanted["--vocab-size"] = config.vocab_size
    changed = [f"{k} {saved[k]} -> {v}" for k, v in wanted.items() if saved.get(k) != v]
    if changed:
        raise ResumeConflict(
            f"{path} was trained with another architecture ({', '.join(changed)}): "
            f"start over with --fresh, or give another --out"
        )


def average_checkpoints(paths: list[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the models in the last checkpoints (section 6.1: the last 5 or 20)."""
    total = None
    for path in paths:
        state = safe_load(path)["model"]
        if total is None:
            total = {k: v.double().clone() for k, v in state.items()}
        else:
            for k, v in state.items():
                total[k] += v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}
