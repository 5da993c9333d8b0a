"""The Explain page draws the minimal pair's difference map as core computes it. Moved from
tests/core/test_minimal_pairs.py, which tests the alignment and the difference themselves."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.inspection.minimal_pairs import PAIRS, aligned_words
from core.text.words import words
from tests.app.apptest import MAIN, chart_specs, plotted


@pytest.mark.slow
@pytest.mark.parametrize("layer", [None, 1])
def test_the_explain_page_draws_the_difference_the_model_computes(
    tiny_model_dir, translator, monkeypatch, layer
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    first, second = PAIRS["number: dog / dogs"]
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update(text=first, pair=second)
    if layer is not None:
        at.query_params["pair_layer"] = str(layer + 1)
    at.switch_page("views/explain.py").run()
    assert not at.exception, [e.message for e in at.exception]

    one, two = (translator.translate(text, "de", 4, 0.6, trace=True) for text in (first, second))
    one_words, two_words = words(one.output_tokens)[1], words(two.output_tokens)[1]
    partners = aligned_words(one_words, two_words)
    i, j = partners[at.selectbox(key="pair_word").value]
    changed = [(a, b) for a, b in partners if one_words[a] != two_words[b]]
    assert (i, j) == (changed[0] if changed else partners[0])  # the first changed word by default
    columns = aligned_words(words(one.source_tokens)[1], words(two.source_tokens)[1])
    layers = slice(None) if layer is None else slice(layer, layer + 1)
    expected_first = one.word_attention.cross.weights[layers, :, i].mean(axis=(0, 1))
    expected_second = two.word_attention.cross.weights[layers, :, j].mean(axis=(0, 1))
    expected_first = expected_first[[a for a, _ in columns]]
    expected_second = expected_second[[b for _, b in columns]]

    spec = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Where"))
    both, difference = (plotted(trace["z"]) for trace in spec["data"])
    np.testing.assert_allclose(both, np.stack([expected_first, expected_second]), atol=1e-6)
    np.testing.assert_allclose(difference[0], expected_second - expected_first, atol=1e-6)
