"""A cache that every session of the server shares, bounded by the bytes its values hold rather
than by their number, and that hands out the cached value itself instead of a copy.

``st.cache_data`` keeps each value pickled and unpickles a fresh copy on every hit: with 20
students, each rerun copied its analysis two or three times (a long sentence with beam 8 is
about 28 MB), and the copies, not the cache, drove the server's memory up
(``python -m benchmarks.load``). Here a value is stored once, its NumPy arrays made read-only
so that a page that tried to change the shared value would fail loudly, and the least recently
used values leave when the total passes the budget (cachetools.LRUCache with a size function).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import pickle
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import cachetools
import numpy as np
import streamlit as st

Value = TypeVar("Value")


def size_in_bytes(value: object) -> int:
    """What ``value`` holds in memory, measured as its pickled size (arrays dominate it)."""
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


# What holds no array, passed over first: most of what an analysis holds (token ids, pieces,
# probabilities: 3,800 of its 4,500 objects for a short sentence, beam 4)
SCALARS = (str, int, float, bool, type(None))


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    """The names of a dataclass's fields, looked up once per class."""
    return tuple(field.name for field in dataclasses.fields(cls))


def freeze(value: object) -> None:
    """Make every NumPy array reachable through dataclasses, lists, tuples and dicts read-only."""
    if isinstance(value, SCALARS):
        return
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for name in field_names(type(value)):
            freeze(getattr(value, name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            freeze(item)
    elif isinstance(value, dict):
        for item in value.values():
            freeze(item)


class Shared(Generic[Value]):
    """A function of hashable arguments whose results every session shares (see :func:`shared`):
    call it for the result, computed if need be; :meth:`stored` for a result already kept."""

    def __init__(self, compute: Callable[..., Value], max_bytes: int, spinner: str | None):
        functools.update_wrapper(self, compute)
        self._compute, self._max_bytes, self._spinner = compute, max_bytes, spinner
        self._name = f"{compute.__module__}.{compute.__qualname__}"

    def __call__(self, *args: Hashable) -> Value:
        value = self.stored(*args)
        if value is None:
            with st.spinner(self._spinner) if self._spinner else contextlib.nullcontext():
                value = self._compute(*args)
            freeze(value)
            cache, lock = _store(self._name, self._max_bytes)
            # a value larger than the whole budget raises ValueError: returned, not kept
            with lock, contextlib.suppress(ValueError):
                cache[args] = value
        return value

    def stored(self, *args: Hashable) -> Value | None:
        """The result for ``args`` if a session computed it and it is still kept, else None;
        never computes it."""
        cache, lock = _store(self._name, self._max_bytes)
        with lock:
            return cache.get(args)


@st.cache_resource(show_spinner=False)
def _store(name: str, max_bytes: int) -> tuple[cachetools.LRUCache, threading.Lock]:
    """The values of the function ``name``, in a cache_resource so that Streamlit's "Clear
    caches" empties them too."""
    return cachetools.LRUCache(maxsize=max_bytes, getsizeof=size_in_bytes), threading.Lock()


def shared(
    max_bytes: int, spinner: str | None = None
) -> Callable[[Callable[..., Value]], Shared[Value]]:
    """Decorate a function of hashable arguments: each result is computed once (showing
    ``spinner`` meanwhile), frozen and kept while the results kept weigh at most ``max_bytes``;
    a result larger than that is returned but not kept. Callers must not change a result."""
    return lambda compute: Shared(compute, max_bytes, spinner)
