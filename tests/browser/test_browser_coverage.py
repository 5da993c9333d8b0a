"""The Coverage page in Chromium (see tests/browser/test_browser.py): a bar per source word, the
words likely dropped and said twice named, and a word followed to the rows that attended it, kept
in the URL.

Run only these: python -m pytest -m browser tests/browser/test_browser_coverage.py
"""

import html
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from app.figures.coverage import named_flags
from app.figures.text import plot_text
from core.inspection.coverage import word_coverage
from support.browser import CHART, wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

SENTENCE = "The small dog runs in the garden."  # the tiny model flags words of both kinds


def tick_texts(tab, chart: str) -> list[str]:
    ticks = tab.locator(f".st-key-chart-{chart} .js-plotly-plot .xtick text")
    return ticks.evaluate_all("els => els.map(e => e.textContent)")


def test_coverage_names_the_flagged_words_and_follows_one(server, page, translator):  # noqa: F811
    page.goto(f"{server}/coverage?{urlencode({'text': SENTENCE})}")
    page.wait_for_selector(CHART, timeout=240_000)  # run alone, the server starts cold
    wait_for_app(page)
    page.wait_for_selector(".st-key-chart-coverage .js-plotly-plot .main-svg")
    found = word_coverage(translator.translate(SENTENCE, "de", 4, 0.6, trace=True))
    labels, values, flags = found.source_labels, found.values(), found.flags()
    assert flags.under and flags.over
    assert tick_texts(page, "coverage") == [html.unescape(plot_text(label)) for label in labels]
    shown = page.locator("[data-testid='stMain'] [data-testid='stText']").all_inner_texts()
    assert any(named_flags(labels, values, flags.under) in text for text in shown), shown
    assert any(named_flags(labels, values, flags.over) in text for text in shown), shown

    follow = page.get_by_role("combobox", name="Source word to follow")
    follow.scroll_into_view_if_needed()  # a click that has to scroll first closes the list again
    follow.click()
    choice = f"{flags.over[0]}: {labels[flags.over[0]]}"
    page.get_by_role("option", name=choice, exact=True).click()
    wait_for_app(page)
    assert dict(parse_qsl(urlsplit(page.url).query))["coverage_word"] == choice
    title = page.locator(".st-key-chart-coverage-rows .gtitle").text_content()
    assert f"gave “{labels[flags.over[0]]}”: {values[flags.over[0]]:.2f} in all" in title
    assert not page.locator("[data-testid='stException']").count()
