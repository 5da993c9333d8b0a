"""The Training dynamics page plays the snapshots back, says when an early one had another
vocabulary, and the Attention and Translate pages show an earlier step; the app keeps the views of
a snapshot, not its model. Moved from tests/core/test_snapshots.py, which tests the snapshots."""

import pytest
from streamlit.testing.v1 import AppTest

from core.files.model_dir import MODEL_FILE, ModelDir, Snapshot
from tests.app.apptest import MAIN, chart_titles
from tests.conftest import EARLY_STEPS, FINAL_STEP
from tests.core.test_snapshots import SENTENCE


@pytest.fixture
def page(history_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))

    def open_page(**query: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=120)
        at.query_params.update(query)
        at.switch_page("views/training.py")
        return at.run()

    return open_page


@pytest.mark.slow
def test_the_page_moves_through_the_snapshots(page):
    at = page(kind="cross")
    assert not at.exception
    assert any(title.startswith(f"Step {EARLY_STEPS[0]}:") for title in chart_titles(at))
    banner = 2  # the sentence and its translation above the page come first
    early_text = at.text[banner].value
    at.select_slider(key="snapshot").set_value(FINAL_STEP).run()
    assert not at.exception
    assert any(title.startswith(f"Step {FINAL_STEP}:") for title in chart_titles(at))
    assert at.text[banner].value != early_text  # a random early model says something else
    at.button(key="earlier").click().run()
    assert any(title.startswith(f"Step {EARLY_STEPS[1]}:") for title in chart_titles(at))
    assert [metric.value for metric in at.metric][-1] == "12.5"  # validated at step 20


@pytest.mark.slow
def test_the_step_comes_from_the_url_and_a_wrong_one_falls_back_to_the_first_snapshot(page):
    at = page(snapshot=str(EARLY_STEPS[1]))
    assert any(title.startswith(f"Step {EARLY_STEPS[1]}:") for title in chart_titles(at))
    at = page(snapshot="7")  # not a snapshot of this model
    assert not at.exception
    assert any(title.startswith(f"Step {EARLY_STEPS[0]}:") for title in chart_titles(at))


@pytest.mark.slow
def test_a_snapshot_from_before_a_vocabulary_change_says_it_was_moved(
    moved_history_dir, monkeypatch
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(moved_history_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({"snapshot": str(EARLY_STEPS[0])})
    at.switch_page("views/training.py")
    at.run()
    assert not at.exception
    moved = f"Until step {EARLY_STEPS[0]:,} the model had a 300-piece vocabulary"
    assert any(moved in caption.value for caption in at.caption)
    at.select_slider(key="snapshot").set_value(EARLY_STEPS[1]).run()
    assert not any(moved in caption.value for caption in at.caption)


@pytest.mark.slow
def test_a_model_without_snapshots_shows_a_note(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.switch_page("views/training.py")
    at.run()
    assert not at.exception
    assert "keeps no snapshots" in at.info[0].value


@pytest.mark.slow
@pytest.mark.parametrize("page_file", ["attention", "translate"])
def test_the_attention_and_translate_pages_show_an_earlier_step(
    history_dir, monkeypatch, page_file
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({"snapshot": str(EARLY_STEPS[0]), "text": SENTENCE})
    at.switch_page(f"views/{page_file}.py")
    at.run()
    assert not at.exception
    assert any(title.endswith(f"step {EARLY_STEPS[0]}") for title in chart_titles(at))
    at.select_slider(key="snapshot").set_value(FINAL_STEP).run()
    assert not any("step" in title for title in chart_titles(at))


def test_no_snapshot_model_stays_in_memory(history_dir):
    """The app keeps the views, not the models: an earlier snapshot is read for its views and let
    go, and the last one is the app's own translator, not a second copy of it."""
    import gc
    import weakref

    from app import snapshot_cache, state

    path, early = str(history_dir), ModelDir(history_dir).snapshots()[0]
    final = Snapshot(FINAL_STEP, MODEL_FILE)
    assert snapshot_cache.load_snapshot(path, final) is state.load_translator(path)
    loaded = weakref.ref(snapshot_cache.load_snapshot(path, early))
    gc.collect()
    assert loaded() is None
