"""The shipped deck (decks/paper.toml) on the shipped model in Chromium, driven as a lecturer with
a clicker alone drives it: from the first view to the last with PageDown, at 1280x720 and at
1920x1080 (one server for both). Every view opens on its page with its settings applied (read
from what the screen shows: the banner, the figures' titles and captions, the step), its main
figure lies wholly inside the viewport without scrolling, and no error box appears, not even for
a moment.

Run only these: python -m pytest -m browser tests/browser/test_browser_deck_walk.py
"""

import re
from urllib.parse import urlencode

import pytest

from app import deck
from app.display import ATTENTION_KINDS
from app.story import QUESTION_STEP
from core import DEFAULT_MODEL
from support.browser import app_server, wait_for_app
from tests.app.test_deck import shipped_shape
from tests.browser.test_browser import page, require_browser, step  # noqa: F401 (fixtures)
from tests.browser.test_browser_layout import inside, sidebar_collapsed
from tests.browser.test_browser_lectern import WATCH_FOR_ERRORS

pytestmark = pytest.mark.browser

LANGUAGES = {"de": "German", "fr": "French"}
# The Story's screens: the chart each draws first, or what stands in its place (the question to
# the audience before its guess, the ranked hypotheses' table)
STORY_MAIN = {
    0: ".st-key-chart-story-pieces .js-plotly-plot",
    1: ".st-key-chart-story-positions .js-plotly-plot",
    2: "[data-testid='stMain'] [data-testid='stRadio']",
    3: ".st-key-chart-story-mask .js-plotly-plot",
    4: ".st-key-chart-story-cross .js-plotly-plot",
    5: "[data-testid='stMain'] [data-testid='stTable']",
}
FIRST_CHART = {
    "translate": "alignment",
    "tokenization": "source-pieces",
    "embeddings": "pe-sentence",
    "compare": "compare-a",
    "masking": "padding-mask",
    "beam_search": "beam-tree",
    "logit_lens": "logit-lens",
}
SLOW_MS = 240_000  # the server starts cold on the shipped model; the Heads lab's survey


def chart(name: str) -> str:
    return f".st-key-chart-{name} .js-plotly-plot"


def main_element(view: deck.Step) -> str:
    """The selector of what a view is about: its page's first figure, or the figure its settings
    bring to the top (a query followed step by step, the grid, the heads switched off)."""
    name, settings = view.page, view.settings
    if name == "story":
        return STORY_MAIN[settings.get("story", 0)]
    if name == "attention":
        if "query" in settings:
            return chart("scaled-dot-product")
        grid = settings.get("view") == "All layers and heads"
        return chart("attention-grid" if grid else "attention-head")
    if name == "head_lab":
        return chart("intervention-tokens") if settings.get("off") else chart("focus")
    if name == "training":
        return chart(f"training-step-{settings['snapshot']}")
    if name == "masking" and {"mkind", "mlayer", "mhead"} & settings.keys():
        return chart("pipeline")  # the head of "From scores to weights" named: that section first
    return chart(FIRST_CHART[name])


def chart_text(tab, name: str) -> str:
    """A chart's title and caption (its compact subtitle in presentation mode)."""
    return tab.locator(f"{chart(name)} .g-gtitle").first.text_content()


def head_words(kind: str, layer: int, head: int | str) -> str:
    """How a compact caption names a kind's layer and head (app/slides.py caption_lines)."""
    named = "average of the heads" if head == "avg" else f"head {head}"
    return f"{ATTENTION_KINDS[kind]} · layer {layer} · {named}"


def row_labels(tab, name: str) -> list[str]:
    return tab.locator(f"{chart(name)} .ytick text").all_text_contents()


