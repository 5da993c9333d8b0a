"""What a person checks by eye, measured in Chromium (see tests/browser/test_browser.py): in
presentation mode the page's main figure is seen whole without scrolling on a 1280x720 and a
1920x1080 screen, and every other page's first figure too; no chart title overlaps a tick label;
with the sidebar collapsed (a projector, a
390x844 phone) the sentence is still on screen on every page; on the phone no chart's title or
caption is cut and no picker runs off the screen or cuts an option short; in the dark theme the
figures' text is light.

Run only these: python -m pytest -m browser tests/browser/test_browser_layout.py
"""

import itertools
import re
from urllib.parse import urlencode

import pytest

from support.browser import CHART, wait_for_app
from tests.app.test_app import PAGES as APP_PAGES
from tests.browser.test_browser import chart_title, page, server, step  # noqa: F401 (fixtures)
from tests.conftest import EARLY_STEPS

pytestmark = pytest.mark.browser

SENTENCE = "The small cat sleeps in the big house."
# four lines of the banner's large type, were they all shown; 45 pieces, within the tiny model's
# reach, and no byte pieces (either would add a warning above the figure)
LONG_SENTENCE = (
    "The small red dog runs very quickly today and the big happy cat sleeps in the house while the "
    "child reads a book."
)
# pieces the vocabulary lacks (byte fallback): a warning, which presentation mode folds away
WARNING_SENTENCE = "The small cat 🐈 sleeps in the big house 🏠."
PROJECTORS = [(1280, 720), (1920, 1080)]
PHONE = (390, 844)
# page path -> the key of its main figure (ui.chart's name) and the query that shows it
MAIN_FIGURES = {
    "attention": ("attention-head", {"kind": "cross"}),
    "beam_search": ("beam-tree", {"step": "3"}),
    "masking": ("padding-mask", {}),
    "translate": ("alignment", {}),
    "compare": ("compare-a", {}),
    "training": (f"training-step-{EARLY_STEPS[0]}", {}),  # the page opens at its first snapshot
}
# every page by its address; the story, the start page, at ""
PAGES = ["", *(name for name in APP_PAGES if name != "story")]

BOX = "el => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"
# the bounding boxes of every chart title and tick label, per chart: [[titles], [ticks]]
TITLES_AND_TICKS = f"""() => [...document.querySelectorAll('.js-plotly-plot')].map(chart => [
    [...chart.querySelectorAll('.gtitle')].map({BOX}),
    [...chart.querySelectorAll('.xtick text, .ytick text')].map({BOX}),
])"""
ROW_LABELS = f"chart => [...chart.querySelectorAll('.ytick text')].map({BOX})"
# the text written into a heatmap's cells (the padding mask's pieces)
CELL_TEXTS = f"chart => [...chart.querySelectorAll('.heatmaplayer text')].map({BOX})"


def open_page(tab, url: str, path: str, text: str = SENTENCE, **query: str) -> None:
    tab.goto(f"{url}/{path}?{urlencode({'text': text} | query)}")
    wait_for_app(tab)
    if path != "model":
        tab.wait_for_selector(CHART)
    tab.wait_for_timeout(300)  # plotly's first layout


def overlap(a: list[float], b: list[float]) -> bool:
    """Whether two boxes (left, top, right, bottom) share more than a pixel's sliver."""
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


def inside(box: dict | None, width: int, height: int) -> bool:
    """Whether a Playwright bounding box lies wholly in a width x height viewport."""
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


def titles_overlapping_ticks(tab) -> list[tuple[list[float], list[float]]]:
    return [
        (title, tick)
        for titles, ticks in tab.evaluate(TITLES_AND_TICKS)
        for title in titles
        for tick in ticks
        if overlap(title, tick)
    ]


def sidebar_collapsed(tab) -> bool:
    box = tab.locator("[data-testid='stSidebar']").bounding_box()
    return box is None or box["x"] + box["width"] <= 0


