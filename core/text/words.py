"""SentencePiece pieces grouped into the words a reader sees, and attention between pieces summed
up as attention between words.

A word starts at a piece beginning with ▁, at a special token (<s>, </s>, <2de>...) and right after
one; every other piece continues the word before it. Byte pieces (<0xF0>...) are decoded as UTF-8.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SPECIAL_PIECE = re.compile(r"<[^<>]+>")


def is_special_piece(piece: str) -> bool:
    """<s>, </s>, <pad>, <unk>, <2de>...: angle brackets, but not a byte piece like <0xF0>."""
    return bool(_SPECIAL_PIECE.fullmatch(piece)) and not _BYTE_PIECE.fullmatch(piece)


def word_groups(pieces: Sequence[str]) -> list[list[int]]:
    """Positions of the pieces that make each word."""
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        starts = piece.startswith("▁") or is_special_piece(piece)
        if not groups or starts or is_special_piece(pieces[i - 1]):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def word_label(pieces: Sequence[str]) -> str:
    """The text of a group of pieces: ▁ read as a space, byte pieces decoded as UTF-8."""
    if len(pieces) == 1 and is_special_piece(pieces[0]):
        return pieces[0]
    data = b"".join(
        bytes.fromhex(m[1]) if (m := _BYTE_PIECE.fullmatch(p)) else p.replace("▁", " ").encode()
        for p in pieces
    )
    return data.decode("utf-8", errors="replace").strip() or "▁"


def words(pieces: Sequence[str]) -> tuple[list[list[int]], list[str]]:
    """The word groups of ``pieces`` and the text of each word."""
    groups = word_groups(pieces)
    return groups, [word_label([pieces[i] for i in group]) for group in groups]


def merge_attention(
    weights: np.ndarray, query_groups: list[list[int]], key_groups: list[list[int]]
) -> np.ndarray:
    """Attention between words from attention between pieces, (..., q, k) -> (..., Q, K): the
    weight a word receives is the sum over its pieces, the weights a word gives are the mean over
    its pieces. Rows still sum to 1, and cells masked for every piece stay exactly 0."""
    rows = np.stack([weights[..., g, :].mean(axis=-2) for g in query_groups], axis=-2)
    return np.stack([rows[..., g].sum(axis=-1) for g in key_groups], axis=-1)
