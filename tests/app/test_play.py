"""Play and the step buttons at the ends of a page's steps (app/lectern.py): at the last step Play
turns itself off without an error, and a forward step stays there quietly; Training dynamics
opens at its first snapshot, so that Play and the forward keys have somewhere to go."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest import MAIN, chart_titles
from tests.app.test_app import assert_fine
from tests.conftest import EARLY_STEPS, FINAL_STEP

pytestmark = pytest.mark.slow


def last_step(at: AppTest) -> int:
    return at.slider(key="step").max


@pytest.fixture
def training(history_dir, monkeypatch):
    """The Training dynamics page on the tiny model with snapshots."""
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.switch_page("views/training.py")
    return at.run()


def shown_step(at: AppTest) -> int:
    """The training step of the page's attention map ("Step 5: ...")."""
    (title,) = [title for title in chart_titles(at) if title.startswith("Step ")]
    return int(title.removeprefix("Step ").split(":")[0].replace(",", ""))


def test_play_at_the_last_beam_step_stops_without_an_error(app):
    at = app("beam_search")
    last = last_step(at)
    assert last > 0
    at.slider(key="step").set_value(last).run()
    at.toggle(key="play").set_value(True).run()
    assert_fine(at)
    assert at.toggle(key="play").value is False
    assert at.slider(key="step").value == last


def test_next_at_the_last_beam_step_stays_there(app):
    at = app("beam_search")
    last = last_step(at)
    at.slider(key="step").set_value(last).run()
    at.button(key="next").click().run()
    assert_fine(at)
    assert at.slider(key="step").value == last


def test_play_before_the_last_beam_step_plays_one_step(app):
    """The play's first step is taken in the run that turns it on (later ones in its fragment)."""
    at = app("beam_search")
    at.toggle(key="play").set_value(True).run()
    assert_fine(at)
    assert at.toggle(key="play").value is True
    assert at.slider(key="step").value == 1


def test_training_dynamics_opens_at_its_first_snapshot(training):
    assert_fine(training)
    assert training.select_slider(key="snapshot").value == EARLY_STEPS[0]
    assert shown_step(training) == EARLY_STEPS[0]
    training.button(key="later").click().run()
    assert shown_step(training) == EARLY_STEPS[1]


def test_play_and_later_at_the_last_snapshot_stop_without_an_error(training):
    training.select_slider(key="snapshot").set_value(FINAL_STEP).run()
    training.toggle(key="train_play").set_value(True).run()
    assert_fine(training)
    assert training.toggle(key="train_play").value is False
    assert shown_step(training) == FINAL_STEP
    training.button(key="later").click().run()
    assert_fine(training)
    assert shown_step(training) == FINAL_STEP