@pytest.mark.parametrize("width, height", PROJECTORS)
@pytest.mark.parametrize(
    "text", [SENTENCE, LONG_SENTENCE, WARNING_SENTENCE], ids=["short", "long", "warning"]
)
def test_presentation_mode_shows_the_main_figure_whole(server, page, width, height, text):  # noqa: F811
    page.set_viewport_size({"width": width, "height": height})
    for path, (chart, query) in MAIN_FIGURES.items():
        open_page(page, server, path, text, present="true", **query)
        assert sidebar_collapsed(page), path
        banner = page.locator(".st-key-sentence-banner [data-testid='stText']").first
        assert banner.inner_text() == text
        assert float(banner.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")) >= 28
        figure = page.locator(f".st-key-chart-{chart} .js-plotly-plot").bounding_box()
        assert figure["height"] > height / 2, (path, figure)  # fitted, not a thumbnail
        assert inside(figure, width, height), (path, figure)
        labels = page.locator(f".st-key-chart-{chart} .js-plotly-plot").evaluate(ROW_LABELS)
        shown = [box for box in labels if box[2] > box[0]]  # a long map shows every k-th
        assert len(shown) >= min(len(labels), 2), (path, len(shown))
        if len(shown) < len(labels):  # thinned no more than it must be: one more label
            gaps = [below[1] - above[1] for above, below in itertools.pairwise(shown)]
            assert max(gaps) < 2 * (shown[0][3] - shown[0][1]), (path, gaps)  # would overlap
        assert not any(overlap(*pair) for pair in itertools.pairwise(shown)), path  # legible
        cells = page.locator(f".st-key-chart-{chart} .js-plotly-plot").evaluate(CELL_TEXTS)
        assert not any(overlap(*pair) for pair in itertools.pairwise(cells)), path
        assert page.evaluate("window.scrollY") == 0
        assert not titles_overlapping_ticks(page), path
        assert not page.locator("[data-testid='stException']").count()
        warned = page.locator("[data-testid='stMain'] [data-testid='stAlertContentWarning']")
        assert (warned.count() > 0) == (text == WARNING_SENTENCE), path  # folded, not in the way


@pytest.mark.parametrize("width, height", PROJECTORS)
def test_presentation_mode_shows_every_other_pages_first_figure_whole(
    server,  # noqa: F811
    page,  # noqa: F811
    width,
    height,
):
    page.set_viewport_size({"width": width, "height": height})
    page.set_default_timeout(300_000)  # Explain's integrated gradients, on a busy machine
    for path in [path for path in PAGES if path not in MAIN_FIGURES]:
        page.goto(f"{server}/{path}?{urlencode({'text': SENTENCE, 'present': 'true'})}")
        page.wait_for_selector(CHART)
        wait_for_app(page)
        page.wait_for_timeout(300)  # plotly's first layout
        figure = page.locator("[data-testid='stMain'] .js-plotly-plot").first.bounding_box()
        assert inside(figure, width, height), (path, figure)
        assert page.evaluate("window.scrollY") == 0, path
        assert not page.locator("[data-testid='stException']").count(), path


def choose(tab, picker: str, option: str) -> None:
    """Click ``option`` of the segmented control labelled ``picker`` and wait for the rerun."""
    group = tab.get_by_role("radiogroup", name=picker, exact=True)
    group.get_by_role("radio", name=option, exact=True).click()
    wait_for_app(tab)


def test_presentation_mode_keeps_layer_head_and_step_within_reach(server, page):  # noqa: F811
    width, height = PROJECTORS[0]
    page.set_viewport_size({"width": width, "height": height})
    open_page(page, server, "attention", present="true", kind="cross")
    for picker in ("Layer", "Head"):
        box = page.get_by_role("radiogroup", name=picker, exact=True).bounding_box()
        assert inside(box, width, height) and box["height"] < 40, (picker, box)  # one small line
    assert not page.get_by_role("radiogroup", name="Attention").is_visible()  # the rest: hidden
    choose(page, "Layer", "1")
    choose(page, "Head", "3")
    assert chart_title(page) == "Cross-attention, layer 1, head 3"
    assert "layer=1" in page.url and "head=3" in page.url
    figure = page.locator(".st-key-chart-attention-head .js-plotly-plot").bounding_box()
    assert inside(figure, width, height) and page.evaluate("window.scrollY") == 0

    open_page(page, server, "beam_search", present="true", step="1")
    page.get_by_role("button", name="Next ▶").click()
    wait_for_app(page)
    assert step(page) == 2
    choose(page, "Head", "2")
    assert "xhead=2" in page.url
    caption = page.locator(".st-key-chart-step-cross-attention .gtitle-subtitle").text_content()
    assert "Cross-attention · layer 2 · head 2 · search step 2" in caption


def test_a_sidebar_opened_in_presentation_mode_stays_open_through_a_setting(
    server,  # noqa: F811
    page,  # noqa: F811
):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, server, "attention", present="true")
    assert sidebar_collapsed(page)
    page.locator("[data-testid='stExpandSidebarButton']").click()
    page.wait_for_timeout(500)  # the sidebar's slide-in
    assert not sidebar_collapsed(page)
    choose(page, "Translate into", "French")  # a setting changed while presenting
    page.wait_for_timeout(500)
    assert "to=fr" in page.url
    assert not sidebar_collapsed(page)


def test_no_chart_title_overlaps_a_tick_label(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 720})
    for path in ["attention", "masking", "embeddings"]:
        open_page(page, server, path)
        assert not titles_overlapping_ticks(page), path


