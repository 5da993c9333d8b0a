"""Interventions on heads: uniform rows are 1/n over the allowed keys, a permutation only moves
weights within a row's allowed keys, decoding keeps its invariants, and a head's importance is
the log-probability drop of a direct ablated pass. The Explain page's intervention is tested in
tests/app/test_explain_interventions.py."""

import numpy as np
import pytest
import torch

from core import InputError
from core.decoding.search import beam_search, greedy_decode
from core.inspection.ablation import (
    Head,
    distribution_shift,
    head_importance,
    intervened,
    intervened_translator,
    layer_count,
)
from core.text.tokenizer import BOS_ID, PAD_ID
from tests.conftest import TINY, eos_prone_model

CHOSEN = [Head("encoder", 1, 2), Head("decoder", 0, 1), Head("cross", 1, 0)]
TRACE_FIELD = {"encoder": "encoder_self", "decoder": "decoder_self", "cross": "cross"}


def padded_batch():
    """Two sources, the second padded, so that masked keys occur in encoder and cross rows."""
    source = torch.tensor([[7, 8, 9, 10, 11, 12], [13, 14, 15, PAD_ID, PAD_ID, PAD_ID]])
    target = torch.tensor([[BOS_ID, 20, 21, 22], [BOS_ID, 23, 24, 25]])
    return source, target


def traces(intervention: str):
    original = eos_prone_model(1)
    changed = intervened(original, CHOSEN, intervention, seed=5)
    with torch.no_grad():
        return original(*padded_batch(), trace=True)[1], changed(*padded_batch(), trace=True)[1]


def weights_of(trace, head: Head) -> torch.Tensor:
    return getattr(trace, TRACE_FIELD[head.kind])[head.layer].weights  # (B, H, Q, K)


def test_uniform_rows_are_one_over_the_allowed_keys_and_other_heads_keep_theirs():
    before, after = traces("uniform")
    for head in CHOSEN:
        rows = weights_of(after, head)[:, head.head]  # (B, Q, K)
        allowed = weights_of(before, head)[:, head.head] > 0
        expected = allowed / allowed.sum(-1, keepdim=True)
        assert torch.allclose(rows, expected.float(), atol=1e-7), head.name
        assert torch.all(rows[~allowed] == 0), head.name
    first = CHOSEN[0]  # the first intervened layer: its other heads read an unchanged input
    others = [h for h in range(TINY.n_heads) if h != first.head]
    assert torch.equal(weights_of(before, first)[:, others], weights_of(after, first)[:, others])


def test_a_permutation_moves_weights_only_within_the_allowed_keys():
    before, after = traces("permute")
    first = CHOSEN[0]  # its input is untouched, so the permuted rows are the original's shuffled
    original, shuffled = (
        weights_of(before, first)[:, first.head],
        weights_of(after, first)[:, first.head],
    )
    assert torch.equal(original.sort(-1).values, shuffled.sort(-1).values)
    assert torch.all(shuffled[original == 0] == 0)  # the padded keys stay at 0
    assert not torch.equal(original, shuffled)
    for head in CHOSEN:
        rows = weights_of(after, head)[:, head.head]
        assert torch.allclose(rows.sum(-1), torch.ones(rows.shape[:-1]), atol=1e-6), head.name


def test_uniform_decoding_keeps_its_invariants():
    model = intervened(eos_prone_model(2), CHOSEN, "uniform")
    torch.manual_seed(3)
    for _ in range(4):
        source = torch.randint(5, TINY.vocab_size, (1, int(torch.randint(3, 12, ()))))
        greedy = greedy_decode(model, source)[0]
        assert beam_search(model, source, beam_size=1).ids == greedy
        with torch.no_grad():  # the cached choice is the argmax of a full recomputation
            for t in range(len(greedy)):
                logits, _ = model(source, torch.tensor([[BOS_ID, *greedy[:t]]]))
                assert int(logits[0, -1].argmax()) == greedy[t]


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_importance_is_the_drop_of_a_direct_ablated_pass(translator, kind):
    result = translator.translate("The dog runs in the park.", "de", beam_size=2)
    importance = head_importance(translator, result, kind)
    layers = layer_count(translator.model, kind)
    assert importance.shape == (layers, TINY.n_heads)
    normal = translator.trace(result).log_prob
    for layer in range(layers):
        for head in range(TINY.n_heads):
            ablated = intervened_translator(translator, [Head(kind, layer, head)])
            direct = normal - ablated.trace(result).log_prob
            assert importance[layer, head] == pytest.approx(direct, abs=1e-4)
    assert np.abs(importance).max() > 0


def test_an_unknown_intervention_is_an_input_error(translator):
    with pytest.raises(InputError, match="uniform"):
        intervened_translator(translator, CHOSEN, "shuffle everything")


def test_predictions_are_the_distributions_the_output_was_chosen_from(translator):
    result = translator.translate("The dog runs in the park.", "fr", beam_size=2)
    probabilities = translator.predictions(result)
    assert probabilities.shape == (len(result.output_ids), TINY.vocab_size)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-5)
    chosen = probabilities[np.arange(len(result.output_ids)), result.output_ids]
    np.testing.assert_allclose(np.log(chosen), translator.trace(result).token_log_probs, atol=1e-5)


def test_the_shift_of_a_distribution_is_its_total_variation_and_top_words():
    pieces = ["a", "b", "c", "d"]
    before, after = np.array([0.7, 0.2, 0.1, 0.0]), np.array([0.1, 0.2, 0.0, 0.7])
    shift = distribution_shift(before, after, pieces, top=2)
    assert shift.total_variation == pytest.approx(0.7)
    assert shift.before == [("a", 0.7), ("b", pytest.approx(0.2))]
    assert shift.after[0] == ("d", 0.7)
    assert distribution_shift(before, before, pieces).total_variation == 0.0
    assert distribution_shift(before, np.array([0, 0, 0, 1.0]), pieces).total_variation == 1.0
