"""A lecture on a 1280x720 projector, measured in Chromium: in presentation mode the Attention
page's map (its cells, not the figure's margins) is at least 300 px tall and on screen, its row
labels at least 12 px, its caption one line of what it shows; the Story's reveal shows the answer
and the head's map side by side, both inside the screen (and at 1920x1080); on the Translate page
a German sentence gets a notice naming English that an English sentence does not.

Run only these: python -m pytest -m browser tests/browser/test_browser_projector.py
"""

from urllib.parse import urlencode

import pytest

from support.browser import CHART, wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)
from tests.browser.test_browser_layout import (
    LONG_SENTENCE,  # 45 pieces: the tiny model's reach
    PROJECTORS,
    inside,
)

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
MAP = ".st-key-chart-attention-head .js-plotly-plot"
CELLS = """(selector) => {
    const chart = document.querySelector(selector);
    const cells = chart.querySelector(".nsewdrag").getBoundingClientRect();
    const labels = [...chart.querySelectorAll(".ytick text")]
        .filter(label => getComputedStyle(label).display !== "none");
    return {
        top: cells.top, bottom: cells.bottom, height: cells.height,
        fonts: labels.map(label => parseFloat(getComputedStyle(label).fontSize)),
        caption: chart.querySelector(".gtitle-subtitle").textContent,
    };
}"""


def open_page(tab, url: str, path: str, **query: str) -> None:
    tab.goto(f"{url}/{path}?{urlencode(query)}")
    tab.wait_for_selector(CHART, timeout=240_000)  # run alone, the server starts cold
    wait_for_app(tab)
    tab.wait_for_timeout(300)  # plotly's first layout


@pytest.mark.parametrize(
    "text", ["The dog runs in the park.", LONG_SENTENCE], ids=["short", "long"]
)
def test_the_map_takes_the_projectors_height_with_readable_labels(server, page, text):  # noqa: F811
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    open_page(page, server, "attention", text=text, present="true", kind="cross")
    cells = page.evaluate(CELLS, MAP)
    assert cells["height"] >= 300, cells
    assert cells["top"] >= 0 and cells["bottom"] <= HEIGHT, cells
    assert cells["fonts"] and min(cells["fonts"]) >= 12, cells
    # one line: the banner above says the sentence and its translation
    assert cells["caption"].startswith("model ") and "English:" not in cells["caption"], cells
    assert not page.locator(f"{MAP} .modebar-container").is_visible()  # no export of it


# within the tiny model's 48 pieces, with "it" to ask about
ANIMAL = "The animal slept because it was tired."


@pytest.mark.parametrize("width, height", PROJECTORS)
def test_the_storys_reveal_shows_the_answer_beside_the_map(server, page, width, height):  # noqa: F811
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'present': 'true', 'story': '2'})}")
    page.wait_for_selector("[data-testid='stRadio']", timeout=240_000)  # the server starts cold
    wait_for_app(page)
    page.locator("[data-testid='stRadio'] label", has_text="animal").click()  # the guess
    wait_for_app(page)
    story_map = ".st-key-chart-story-self .js-plotly-plot"
    page.wait_for_selector(story_map)
    page.wait_for_timeout(300)  # plotly's first layout
    answer = page.locator("[data-testid='stMain'] [data-testid='stAlert']", has_text="animal")
    assert answer.count() == 1  # the answer alone: no other box of text
    alerts = page.locator("[data-testid='stMain'] [data-testid='stAlert']")
    assert alerts.count() == 1, alerts.all_inner_texts()
    for shown in (answer, page.locator(story_map)):
        assert inside(shown.bounding_box(), width, height), shown.bounding_box()
    cells = page.evaluate(CELLS, story_map)
    assert cells["height"] >= 0.3 * height and min(cells["fonts"]) >= 12, cells
    assert page.evaluate("window.scrollY") == 0
    assert not page.locator("[data-testid='stException']").count()


def test_a_german_sentence_is_told_the_model_reads_english(server, page):  # noqa: F811
    notice = "[data-testid='stMain'] [data-testid='stAlert']"
    open_page(page, server, "translate", text="Ich habe heute keine Zeit.")
    told = page.locator(notice, has_text="not English")
    assert told.count() == 1 and "English only" in told.inner_text()
    open_page(page, server, "translate", text="John lives in Salt Lake City.")
    assert page.locator(notice, has_text="English").count() == 0
