"""The logit lens for translation: what each decoder state would say if the decoder ended there.

For a translation and each output position t, every state of the decoder's residual stream (the
embedding, then after each sub-layer of each layer: masked self-attention, cross-attention,
feed-forward; residual_stream.py) is read the way the model reads its last one: through the
model's own final normalisation and output projection, the tied embedding E, plus Marian's logit
bias b where the model has one (nostalgebraist 2020, "interpreting GPT: the logit lens"):

    lens_k(t) = softmax(LN_final(z_k(t)) E^T + b)

z_k is the sum x + f sub-layer k formed (z_0 the embedding), and LN_final the model's last
LayerNorm. What "read through the final normalisation" means depends on where the norms sit:

- **pre-LN** (the shipped model): z_k is the residual stream itself, and LN_final the decoder's
  final LayerNorm (``decoder_norm``), as in the decoder-only lenses.
- **post-LN** (the paper's, MarianMT): there is no norm after the last layer; each sub-layer
  normalises its own sum, LN_k(x + f), and the last sub-layer's LayerNorm (layer L's
  feed-forward) is the model's final normalisation. The lens reads each sum x + f *before* its own
  LayerNorm, through that last LayerNorm in place of its own: "what the model would output if this
  sub-layer were its last". The embedding's sum is the embedding itself.

Either way, the last state's lens is the model's own output distribution (1e-5,
tests/core/test_logit_lens.py). Each state gives the top pieces with their probabilities, the rank
and probability of the piece the translation finally chose at t, and the entropy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from core.inspection.residual_stream import SUBLAYERS, ResidualStream, walk_decoder
from core.labelled_attention import prediction_labels
from core.model.transformer import Transformer

if TYPE_CHECKING:
    from core.translator import Translation, Translator

TOP = 5  # pieces kept per cell


@dataclass(frozen=True)
class LogitLens:
    """The lens of one translation: K states (the embedding, then 3 per layer) x T positions."""

    states: list[str]  # "embedding", "L1 self-attention", ..., "L6 feed-forward"
    positions: list[str]  # what position t reads and predicts: "<s> → ▁Der", ...
    chosen: list[str]  # the piece the translation chose at each position (T)
    top_pieces: list[list[list[str]]]  # (K, T, TOP) the best pieces of each state, best first
    top_probs: np.ndarray  # (K, T, TOP) their probabilities
    chosen_rank: np.ndarray  # (K, T) the chosen piece's rank, 1 = the state's first choice
    chosen_prob: np.ndarray  # (K, T) its probability
    entropy: np.ndarray  # (K, T) of each state's distribution, in nats

    @property
    def layers(self) -> list[int]:
        """The layer each state ends (K): 0 the embedding, l after layer l's sub-layers."""
        return [0, *(1 + k // len(SUBLAYERS) for k in range(len(self.states) - 1))]

    def settled(self) -> np.ndarray:
        """(T,) for each position the first state from which the chosen piece stays ranked first
        to the end, -1 where the last state does not rank it first (a beam search may choose a
        piece the last state ranks lower)."""
        first = self.chosen_rank == 1  # (K, T)
        stays = np.flip(np.logical_and.accumulate(np.flip(first, 0), 0), 0)  # first from k on
        return np.where(stays[-1], stays.argmax(0), -1)

    def settled_layer(self) -> np.ndarray:
        """(T,) :meth:`settled` as a layer: 0 the embedding, l a sub-layer of layer l; -1 never."""
        settled = self.settled()
        return np.where(settled >= 0, np.asarray(self.layers)[settled], -1)


def lens_logits(model: Transformer, stream: ResidualStream) -> Tensor:
    """LN_final(z_k(t)) E^T + b for every state k and position t: (K, T, V)."""
    return model.unembed(stream.final_norm(stream.sums)).float()


def lens_log_probs(model: Transformer, stream: ResidualStream) -> Tensor:
    """log lens_k(t) for every state k and position t: (K, T, V)."""
    return lens_logits(model, stream).log_softmax(-1)


def state_lens(model: Transformer, normed: Tensor, chosen: Tensor, top: int) -> dict[str, Tensor]:
    """The lens of one state, normed (T, D) already through the final LayerNorm, for the chosen
    ids (T, 1), read from its logits without a log-softmax over the vocabulary: ranks and top
    pieces are the logits' own, and H = log Z - sum_w p_w logit_w, Z the softmax's normaliser."""
    logits = model.unembed(normed).float()  # (T, V)
    log_z = logits.logsumexp(-1, keepdim=True)  # (T, 1)
    probs = (logits - log_z).exp_()
    chosen_logit = logits.gather(-1, chosen)  # (T, 1)
    top_logits, top_ids = logits.topk(top, -1)
    return {
        "top_ids": top_ids,
        "top_probs": (top_logits - log_z).exp(),
        "chosen_rank": (logits > chosen_logit).sum(-1) + 1,
        "chosen_prob": (chosen_logit - log_z)[:, 0].exp(),
        "entropy": log_z[:, 0] - (probs * logits).nansum(-1),  # 0 log 0 = 0
    }


@torch.inference_mode()
def lens_of(
    model: Transformer, stream: ResidualStream, chosen_ids: list[int], top: int = TOP
) -> dict[str, np.ndarray]:
    """The lens of ``stream`` as arrays: the top ids and probabilities (K, T, top), the chosen
    pieces' (T) ranks, probabilities and each state's entropy (K, T). A state at a time: its
    (T, V) logits stay in the cache while they are read (on the shipped model, a sixth less
    CPU time than all states at once)."""
    normed = stream.final_norm(stream.sums)  # (K, T, D)
    chosen = torch.tensor(chosen_ids, device=normed.device)[:, None]  # (T, 1)
    states = [state_lens(model, state, chosen, top) for state in normed]
    return {name: torch.stack([s[name] for s in states]).cpu().numpy() for name in states[0]}


def logit_lens(translator: Translator, result: Translation, top: int = TOP) -> LogitLens:
    """The lens of ``result``, teacher-forced on the readable model (module doc)."""
    model = translator.model
    stream = walk_decoder(model, result.source_ids, result.decoder_input_ids)
    arrays = lens_of(model, stream, result.output_ids, top)
    pieces = translator.tokenizer.pieces
    top_pieces = [[pieces(ids) for ids in state.tolist()] for state in arrays.pop("top_ids")]
    positions = prediction_labels(result.decoder_input_tokens, result.output_tokens)
    return LogitLens(stream.state_names, positions, result.output_tokens, top_pieces, **arrays)
