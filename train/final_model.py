"""The run's final model: the average of its last checkpoints, validated, written to run/model/
with its card's training record and the run's history (train/lineage.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from core.model.transformer import Transformer
from train.checkpoints import average_checkpoints, checkpoints_to_average
from train.lineage import Origin, ship_history

if TYPE_CHECKING:
    from train.trainer import Trainer


def export(trainer: Trainer) -> Path:
    """Average the last checkpoints into the final model, validate it, write run/model/."""
    run_dir, config = trainer.run_dir, trainer.config
    paths = checkpoints_to_average(run_dir.checkpoint_files(), config.average_last, trainer.step)
    model = Transformer(trainer.model_config)
    model.load_state_dict(average_checkpoints(paths))
    model.to(trainer.device)
    trainer.log(
        f"final model: average of {len(paths)} checkpoints ({paths[0].name} .. {paths[-1].name})"
    )
    scores = trainer.validator.scores(model, trainer.step)
    trainer.record(**scores)
    origin = trainer.origin
    training = {
        "preset": config.preset,
        "steps": (origin.steps if origin else 0) + trainer.step,
        # to 0.1 s, as the log's elapsed_s: whole seconds could fall below the last log line's
        "seconds": round((origin.seconds if origin else 0) + trainer.train_seconds, 1),
        "hardware": describe_hardware(trainer.device, trainer.dist.world_size),
        "device": trainer.device.type,
        "fast_paths": dataclasses.asdict(trainer.fast_paths),
        "compile_seconds": round(trainer.compile_seconds, 1),
        # from the trainer's start (its imports before it) to the end of its first step
        "seconds_to_first_step": round(trainer.seconds_to_first_step or 0, 1),
        "dtype": trainer.dtype,
        "dtype_seconds": {k: round(v, 4) for k, v in trainer.dtype_seconds.items()},
        "averaged_checkpoints": [p.name for p in paths],
        "initialised_from": describe_origin(origin),
        "steps_before": origin.steps if origin else 0,
        "vocabulary_transfer": origin.vocabulary_transfer if origin else None,
        "validation": scores,
        "train_config": dataclasses.asdict(config),
    }
    card = {"name": run_dir.path.name, "training": training}
    final = run_dir.model_dir.write(model.cpu(), trainer.tokenizer.model_file, card)
    ship_history(run_dir, final, origin)
    trainer.log(f"wrote {final.path}")
    return final.path


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
