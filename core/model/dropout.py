"""Dropout with cheap masks, for training on CPU; the model uses it wherever the paper drops out."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Dropout(nn.Module):
    """Dropout (Srivastava et al., 2014): in training, zero each element with probability p and
    scale the rest by 1 / (1 - p); in evaluation, the identity.

    The same as nn.Dropout, with cheaper masks: one 64-bit random draw gives the masks of 8
    elements, a byte each, kept when the byte >= 256 p (so p is rounded to a multiple of 1/256).
    On CPU, where nn.Dropout's per-element draws were a quarter of a training step, this measured
    11% more tokens per second (benchmarks/training_throughput.py). Elsewhere (a GPU, whose
    dropout is one fused kernel) ``byte_masks`` False takes F.dropout: the trainer chooses by
    device (train/loop/hardware.py, FastPaths).
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p
        self.byte_masks = True

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return x
        if not self.byte_masks:
            return F.dropout(x, self.p, training=True)
        n = x.numel()
        random_bytes = torch.empty((n + 7) // 8, dtype=torch.int64, device=x.device)
        random_bytes = random_bytes.random_(-(2**63), None).view(torch.uint8)[:n]
        keep = (random_bytes >= round(256 * self.p)).view(x.shape)
        return x * keep * (1 / (1 - self.p))
