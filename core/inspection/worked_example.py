"""The worked example of self-attention used in lectures: 3 inputs of dimension 4, d_k = 3.

Small enough to follow by hand; :func:`walk_through` runs it through the same :func:`attention` the
model uses and keeps every intermediate, so the app can show real numbers at each step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from core.model.transformer import attention

INPUTS = torch.tensor([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=torch.float32)
W_KEY = torch.tensor([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=torch.float32)
W_QUERY = torch.tensor([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=torch.float32)
W_VALUE = torch.tensor([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=torch.float32)


@dataclass
class WalkThrough:
    inputs: Tensor  # (3, 4) X
    queries: Tensor  # (3, 3) Q = X W_Q
    keys: Tensor  # (3, 3) K = X W_K
    values: Tensor  # (3, 3) V = X W_V
    scores: Tensor  # (3, 3) Q K^T, divided by sqrt(d_k) when scaled
    weights: Tensor  # (3, 3) softmax over each row
    outputs: Tensor  # (3, 3) weights V
    scale: float  # the divisor applied to Q K^T: sqrt(d_k), or 1


def walk_through(scaled: bool = False) -> WalkThrough:
    """Self-attention on the lecture example. scaled=False reproduces the slides (no sqrt(d_k));
    scaled=True is the paper's softmax(Q K^T / sqrt(d_k)) V."""
    queries, keys, values = INPUTS @ W_QUERY, INPUTS @ W_KEY, INPUTS @ W_VALUE
    d_k = keys.size(-1)
    # attention() divides by sqrt(d_k); for the unscaled slides, pre-multiply the queries to undo it
    scale = math.sqrt(d_k) if scaled else 1.0
    outputs, maps = attention(queries * math.sqrt(d_k) / scale, keys, values)
    return WalkThrough(INPUTS, queries, keys, values, maps.scores, maps.weights, outputs, scale)
