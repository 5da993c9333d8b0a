"""What the training loop's parts are given: where the run is (its counters), and the model with
what updates it. The parts (train/loop/checkpoints.py, train/loop/epoch.py, train/loop/compiled.py,
train/loop/final_model.py) take these and return values; only train/loop/trainer.py changes them."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.model.transformer import Transformer


@dataclass
class TrainState:
    """Where a run is: the updates made, the epoch and the batch within it the next update takes,
    and the seconds spent in training steps (what --max-minutes counts). A checkpoint holds them."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    train_seconds: float = 0.0


@dataclass
class Learner:
    """The model and what updates it (section 5.3: Adam, and the learning rate's schedule): all
    three continue a run through their state_dict."""

    model: Transformer
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
