"""The run's final model: the average of its last checkpoints, validated, written to run/model/
with its card's training record and the run's history (train/loop/lineage.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import torch

from core.model.transformer import Transformer
from train.loop.checkpoints import average_checkpoints, checkpoints_to_average
from train.loop.config import TrainConfig
from train.loop.hardware import FastPaths
from train.loop.lineage import Origin, ship_history
from train.loop.run_folder import RunDir
from train.loop.start import Start
from train.loop.state import TrainState


@dataclasses.dataclass
class RunFacts:
    """How the run trained, beyond its flags, for its card: where, in which compute type (and
    the timings it was chosen by), and the seconds before training proper."""

    device: torch.device
    world_size: int
    fast_paths: FastPaths
    dtype: str
    dtype_seconds: dict[str, float]
    compile_seconds: float
    seconds_to_first_step: float | None  # from the trainer's start to the end of its first step


def export(
    run_dir: RunDir,
    config: TrainConfig,
    state: TrainState,
    facts: RunFacts,
    start: Start,
    validate: Callable[[Transformer], dict],
    log: Callable[[str], None],
) -> Path:
    """Average the last checkpoints into the final model, validate it (``validate`` scores and
    records it), write run/model/ with the run's history; its path."""
    paths = checkpoints_to_average(run_dir.checkpoint_files(), config.average_last, state.step)
    model = Transformer(start.model.config)
    model.load_state_dict(average_checkpoints(paths))
    model.to(facts.device)
    log(f"final model: average of {len(paths)} checkpoints ({paths[0].name} .. {paths[-1].name})")
    scores = validate(model)
    training = training_record(config, state, facts, start.origin, paths, scores)
    card = {"name": run_dir.path.name, "training": training}
    final = run_dir.model_dir.write(model.cpu(), start.tokenizer.model_file, card)
    ship_history(run_dir, final, start.origin)
    log(f"wrote {final.path}")
    return final.path


def training_record(
    config: TrainConfig,
    state: TrainState,
    facts: RunFacts,
    origin: Origin | None,
    averaged: list[Path],
    scores: dict,
) -> dict:
    """The card's training record: the run's steps and seconds (counted on from the model it
    continued, if any), how it trained, the checkpoints averaged, and the final scores."""
    return {
        "preset": config.preset,
        "steps": (origin.steps if origin else 0) + state.step,
        # to 0.1 s, as the log's elapsed_s: whole seconds could fall below the last log line's
        "seconds": round((origin.seconds if origin else 0) + state.train_seconds, 1),
        "hardware": describe_hardware(facts.device, facts.world_size),
        "device": facts.device.type,
        "fast_paths": dataclasses.asdict(facts.fast_paths),
        "compile_seconds": round(facts.compile_seconds, 1),
        # from the trainer's start (its imports before it) to the end of its first step
        "seconds_to_first_step": round(facts.seconds_to_first_step or 0, 1),
        "dtype": facts.dtype,
        "dtype_seconds": {k: round(v, 4) for k, v in facts.dtype_seconds.items()},
        "averaged_checkpoints": [p.name for p in averaged],
        "initialised_from": describe_origin(origin),
        "steps_before": origin.steps if origin else 0,
        "vocabulary_transfer": origin.vocabulary_transfer if origin else None,
        "validation": scores,
        "train_config": dataclasses.asdict(config),
    }


def describe_origin(origin: Origin | None) -> str | None:
    """The name of the model a run continued from (its step is the card's steps_before), never a
    path of the machine that trained it."""
    if origin is None:
        return None
    return origin.model_dir.read_card().get("name") or origin.model_dir.path.name


def describe_hardware(device: torch.device, world_size: int) -> str:
    if device.type == "cuda":
        return f"{world_size} x {torch.cuda.get_device_name(device)}"
    threads = torch.get_num_threads()
    return f"CPU, {threads} thread{'s' if threads > 1 else ''}"
