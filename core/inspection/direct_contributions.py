"""Direct contributions: what each part of the decoder added to the logit of the chosen piece.

The logit of piece w at position t is u E_w + b_w, u the decoder's output (residual_stream.py).
Hold every LayerNorm's scale sigma at the value it had on the real stream (direct logit
attribution, as in Elhage et al. 2021 and TransformerLens): LN(z) = g * (z - mean z) / sigma + beta
is then affine in z, and u is a sum of parts, each carried to the output by the LayerNorms after
it. So is the logit:

    logit_w(t) = embedding + sum over sub-layers and heads of their parts + biases

- a pre-LN model adds every sub-layer's output f to the stream x, which the final LayerNorm
  reads: a part p contributes A(p) . E_w with A(z) = g * (z - mean z) / sigma_final;
- a post-LN model normalises after every sub-layer: a part added at sub-layer k passes through
  the LayerNorms of k and of every sub-layer after it, each with its own sigma.

The readout vector E_w is pulled back through those linear maps (A^T r = centre(g * r / sigma):
A is diag(g / sigma) times the centring matrix, which is symmetric) and dotted with each part:

- an attention sub-layer: each head h's output through its slice of W^O (head_h W^O_h), and for a
  cross-attention head each source piece s apart: a_ts v_s W^O_h (weight x value path), which sum
  to the head's part since heads = weights @ values;
- a feed-forward sub-layer: W_2 act(x W_1 + b_1), its output without b_2;
- the biases: every b^O and b_2, every LayerNorm's beta, and the output bias b_w where the model
  has one (Marian's final_logits_bias).

Together they add up to the logit (1e-4, tests/core/test_logit_lens.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from core.inspection.residual_stream import Norm, ResidualStream, SubLayer, walk_decoder
from core.model.transformer import Transformer

if TYPE_CHECKING:
    from core.translator import Translation


@dataclass(frozen=True)
class DirectContributions:
    """What each part added to the logit of the piece chosen at each of T positions; L layers,
    H heads, S source pieces."""

    logit: np.ndarray  # (T,) the chosen piece's logit, as the model computed it
    embedding: np.ndarray  # (T,) Embedding(x) * sqrt(D) + PE
    self_heads: np.ndarray  # (L, H, T) each masked self-attention head
    cross_heads: np.ndarray  # (L, H, T) each cross-attention head
    cross_sources: np.ndarray  # (L, H, T, S) a cross head's part, split over the source pieces
    feed_forward: np.ndarray  # (L, T) each feed-forward, its b_2 aside
    biases: np.ndarray  # (T,) every b^O, b_2, LayerNorm beta and the output bias

    def total(self) -> np.ndarray:
        """(T,) the parts added up: the logit, within float rounding."""
        heads = self.self_heads.sum((0, 1)) + self.cross_heads.sum((0, 1))
        return self.embedding + heads + self.feed_forward.sum(0) + self.biases


def pulled_back(norm: Norm, readout: Tensor) -> Tensor:
    """A^T r for a LayerNorm with its sigma held: centre(g * r / sigma), r (T, D)."""
    scaled = norm.module.weight * readout / norm.sigma[:, None]
    return scaled - scaled.mean(-1, keepdim=True)


def dotted(part: Tensor, readout: Tensor) -> Tensor:
    """(..., T, D) . (T, D) over D -> (..., T)."""
    return (part * readout).sum(-1)


def head_writes(sublayer: SubLayer, w_o: Tensor, readout: Tensor) -> tuple[Tensor, Tensor | None]:
    """Each head's part (H, T) of an attention sub-layer, and for cross-attention each head's
    split over the source (H, T, S): w_o (D, D) the output projection's weight."""
    heads = sublayer.heads  # (H, T, d_k)
    per_head = w_o.view(w_o.size(0), heads.size(0), heads.size(2))  # (D, H, d_k)
    by_head = dotted(torch.einsum("htk,dhk->htd", heads, per_head), readout)  # (H, T)
    if sublayer.kind != "cross-attention":
        return by_head, None
    written = torch.einsum("hsk,dhk->hsd", sublayer.values, per_head)  # (H, S, D)
    along = torch.einsum("hsd,td->hts", written, readout)  # (H, T, S)
    return by_head, sublayer.weights * along


@torch.inference_mode()
def contributions_of(
    model: Transformer, stream: ResidualStream, chosen_ids: list[int]
) -> DirectContributions:
    """The direct contributions to the logits of ``chosen_ids`` (T), one per position."""
    chosen = torch.tensor(chosen_ids, device=stream.output.device)
    readout = model.embedding.weight[chosen].float()  # (T, D): E_w, w chosen at t
    biases = (
        model.output_bias[chosen].float()
        if model.config.output_bias
        else torch.zeros(len(chosen_ids), device=chosen.device)
    )
    heads, sources, feed_forward = {}, [], []
    for sublayer in reversed(stream.sublayers):  # pull the readout back, last sub-layer first
        for norm in reversed(sublayer.after):
            biases = biases + dotted(norm.module.bias, readout)
            readout = pulled_back(norm, readout)
        biases = biases + dotted(sublayer.output_bias, readout)
        if sublayer.kind == "feed-forward":
            feed_forward.append(dotted(sublayer.output - sublayer.output_bias, readout))
            continue
        layer = model.decoder_layers[sublayer.layer]
        module = layer.self_attn if sublayer.kind == "self-attention" else layer.cross_attn
        by_head, split = head_writes(sublayer, module.w_o.weight, readout)
        heads.setdefault(sublayer.kind, []).append(by_head)
        if split is not None:
            sources.append(split)
    logit = model.unembed(stream.output)[torch.arange(len(chosen_ids)), chosen]

    def layers_first(parts: list[Tensor]) -> np.ndarray:  # collected last layer first
        return torch.stack(parts[::-1]).float().cpu().numpy()

    return DirectContributions(
        logit=logit.float().cpu().numpy(),
        embedding=dotted(stream.embedding, readout).float().cpu().numpy(),
        self_heads=layers_first(heads["self-attention"]),
        cross_heads=layers_first(heads["cross-attention"]),
        cross_sources=layers_first(sources),
        feed_forward=layers_first(feed_forward),
        biases=biases.float().cpu().numpy(),
    )


def direct_contributions(model: Transformer, result: Translation) -> DirectContributions:
    """The direct contributions to the logit of every piece ``result`` chose (module doc)."""
    stream = walk_decoder(model, result.source_ids, result.decoder_input_ids)
    return contributions_of(model, stream, result.output_ids)
