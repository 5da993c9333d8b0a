"""The training corpus encoded once per vocabulary, kept in the run folder and memory-mapped.

Encoding 870,431 pairs with SentencePiece and the truecaser took 97 s on 2 cores, at every start
and every epoch, on every process of a distributed run. The encoded pairs are the same as long
as the examples, the vocabulary and the code that encodes do not change, so they are written once
under a key that hashes all three, and read back memory-mapped (instantly, shared by every
process and DataLoader worker).

This module owns the cache's file format. In ``<run>/encoded/``, for a key K:

    K.ids.npy       int32 (N,): every pair's source ids, then every pair's target ids
    K.offsets.npy   int64 (2, P + 1): row 0 the sources' starts in ids, row 1 the targets'

offsets is written last (atomically, as every file here): a killed write leaves a key without
offsets, or a stale temporary file, and a key whose files do not agree is encoded again.
"""

from __future__ import annotations

import hashlib
import io
import multiprocessing
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.files.checkpoint import atomic_write
from core.text.tokenizer import Tokenizer
from train.data.batching import encode_examples
from train.data.corpora import Example

REPO = Path(__file__).resolve().parents[2]
# Examples a process encodes at once; a corpus of one chunk or less is encoded in this process
CHUNK_EXAMPLES = 20_000
MAX_ENCODING_PROCESSES = 16
# The code that turns an example into ids: a change to any of these files is a new key.
ENCODING_CODE = (
    "core/text/tokenizer.py",
    "core/text/elision.py",
    "core/text/truecase.py",
    "train/data/batching.py",
)


@dataclass
class FlatPairs:
    """Encoded (source, target) pairs as flat arrays: pair i's source is
    ``ids[offsets[0, i]:offsets[0, i + 1]]``, its target ``ids[offsets[1, i]:offsets[1, i + 1]]``
    (target = y_1 .. </s>, as train.data.batching.encode_examples gives it)."""

    ids: np.ndarray  # int32 (N,)
    offsets: np.ndarray  # int64 (2, P + 1)

    @classmethod
    def from_lists(cls, pairs: list[tuple[list[int], list[int]]]) -> FlatPairs:
        sources = np.fromiter((i for source, _ in pairs for i in source), np.int32)
        targets = np.fromiter((i for _, target in pairs for i in target), np.int32)
        lengths = np.array([(len(s), len(t)) for s, t in pairs], np.int64).reshape(-1, 2)
        return cls.joined(sources, targets, lengths)

    @classmethod
    def joined(cls, sources: np.ndarray, targets: np.ndarray, lengths: np.ndarray) -> FlatPairs:
        """Pairs from their sources' ids end to end, their targets' likewise, and lengths (P, 2)."""
        source_starts = np.concatenate([[0], np.cumsum(lengths[:, 0])])
        target_starts = len(sources) + np.concatenate([[0], np.cumsum(lengths[:, 1])])
        offsets = np.stack([source_starts, target_starts]).astype(np.int64)
        return cls(np.concatenate([sources, targets]).astype(np.int32), offsets)

    def __len__(self) -> int:
        return self.offsets.shape[1] - 1

    @property
    def lengths(self) -> np.ndarray:
        """(P, 2): each pair's source and target length."""
        return np.diff(self.offsets, axis=1).T

    def source(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[0, i] : self.offsets[0, i + 1]]

    def target(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[1, i] : self.offsets[1, i + 1]]

    def __add__(self, other: FlatPairs) -> FlatPairs:
        """These pairs followed by ``other``'s."""
        both = (self, other)
        sources = [pairs.ids[pairs.offsets[0, 0] : pairs.offsets[0, -1]] for pairs in both]
        targets = [pairs.ids[pairs.offsets[1, 0] : pairs.offsets[1, -1]] for pairs in both]
        lengths = np.concatenate([self.lengths, other.lengths])
        return FlatPairs.joined(np.concatenate(sources), np.concatenate(targets), lengths)


# What the forked encoding processes read, set before they fork (a SentencePiece model and a
# truecaser are not sent to them, they inherit them)
_inherited: tuple[Tokenizer, int] | None = None


def encode_chunk(examples: list[Example]) -> list[tuple[list[int], list[int]]]:
    tokenizer, max_len = _inherited
    return encode_examples(tokenizer, examples, max_len)


def encode_in_parallel(
    tokenizer: Tokenizer, examples: list[Example], max_len: int
) -> list[tuple[list[int], list[int]]]:
    """train.data.batching.encode_examples's pairs, in order, encoded by one forked process per core
    (the truecaser is Python: one core encoded 870,431 pairs in 97 s)."""
    global _inherited
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    processes = min(cores or 1, MAX_ENCODING_PROCESSES)
    chunks = [examples[i : i + CHUNK_EXAMPLES] for i in range(0, len(examples), CHUNK_EXAMPLES)]
    if processes == 1 or len(chunks) < 2:
        return encode_examples(tokenizer, examples, max_len)
    _inherited = (tokenizer, max_len)
    try:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            return [pair for chunk in pool.map(encode_chunk, chunks) for pair in chunk]
    finally:
        _inherited = None


def cache_key(examples: list[Example], vocabulary_files: Iterable[Path], max_len: int) -> str:
    """sha256 of what decides the encoded pairs: the examples in order, the vocabulary's files
    (those that exist), the longest sequence kept, and the encoding code (ENCODING_CODE)."""
    digest = hashlib.sha256(f"max_len={max_len}\n".encode())
    for path in [*vocabulary_files, *(REPO / name for name in ENCODING_CODE)]:
        if Path(path).is_file():
            digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
    text = "\n".join(
        f"{e.target}\t{e.source_text}\t{e.target_text}" + ("\ttagged" if e.tagged else "")
        for e in examples
    )
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def read_cached(folder: Path, key: str) -> FlatPairs | None:
    """The pairs cached under ``key``, memory-mapped; None when they are missing or incomplete."""
    try:
        ids = np.load(folder / f"{key}.ids.npy", mmap_mode="r")
        offsets = np.load(folder / f"{key}.offsets.npy")
    except (OSError, ValueError, EOFError):
        return None
    whole = offsets.ndim == 2 and offsets.shape[0] == 2 and offsets.shape[1] >= 1
    if not whole or offsets[1, -1] != ids.shape[0] or ids.dtype != np.int32:
        return None
    return FlatPairs(ids, offsets)


def write_cache(folder: Path, key: str, pairs: FlatPairs) -> None:
    """Write ``pairs`` under ``key`` (offsets last) and delete the other keys: a run needs one."""
    for stale in folder.glob("*.npy"):
        if not stale.name.startswith(f"{key}."):
            stale.unlink()
    for name, array in (("ids", pairs.ids), ("offsets", pairs.offsets)):
        atomic_write(folder / f"{key}.{name}.npy", lambda f, a=array: f.write(npy_bytes(a)))


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def encoded_pairs(
    tokenizer: Tokenizer,
    examples: list[Example],
    max_len: int,
    folder: Path,
    vocabulary_files: Iterable[Path],
    write: bool = True,
) -> FlatPairs:
    """``examples`` encoded (train.data.batching.encode_examples, best segmentation), from the cache
    in ``folder`` when it holds them; else encoded now and, with ``write``, cached (in a
    distributed run only the main process writes, the others read after it)."""
    key = cache_key(examples, vocabulary_files, max_len)
    cached = read_cached(folder, key)
    if cached is not None:
        return cached
    pairs = FlatPairs.from_lists(encode_in_parallel(tokenizer, examples, max_len))
    if write:
        write_cache(folder, key, pairs)
    return pairs
