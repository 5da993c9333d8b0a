"""The app in Chromium on a MarianMT directory (a tiny random MarianMTModel saved by
transformers, tests/marian_model.py): every page opens, and the translation is the lab's.

Run only these: python -m pytest -m browser tests/browser/test_browser_marian.py
"""

from pathlib import Path

import pytest

from core.translator import Translator
from support.browser import CHART, CHROMIUM, app_server, chromium_page, wait_for_app
from tests.app.test_app import PAGES
from tests.browser.test_browser import _has_playwright
from tests.marian_model import build_marian_dir

pytestmark = pytest.mark.browser
pytest.importorskip("transformers")  # builds the model; the app reads it without transformers


@pytest.fixture(scope="module")
def marian_server(tmp_path_factory):
    if not Path(CHROMIUM).is_file() or not _has_playwright():
        pytest.skip("no Chromium or no playwright (see tests/browser/test_browser.py)")
    model_dir = build_marian_dir(tmp_path_factory.mktemp("marian"))
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(model_dir, log) as url:
        yield url, Translator.load(model_dir)


def test_every_page_opens_on_a_marian_model(marian_server, tmp_path):
    url, translator = marian_server
    query = "to=fr&text=The+dog+runs."
    with chromium_page() as page:
        page.goto(f"{url}/translate?{query}")
        page.wait_for_selector(CHART, timeout=240_000)  # run alone, the server starts cold
        expected = translator.translate("The dog runs.", "fr", 4, 0.6).text
        assert page.locator("[data-testid='stCode'] code").first.inner_text() == expected
        for view in PAGES:
            page.goto(f"{url}/{view}?{query}")
            wait_for_app(page)
            if view not in ("model", "training"):
                page.wait_for_selector(CHART)
            assert not page.locator("[data-testid='stException']").count(), view
            page.screenshot(path=tmp_path / f"{view}.png")
            if view == "tokenization":
                assert page.get_by_text(">>fr<<").count()  # the model's own language token
            if view == "training":
                assert page.get_by_text("cannot apply").count()
