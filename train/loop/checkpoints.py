"""Checkpoints: all it takes to continue a run exactly, read tolerantly, and the last ones
averaged into the final model (section 6.1)."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from pathlib import Path

import torch

from core.files.checkpoint import CheckpointError, atomic_save, safe_load, save_model
from core.files.metrics_log import damaged_lines
from core.files.model_dir import file_step
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from train.loop.config import TrainConfig
from train.loop.run_folder import RunDir
from train.loop.state import Learner, TrainState


class ResumeConflict(Exception):
    """The run folder holds a run that these flags cannot continue."""


def save_checkpoint(
    run_dir: RunDir,
    learner: Learner,
    state: TrainState,
    dtype: str,
    config: TrainConfig,
    device: torch.device,
) -> None:
    """All it takes to continue exactly: weights, optimizer, schedule, data position, RNG; the
    oldest checkpoints beyond --keep-checkpoints go. The main process's to call."""
    contents = {
        "model": learner.model.state_dict(),
        "optimizer": learner.optimizer.state_dict(),
        "scheduler": learner.scheduler.state_dict(),
        "step": state.step,
        "epoch": state.epoch,
        "batch_in_epoch": state.batch_in_epoch,
        "train_seconds": state.train_seconds,
        "dtype": dtype,
        "rng": random_state(device),
        "model_config": dataclasses.asdict(learner.model.config),
        "train_config": dataclasses.asdict(config),
    }
    contents["checksum"] = state_checksum(contents)
    atomic_save(contents, run_dir.checkpoint_file(state.step))
    for old in run_dir.checkpoint_files()[: -config.keep_checkpoints]:
        old.unlink()


@dataclasses.dataclass
class Resumed:
    """Where the newest readable checkpoint left the run, and its compute type (None for
    checkpoints before --dtype auto)."""

    state: TrainState
    dtype: str | None


def resume(
    run_dir: RunDir,
    learner: Learner,
    config: TrainConfig,
    device: torch.device,
    main: bool,
    log: Callable[[str], None],
) -> Resumed | None:
    """Continue from the newest readable checkpoint, if there is one: the learner's weights,
    optimizer and schedule, and the random generators, restored in place; where the run was.
    The main process (``main``) also drops what a killed run logged after that checkpoint."""
    found = newest_readable_checkpoint(run_dir, log)
    if found is None:
        return None
    path, contents = found
    refuse_other_architecture(path, contents, learner.model.config, config)
    refuse_other_recipe(path, contents, config)
    learner.model.load_state_dict(contents["model"])
    learner.optimizer.load_state_dict(contents["optimizer"])
    learner.scheduler.load_state_dict(contents["scheduler"])
    state = TrainState(
        contents["step"], contents["epoch"], contents["batch_in_epoch"], contents["train_seconds"]
    )
    restore_random_state(contents["rng"], device)
    if main:  # what a killed run logged after its last checkpoint is redone
        for damaged in damaged_lines(run_dir.metrics_file):
            log(f"warning: {run_dir.metrics_file}, {damaged}")
        run_dir.truncate_metrics(state.step)
    log(f"resumed from {path} (step {state.step}, epoch {state.epoch})")
    return Resumed(state, contents.get("dtype"))


def save_snapshot(run_dir: RunDir, model: Transformer, state: TrainState) -> None:
    """A float16 copy of the model at this step, for watching attention being learned."""
    metadata = {"step": state.step, "train_seconds": state.train_seconds}
    save_model(model, run_dir.snapshot_file(state.step), metadata)


def owed_at_resume(run_dir: RunDir, step: int, config: TrainConfig) -> tuple[bool, bool]:
    """What a run killed right after its last checkpoint (at ``step``) still owed at that step:
    (the snapshot, the validation) that follow a checkpoint in the training loop."""
    if step == 0:
        return False, False
    snapshot = step in config.snapshot_step_set and not run_dir.snapshot_file(step).exists()
    validated = any(r["step"] == step and "val_loss" in r for r in run_dir.read_metrics())
    return snapshot, step % config.eval_every == 0 and not validated


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


