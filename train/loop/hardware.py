"""What the machine can do: which compute type trains faster here, and the matrix-multiply peak
that MFU is measured against.

bf16 is not fast everywhere. A CPU with AMX multiplies bf16 matrices about 10x faster than float32,
one with AVX-512 BF16 several times faster, but one with AVX2 alone emulates bf16 and ran a
(4096 x 256) @ (256 x 1024) matmul 60x slower than float32. So the trainer times a step in both
types at start (``--dtype auto``) instead of assuming.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from core.model.dropout import Dropout
from core.model.transformer import Attend

PEAK_ROWS = 4096
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
# bf16 rounds every product to 8 bits of mantissa: near a tie, float32's exactness wins
BF16_MARGIN = 0.9
# a gap this wide after one timed call of each is no near tie, and repeats would only cost time
# (an emulated bf16 step took 85 s against 3.3 s in float32 on one thread of an AVX2-only CPU)
DECISIVE_RATIO = 4.0
# rows of logits the CPU's loss forms at once (train/loop/loss.py): 256 x 16,000 float32 is 16 MB
CPU_LOSS_CHUNK_ROWS = 256


@dataclass(frozen=True)
class FastPaths:
    """The training step's device-tuned paths, chosen by device and recorded in the model card.

    On a CPU: attention's explicit softmax(Q K^T / sqrt(d_k)) V, whose backward measured 2x faster
    than the fused kernel's; dropout with byte masks (11% more tokens/s); and the loss fused with
    the output projection a few hundred rows at a time, so that the logits never exist whole
    (2.12x -> 2.55x the fp32 trainer's tokens/s). On a GPU each of them is a loop of small kernels
    where one large one is faster, and a data-dependent shape that torch.compile cannot keep:
    the fused attention kernel, F.dropout, and PyTorch's cross-entropy over all the logits.
    """

    explicit_attention: bool
    byte_mask_dropout: bool
    loss_chunk_rows: int  # 0: the logits whole, padded positions ignored by the loss

    @classmethod
    def for_device(cls, device: torch.device) -> FastPaths:
        if device.type == "cpu":
            return cls(
                explicit_attention=True, byte_mask_dropout=True, loss_chunk_rows=CPU_LOSS_CHUNK_ROWS
            )
        return cls(explicit_attention=False, byte_mask_dropout=False, loss_chunk_rows=0)

    def apply(self, model: nn.Module) -> None:
        """Set the model's attention and dropout modules to these paths (their outputs' meaning
        is the same either way; tests/core/test_model.py compares them)."""
        for module in model.modules():
            if isinstance(module, Attend):
                module.explicit_in_training = self.explicit_attention
            elif isinstance(module, Dropout):
                module.byte_masks = self.byte_mask_dropout


def choose_dtype(step_seconds: dict[str, float]) -> str:
    """The compute type of the faster step: bf16 only when its step takes under BF16_MARGIN of
    float32's time."""
    return "bf16" if step_seconds["bf16"] < BF16_MARGIN * step_seconds["fp32"] else "fp32"


def best_seconds(
    steps: dict[str, Callable[[], None]],
    repeats: int = 3,
    device: str = "cpu",
    decisive: float | None = None,
) -> dict[str, float]:
    """The fastest of ``repeats`` timed calls of each step, after one untimed warm-up call each
    (the first call pays for one-time work such as oneDNN building its kernels). The steps take
    turns, so that a busy machine slows them alike. With ``decisive``, the repeats stop once one
    step is that many times slower than another: no near tie is left to settle."""
    synchronize = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for step in steps.values():
        step()
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for name, step in steps.items():
            synchronize()
            start = time.perf_counter()
            step()
            synchronize()
            best[name] = min(best[name], time.perf_counter() - start)
        if decisive and max(best.values()) > decisive * min(best.values()):
            break
    return best


def cpu_flags() -> list[str]:
    """The matrix-multiply features this CPU announces (Linux), e.g. ['amx_bf16', 'avx2', ...]."""
    wanted = ("amx_bf16", "amx_tile", "avx512_bf16", "avx512f", "avx2")
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line.split() for line in cpuinfo if line.startswith("flags")), [])
    except OSError:
        return []
    return [flag for flag in wanted if flag in flags]


def matmul_peak_flops(threads: int, d_model: int = 256, repeats: int = 20, dtype: str = "bf16"):
    """FLOP/s of a (4096 x d) @ (d x 4d) matmul in ``dtype``, the shape of a feed-forward layer
    over a large batch; best of ``repeats``. Measured, not quoted: on a CPU with AMX, bf16 runs
    at about 10x the float32 rate."""
    torch.set_num_threads(threads)
    left = torch.randn(PEAK_ROWS, d_model, dtype=DTYPES[dtype])
    right = torch.randn(d_model, 4 * d_model, dtype=DTYPES[dtype])
    seconds = best_seconds({dtype: lambda: left @ right}, repeats)[dtype]
    return 2 * PEAK_ROWS * d_model * 4 * d_model / seconds


def gpu_matmul_peak_flops(size: int = 8192, repeats: int = 10, dtype: str = "bf16") -> float:
    """FLOP/s of a (size x size) @ (size x size) matmul in ``dtype`` on the current CUDA GPU,
    best of ``repeats``: the peak a GPU run's MFU is measured against."""
    left = torch.randn(size, size, dtype=DTYPES[dtype], device="cuda")
    right = torch.randn(size, size, dtype=DTYPES[dtype], device="cuda")
    seconds = best_seconds({dtype: lambda: left @ right}, repeats, device="cuda")[dtype]
    return 2 * size**3 / seconds


def model_flops_utilisation(parameters: int, tokens_per_second: float, peak: float) -> float:
    """MFU = 6 N tokens/s / peak: 6 N FLOPs per token for a training step's forward and backward
    (Kaplan et al. 2020), attention's own FLOPs left out."""
    return 6 * parameters * tokens_per_second / peak