def luminance(css_colour: str) -> float:
    """0 (black) to 1 (white) for a computed CSS colour, "rgb(r, g, b)" or "rgba(...)"."""
    red, green, blue = (float(part) for part in re.findall(r"[\d.]+", css_colour)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_the_dark_theme_keeps_the_figures_readable(server, page):  # noqa: F811
    page.emulate_media(color_scheme="dark")  # the app follows the system's theme by default
    open_page(page, server, "attention")
    background = page.locator("[data-testid='stApp']").evaluate(
        "el => getComputedStyle(el).backgroundColor"
    )
    tick = page.locator(".js-plotly-plot .xtick text").first.evaluate(
        "el => getComputedStyle(el).fill"
    )
    assert luminance(background) < 0.2 < 0.6 < luminance(tick), (background, tick)
    page.locator("[data-testid='stMainMenu']").click()  # the in-app switch
    menu = page.locator("[data-testid='stMainMenuList']").inner_text()
    assert "Light" in menu and "Dark" in menu


# Every chart's title and caption lines that stick out of the chart's box: [chart, line, box].
CUT_TITLES = f"""() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(chart => {{
    const [left, top, right] = ({BOX})(chart);
    return [...chart.querySelectorAll('.g-gtitle tspan.line, .g-gtitle text')]
        .map(line => [chart.closest('[class*=st-key-chart]')?.className, line.textContent,
                      ({BOX})(line)])
        .filter(([, , box]) => box[0] < left - 1 || box[1] < top - 1 || box[2] > right + 1);
}})"""
# Every picker of the page that reaches past the screen's right edge, scrolls sideways, or cuts
# an option short ("…"): [what, its label].
CUT_PICKERS = """(width) => [
    ...[...document.querySelectorAll(`[data-testid=stMain] :is([role=radiogroup],
        [data-testid=stSelectbox], [data-testid=stMultiSelect], [data-testid=stSlider])`)]
        .filter(el => el.getBoundingClientRect().right > width || el.scrollWidth > el.clientWidth)
        .map(el => ['picker', el.getAttribute('aria-label') || el.innerText.slice(0, 40)]),
    ...[...document.querySelectorAll('[data-testid=stMain] [role=radiogroup] button p')]
        .filter(p => p.scrollWidth > p.clientWidth + 1)
        .map(p => ['option', p.textContent]),
]"""
# Long enough for every caption to wrap: a line cut at the chart's edge would show
PHONE_SENTENCE = "The agreement on the European Economic Area was signed in August 1992 by all."


def test_every_page_of_a_phone_shows_the_sentence_whole_captions_and_pickers(
    server,  # noqa: F811
    page,  # noqa: F811
):
    width, height = PHONE
    page.set_viewport_size({"width": width, "height": height})
    for path in PAGES:
        open_page(page, server, path, text=PHONE_SENTENCE)
        assert sidebar_collapsed(page), path
        source = page.locator(
            "[data-testid='stMain'] [data-testid='stText']", has_text=PHONE_SENTENCE
        )
        box = source.first.bounding_box()
        assert inside(box, width, height), (path, box)
        assert not page.evaluate(CUT_TITLES), path
        assert not page.evaluate(CUT_PICKERS, width), path
        assert not page.locator("[data-testid='stException']").count(), path


def test_a_page_link_closes_a_phones_sidebar_and_a_laptops_stays(server, page):  # noqa: F811
    """On a phone the open sidebar covers 300 of 390 px: choosing a page closes it (app/access.py);
    on a laptop, where it stands beside the page, it stays open."""
    for (width, height), closes in ((PHONE, True), ((1280, 720), False)):
        page.set_viewport_size({"width": width, "height": height})
        open_page(page, server, "", text=SENTENCE)
        if sidebar_collapsed(page):
            page.locator("[data-testid='stExpandSidebarButton']").click()
            page.wait_for_timeout(500)  # the sidebar's slide-in
        assert not sidebar_collapsed(page)
        page.locator("[data-testid='stSidebarNavLink']", has_text="Attention").click()
        page.wait_for_url("**/attention**")
        page.wait_for_timeout(800)  # the sidebar's slide-out
        assert sidebar_collapsed(page) is closes, (width, height)


@pytest.mark.parametrize("present", ["false", "true"], ids=["normal", "presentation"])
def test_a_title_of_two_lines_stays_inside_its_chart(server, page, present):  # noqa: F811
    """The Heads lab's "What each piece of the normal translation loses ..." wraps to two lines
    on a laptop, which plotly draws higher than one (app/slides.py): its first line stays on the
    chart."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, server, "head_lab", off="cross L1 H2", present=present)
    chart = page.locator(".st-key-chart-intervention-tokens")
    chart.scroll_into_view_if_needed()
    lines = chart.locator(".g-gtitle tspan.line").all_text_contents()
    if present == "false":  # a projector's title has room for one line (app/slides.py)
        assert lines[1] == "teacher-forced)", lines  # two lines of title, then the caption
    assert chart.locator(".g-gtitle").bounding_box()["y"] >= chart.bounding_box()["y"]
