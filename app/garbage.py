"""Give the memory that a script run freed back to the operating system.

A page's script runs in a module namespace of its own, and the functions it defines point back to
that namespace: a cycle, which keeps the page's figures and arrays alive until Python's cyclic
garbage collector runs. Streamlit collects after every run (``runner.postScriptGC``), but a full
collection over everything torch and Streamlit have loaded took a large share of a rerun's time
under load; so the app freezes what is loaded once the model is in (``gc.freeze``: a collection
no longer looks at those objects), turns Streamlit's collection off, and collects here. What the
pages load later (plotly's figure classes, Streamlit's elements, py3langid's model: 40,000
objects holding 400,000 references) would be looked at by every collection, 20-30 ms of a 55 ms
page switch: so after a run that loaded a module, what is alive is frozen too. A module is loaded
once, so that happens a few times in a server's life, mostly on the first visit of each page;
the price is that an object alive then (another session's state) which later becomes garbage in
a cycle is never collected.

A full collection looks at every object the caches hold, and that grows with them: with 60
analyses in the shared cache (three rounds of ``python -m benchmarks.load --users 20``) one took
24 ms, and 20 users acting at once each paid it, one after another under the GIL. So a run
collects only when a second has passed since the last full collection, of any session: with 20
users at once, a few collections a wave instead of 20, and a page's garbage waits at most that
second (or until Python's own collection gets to it).

glibc's malloc keeps freed memory inside its heaps for reuse, and the server has many heaps (one
per script thread, roughly). The large, short-lived tensors and arrays of a beam search with its
trace leave holes there: running the Training dynamics page on long sentences in one process
(streamlit.testing, every cache bounded) grew it by about 40 MB per sentence, and with the
collection and ``malloc_trim(0)`` after each run it stayed flat. The trim hands the free pages
back in 1-4 ms. Elsewhere than glibc (macOS, musl) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import math
import sys
import threading
import time


def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


MALLOC_TRIM = _malloc_trim()
FULL_COLLECTION_INTERVAL_S = 1.0
_modules_when_frozen = 0  # len(sys.modules) at the last freeze
_last_full_collection = -math.inf  # time.monotonic() of the last full collection
_collection_lock = threading.Lock()


def freeze_what_is_loaded() -> None:
    """Keep every object alive now (modules, the model) out of later garbage collections."""
    global _modules_when_frozen
    gc.freeze()
    _modules_when_frozen = len(sys.modules)


def _full_collection_due() -> bool:
    """True for one caller at most once per FULL_COLLECTION_INTERVAL_S, whichever thread asks."""
    global _last_full_collection
    with _collection_lock:
        now = time.monotonic()
        if now - _last_full_collection < FULL_COLLECTION_INTERVAL_S:
            return False
        _last_full_collection = now
        return True


def release_freed_memory() -> bool:
    """Collect the garbage cycles of the runs since the last collection (and freeze what is
    alive after a run that loaded a module) and return freed heap memory to the system, when a
    full collection is due or a module was loaded. Whether memory was handed back: False when
    nothing was collected, or where the C library cannot return it."""
    loaded = len(sys.modules) > _modules_when_frozen
    if not _full_collection_due() and not loaded:
        return False
    gc.collect()
    if loaded:
        freeze_what_is_loaded()
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True
