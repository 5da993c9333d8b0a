"""At most admission.SLOTS script runs compute at once; a waiting run goes on once a slot is
free, and a run that stops, reruns or fails gives its slot back (app/admission.py)."""

import threading
import time

import pytest
import streamlit as st

from app import admission, ui


def all_slots_free() -> bool:
    """Whether every slot can be taken at once now (each is given back at once)."""
    taken = 0
    while taken < admission.SLOTS and admission.TURN.acquire(blocking=False):
        taken += 1
    for _ in range(taken):
        admission.TURN.release()
    return taken == admission.SLOTS


def test_at_most_slots_runs_compute_at_once():
    inside, most = 0, 0
    count = threading.Lock()

    def run() -> None:
        nonlocal inside, most
        with admission.TURN:
            with count:
                inside += 1
                most = max(most, inside)
            time.sleep(0.02)
            with count:
                inside -= 1

    threads = [threading.Thread(target=run) for _ in range(4 * admission.SLOTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert most == admission.SLOTS
    assert all_slots_free()


def test_a_run_waits_while_every_slot_is_taken_and_goes_on_once_one_is_free(app):
    app("translate")  # the model loaded and cached, so that the run below is quick
    results = []
    for _ in range(admission.SLOTS):
        admission.TURN.acquire()
    try:
        waiting = threading.Thread(target=lambda: results.append(app("translate")))
        waiting.start()
        waiting.join(timeout=3)
        assert waiting.is_alive() and not results  # waiting its turn
    finally:
        for _ in range(admission.SLOTS):
            admission.TURN.release()
    waiting.join(timeout=120)
    assert not waiting.is_alive()
    assert not results[0].exception
    assert results[0].title[0].value == "Translate"
    assert all_slots_free()


def test_a_run_that_stops_gives_its_slot_back(app):
    at = app("translate", text=" ")  # nothing to translate: the page says so and stops
    assert "nothing to translate" in " ".join(info.value for info in at.info)
    assert all_slots_free()


def test_a_run_that_fails_gives_its_slot_back(app, monkeypatch):
    def fail() -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ui, "sentence_banner", fail)
    assert app("translate").exception
    assert all_slots_free()


@pytest.mark.parametrize("rerun", [st.rerun, lambda: st.switch_page("views/attention.py")])
def test_a_run_that_asks_for_a_rerun_gives_its_slot_back(app, monkeypatch, rerun):
    asked = []

    def banner_that_reruns_once() -> None:
        if not asked:
            asked.append(True)
            rerun()

    monkeypatch.setattr(ui, "sentence_banner", banner_that_reruns_once)
    at = app("translate")
    assert asked and not at.exception
    assert all_slots_free()
