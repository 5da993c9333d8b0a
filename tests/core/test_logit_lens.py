"""The logit lens and the direct contributions (core/inspection/logit_lens.py,
direct_contributions.py): the last state's lens is the model's own distribution, the parts add up
to the logit, and a head planted to write the answer gets the largest part; post-LN (the tiny
model, a random MarianMT) and pre-LN (the tiny model so, the shipped model) alike."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from core.inspection.direct_contributions import contributions_of, direct_contributions
from core.inspection.logit_lens import LogitLens, lens_log_probs, logit_lens
from core.inspection.residual_stream import walk_decoder
from core.model.transformer import Transformer
from core.translator import DEFAULT_MODEL, Translator
from tests.conftest import TINY
from tests.marian_model import build_marian_dir

SOURCE = [5, 17, 42, 99, 7, 3]  # made-up ids of the tiny vocabulary
DECODER_INPUT = [2, 11, 23, 150, 8, 64, 9]
OUTPUT = [*DECODER_INPUT[1:], 3]
PLANTED_PIECE = 123
PLANTED_LAYER, PLANTED_HEAD = 1, 2  # the tiny model's last cross-attention layer, its third head


def tiny(norm_first: bool, seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    model = Transformer(dataclasses.replace(TINY, norm_first=norm_first)).eval()
    with torch.no_grad():  # biases and LayerNorm gains away from 0 and 1, so that each matters
        for name, parameter in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                parameter.add_(torch.randn_like(parameter) * 0.3)
    return model


def model_log_probs(model: Transformer, source: list[int], decoder_input: list[int]):
    logits, _ = model(torch.tensor([source]), torch.tensor([decoder_input]))
    return logits[0].float().log_softmax(-1), logits[0]


def check_lens_and_parts(model, source, decoder_input, output):
    """The last state's lens is the model's distribution (1e-5); the parts add up to the chosen
    pieces' logits (1e-4), and each cross head's source split to the head's part."""
    stream = walk_decoder(model, source, decoder_input)
    with torch.inference_mode():
        log_probs, logits = model_log_probs(model, source, decoder_input)
        lens = lens_log_probs(model, stream)
    assert lens.shape[0] == 1 + 3 * model.config.n_decoder_layers
    np.testing.assert_allclose(lens[-1].exp().numpy(), log_probs.exp().numpy(), atol=1e-5)
    parts = contributions_of(model, stream, output)
    chosen_logits = logits[torch.arange(len(output)), torch.tensor(output)].numpy()
    np.testing.assert_allclose(parts.logit, chosen_logits, atol=1e-4)
    np.testing.assert_allclose(parts.total(), chosen_logits, atol=1e-4)
    np.testing.assert_allclose(parts.cross_sources.sum(-1), parts.cross_heads, atol=1e-5)
    assert np.abs(parts.biases).max() > 0.01  # the biases carry a real share, checked above
    return parts


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_last_lens_is_the_output_and_parts_add_up(norm_first):
    check_lens_and_parts(tiny(norm_first), SOURCE, DECODER_INPUT, OUTPUT)


def test_a_state_that_differs_reads_differently():
    """The lens reads each state, not the output again: the embedding's lens differs from the
    last's."""
    model = tiny(norm_first=False)
    with torch.inference_mode():
        lens = lens_log_probs(model, walk_decoder(model, SOURCE, DECODER_INPUT)).exp()
    assert (lens[0] - lens[-1]).abs().max() > 1e-2


