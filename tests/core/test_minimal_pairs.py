"""The minimal pair's difference map: words of two sentences aligned, and where a word of the
translation looks in each sentence, as core computes it and as the Explain page draws it."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.inspection.labelled_attention import LabelledAttention
from core.inspection.minimal_pairs import PAIRS, aligned_words, attention_difference
from core.text.words import words
from tests.conftest import MAIN, chart_specs, plotted


def test_aligned_words_pair_equal_words_and_one_for_one_changes():
    assert aligned_words(["a", "b", "c"], ["a", "x", "c"]) == [(0, 0), (1, 1), (2, 2)]
    assert aligned_words(["a", "b", "c"], ["a", "x", "y", "c"]) == [(0, 0), (2, 3)]  # uneven
    assert aligned_words(["a", "c"], ["a", "b", "c"]) == [(0, 0), (1, 2)]  # inserted
    assert aligned_words([], ["a"]) == []


def test_attention_difference_reads_the_two_rows_on_the_aligned_source_words():
    rng = np.random.default_rng(0)
    first = LabelledAttention(
        rng.random((2, 3, 4, 5)), list("qrst"), ["<2de>", "it", "was", "tired.", "</s>"]
    )
    second = LabelledAttention(
        rng.random((2, 3, 4, 6)), list("qrst"), ["<2de>", "it", "was", "very", "wide.", "</s>"]
    )
    found = attention_difference(first, second, (1, 2))
    assert found.source_labels == ["<2de>", "it", "was", "</s>"]  # "tired." has no partner
    np.testing.assert_allclose(found.first, first.weights[:, :, 1, [0, 1, 2, 4]].mean(axis=(0, 1)))
    np.testing.assert_allclose(
        found.second, second.weights[:, :, 2, [0, 1, 2, 5]].mean(axis=(0, 1))
    )
    second = LabelledAttention(
        second.weights[..., [0, 1, 2, 4, 5]], list("qrst"), ["<2de>", "it", "was", "wide.", "</s>"]
    )
    found = attention_difference(first, second, (3, 0), layer=1)
    assert found.source_labels == ["<2de>", "it", "was", "tired. / wide.", "</s>"]
    np.testing.assert_allclose(
        found.difference, second.weights[1, :, 0].mean(0) - first.weights[1, :, 3].mean(0)
    )


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
