"""Where the model computes: the one device choice of the trainer, evaluation, the head survey and
the app (``--device auto|cpu|cuda``, or $ATTENTION_LAB_DEVICE for the app).

auto is CUDA when PyTorch sees a GPU, else the CPU. Asking for CUDA where there is none is the
person's error to fix, said as an :class:`core.errors.InputError`, not a crash deep in torch.
"""

from __future__ import annotations

import torch

from core.errors import InputError

DEVICE_CHOICES = ("auto", "cpu", "cuda")
DEVICE_HELP = (
    "where the model computes: auto (a CUDA GPU when there is one, else the CPU), cpu, cuda"
)


def resolve_device(choice: str = "auto", local_rank: int = 0) -> torch.device:
    """The device of ``choice`` (one of DEVICE_CHOICES); CUDA is GPU ``local_rank`` (torchrun's
    LOCAL_RANK: one process per GPU)."""
    if choice not in DEVICE_CHOICES:
        raise InputError(f"Unknown device {choice!r}: choose one of {', '.join(DEVICE_CHOICES)}.")
    if choice == "cpu" or (choice == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise InputError("--device cuda was asked for, but PyTorch sees no CUDA GPU here.")
    return torch.device("cuda", local_rank)