def assert_settings(tab, view: deck.Step, layers: int) -> None:
    """What the screen shows is what the view names: the sentence and its target in the banner,
    presentation mode, and each setting of its page where the page shows it."""
    s = view.settings
    banner = tab.locator(".st-key-sentence-banner")
    assert banner.locator("[data-testid='stText']").first.inner_text() == s["text"]
    assert LANGUAGES[s["to"]] in banner.inner_text()
    assert s["present"] and sidebar_collapsed(tab)
    assert not tab.locator("[data-testid='stMain'] h1").is_visible()  # presentation mode's CSS
    kind = s.get("kind", "encoder")
    if view.page == "story":
        header = tab.locator("[data-testid='stMain'] h2").first.inner_text()
        assert header.startswith(f"{s.get('story', 0) + 1} ·"), header
    elif view.page == "attention":
        layer, head = s.get("layer", layers), s.get("head", 1)
        if "query" in s:
            shown = chart_text(tab, "scaled-dot-product")
            assert f"{head_words(kind, layer, head)} · word" in shown, shown
        elif s.get("view") == "All layers and heads":
            assert ATTENTION_KINDS[kind] in chart_text(tab, "attention-grid")
        else:
            shown = chart_text(tab, "attention-head")
            assert head_words(kind, layer, head) in shown, shown
            labels = row_labels(tab, "attention-head")
            pieces = [label for label in labels if label.startswith(("·", "▁"))]
            assert bool(pieces) != s.get("words", False), labels  # words: no word-start pieces
    elif view.page == "compare":
        kind = s["compare_kind"]
        for side in "ab":
            shown = chart_text(tab, f"compare-{side}")
            assert head_words(kind, s[f"{side}_layer"], s[f"{side}_head"]) in shown, shown
    elif view.page == "masking":
        shown = chart_text(tab, "pipeline")
        assert head_words(s["mkind"], s["mlayer"], s["mhead"]) in shown, shown
    elif view.page == "beam_search":
        assert step(tab) == s["step"]
        assert f"search step {s['step']}" in chart_text(tab, "step-cross-attention")
    elif view.page == "head_lab":
        shown = chart_text(tab, "intervention-tokens")
        assert all(name in shown for name in s["off"]), shown
        assert ATTENTION_KINDS[kind] in chart_text(tab, "focus-head")
    elif view.page == "logit_lens":
        labels = row_labels(tab, "logit-lens")
        assert {"embedding", f"L{layers}"} <= set(labels), labels
        assert ("L1 cross-attention" in labels) == s.get("lens_sublayers", False), labels
    elif view.page == "training":
        snapshot = s["snapshot"]
        shown = chart_text(tab, f"training-step-{snapshot}")
        assert shown.startswith(f"Step {snapshot:,}: "), shown
        assert head_words(kind, s["layer"], s["head"]) in shown, shown


def path_of(view: deck.Step) -> str:
    """The view's page in the URL: the Story is the start page, at ""."""
    return "" if view.page == "story" else view.page


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on the shipped model, reading the shipped decks."""
    require_browser()
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(DEFAULT_MODEL, log, {deck.FOLDER_ENV: str(deck.SHIPPED_FOLDER)}) as url:
        yield url


@pytest.mark.parametrize("width, height", [(1280, 720), (1920, 1080)])
def test_pagedown_alone_walks_the_shipped_deck_every_view_applied_and_in_view(
    server,
    page,  # noqa: F811
    width,
    height,
):
    lecture = deck.parse(deck.read("paper"), shipped_shape())
    layers = shipped_shape().layers["encoder"]
    page.set_viewport_size({"width": width, "height": height})
    page.set_default_timeout(SLOW_MS)
    page.goto(f"{server}/?{urlencode({'deck': 'paper'})}")
    page.evaluate(WATCH_FOR_ERRORS)
    for number, view in enumerate(lecture.steps, start=1):
        if number > 1:
            page.keyboard.press("PageDown")
        at = re.compile(rf"/{path_of(view)}\?(.*&)?slide={number}(&|$)")
        page.wait_for_url(at, timeout=SLOW_MS)
        element = page.locator(main_element(view)).first
        element.wait_for(state="visible")
        wait_for_app(page)
        page.wait_for_timeout(300)  # plotly's first layout
        where = (number, view.title)
        assert not page.evaluate("window.errorBoxSeen"), where
        assert not page.locator("[data-testid='stException']").count(), where
        assert_settings(page, view, layers)
        box = element.bounding_box()
        assert inside(box, width, height), (*where, box)
        assert page.evaluate("window.scrollY") == 0, where
        if view.page == "story" and view.settings.get("story") == QUESTION_STEP:
            reveal_with_the_clicker(page, width, height, where)
    assert number == len(lecture.steps)


def reveal_with_the_clicker(tab, width: int, height: int, where: tuple) -> None:
    """At the Story's open question, PageDown reveals the model's answer beside its head's map,
    both in view, before the next PageDown opens the deck's next view."""
    tab.keyboard.press("PageDown")
    answer = tab.locator("[data-testid='stMain'] [data-testid='stAlertContentInfo']").first
    answer.wait_for(state="visible")
    wait_for_app(tab)
    tab.wait_for_timeout(300)
    assert answer.inner_text().startswith("Of the words other than"), where
    for element in (answer, tab.locator(chart("story-self")).first):
        assert inside(element.bounding_box(), width, height), (*where, "revealed")
