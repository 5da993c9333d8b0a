"""The learning rate: the paper's schedule (section 5.3), continued from a trained model, and a
linear decay at the end.

lr = lr_scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from train.loop.config import TrainConfig


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The paper's schedule (eq. 3): linear warm-up, then decay with the inverse square root."""
    step = max(step, 1)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def continued_lr(step: int, d_model: int, config: TrainConfig, steps_before: int) -> float:
    """The schedule of a run continued from a trained model (--init-from): the paper's schedule
    goes on from the step where that model stopped, reached by a short linear warm-up, since the
    fresh Adam has no moment estimates yet.

    lr = min(1, step / init_warmup) * noam(steps_before + step)
    """
    ramp = min(1.0, max(step, 1) / max(config.init_warmup, 1))
    return ramp * noam_lr(steps_before + step, d_model, config.warmup, config.lr_scale)


def cooldown(step: int, max_steps: int, cooldown_steps: int) -> float:
    """The factor on the learning rate in the decay phase (--cooldown-steps): 1 until the last
    cooldown_steps steps, then linearly down to 0 at max_steps."""
    if cooldown_steps <= 0:
        return 1.0
    return min(1.0, max(0.0, (max_steps - step) / cooldown_steps))


def learning_rate(step: int, d_model: int, config: TrainConfig, steps_before: int) -> float:
    """The rate at ``step`` (counted from 1): the paper's schedule, or with --init-from the
    continued one, times the cooldown."""
    decay = cooldown(step, config.max_steps, config.cooldown_steps)
    if config.init_from:
        return decay * continued_lr(step, d_model, config, steps_before)
    return decay * noam_lr(step, d_model, config.warmup, config.lr_scale)