def state_checksum(state: dict) -> str:
    """The sha256 of everything a checkpoint holds but its checksum: each tensor's bytes and each
    other value's repr, in the order of their keys (a flipped byte in a tensor changes it, where
    torch.load would read the damaged weights without a word)."""
    digest = hashlib.sha256()

    def add(key: str, value: object) -> None:
        digest.update(key.encode())
        if isinstance(value, torch.Tensor):
            digest.update(str(value.dtype).encode() + str(tuple(value.shape)).encode())
            digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
        elif isinstance(value, dict):
            for name in sorted(value, key=str):
                add(f"{key}/{name}", value[name])
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                add(f"{key}/{i}", item)
        else:
            digest.update(repr(value).encode())

    add("", {k: v for k, v in state.items() if k != "checksum"})
    return digest.hexdigest()


def load_checkpoint(path: Path) -> dict:
    """A checkpoint's contents, its checksum checked: a mismatch is a CheckpointError. A
    checkpoint from before the checksum has none and is read as it is."""
    state = safe_load(path)
    if "checksum" in state and state["checksum"] != state_checksum(state):
        raise CheckpointError(f"{path}: damaged (its contents do not match their checksum)")
    return state


def newest_readable_checkpoint(
    run_dir: RunDir, log: Callable[[str], None]
) -> tuple[Path, dict] | None:
    """(path, contents) of the newest checkpoint that loads; a damaged one is skipped with a
    warning. None when there is no checkpoint; an error when none of them loads."""
    found = run_dir.checkpoint_files()
    for path in reversed(found):
        try:
            return path, load_checkpoint(path)
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


# What a run's updates are made of: its data, their augmentation, the batches and the schedule.
# Resumed with another value, the run would go on as another run under this one's name, and its
# card would describe neither (a flag left out falls back to its default: augmentation off, the
# preset's mixture). The budget (--max-steps, --max-minutes, --stop-at) and the decay at its end
# (--cooldown-steps), logging, evaluation, checkpointing, the device and the speed flags may
# change.
RECIPE = (
    "mixture",
    "hansard_tag",
    "hansard_clean",
    "data_limit",
    "truecase",
    "max_len",
    "max_tokens",
    "seed",
    "init_from",
    "warmup",
    "init_warmup",
    "lr_scale",
    "label_smoothing",
    "clip",
    "concat_fraction",
    "copy_fraction",
    "number_copies",
    "spelling_fraction",
    "subword_alpha",
    "subword_sides",
)


def refuse_other_recipe(path: Path, state: dict, config: TrainConfig) -> None:
    """Resuming with another recipe (RECIPE) is an error naming each changed flag, where it
    would silently train something else."""
    saved, wanted = state["train_config"], dataclasses.asdict(config)
    changed = [
        f"--{key.replace('_', '-')} {saved[key]} -> {wanted[key]}"
        for key in RECIPE
        if key in saved and saved[key] != wanted[key]
    ]
    if changed:
        raise ResumeConflict(
            f"{path} was trained with another recipe ({', '.join(changed)}): give its flags "
            "again to continue it, or start over with --fresh, or give another --out"
        )


# The final model averages checkpoints from the last half of the run's steps only: a short run's
# last --average-last checkpoints, every --checkpoint-every steps, reached back into its warm-up
# (a 5,000-step run of the gpu preset, checkpoints every 1,000, averaged steps 1,000-5,000)
AVERAGE_SPAN = 0.5


def checkpoints_to_average(paths: list[Path], count: int, final_step: int) -> list[Path]:
    """Of the run's checkpoints (by step), the last ``count`` that lie within the last
    AVERAGE_SPAN of its ``final_step`` steps; the last checkpoint always."""
    recent = [p for p in paths[-count:] if file_step(p) >= (1 - AVERAGE_SPAN) * final_step]
    return recent or paths[-1:]


def average_checkpoints(paths: list[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the models in the last checkpoints (section 6.1: the last 5 or 20)."""
    total = None
    for path in paths:
        state = load_checkpoint(path)["model"]
        if total is None:
            total = {k: v.double().clone() for k, v in state.items()}
        else:
            for k, v in state.items():
                total[k] += v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}
