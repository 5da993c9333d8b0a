"""The Explain page draws every lens of the chosen piece, the contrast as core computes it, and
the minimal pair, bundled or typed. Moved from tests/core/test_attribution.py, which tests the
lenses themselves."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import Translator
from core.inspection.attribution import contrast
from core.inspection.minimal_pairs import PAIRS, partner
from tests.app.apptest import plotted
from tests.core.test_attribution import SENTENCE


@pytest.mark.slow
def test_the_explain_page_draws_every_lens_for_the_chosen_piece(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    main = str(Path(__file__).resolve().parents[2] / "app" / "main.py")
    at = AppTest.from_file(main, default_timeout=120)
    at.query_params["text"] = SENTENCE
    at.switch_page("views/explain.py")
    at.run()
    assert not at.exception
    box = at.selectbox(key="word")
    box.set_value(2).run()
    assert not at.exception
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    lens_rows = specs[0]["layout"]["yaxis"]["ticktext"]
    assert len(lens_rows) == 7 and "integrated gradients" in lens_rows
    assert "completeness error" in " ".join(c.value for c in at.caption)
    # the contrast with the likeliest other piece, as core computes it
    contrast_chart = next(
        spec for spec in specs if spec["layout"]["title"]["text"].startswith("Contrastive")
    )
    translator = Translator.load(tiny_model_dir)
    traced = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)
    position = at.selectbox(key="word").value
    foil = at.selectbox(key="foil").value
    expected = contrast(translator.model, traced, position, foil).values
    shown = plotted(contrast_chart["data"][0]["z"])
    np.testing.assert_allclose(np.ravel(shown), expected / np.abs(expected).max(), atol=1e-5)
    # the minimal pair: the other half of the coreference pair by default, and any sentence
    assert at.text_input(key="pair").value == partner(SENTENCE)
    at.text_input(key="pair").set_value("The small cat runs in the garden.").run()
    assert not at.exception
    assert any(t.value.startswith("The translations differ in:") for t in at.text)
    # every word the two share, numbered by its row in the first (0 is the language tag); not
    # the word that changed
    follow = at.selectbox(key="follow")
    assert follow.options == ["1: The", "2: small", "4: runs", "5: in", "6: the", "7: garden."]


@pytest.mark.slow
def test_a_bundled_pair_sets_both_sentences(tiny_model_dir, translator, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    main = str(Path(__file__).resolve().parents[2] / "app" / "main.py")
    at = AppTest.from_file(main, default_timeout=120)
    at.switch_page("views/explain.py")
    at.run()
    at.pills(key="bundled").set_value("number: dog / dogs").run()
    assert not at.exception
    first, second = PAIRS["number: dog / dogs"]
    assert at.text_area(key="text").value == first and at.text_input(key="pair").value == second
    shown = [code.value for code in at.code]
    assert translator.translate(second, "de", 4, 0.6).text in shown
    assert partner(second) == first and partner(first) == second
