"""One query of one head, step by step (core/inspection/scaled_dot_product.py): its weights are
the traced map's row, masked keys get exactly 0, and q, K, V, the scores and the output are what
the model's own weights give, recomputed here by hand in float64, for a post-LN (the tiny model,
as the paper) and a pre-LN model (as the shipped one)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from core.errors import InputError
from core.inspection.ablation import Head
from core.inspection.scaled_dot_product import scaled_dot_product_of
from core.model.transformer import Transformer, padding_mask, subsequent_mask
from core.translator import DEFAULT_MODEL, Translator
from tests.conftest import TINY

SENTENCE = "The animal didn't cross the street because it was too tired."
KINDS = ("encoder", "decoder", "cross")


@pytest.fixture(scope="module", params=["post-LN", "pre-LN"])
def exact(request, tiny_model_dir) -> Translator:
    """The tiny model (post-LN) or a pre-LN one of its shape, computing with the readable model
    alone (fast=False), so that the traced maps are the readable model's."""
    loaded = Translator.load(tiny_model_dir, fast=False)
    if request.param == "post-LN":
        return loaded
    torch.manual_seed(1)
    return Translator(Transformer(replace(TINY, norm_first=True)), loaded.tokenizer, fast=False)


@pytest.fixture(scope="module")
def translation(exact):
    return exact.translate(SENTENCE, "de", beam_size=2, trace=True)


def middle(n: int) -> int:
    return n // 2


def inputs_by_hand(model: Transformer, translation, kind: str, layer: int):
    """What the attention of ``kind`` in ``layer`` reads, by running the layers before it by
    hand: x (T_q, D), the context (T_k, D) and the mask, as float64. Pre-LN: the sub-layer reads
    the residual stream through its layer norm; post-LN: the stream itself."""
    source = torch.tensor([translation.source_ids])
    decoder_input = torch.tensor([translation.decoder_input_ids])
    source_mask = padding_mask(source, model.config.pad_id)

    def normed(residual, x):
        return residual.norm(x) if model.config.norm_first else x

    with torch.inference_mode():
        x = model.embed(source)[0]
        for encoder_layer in model.encoder_layers[: layer if kind == "encoder" else None]:
            x = encoder_layer(x, source_mask)
        if kind == "encoder":
            h = normed(model.encoder_layers[layer].residual_attn, x)
            return h[0].double(), h[0].double(), source_mask
        memory = model.encoder_norm(x)
        self_mask = subsequent_mask(decoder_input.size(1))
        y = model.embed(decoder_input)[0]
        for decoder_layer in model.decoder_layers[:layer]:
            y = decoder_layer(y, memory, self_mask, source_mask)
        this = model.decoder_layers[layer]
        if kind == "decoder":
            h = normed(this.residual_self, y)
            return h[0].double(), h[0].double(), self_mask
        y = this.residual_self(y, lambda h: this.self_attn(h, h, self_mask))
        return normed(this.residual_cross, y)[0].double(), memory[0].double(), source_mask


def module_of(model: Transformer, kind: str, layer: int):
    layers = model.encoder_layers if kind == "encoder" else model.decoder_layers
    return layers[layer].cross_attn if kind == "cross" else layers[layer].self_attn


def projected(linear, head: int, d_k: int, x: torch.Tensor) -> np.ndarray:
    """x W_h^T + b_h in float64, head h's rows of the weight: (n, D) -> (n, d_k)."""
    rows = slice(head * d_k, (head + 1) * d_k)
    weight, bias = linear.weight[rows].detach().double(), linear.bias[rows].detach().double()
    return (x @ weight.T + bias).numpy()


@pytest.mark.parametrize("kind", KINDS)
def test_the_weights_are_the_traced_row_and_the_labels_the_maps(exact, translation, kind):
    traced = getattr(translation.attention, kind)
    layers, heads, queries, _ = traced.weights.shape
    for layer, head, position in ((0, 0, 0), (layers - 1, heads - 1, middle(queries))):
        step = scaled_dot_product_of(exact.model, translation, Head(kind, layer, head), position)
        np.testing.assert_allclose(step.weights, traced.weights[layer, head, position], atol=1e-6)
        np.testing.assert_allclose(step.scores, traced.scores[layer, head, position], atol=1e-5)
        assert step.query_label == traced.query_labels[position]
        assert step.key_labels == traced.key_labels
        assert step.weights.sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_q_k_v_and_the_scores_are_the_models_weights_by_hand(exact, translation, kind):
    model, layer, head = exact.model, 1, 2
    x, context, _ = inputs_by_hand(model, translation, kind, layer)
    module, d_k = module_of(model, kind, layer), model.config.d_k
    position = middle(x.size(0))
    q = projected(module.w_q, head, d_k, x[position : position + 1])[0]  # (d_k,)
    keys, values = (projected(w, head, d_k, context) for w in (module.w_k, module.w_v))
    step = scaled_dot_product_of(model, translation, Head(kind, layer, head), position)
    np.testing.assert_allclose(step.query, q, atol=1e-5)
    np.testing.assert_allclose(step.keys, keys, atol=1e-5)
    np.testing.assert_allclose(step.values, values, atol=1e-5)
    np.testing.assert_allclose(step.dot_products, keys @ q, atol=1e-4)
    np.testing.assert_allclose(step.scores, keys @ q / math.sqrt(d_k), atol=1e-5)
    assert step.d_k == d_k


