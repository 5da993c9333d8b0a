"""The server gives freed memory back to the system after a script run, and keeps what is loaded
out of later collections (app/garbage.py)."""

import gc
import math
import sys
import weakref

import numpy as np

from app import garbage
from app.garbage import release_freed_memory


class Page:  # a page's namespace and its functions point at each other
    pass


def garbage_cycle() -> weakref.ref:
    """A cycle holding an array, already garbage: a weak reference to it."""
    page = Page()
    page.itself = page
    page.figure = np.zeros(1_000_000)
    return weakref.ref(page)


def test_a_garbage_cycle_holding_an_array_is_gone_after_the_release(monkeypatch):
    monkeypatch.setattr(garbage, "_last_full_collection", -math.inf)  # a collection is due
    gc.disable()  # or an automatic collection could pass the test without the release
    try:
        alive = garbage_cycle()
        release_freed_memory()
    finally:
        gc.enable()
    assert alive() is None


def test_a_full_collection_at_most_once_a_second_whichever_session_asks(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(garbage.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(garbage, "_last_full_collection", -math.inf)
    gc.disable()
    try:
        release_freed_memory()  # collects: the last collection is now
        alive = garbage_cycle()
        clock[0] += 0.9 * garbage.FULL_COLLECTION_INTERVAL_S
        assert not release_freed_memory()
        assert alive() is not None  # waits for the next full collection
        clock[0] += 0.2 * garbage.FULL_COLLECTION_INTERVAL_S
        release_freed_memory()
        assert alive() is None
    finally:
        gc.enable()


def test_what_a_run_loaded_is_frozen_out_of_later_collections(tmp_path, monkeypatch):
    """A module a page loads for the first time, and what it builds at load (a table), is left out
    of every later collection; a run that loads nothing freezes nothing."""
    (tmp_path / "loaded_by_a_page.py").write_text("TABLE = [[n] for n in range(1000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        release_freed_memory()  # freezes what the tests loaded before, if anything
        import loaded_by_a_page

        table = loaded_by_a_page.TABLE
        assert any(o is table for o in gc.get_objects())  # looked at by every collection
        release_freed_memory()
        assert gc.is_tracked(table) and not any(o is table for o in gc.get_objects())

        frozen = gc.get_freeze_count()
        built_later = [[n] for n in range(10)]
        release_freed_memory()
        assert gc.get_freeze_count() <= frozen
        assert any(o is built_later for o in gc.get_objects())
    finally:
        gc.unfreeze()
        sys.modules.pop("loaded_by_a_page", None)
