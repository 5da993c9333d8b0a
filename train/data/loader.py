"""Batches for the training step: padded tensors collated from the encoded pairs, in DataLoader
workers with pinned memory where the step runs on a GPU, so that the host keeps ahead of it.

A batch of rows i (train.data.batching.token_batches) is (section 5.1 of the paper)

    source      (B, S)  <2xx> x_1 .. x_n </s>, then <pad>
    target_in   (B, T)  <s> y_1 .. y_m, then <pad>          the decoder's input
    target_out  (B, T)  y_1 .. y_m </s>, then <pad>         what it learns to predict

S and T are each side's longest row, or with a length bucket each rounded up to a width of the
bucket's ladder (train/data/batching.py), and B then max_tokens // max(S, T) rows, the rows past the
batch's own filled with a one-token source and an all-pad target, which the loss ignores: every
batch of the same two widths has one shape. ``n_tokens`` counts the real target tokens, from the
lengths on the host, so that nobody waits for the GPU to count them.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from core.text.tokenizer import BOS_ID, EOS_ID, PAD_ID
from train.data.batching import padded_width
from train.data.encoded_corpus import FlatPairs

# A GPU's step is a few milliseconds: workers collate the next batches meanwhile (a CPU's step is
# seconds, and its two cores are busy computing it: the main process collates there)
MAX_GPU_LOADER_WORKERS = 4
PREFETCH_BATCHES = 4  # per worker


class Batch(NamedTuple):
    source: torch.Tensor  # (B, S)
    target_in: torch.Tensor  # (B, T)
    target_out: torch.Tensor  # (B, T)
    n_tokens: int  # real target tokens


def batch_shape(lengths: np.ndarray, bucket: int = 0, max_tokens: int = 0) -> tuple[int, int, int]:
    """(B, S, T) of the batch of pairs of ``lengths`` (rows, 2): see the module docstring."""
    if not bucket:
        width_s, width_t = (int(longest) for longest in lengths.max(0))
        return len(lengths), width_s, width_t
    width_s, width_t = (padded_width(int(longest), bucket) for longest in lengths.max(0))
    return max(len(lengths), max_tokens // max(width_s, width_t)), width_s, width_t


def real_share(lengths: np.ndarray, batches: list, bucket: int, max_tokens: int) -> float:
    """Of the positions that the ``batches`` of pairs of ``lengths`` (P, 2) pad to, the share
    that holds real tokens, both sides counted."""
    real = padded = 0
    for rows in batches:
        n_rows, width_s, width_t = batch_shape(lengths[rows], bucket, max_tokens)
        real += int(lengths[rows].sum())
        padded += n_rows * (width_s + width_t)
    return real / max(padded, 1)


def collate(pairs: FlatPairs, rows: list[int], bucket: int = 0, max_tokens: int = 0) -> Batch:
    """The padded batch of ``pairs``' ``rows`` (see the module docstring)."""
    lengths = pairs.lengths[rows]  # (B, 2)
    n_rows, width_s, width_t = batch_shape(lengths, bucket, max_tokens)
    source = np.full((n_rows, width_s), PAD_ID, np.int64)
    target_in = np.full((n_rows, width_t), PAD_ID, np.int64)
    target_out = np.full((n_rows, width_t), PAD_ID, np.int64)
    source[len(rows) :, 0] = EOS_ID  # filler rows: one real key, so no attention row is empty
    for row, i in enumerate(rows):
        source_ids, target_ids = pairs.source(i), pairs.target(i)
        source[row, : len(source_ids)] = source_ids
        target_out[row, : len(target_ids)] = target_ids
        target_in[row, 0] = BOS_ID
        target_in[row, 1 : len(target_ids)] = target_ids[:-1]
    tensors = (torch.from_numpy(array) for array in (source, target_in, target_out))
    return Batch(*tensors, int(lengths[:, 1].sum()))


class PairBatches(Dataset):
    """Batches of ``pairs``: item ``rows`` (pair indices, as token_batches gives them) is those
    rows collated. The DataLoader's sampler (:class:`EpochOrder`) hands each worker the rows."""

    def __init__(self, pairs: FlatPairs, bucket: int, max_tokens: int) -> None:
        self.pairs, self.bucket, self.max_tokens = pairs, bucket, max_tokens

    def __getitem__(self, rows) -> Batch:
        return collate(self.pairs, rows, self.bucket, self.max_tokens)


class EpochOrder(Sampler):
    """The batches of an epoch, in order; set anew for each epoch, so that one DataLoader, and
    its workers, serves every epoch over the same pairs."""

    def __init__(self, batches: list) -> None:
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def loader_workers(choice: int, device: torch.device, world_size: int) -> int:
    """--loader-workers: as given, or (-1) none on a CPU and up to MAX_GPU_LOADER_WORKERS per GPU
    process on a GPU, within the host's cores."""
    if choice >= 0:
        return choice
    if device.type == "cpu":
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(0, min(MAX_GPU_LOADER_WORKERS, (cores or 1) // world_size - 1))


def batch_loader(
    pairs: FlatPairs, batches: list, bucket: int, max_tokens: int, workers: int, device
) -> DataLoader:
    """``batches`` of ``pairs`` in order, collated ahead in ``workers`` processes, pinned for a
    GPU. The workers persist: the next epoch over the same pairs sets ``loader.sampler.batches``
    and iterates again, without forking new workers (:func:`next_epoch`)."""
    return DataLoader(
        PairBatches(pairs, bucket, max_tokens),
        batch_size=None,  # an item is a whole batch already
        sampler=EpochOrder(batches),  # token_batches shuffled them, by the epoch's seed
        num_workers=workers,
        pin_memory=device.type == "cuda",
        prefetch_factor=PREFETCH_BATCHES if workers else None,
        persistent_workers=workers > 0,
        # each iterator draws a seed for its workers: from a generator of its own, not the one
        # dropout draws from, so that a resumed run draws as the unbroken one did
        generator=torch.Generator(),
    )


def next_epoch(loader: DataLoader | None, pairs: FlatPairs, batches: list) -> DataLoader | None:
    """``loader`` set to serve ``batches`` next, if it serves these ``pairs``; else None."""
    if loader is None or loader.dataset.pairs is not pairs:
        return None
    loader.sampler.batches = batches
    return loader


def to_device(batch: Batch, device: torch.device) -> tuple[torch.Tensor, ...]:
    """source, target_in, target_out on ``device``; from pinned memory the copies do not wait."""
    return tuple(t.to(device, non_blocking=True) for t in batch[:3])