@pytest.mark.parametrize("kind", KINDS)
def test_the_output_is_the_weighted_sum_of_values_and_the_heads_make_the_layers(
    exact, translation, kind
):
    """z = sum_j w_j v_j; and every head's z, concatenated and through W^O, is the multi-head
    attention's output for that query (which the values' slicing must get right)."""
    model, layer = exact.model, 0
    x, context, mask = inputs_by_hand(model, translation, kind, layer)
    module, position = module_of(model, kind, layer), middle(x.size(0))
    steps = [
        scaled_dot_product_of(model, translation, Head(kind, layer, head), position)
        for head in range(model.config.n_heads)
    ]
    for step in steps:
        expected = step.weights.astype(np.float64) @ step.values.astype(np.float64)
        np.testing.assert_allclose(step.output, expected, atol=1e-6)
    with torch.inference_mode():
        whole = module(x[None].float(), context[None].float(), mask)[0, position]  # (D,)
        concat = torch.from_numpy(np.concatenate([step.output for step in steps]))
        np.testing.assert_allclose(module.w_o(concat).numpy(), whole.numpy(), atol=1e-5)


def test_the_decoder_gives_later_positions_exactly_zero(exact, translation):
    position = middle(len(translation.decoder_input_ids))
    step = scaled_dot_product_of(exact.model, translation, Head("decoder", 1, 0), position)
    keys = np.arange(len(step.key_labels))
    np.testing.assert_array_equal(step.allowed, keys <= position)
    assert (step.weights[keys > position] == 0.0).all() and (step.weights[: position + 1] > 0).all()
    assert np.isneginf(step.masked_scores[keys > position]).all()
    assert np.isfinite(step.scores).all()  # the mask changes no score: it adds -inf after


@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_padding_keys_get_exactly_zero(exact, translation, kind):
    pad, extra = exact.model.config.pad_id, 2
    padded = replace(
        translation,
        source_ids=[*translation.source_ids, *[pad] * extra],
        source_tokens=[*translation.source_tokens, *["<pad>"] * extra],
    )
    traced = exact.trace(padded)
    step = scaled_dot_product_of(exact.model, traced, Head(kind, 1, 1), 1)
    real = len(translation.source_ids)
    assert step.key_labels[real:] == ["<pad>"] * extra
    np.testing.assert_array_equal(step.allowed, np.arange(real + extra) < real)
    assert (step.weights[real:] == 0.0).all() and (step.weights[:real] > 0).all()
    row = getattr(traced.attention, kind).weights[1, 1, 1]
    np.testing.assert_allclose(step.weights, row, atol=1e-6)


@pytest.mark.parametrize(
    ("head", "position", "message"),
    [
        (Head("encoder", 2, 0), 0, "The model has no head enc L3 H1."),
        (Head("cross", 0, 4), 0, "The model has no head cross L1 H5."),
        (Head("decoder", -1, 0), 0, "The model has no head dec L0 H1."),
        (Head("encoder", 0, 0), 999, "There is no query 999: the encoder map has"),
        (Head("encoder", 0, 0), -1, "There is no query -1"),
        (Head("self", 0, 0), 0, "Unknown kind of attention 'self'"),
    ],
)
def test_what_the_model_or_the_map_lacks_is_an_input_error(
    exact, translation, head, position, message
):
    with pytest.raises(InputError, match=message):
        scaled_dot_product_of(exact.model, translation, head, position)


def test_an_untraced_translation_is_an_input_error(exact):
    untraced = exact.translate("A dog.", "de", beam_size=1)
    with pytest.raises(InputError, match="trace=True"):
        scaled_dot_product_of(exact.model, untraced, Head("cross", 0, 0), 0)


@pytest.mark.slow
def test_on_the_shipped_model_the_weights_are_the_traced_row_and_the_engines_within_5e_5():
    """The shipped model is pre-LN, d_k 24: the readable model's map exactly, the decoding
    engine's (what the app draws) within its tolerance."""
    readable = Translator.load(DEFAULT_MODEL, fast=False)
    result = readable.translate(SENTENCE, "de", beam_size=1, trace=True)
    engine = Translator(readable.model, readable.tokenizer, fast=True).trace(result)
    it = result.source_tokens.index("▁it")
    for kind, position in (("encoder", it), ("decoder", 3), ("cross", 3)):
        step = scaled_dot_product_of(readable.model, result, Head(kind, 5, 3), position)
        assert step.d_k == 24
        row = getattr(result.attention, kind).weights[5, 3, position]
        np.testing.assert_allclose(step.weights, row, atol=1e-6)
        fast_row = getattr(engine.attention, kind).weights[5, 3, position]
        np.testing.assert_allclose(step.weights, fast_row, atol=5e-5)
