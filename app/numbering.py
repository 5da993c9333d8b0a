"""Layers and heads are shown 1-based and indexed 0-based: people read "layer 1, head 3" (the
pages' labels, their pickers, the URL's ``?layer=6``, a deck's steps), while core's tensors and
``Head`` count from 0. The views and figures convert a shown number to an index, and an index back
to the number shown, here and nowhere else; a test (tests/app/test_numbering.py) keeps them from
subtracting or adding 1 by hand."""

from __future__ import annotations

from numbers import Integral

# The choices a picker offers beside the numbers, each standing for every layer or head at once
# (their mean): the Attention page's "avg" head, Coverage's "all" layers, Explain's "mean" layer
EVERY = ("avg", "all", "mean")


def index_of(shown: int) -> int:
    """The 0-based index of the layer or head shown as ``shown``, counted from 1."""
    if isinstance(shown, bool) or not isinstance(shown, Integral) or shown < 1:
        raise ValueError(f"{shown!r} is not a layer or head counted from 1")
    return int(shown) - 1


def shown_of(index: int) -> int:
    """The number the layer or head of 0-based index ``index`` is shown as, counted from 1: the
    inverse of :func:`index_of`."""
    if isinstance(index, bool) or not isinstance(index, Integral) or index < 0:
        raise ValueError(f"{index!r} is not a layer or head index counted from 0")
    return int(index) + 1


def index_or_every(shown: int | str) -> int | None:
    """As :func:`index_of`, with None (every layer or head, averaged) for "avg", "all" or
    "mean"."""
    return None if shown in EVERY else index_of(shown)
