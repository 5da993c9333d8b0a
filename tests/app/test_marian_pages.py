"""Every page of the app on a MarianMT directory (a tiny random MarianMTModel saved by transformers,
tests/marian_model.py): it opens as the lab's own models do, with the model's own pieces, its
positional layout, its languages; the training page says it cannot apply."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest import MAIN
from tests.app.apptest import chart_specs as charts
from tests.app.test_app import PAGES, assert_fine, texts
from tests.marian_model import build_marian_dir

pytest.importorskip("transformers")  # builds the model; the app reads it without transformers


@pytest.fixture(scope="module")
def marian_dirs(tmp_path_factory):
    """A model into German and French (>>de<<, >>fr<< tokens), and one into German alone."""
    return {
        "two": build_marian_dir(tmp_path_factory.mktemp("marian_two")),
        "one": build_marian_dir(tmp_path_factory.mktemp("marian_one"), targets=("de",)),
    }


@pytest.fixture
def marian_app(marian_dirs, monkeypatch):
    def open_page(page: str, which: str = "two", **query: str) -> AppTest:
        monkeypatch.setenv("ATTENTION_LAB_MODEL", str(marian_dirs[which]))
        at = AppTest.from_file(MAIN, default_timeout=120)
        at.query_params.update(query)
        at.switch_page(f"views/{page}.py")
        return at.run()

    return open_page


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_a_marian_model(marian_app, page):
    at = marian_app(page)
    assert_fine(at)
    assert charts(at) or page in ("model", "training")
    if page == "training":
        assert "cannot apply" in at.info[0].value


@pytest.mark.slow
def test_the_pages_show_the_marian_models_own_pieces_layout_and_languages(marian_app):
    tokenization = marian_app("tokenization", to="fr")
    assert "source.spm" in texts(tokenization)
    table = tokenization.dataframe[-1].value  # the special tokens
    assert ">>fr<<" in set(table["piece"]) and "<pad>" in set(table["piece"])
    assert any("decoder's first input" in role for role in table["role"])
    assert "The decoder reads <pad>" in texts(tokenization)
    embeddings = marian_app("embeddings")
    assert any("d_{model}/2+i" in latex.value for latex in embeddings.latex)  # sines first
    model = marian_app("model")
    assert "Beyond the paper: swish" in texts(model)
    languages = marian_app("translate").segmented_control(key="to")
    assert languages.options == ["German", "French"]
    one = marian_app("compare", which="one")
    assert one.segmented_control(key="to").options == ["German"]
    assert "German" in [header.value for header in one.header]  # the one language it writes


@pytest.mark.slow
def test_the_sidebar_offers_the_shipped_model_beside_it(marian_app, marian_dirs):
    at = marian_app("translate")
    choice = at.segmented_control(key="model")
    assert choice.options == [marian_dirs["two"].name, "en-de-fr"]
    assert choice.value == marian_dirs["two"].name  # $ATTENTION_LAB_MODEL's, the default


@pytest.mark.slow
@pytest.mark.parametrize("which", ["one", "two"])
def test_the_story_speaks_of_the_marian_models_own_vocabulary(marian_app, marian_dirs, which):
    at = marian_app("story", which=which)
    assert_fine(at)
    said = texts(at)
    assert "MarianMT model's SentencePiece models" in said
    assert "English, German and French" not in said
    assert ("`>>fr<<`" in said) == (which == "two")  # only a model that writes several has one
