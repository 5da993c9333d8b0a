"""A phone (390x844) in Chromium (see tests/browser/test_browser.py): Explain's maps keep room for
their cells and their numbers inside them, Training dynamics' panel titles do not run into each
other, no chart's toolbar covers a title, and Translate closes the sidebar that lies over the
result (on a laptop, where it stands beside the page, it stays open).

Run only these: python -m pytest -m browser tests/browser/test_browser_phone.py
"""

import itertools

import pytest

from support.browser import wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)
from tests.browser.test_browser_layout import BOX, PHONE, open_page, overlap, sidebar_collapsed

pytestmark = pytest.mark.browser

SENTENCE = "The dog runs in the park."
SLOW_PAGE_MS = 300_000  # Explain's integrated gradients and every snapshot, on a busy machine
MIN_PLOT_PX = 150  # a map's cells across a phone (the lens map's were 64 px, beside its labels)
TITLES = ".g-gtitle text, .annotation-text"  # a chart's title and caption lines, panel titles


def chart(tab, name: str):
    """The plotly chart that ui.chart drew as ``name`` (a prefix: "lenses-" for any word)."""
    return tab.locator(f"[class*='st-key-chart-{name}'] .js-plotly-plot").first


def boxes(tab, name: str, selector: str) -> list[list[float]]:
    return chart(tab, name).evaluate(f"c => [...c.querySelectorAll({selector!r})].map({BOX})")


def plot_width(tab, name: str) -> float:
    """The width of a chart's (first) plot area: its cells, not its labels and margins."""
    left, _, right, _ = boxes(tab, name, ".nsewdrag")[0]
    return right - left


def toolbar_over_titles(tab, name: str) -> list[list[float]]:
    """The title lines of a chart that its toolbar (plotly's modebar, shown on hover) covers
    (a toolbar that is not drawn has an empty box)."""
    chart(tab, name).scroll_into_view_if_needed()
    chart(tab, name).hover()
    toolbars = boxes(tab, name, ".modebar")
    titles = boxes(tab, name, TITLES)
    return [title for toolbar in toolbars for title in titles if overlap(toolbar, title)]


def test_explain_maps_keep_their_cells_wide_and_their_numbers_apart(server, page):  # noqa: F811
    width, height = PHONE
    page.set_viewport_size({"width": width, "height": height})
    page.set_default_timeout(SLOW_PAGE_MS)
    open_page(page, server, "explain", text=SENTENCE)
    for name in ("lenses-", "lens-agreement"):
        assert plot_width(page, name) >= MIN_PLOT_PX, name
        assert not toolbar_over_titles(page, name), name
    numbers = boxes(page, "lens-agreement", ".heatmaplayer text")
    assert len(numbers) == 7 * 7  # Kendall's tau for every pair of lenses
    assert not [pair for pair in itertools.combinations(numbers, 2) if overlap(*pair)]


def test_training_dynamics_panels_and_their_titles_stand_apart(server, page):  # noqa: F811
    width, height = PHONE
    page.set_viewport_size({"width": width, "height": height})
    page.set_default_timeout(SLOW_PAGE_MS)
    open_page(page, server, "training", text=SENTENCE)
    titles = boxes(page, "head-dynamics", ".annotation-text")
    assert len(titles) >= 2  # entropy and confidence (and diagonality for cross-attention)
    assert not [pair for pair in itertools.combinations(titles, 2) if overlap(*pair)]
    assert all(title[0] >= 0 and title[2] <= width for title in titles)  # not cut either
    for name in ("head-dynamics", "training-step-"):
        assert not toolbar_over_titles(page, name), name


@pytest.mark.parametrize("width, height, closes", [(*PHONE, True), (1280, 720, False)])
def test_translate_closes_the_sidebar_where_it_lies_over_the_result(
    server,  # noqa: F811
    page,  # noqa: F811
    width,
    height,
    closes,
):
    page.set_viewport_size({"width": width, "height": height})
    open_page(page, server, "translate", text=SENTENCE)
    if sidebar_collapsed(page):  # a phone starts with it closed
        page.locator("[data-testid='stExpandSidebarButton']").click()
        page.wait_for_timeout(500)  # the sidebar's slide-in
    assert not sidebar_collapsed(page)
    page.get_by_role("textbox", name="English sentence").fill("A man is riding a bicycle.")
    page.get_by_role("button", name="Translate", exact=True).click()
    wait_for_app(page)
    page.wait_for_timeout(500)  # the slide-out
    assert sidebar_collapsed(page) == closes
    assert "A man is riding a bicycle." in page.locator("[data-testid='stMain']").inner_text()
