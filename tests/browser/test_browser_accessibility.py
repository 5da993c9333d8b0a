"""WCAG 2.1 AA in Chromium (docs/accessibility.md): on every page, in presentation mode at
1280x720, every chart label is at least 18 px and 4.5:1 on the page; axe-core (bundled in the
axe-playwright-python package, nothing downloaded) finds no serious or critical violation in the
app's own content, normal and presentation; the sentence box is at most 3 keys away from any page;
a control that has the keyboard's focus shows a 2 px outline; charts are named, and their toolbars
are out of the tab order.

Run only these: python -m pytest -m browser tests/browser/test_browser_accessibility.py
"""

from urllib.parse import urlencode

import pytest

from app.access import SENTENCE_BOX
from app.figures.style import MIN_CONTRAST, PRESENTATION_TEXT_PX, contrast
from support.browser import CHART, wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)
from tests.browser.test_browser_layout import PAGES

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
SENTENCE = "The animal slept because it was tired."
# Every label of every chart: its text, fill, opacity, font size and where it is drawn. Text in a
# map's cells and in a boxed label stands on its own colour, not on the page (style.legible).
LABELS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(chart =>
    [...chart.querySelectorAll(`.xtick text, .ytick text, .g-gtitle text, .legendtext,
        .g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text, .cbaxis text,
        .cbtitle text, .annotation:not(:has(rect.bg[style*='fill-opacity: 0.'])) .annotation-text,
        .textpoint text`)]
        .filter(text => text.textContent.trim() && getComputedStyle(text).display !== 'none'
            && text.getBoundingClientRect().width > 0
            && !text.closest('.heatmaplayer, .bars'))
        .map(text => ({
            chart: chart.closest('[class*=st-key-chart]')?.className.match(/st-key-(\\S+)/)?.[1],
            text: text.textContent.slice(0, 40),
            fill: getComputedStyle(text).fill,
            opacity: getComputedStyle(text).fillOpacity,
            size: parseFloat(getComputedStyle(text).fontSize),
        })))"""
BACKGROUND = "() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"

# What axe still finds in Streamlit's own markup, not the app's: rule -> why. (Streamlit's page
# list, a list of sections, was one: app/access.py's script gives it list roles.)
STREAMLIT_OWN: dict[str, str] = {}
ACTIVE = "() => document.activeElement?.getAttribute('aria-label')"


def open_page(tab, url: str, path: str, **query: str) -> None:
    tab.goto(f"{url}/{path}?{urlencode({'text': SENTENCE} | query)}")
    wait_for_app(tab)
    if path != "model":
        tab.wait_for_selector(CHART, timeout=240_000)  # the first page starts the server cold
    tab.wait_for_timeout(500)  # plotly's first layout, the access script's labels


def axe_violations(tab) -> list[tuple[str, str, str]]:
    """axe-core's serious and critical violations on the page: (rule, impact, first target)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(tab).response
    return [
        (violation["id"], violation["impact"], str(node["target"]))
        for violation in results["violations"]
        if violation["impact"] in ("serious", "critical")
        for node in violation["nodes"]
        if violation["id"] not in STREAMLIT_OWN
    ]


@pytest.mark.parametrize("present", ["true", "false"], ids=["presentation", "normal"])
def test_every_page_passes_axe_and_its_chart_labels_read_from_the_back_row(
    server,  # noqa: F811
    page,  # noqa: F811
    present,
):
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    found, small, faint = {}, {}, {}
    for path in PAGES:
        open_page(page, server, path, present=present)
        background = page.evaluate(BACKGROUND)
        for label in page.evaluate(LABELS):
            fill = label["fill"]
            if float(label["opacity"]) < 1:
                fill = fill.replace("rgb(", "rgba(").replace(")", f", {label['opacity']})")
            if contrast(fill, background) < MIN_CONTRAST:
                faint.setdefault(path, []).append(label)
            if present == "true" and label["size"] < PRESENTATION_TEXT_PX - 0.5:
                small.setdefault(path, []).append(label)
        if violations := axe_violations(page):
            found[path] = violations
    assert not faint, faint
    assert not small, small
    assert not found, found


@pytest.mark.parametrize("present", ["false", "true"], ids=["normal", "presentation"])
@pytest.mark.parametrize("path", ["", "head_lab", "masking"])
def test_the_sentence_box_is_two_keys_away_and_one_more(server, page, path, present):  # noqa: F811
    """Tab, Enter: the skip link, first on every page, to the sentence box (the sidebar opened
    when it is collapsed); / from anywhere but a text box."""
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    open_page(page, server, path, present=present)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => ({ACTIVE})() === 'English sentence'")
    box = page.locator(SENTENCE_BOX).bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    page.keyboard.press("Shift+Tab")  # off the box, onto a control
    page.keyboard.press("/")
    page.wait_for_function(f"() => ({ACTIVE})() === 'English sentence'")
    page.keyboard.press("/")  # typed in the box, not taken
    assert page.locator(SENTENCE_BOX).input_value().endswith("/")


FOCUS = """() => {
    const style = getComputedStyle(document.activeElement);
    return [document.activeElement.tagName, style.outlineStyle, parseFloat(style.outlineWidth)];
}"""


def test_controls_show_a_2px_focus_and_charts_are_named_without_toolbar_stops(server, page):  # noqa: F811
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    open_page(page, server, "attention")
    seen = []
    for _ in range(40):  # the first forty stops of the page
        page.keyboard.press("Tab")
        tag, style, width = page.evaluate(FOCUS)
        classes = page.evaluate(
            "() => document.activeElement.className.baseVal ?? document.activeElement.className"
        )
        assert "modebar-btn" not in str(classes)  # chart toolbars are out of the tab order
        if tag == "BUTTON":
            seen.append((style, width))
    assert seen and all(style != "none" and width >= 2 for style, width in seen), seen
    names = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot .main-svg[role=img]')]"
        ".map(svg => svg.getAttribute('aria-label'))"
    )
    charts = page.locator(".js-plotly-plot").count()
    assert len(names) == charts and all(" → " in name and "%" in name for name in names), names
