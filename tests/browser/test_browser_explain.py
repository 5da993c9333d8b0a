"""The Explain page in Chromium (see tests/browser/test_browser.py): pick a produced word, see
every lens over the source pieces, change one head, and compare the two halves of a bundled
minimal pair.

Run only these: python -m pytest -m browser tests/browser/test_browser_explain.py
"""

import html
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from app.display import piece_text
from app.figures.text import plot_text
from core.inspection.ablation import Head, distribution_shift, intervened_translator
from core.inspection.attribution import lenses
from core.inspection.minimal_pairs import PAIRS
from support.browser import CHART, wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

SENTENCE = "The dog runs in the park."
HEAD = "enc L2 H3"  # changes the tiny model's translation when made uniform


def query(tab) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(tab.url).query))


def tick_texts(tab, chart: str, axis: str) -> list[str]:
    """A chart's tick labels as read, the lines of a folded one joined by a space."""
    ticks = tab.locator(f".st-key-chart-{chart} .js-plotly-plot .{axis}tick text")
    return ticks.evaluate_all(
        "els => els.map(e => [...e.querySelectorAll('tspan.line')].map(line => line.textContent)"
        ".join(' ') || e.textContent)"
    )


def test_explain_lenses_intervention_and_minimal_pair(server, page, translator):  # noqa: F811
    page.goto(f"{server}/explain?text=The+dog+runs+in+the+park.")
    page.wait_for_selector(CHART)
    wait_for_app(page)
    traced = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)

    page.get_by_role("combobox", name="Produced piece to explain").click()
    page.get_by_role("option").nth(2).click()
    wait_for_app(page)
    label = piece_text(traced.attention.cross.query_labels[2])  # · for ▁, as in the figures
    assert query(page)["word"] == f"2: {label}"  # in the URL
    page.wait_for_selector(".st-key-chart-lenses-2 .js-plotly-plot .main-svg")
    expected = lenses(translator.model, traced, 2)
    assert tick_texts(page, "lenses-2", "y") == list(expected.values)  # a row per lens
    drawn = [html.unescape(plot_text(piece)) for piece in traced.source_tokens]
    assert tick_texts(page, "lenses-2", "x") == drawn  # over the source pieces
    assert tick_texts(page, "lens-agreement", "y") == list(expected.values)

    head = page.get_by_role("combobox", name="Head")
    head.click()
    head.fill(HEAD)
    page.keyboard.press("Enter")
    wait_for_app(page)
    page.get_by_role("radio", name="uniform weights (1/n)").click()
    wait_for_app(page)
    assert query(page)["probe"] == HEAD
    changed = intervened_translator(translator, [Head.parse(HEAD)], "uniform")
    vocabulary = translator.tokenizer.pieces(range(len(translator.tokenizer)))
    shift = distribution_shift(
        translator.predictions(traced)[2], changed.predictions(traced)[2], vocabulary
    )
    metric = page.locator("[data-testid='stMetric']", has_text="Total variation distance")
    assert metric.locator("[data-testid='stMetricValue']").inner_text() == (
        f"{shift.total_variation:.3f}"
    )
    retranslated = changed.translate(SENTENCE, "de", 4, 0.6).text
    codes = page.locator("[data-testid='stCode'] code").all_inner_texts()
    assert retranslated != traced.text and retranslated in codes

    first, second = PAIRS["number: dog / dogs"]
    pills = page.locator("[data-testid='stButtonGroup']", has_text="Bundled pairs")
    pills.get_by_text("number: dog / dogs").click()
    wait_for_app(page)
    assert page.get_by_role("textbox", name="English sentence").input_value() == first
    assert page.get_by_role("textbox", name="Second sentence").input_value() == second
    codes = page.locator("[data-testid='stCode'] code").all_inner_texts()
    for text in (first, second):
        assert translator.translate(text, "de", 4, 0.6).text in codes
    page.wait_for_selector(".st-key-chart-pair-difference .js-plotly-plot .main-svg")
    assert not page.locator("[data-testid='stException']").count()


def test_the_word_to_follow_tells_repeated_words_apart_in_the_url(server, page):  # noqa: F811
    first, second = "The dog saw the cat near the tree.", "The dog saw the cat near the trees."
    page.goto(f"{server}/explain?{urlencode({'text': first, 'pair': second})}")
    page.wait_for_selector(".st-key-chart-pair-second .js-plotly-plot .main-svg")
    wait_for_app(page)
    follow = page.get_by_role("combobox", name="Word to follow")
    follow.scroll_into_view_if_needed()  # a click that has to scroll first closes the list again
    follow.click()
    page.get_by_role("option").first.wait_for()
    options = page.get_by_role("option").all_inner_texts()
    repeated = [option for option in options if option.endswith(": the")]
    assert len(repeated) == 2 and len(set(options)) == len(options), options
    page.get_by_role("option", name=repeated[1], exact=True).click()
    wait_for_app(page)
    assert query(page)["follow"] == repeated[1]
    page.goto(page.url)  # the link opens the same word
    page.wait_for_selector(".st-key-chart-pair-second .js-plotly-plot .main-svg")
    wait_for_app(page)
    assert follow.input_value() == repeated[1]
