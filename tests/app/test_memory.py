"""The server gives freed memory back to the system after a script run (app/memory.py)."""

import gc
import weakref

import numpy as np

from app.memory import release_freed_memory


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
