"""The server gives freed memory back to the system after a script run, and keeps what is loaded
out of later collections (app/memory.py)."""

import gc
import sys
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
