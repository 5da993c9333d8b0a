"""Figures for slides in a real browser: the "Figure for slides" button under a chart downloads
it at projector size with its caption drawn in. Run with: python -m pytest -m browser."""

import re
import struct
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlencode

import numpy as np
import pytest

from app import slides
from core.inspection.head_focus import rank_heads
from support.browser import wait_for_app
from tests.browser.test_browser import page, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

SENTENCE = "The dog runs in the park."
SVG = "{http://www.w3.org/2000/svg}"


def export(page, server: str, image_format: str):  # noqa: F811 (the page fixture)
    """Open the Attention page on the cross-attention of layer 1, head 2 and press the Figure for
    slides button of its chart: the downloaded file."""
    query = {"text": SENTENCE, "kind": "cross", "layer": 1, "head": 2, "img": image_format}
    page.goto(f"{server}/attention?{urlencode(query)}")
    chart = page.locator(".st-key-chart-attention-head .js-plotly-plot")
    chart.locator(".gtitle").wait_for(timeout=240_000)  # run alone, the server starts cold
    wait_for_app(page)
    button = page.get_by_role("button", name=re.compile(r"Figure for slides"))
    with page.expect_download() as download:
        button.first.click()
    assert download.value.suggested_filename == f"attention-lab-attention-head.{image_format}"
    return download.value.path()


def test_the_figure_for_slides_is_a_projector_sized_png(server, page):  # noqa: F811
    data = export(page, server, "png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (1920, 1080)


def test_the_exported_figure_carries_its_caption(server, page, translator):  # noqa: F811
    """Read in the SVG export, whose text is XML: the PNG is drawn from the same figure."""
    svg = ElementTree.parse(export(page, server, "svg")).getroot()
    assert (svg.get("width"), svg.get("height")) == ("1920", "1080")
    subtitle = next(
        element
        for element in svg.iter(f"{SVG}text")
        if "gtitle-subtitle" in (element.get("class") or "")
    )
    drawn = [line.text or "" for line in subtitle.iter(f"{SVG}tspan")]
    translation = translator.translate(SENTENCE, "de", 4, 0.6).text
    caption = slides.Caption(SENTENCE, translation, "de", "tiny-random", "cross", 1, 2)
    assert drawn == slides.caption_lines(caption)


def test_the_word_looked_at_in_the_heads_lab_goes_into_the_link(server, page, translator):  # noqa: F811
    page.goto(f"{server}/head_lab?{urlencode({'text': SENTENCE})}")
    page.locator(".st-key-chart-focus-lines .gtitle").wait_for(timeout=240_000)
    wait_for_app(page)
    for box, word in (("Word that attends", "runs"), ("…looking at (optional)", "dog")):
        page.get_by_role("combobox", name=box).click()
        page.get_by_role("option", name=word, exact=True).click()
        wait_for_app(page)
    assert re.search(r"[?&]at_word=dog\b", page.url) and re.search(r"[?&]focus=runs\b", page.url)
    page.reload()  # the link opens the same ranking: the head that puts most weight on "dog"
    words = translator.translate(SENTENCE, "de", 4, 0.6, trace=True).word_attention.encoder
    best = rank_heads(words, words.query_labels.index("runs"), words.key_labels.index("dog"))[0]
    subtitle = page.locator(".st-key-chart-focus-lines .gtitle-subtitle")
    subtitle.wait_for()
    wait_for_app(page)
    assert f"layer {best.layer + 1} · head {best.head + 1} · word “runs”" in subtitle.text_content()
    assert not page.locator("[data-testid='stException']").count()


def test_the_attention_weights_download_as_json(server, page, translator):  # noqa: F811
    query = {"text": SENTENCE, "kind": "cross", "layer": 1, "head": 2}
    page.goto(f"{server}/attention?{urlencode(query)}")
    page.locator(".st-key-chart-attention-head .gtitle").wait_for(timeout=240_000)
    wait_for_app(page)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the attention weights (JSON)").click()
    assert download.value.suggested_filename == "attention-lab-cross-pieces.json"
    attention, caption = slides.read_attention_json(download.value.path().read_text())
    expected = translator.translate(SENTENCE, "de", 4, 0.6, trace=True).attention.cross
    np.testing.assert_array_equal(attention.weights, expected.weights)
    assert attention.query_labels == expected.query_labels
    assert (caption.kind, caption.layer, caption.head) == ("cross", 1, 2)


BOX = "el => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"
# per chart, the bounding boxes of its caption lines and of its tick labels: [[captions], [ticks]]
# (a caption of one line, a projector's, is its text element itself, without tspans)
CAPTIONS_AND_TICKS = f"""() => [...document.querySelectorAll('.js-plotly-plot')].map(chart => [
    [...chart.querySelectorAll(
        '.gtitle-subtitle tspan, .gtitle-subtitle:not(:has(tspan))')].map({BOX}),
    [...chart.querySelectorAll('.xtick text, .ytick text')].map({BOX}),
])"""


def overlap(a: list[float], b: list[float]) -> bool:
    """Whether two boxes (left, top, right, bottom) share more than a pixel's sliver."""
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


@pytest.mark.parametrize("present", ["false", "true"])
def test_no_caption_overlaps_a_tick_label(server, page, present):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 720})
    for path in ["attention", "masking", "head_lab", "beam_search"]:
        page.goto(f"{server}/{path}?{urlencode({'text': SENTENCE, 'present': present})}")
        page.locator(".js-plotly-plot .gtitle-subtitle").first.wait_for(timeout=240_000)
        wait_for_app(page)
        page.wait_for_timeout(300)  # plotly's first layout
        charts = page.evaluate(CAPTIONS_AND_TICKS)
        assert all(captions for captions, _ in charts), path  # every chart has its caption
        clashes = [
            (caption, tick)
            for captions, ticks in charts
            for caption in captions
            for tick in ticks
            if overlap(caption, tick)
        ]
        assert not clashes, path
