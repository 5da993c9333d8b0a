"""A deck in Chromium (app/deck_controls.py): in presentation mode, with the sidebar closed, a
clicker's PageDown and PageUp open the deck's next and previous views, each on its page with its
settings, and on a page with steps of its own (the beam search) the deck's keys win.

Run only these: python -m pytest -m browser tests/browser/test_browser_deck.py
"""

import re
from urllib.parse import urlencode

import pytest

from app.deck import FOLDER_ENV
from support.browser import CHART, app_server, wait_for_app
from tests.browser.test_browser import (  # noqa: F401 (fixtures)
    chart_title,
    page,
    require_browser,
    step,
)
from tests.browser.test_browser_layout import sidebar_collapsed
from tests.conftest import EARLY_STEPS

pytestmark = pytest.mark.browser

LECTURE = f"""
[settings]
text = "The animal didn't cross the street because it was too tired."
present = true

[[step]]
page = "attention"
kind = "cross"
layer = 1
head = 2

[[step]]
page = "beam_search"
step = 2

[[step]]
page = "training"
snapshot = {EARLY_STEPS[1]}
kind = "decoder"
"""


def press_to(tab, key: str, number: int, path: str) -> None:
    """Press ``key`` and wait until the deck's step ``number`` is open, on the page at ``path``
    (a step opens in two runs: the one the key starts switches page)."""
    tab.keyboard.press(key)
    tab.wait_for_url(re.compile(rf"/{path}\?(.*&)?slide={number}\b"), timeout=120_000)
    tab.wait_for_selector(CHART)
    wait_for_app(tab)


@pytest.fixture(scope="module")
def server(history_dir, tmp_path_factory):
    """The app on the tiny model with its snapshots, reading decks from a folder holding
    LECTURE (a lecturer's own, $ATTENTION_LAB_DECKS)."""
    require_browser()
    decks = tmp_path_factory.mktemp("decks")
    (decks / "lecture.toml").write_text(LECTURE, encoding="utf-8")
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(history_dir, log, {FOLDER_ENV: str(decks)}) as url:
        yield url


def test_clicker_keys_step_through_a_deck_with_the_sidebar_closed(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server}/?{urlencode({'deck': 'lecture'})}")
    page.wait_for_url(re.compile(r"/attention\?(.*&)?slide=1\b"), timeout=240_000)
    page.wait_for_selector(CHART)
    wait_for_app(page)
    assert sidebar_collapsed(page)  # the deck's buttons are out of sight: only the keys
    assert chart_title(page).startswith("Cross-attention, layer 1, head 2")

    press_to(page, "PageDown", 2, "beam_search")
    assert step(page) == 2
    press_to(page, "PageDown", 3, "training")  # the deck's next view, not the search's step 3
    assert chart_title(page).startswith(f"Step {EARLY_STEPS[1]}: Decoder masked self-attention")
    press_to(page, "PageUp", 2, "beam_search")
    assert step(page) == 2
    press_to(page, "ArrowLeft", 1, "attention")
    assert chart_title(page).startswith("Cross-attention, layer 1, head 2")
    assert not page.locator("[data-testid='stException']").count()
