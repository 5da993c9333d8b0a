"""The labelled attention contract: every matrix leaves core with its row and column labels, one
axis order (layers, heads, queries, keys) everywhere, decoder rows read one piece and predict
the next, and the word view is the piece view summed up."""

import numpy as np
import pytest
import torch

from core.labelled_attention import (
    PREDICTS,
    hypothesis_labels,
    labelled,
    prediction_labels,
)
from core.text.tokenizer import BOS_ID, EOS_ID, PAD_ID
from core.text.words import merge_attention, words
from core.translator import Translator
from tests.conftest import eos_prone_model


@pytest.fixture(scope="module")
def result(translator):
    """A translation that ends with </s>, by a model nudged to say it."""
    eos_prone = Translator(eos_prone_model(4), translator.tokenizer)
    text = "The small dog runs in the garden."
    result = eos_prone.translate(text, "de", beam_size=3, trace=True)
    assert result.output_ids[-1] == EOS_ID and len(result.output_ids) > 2
    return result


def test_every_kind_carries_a_label_for_every_query_and_key(result):
    a = result.attention
    for kind, queries, keys in [
        (a.encoder, result.source_tokens, result.source_tokens),
        (a.decoder, result.output_tokens, result.decoder_input_tokens),
        (a.cross, result.output_tokens, result.source_tokens),
    ]:
        q, k = kind.weights.shape[2:]
        assert (q, k) == (len(queries), len(keys)) == (len(kind.query_labels), len(kind.key_labels))
        assert kind.scores.shape == kind.masked_scores.shape == kind.weights.shape
    assert a.encoder.query_labels == a.encoder.key_labels == result.source_tokens
    assert a.cross.key_labels == result.source_tokens
    assert a.decoder.key_labels == result.decoder_input_tokens


def test_a_decoder_row_reads_one_piece_and_predicts_the_next(result):
    rows = result.attention.cross.query_labels
    assert rows == result.attention.decoder.query_labels
    assert rows[0] == f"<s>{PREDICTS}{result.output_tokens[0]}"
    for t, row in enumerate(rows):
        assert row == f"{result.decoder_input_tokens[t]}{PREDICTS}{result.output_tokens[t]}"
    assert rows[-1].endswith(f"{PREDICTS}</s>")
    assert result.output_ids[-1] == EOS_ID
    assert result.decoder_input_ids == [BOS_ID, *result.output_ids[:-1]]


def test_word_attention_is_the_piece_attention_merged(result):
    source_groups, source_words = words(result.source_tokens)
    output_groups, output_words = words(result.output_tokens)
    input_groups, input_words = words(result.decoder_input_tokens)
    cross = result.word_attention.cross
    np.testing.assert_array_equal(
        cross.weights,
        merge_attention(result.attention.cross.weights, output_groups, source_groups),
    )
    assert cross.key_labels == source_words
    assert cross.query_labels == prediction_labels(["<s>", *output_words[:-1]], output_words)
    decoder = result.word_attention.decoder
    assert decoder.query_labels == cross.query_labels and decoder.key_labels == input_words
    for kind in (result.word_attention.encoder, decoder, cross):
        np.testing.assert_allclose(kind.weights.sum(-1), 1.0, atol=1e-5)
        assert kind.scores is None  # scores do not add up over words
    # a decoder word that comes after every position of a row's word stays exactly 0
    hidden = [
        (row, column)
        for row, positions in enumerate(output_groups)
        for column, keys in enumerate(input_groups)
        if min(keys) > max(positions)
    ]
    assert hidden and all((decoder.weights[:, :, r, c] == 0).all() for r, c in hidden)


def test_beam_step_rows_are_hypotheses_in_the_same_axis_order(result):
    step, cross = result.steps[1], result.step_attention[1]
    layers, heads, n, s = cross.weights.shape
    assert (layers, heads) == result.attention.cross.weights.shape[:2]
    assert n == len(step.hypotheses) == len(cross.query_labels)
    assert s == len(cross.key_labels) and cross.key_labels == result.source_tokens
    assert all(label.endswith(f"{PREDICTS}?") for label in cross.query_labels)


def test_hypothesis_labels_show_the_end_of_the_prefix():
    pieces = lambda ids: [f"p{i}" for i in ids]  # noqa: E731
    assert hypothesis_labels([[], [7, 8, 9, 10]], pieces) == [
        f"beam 1: p2{PREDICTS}?",
        f"beam 2: … p8 p9 p10{PREDICTS}?",
    ]


def test_masked_scores_are_the_models_in_every_layer_and_head(model):
    """Derived from the scores and one mask, they equal what the model computed, -inf exactly
    where it masked: padding (row 1 of the batch) and, in the decoder, the future."""
    source = torch.tensor([[5, 6, 7, 8, EOS_ID], [5, 6, EOS_ID, PAD_ID, PAD_ID]])
    target = torch.tensor([[BOS_ID, 9, 10], [BOS_ID, 9, 10]])
    with torch.no_grad():
        _, trace = model(source, target, trace=True)
    for maps in (trace.encoder_self, trace.decoder_self, trace.cross):
        queries, keys = maps[0].weights.shape[-2:]
        for row in range(2):
            attention = labelled(maps, ["query"] * queries, ["key"] * keys, row)
            expected = torch.stack([layer.masked_scores[row] for layer in maps]).numpy()
            np.testing.assert_array_equal(attention.masked_scores, expected)
            assert np.isneginf(expected).any() == (row == 1 or maps is trace.decoder_self)
