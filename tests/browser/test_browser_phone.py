"""A phone (390x844) in Chromium (see tests/browser/test_browser.py): Explain's maps keep room for
their cells and their numbers inside them, Training dynamics' panel titles do not run into each
other, no chart's toolbar covers a title, Translate closes the sidebar that lies over the result
(on a laptop, where it stands beside the page, it stays open), and no text of any chart overlaps
another on the Story (every screen, the reveal too), Translate, Attention (with a query followed)
and Beam search.

Run only these: python -m pytest -m browser tests/browser/test_browser_phone.py
"""

import itertools
from urllib.parse import urlencode

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


# Every pair of a chart's texts (tick labels, titles and captions, annotations, a cell's text,
# legends) that overlap: [chart, first text, second text]. Texts not drawn (display none, every
# k-th label's others) and the hover layer are left out. Two texts turned by the same angle (a
# map's column labels, at -60 degrees) are compared as the turned boxes they are, their length
# along the text and their font's height across it (their screen boxes overlap whenever the
# labels are close, however far apart the letters); any other pair by their boxes on screen.
OVERLAPPING_TEXTS = r"""() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(chart => {
    const name = chart.closest('[class*=st-key-chart]')?.className.split(' ')
        .find(name => name.startsWith('st-key-chart-'));
    const texts = [...chart.querySelectorAll('text')]
        .filter(text => text.textContent.trim() && !text.closest('.hoverlayer'))
        .filter(text => getComputedStyle(text).display !== 'none'
                        && getComputedStyle(text).visibility !== 'hidden'
                        && Number(getComputedStyle(text).opacity) > 0)
        .map(text => {
            const box = text.getBoundingClientRect();
            const turned = /rotate\((-?[\d.]+)/.exec(text.getAttribute('transform') || '');
            return {
                text: text.textContent.slice(0, 40),
                box: [box.left, box.top, box.right, box.bottom],
                angle: turned ? Number(turned[1]) : 0,
                centre: [(box.left + box.right) / 2, (box.top + box.bottom) / 2],
                length: text.getComputedTextLength(),
                height: parseFloat(getComputedStyle(text).fontSize),
                lines: text.querySelectorAll('tspan.line').length,
            };
        })
        .filter(({box}) => box[2] > box[0] && box[3] > box[1]);
    const overlap = (a, b) => {
        if (a.angle === b.angle && a.angle !== 0 && !a.lines && !b.lines) {
            const rad = a.angle * Math.PI / 180;
            const dx = b.centre[0] - a.centre[0], dy = b.centre[1] - a.centre[1];
            const along = Math.abs(dx * Math.cos(rad) + dy * Math.sin(rad));
            const across = Math.abs(-dx * Math.sin(rad) + dy * Math.cos(rad));
            return along < (a.length + b.length) / 2 - 1 && across < (a.height + b.height) / 2 - 1;
        }
        return Math.min(a.box[2], b.box[2]) - Math.max(a.box[0], b.box[0]) > 1
            && Math.min(a.box[3], b.box[3]) - Math.max(a.box[1], b.box[1]) > 1;
    };
    const found = [];
    texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
        if (overlap(a, b)) found.push([name, a.text, b.text]);
    }));
    return found;
})"""
# "it" to ask about, a word's pieces, within the tiny model's 48 pieces
ANIMAL = "The animal slept because it was tired."


def overlapping_texts(tab) -> list:
    tab.wait_for_timeout(300)  # plotly's layout
    return tab.evaluate(OVERLAPPING_TEXTS)


def test_no_text_overlaps_on_the_story_translate_attention_and_beam_search(server, page):  # noqa: F811
    width, height = PHONE
    page.set_viewport_size({"width": width, "height": height})
    found = {}
    for screen in range(6):  # the reveal has no chart before the guess, the last screen none
        page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'story': str(screen)})}")
        page.wait_for_selector(f"h2:has-text('{screen + 1} ·')")
        wait_for_app(page)
        if screen == 2:  # the reveal: the votes and the head's map
            page.locator("[data-testid='stRadio'] label", has_text="animal").click()
            wait_for_app(page)
            page.wait_for_selector(".st-key-chart-story-self .js-plotly-plot")
        found[f"story {screen}"] = overlapping_texts(page)
    for path, query in [
        ("translate", {}),
        ("attention", {"query": "5"}),
        ("attention", {"kind": "cross", "words": "true"}),
        ("beam_search", {"step": "3"}),
    ]:
        open_page(page, server, path, text=ANIMAL, **query)
        found[f"{path} {query}"] = overlapping_texts(page)
        assert not page.locator("[data-testid='stException']").count(), path
    overlapping = {where: pairs for where, pairs in found.items() if pairs}
    assert not overlapping, "\n".join(f"{where}: {pairs}" for where, pairs in overlapping.items())


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
