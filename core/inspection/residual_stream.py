"""The decoder's residual stream, sub-layer by sub-layer: what the logit lens (logit_lens.py) and
the direct contributions (direct_contributions.py) read.

A decoder layer has three sub-layers (masked self-attention, cross-attention, feed-forward), each
in a residual connection (core/model/transformer.py, ``residual_connection``):

    pre-LN   x <- x + f(LN(x))            the stream x is the running sum; after the last layer
                                          the model's final LayerNorm (decoder_norm) reads it
    post-LN  x <- LN(x + f(x))            every sum is normalised by its sub-layer's own
                                          LayerNorm; the last one's output is the model's output

This module walks the decoder's layers of the readable model, calling its own modules in the
model's order, and keeps for every sub-layer its output f, each attention head's output before
W^O (heads = weights @ V, so Concat(heads) W^O + b^O = f), the sum x + f it formed, and the
LayerNorms that act after it, with the scale sigma = sqrt(Var(z) + eps) each applied. Its last
output is the model's own decoder output (tests/core/test_logit_lens.py).

Shapes: T decoder positions, S source pieces, D d_model, H heads, d_k = D / H.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from core.model.transformer import (
    AttentionMaps,
    DecoderLayer,
    Transformer,
    subsequent_mask,
)

SUBLAYERS = ("self-attention", "cross-attention", "feed-forward")


@dataclass(frozen=True)
class Norm:
    """A LayerNorm as it acted on each position: LN(z) = g * (z - mean z) / sigma + beta."""

    module: nn.LayerNorm
    sigma: Tensor  # (T,) sqrt(Var(z) + eps) of the z it read, per position


@dataclass(frozen=True)
class SubLayer:
    """One sub-layer of one decoder layer (counted from 0), as it ran on the translation."""

    layer: int
    kind: str  # one of SUBLAYERS
    output: Tensor  # (T, D) f, its output bias included
    output_bias: Tensor  # (D,) b^O of an attention, b_2 of the feed-forward
    summed: Tensor  # (T, D) x + f: the stream after it (pre-LN), its norm's input (post-LN)
    after: list[Norm]  # the LayerNorms between this sum and the next sub-layer's sum
    heads: Tensor | None = None  # (H, T, d_k) each head's output, before W^O
    weights: Tensor | None = None  # (H, T, T_k) the heads' attention weights
    values: Tensor | None = None  # (H, T_k, d_k) the values they weighed

    @property
    def name(self) -> str:
        return f"L{self.layer + 1} {self.kind}"


@dataclass(frozen=True)
class ResidualStream:
    """The decoder of one translation, walked: its input, every sub-layer, its output."""

    embedding: Tensor  # (T, D) Embedding(x) * sqrt(D) + PE: the stream before any layer
    sublayers: list[SubLayer]  # 3 per layer, in the model's order
    final_norm: nn.LayerNorm  # pre-LN: decoder_norm; post-LN: the last sub-layer's own
    output: Tensor  # (T, D) what the model hands to the output projection

    @property
    def state_names(self) -> list[str]:
        """The K = 1 + 3L states of the stream: the embedding, then after every sub-layer."""
        return ["embedding", *(sublayer.name for sublayer in self.sublayers)]

    @property
    def sums(self) -> Tensor:
        """(K, T, D): the embedding, then every sub-layer's sum x + f."""
        return torch.stack([self.embedding, *(sublayer.summed for sublayer in self.sublayers)])


def applied_norm(norm: nn.LayerNorm, z: Tensor) -> tuple[Tensor, Norm]:
    """LN(z) for z (T, D), with the sigma it divided by."""
    sigma = torch.sqrt(z.float().var(-1, unbiased=False) + norm.eps)  # (T,)
    return norm(z), Norm(norm, sigma)


def run_sublayer(
    layer: DecoderLayer, kind: str, h: Tensor, memory: Tensor, masks: tuple[Tensor, Tensor]
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """Sub-layer ``kind`` of ``layer`` on what it reads, h (1, T, D): its own output f (1, T, D),
    its output bias, and for an attention its heads (H, T, d_k), weights and values."""
    if kind == "feed-forward":
        return layer.feed_forward(h), layer.feed_forward.w_2.bias, {}
    self_mask, source_mask = masks
    module, context, mask = (
        (layer.self_attn, h, self_mask)
        if kind == "self-attention"
        else (layer.cross_attn, memory, source_mask)
    )
    maps: list[AttentionMaps] = []
    output = module(h, context, mask, maps=maps)
    values = module.project_kv(context)[1][0]  # (H, T_k, d_k)
    weights = maps[0].weights[0]  # (H, T, T_k)
    parts = {"heads": weights @ values, "weights": weights, "values": values}
    return output, module.w_o.bias, parts


@torch.inference_mode()
def walk_decoder(
    model: Transformer, source_ids: list[int], decoder_input_ids: list[int]
) -> ResidualStream:
    """Teacher-force the decoder on ``decoder_input_ids`` (T) after encoding ``source_ids`` (S),
    keeping every sub-layer (model in eval mode: no dropout)."""
    device = next(model.parameters()).device
    source = torch.tensor([source_ids], device=device)
    decoder_input = torch.tensor([decoder_input_ids], device=device)
    memory, source_mask = model.encode(source)  # (1, S, D)
    x, _, _ = model.embed(decoder_input)  # (1, T, D)
    embedding, pre_ln = x[0], model.config.norm_first
    masks = (subsequent_mask(decoder_input.size(1), device), source_mask)
    sublayers: list[SubLayer] = []
    for index, layer in enumerate(model.decoder_layers):
        residuals = (layer.residual_self, layer.residual_cross, layer.residual_ff)
        for kind, residual in zip(SUBLAYERS, residuals):
            h = residual.norm(x) if pre_ln else x
            output, bias, parts = run_sublayer(layer, kind, h, memory, masks)
            summed = x + output
            after: list[Norm] = []
            if pre_ln:
                x = summed
            else:
                normed, norm = applied_norm(residual.norm, summed[0])
                x, after = normed[None], [norm]
            sublayers.append(SubLayer(index, kind, output[0], bias, summed[0], after, **parts))
    if pre_ln:  # the final LayerNorm acts after the last sub-layer
        output, norm = applied_norm(model.decoder_norm, x[0])
        sublayers[-1] = replace(sublayers[-1], after=[norm])
        final_norm = model.decoder_norm
    else:
        output, final_norm = x[0], model.decoder_layers[-1].residual_ff.norm
    return ResidualStream(embedding, sublayers, final_norm, output)
