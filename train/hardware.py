"""What the machine can do: the bf16 matrix-multiply peak that MFU is measured against."""

from __future__ import annotations

import time

import torch

PEAK_ROWS = 4096


def matmul_peak_flops(threads: int, d_model: int = 256, repeats: int = 20) -> float:
    """FLOP/s of a bf16 (4096 x d) @ (d x 4d) matmul, the shape of a feed-forward layer over a
    large batch; best of ``repeats``. Measured, not quoted: on a CPU with AMX it is about 10x the
    float32 rate."""
    torch.set_num_threads(threads)
    left = torch.randn(PEAK_ROWS, d_model, dtype=torch.bfloat16)
    right = torch.randn(d_model, 4 * d_model, dtype=torch.bfloat16)
    for _ in range(3):
        left @ right
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        left @ right
        best = min(best, time.perf_counter() - start)
    return 2 * PEAK_ROWS * d_model * 4 * d_model / best


def model_flops_utilisation(parameters: int, tokens_per_second: float, peak: float) -> float:
    """MFU = 6 N tokens/s / peak: 6 N FLOPs per token for a training step's forward and backward
    (Kaplan et al. 2020), attention's own FLOPs left out."""
    return 6 * parameters * tokens_per_second / peak
