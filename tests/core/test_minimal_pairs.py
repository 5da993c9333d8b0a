"""The minimal pair's difference map: words of two sentences aligned, and where a word of the
translation looks in each sentence, as core computes it. That the Explain page draws it so is
tested in tests/app/test_explain_minimal_pairs.py."""

import numpy as np

from core.inspection.minimal_pairs import aligned_words, attention_difference
from core.labelled_attention import LabelledAttention


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
