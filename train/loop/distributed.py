"""One process, or one of several under torchrun: rank, world size and the device it trains on."""

from __future__ import annotations

import os
from datetime import timedelta

import torch
import torch.distributed as dist

from core.device import resolve_device

# The other processes wait at a barrier while the main one validates or exports: minutes, not
# the default ten of NCCL's watchdog
COLLECTIVE_TIMEOUT = timedelta(hours=2)


class Distributed:
    """Rank and world size under torchrun (WORLD_SIZE > 1), or a single process; its device is
    ``device`` (core/device.py: auto, cpu or cuda), on a GPU the one of its LOCAL_RANK."""

    def __init__(self, device: str = "auto") -> None:
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.device = resolve_device(device, int(os.environ.get("LOCAL_RANK", "0")))
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        if self.world_size > 1:
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            dist.init_process_group(backend, timeout=COLLECTIVE_TIMEOUT)

    @property
    def main(self) -> bool:
        return self.rank == 0

    def mean(self, value: float) -> float:
        if self.world_size == 1:
            return value
        tensor = torch.tensor([value], device=self.device)
        dist.all_reduce(tensor)
        return tensor.item() / self.world_size

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def synchronize(self) -> None:
        """Wait for the device's queued work (a GPU computes behind the host)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def close(self) -> None:
        if self.world_size > 1:
            dist.destroy_process_group()