def planted(norm_first: bool) -> Transformer:
    """The tiny model with one cross-attention head set by hand to write PLANTED_PIECE's
    embedding: its values are a constant c whatever the source (W^V's rows of the head 0, its
    bias c), and its slice of W^O maps c to 20 E_w."""
    model = tiny(norm_first, seed=1)
    attention = model.decoder_layers[PLANTED_LAYER].cross_attn
    d_k = attention.d_k
    rows = slice(PLANTED_HEAD * d_k, (PLANTED_HEAD + 1) * d_k)
    with torch.no_grad():
        c = torch.ones(d_k)
        attention.w_v.weight[rows] = 0.0
        attention.w_v.bias[rows] = c
        target = model.embedding.weight[PLANTED_PIECE]
        attention.w_o.weight[:, rows] = 20 * torch.outer(target, c) / c.dot(c)
    return model


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_a_planted_head_gets_the_largest_contribution(norm_first):
    model = planted(norm_first)
    output = [PLANTED_PIECE] * len(DECODER_INPUT)
    with torch.inference_mode():
        log_probs, _ = model_log_probs(model, SOURCE, DECODER_INPUT)
    assert (log_probs.argmax(-1) == PLANTED_PIECE).all()  # the head alone writes the answer
    parts = check_lens_and_parts(model, SOURCE, DECODER_INPUT, output)
    cross, own = parts.cross_heads, parts.cross_heads[PLANTED_LAYER, PLANTED_HEAD]
    others = [
        *np.abs(parts.self_heads).reshape(-1, len(output)),
        *np.abs(np.delete(cross.reshape(-1, len(output)), PLANTED_LAYER * 4 + PLANTED_HEAD, 0)),
        *np.abs(parts.feed_forward),
        np.abs(parts.embedding),
    ]
    assert (own > np.max(others, axis=0)).all()


@pytest.fixture(scope="module")
def marian_translator(tmp_path_factory):
    return Translator.load(build_marian_dir(tmp_path_factory.mktemp("marian")))


@pytest.mark.slow
def test_a_random_marian_model(marian_translator):
    """Post-LN with final_logits_bias: the lens ends on the model's distribution, the parts add
    up, on the translator's own translation."""
    result = marian_translator.translate("the dog runs to the house", "de", beam_size=1)
    model = marian_translator.model
    assert model.config.output_bias and not model.config.norm_first
    check_lens_and_parts(model, result.source_ids, result.decoder_input_ids, result.output_ids)
    lens = logit_lens(marian_translator, result)
    assert lens.chosen == result.output_tokens
    assert (lens.chosen_rank[-1] == 1).all()  # greedy: the last state ranks each choice first
    parts = direct_contributions(model, result)
    np.testing.assert_allclose(parts.total(), parts.logit, atol=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(not DEFAULT_MODEL.is_dir(), reason="no shipped model")
def test_the_shipped_model():
    """Pre-LN: the lens and the parts on a real translation; the chosen pieces are real pieces,
    the top pieces too, and the last state's probabilities are the translator's predictions."""
    translator = Translator.load()
    result = translator.translate("A man in a blue shirt is riding a bike.", "de")
    model = translator.model
    assert model.config.norm_first
    check_lens_and_parts(model, result.source_ids, result.decoder_input_ids, result.output_ids)
    lens = logit_lens(translator, result)
    predictions = translator.predictions(result)
    best = predictions.argsort(-1)[:, ::-1][:, :3]
    pieces = translator.tokenizer.pieces
    assert [row[:3] for row in lens.top_pieces[-1]] == [pieces(row) for row in best]
    chosen = predictions[np.arange(len(result.output_ids)), result.output_ids]
    np.testing.assert_allclose(lens.chosen_prob[-1], chosen, atol=5e-5)  # the engine's, 5e-5
    assert (lens.settled_layer() >= 1).all()  # no word is settled by its embedding alone


def test_settled_counts_from_the_last_time_a_piece_took_first_place():
    ranks = np.array([[3, 1, 2], [1, 1, 4], [2, 1, 1], [1, 1, 1]])  # (K=4, T=3)
    lens = LogitLens(
        states=["embedding", "L1 self-attention", "L1 cross-attention", "L1 feed-forward"],
        positions=["a", "b", "c"],
        chosen=["x", "y", "z"],
        top_pieces=[],
        top_probs=np.zeros((4, 3, 1)),
        chosen_rank=ranks,
        chosen_prob=np.zeros((4, 3)),
        entropy=np.zeros((4, 3)),
    )
    assert lens.settled().tolist() == [3, 0, 2]
    assert lens.settled_layer().tolist() == [1, 0, 1]
    lens = dataclasses.replace(lens, chosen_rank=np.array([[1], [2], [1], [2]]))
    assert lens.settled().tolist() == [-1]
