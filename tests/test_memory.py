"""The server gives freed memory back to the system after a script run (app/memory.py)."""

import gc
import os
import weakref
from pathlib import Path

import numpy as np
import pytest

from app.memory import MALLOC_TRIM, release_freed_memory


def resident_mb() -> float:
    status = Path(f"/proc/{os.getpid()}/status").read_text()
    return (
        int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])
        / 1024
    )


@pytest.mark.skipif(MALLOC_TRIM is None, reason="no malloc_trim: not glibc")
def test_freed_holes_in_the_heap_go_back_to_the_system():
    # 100 MB in 64 KB blocks (below glibc's mmap threshold: from the heap), each followed by a
    # small block that stays, so that freeing the large ones leaves holes free() cannot return
    large, kept = [], []
    for _ in range(1600):
        large.append(bytearray(64 * 1024))
        kept.append(bytearray(1024))
    del large
    before = resident_mb()
    assert release_freed_memory()
    assert before - resident_mb() > 50
    assert len(kept) == 1600


def test_a_garbage_cycle_holding_an_array_is_gone_after_the_release():
    class Page:  # a page's namespace and its functions point at each other
        pass

    gc.disable()  # or an automatic collection could pass the test without the release
    page = Page()
    page.itself = page
    page.figure = np.zeros(1_000_000)
    alive = weakref.ref(page)
    del page
    try:
        release_freed_memory()
    finally:
        gc.enable()
    assert alive() is None
