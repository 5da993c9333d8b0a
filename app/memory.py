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
import sys


def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


MALLOC_TRIM = _malloc_trim()
_modules_when_frozen = 0  # len(sys.modules) at the last freeze


def freeze_what_is_loaded() -> None:
    """Keep every object alive now (modules, the model) out of later garbage collections."""
    global _modules_when_frozen
    gc.freeze()
    _modules_when_frozen = len(sys.modules)


def release_freed_memory() -> bool:
    """Collect the run's garbage cycles (and freeze what is alive after a run that loaded a
    module) and return freed heap memory to the system; False where the C library cannot
    return it."""
    gc.collect()
    if len(sys.modules) > _modules_when_frozen:
        freeze_what_is_loaded()
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True
