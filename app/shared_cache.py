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
from typing import Any, TypeVar

import cachetools
import numpy as np
import streamlit as st

Value = TypeVar("Value")


def size_in_bytes(value: object) -> int:
    """What ``value`` holds in memory, measured as its pickled size (arrays dominate it)."""
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def freeze(value: object) -> None:
    """Make every NumPy array reachable through dataclasses, lists, tuples and dicts read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            freeze(getattr(value, field.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            freeze(item)
    elif isinstance(value, dict):
        for item in value.values():
            freeze(item)


def shared(
    max_bytes: int, spinner: str | None = None
) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Decorate a function of hashable arguments: each result is computed once (showing
    ``spinner`` meanwhile), frozen and kept while the results kept weigh at most ``max_bytes``;
    a result larger than that is returned but not kept. Callers must not change a result."""

    def decorate(compute: Callable[..., Value]) -> Callable[..., Value]:
        @st.cache_resource(show_spinner=False)
        def store(name: str) -> tuple[cachetools.LRUCache, threading.Lock]:
            # In a cache_resource, so that Streamlit's "Clear caches" empties this one too; one
            # per decorated function (``name``), as every ``store`` has the same code.
            return cachetools.LRUCache(maxsize=max_bytes, getsizeof=size_in_bytes), threading.Lock()

        @functools.wraps(compute)
        def cached(*args: Hashable) -> Value:
            cache, lock = store(f"{compute.__module__}.{compute.__qualname__}")
            with lock:
                value: Any = cache.get(args)
            if value is None:
                with st.spinner(spinner) if spinner else contextlib.nullcontext():
                    value = compute(*args)
                freeze(value)
                # a value larger than the whole budget raises ValueError: returned, not kept
                with lock, contextlib.suppress(ValueError):
                    cache[args] = value
            return value

        return cached

    return decorate
