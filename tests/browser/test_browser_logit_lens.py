"""The Logit lens page in Chromium on a 1280x720 projector, in presentation mode: the map of
decoder states by output positions is inside the screen, its cells written with pieces, and no
error box; on the shipped model (pre-LN) and on a MarianMT directory (post-LN, a tiny random
MarianMTModel saved by transformers).

Run only these: python -m pytest -m browser tests/browser/test_browser_logit_lens.py
"""

from urllib.parse import urlencode

import pytest

from core.translator import DEFAULT_MODEL, Translator
from support.browser import CHART, app_server, chromium_page, wait_for_app
from tests.browser.test_browser import require_browser
from tests.marian_model import build_marian_dir

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
MAP = ".st-key-chart-logit-lens .js-plotly-plot"
BOX = """(selector) => {
    const chart = document.querySelector(selector);
    const cells = chart.querySelector(".nsewdrag").getBoundingClientRect();
    return {
        top: cells.top, bottom: cells.bottom, left: cells.left, right: cells.right,
        written: [...chart.querySelectorAll(".heatmaplayer text")].map(t => t.textContent),
    };
}"""


@pytest.fixture(scope="module", params=["shipped", "marian"])
def lens_server(request, tmp_path_factory):
    require_browser()
    if request.param == "shipped":
        if not DEFAULT_MODEL.is_dir():
            pytest.skip("no shipped model")
        model_dir = DEFAULT_MODEL
    else:
        pytest.importorskip("transformers")
        model_dir = build_marian_dir(tmp_path_factory.mktemp("marian"))
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(model_dir, log) as url:
        yield url, Translator.load(model_dir)


def test_the_map_is_on_the_projector_with_real_pieces(lens_server, tmp_path):
    url, translator = lens_server
    text = "The dog runs to the house."  # within the tiny MarianMT's 32 pieces
    with chromium_page(WIDTH, HEIGHT) as page:
        page.goto(f"{url}/logit_lens?{urlencode({'text': text, 'present': 'true'})}")
        page.wait_for_selector(MAP, timeout=240_000)  # run alone, the server starts cold
        wait_for_app(page)
        page.wait_for_selector(CHART)
        page.wait_for_timeout(300)  # plotly's first layout
        page.screenshot(path=tmp_path / "logit_lens.png")
        assert not page.locator("[data-testid='stException']").count()
        assert not page.locator(
            "[data-testid='stAlert'] [data-testid='stAlertContentError']"
        ).count()
        box = page.evaluate(BOX, MAP)
        assert box["top"] >= 0 and box["bottom"] <= HEIGHT, box
        assert box["left"] >= 0 and box["right"] <= WIDTH, box
        vocabulary = {
            piece.replace("▁", "·")
            for piece in translator.tokenizer.pieces(range(len(translator.tokenizer)))
        }
        written = [cell for cell in box["written"] if cell]
        assert written and set(written) <= vocabulary, set(written) - vocabulary
