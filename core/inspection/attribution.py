"""Is attention an explanation? Several lenses on one produced piece, over the source pieces.

A traced translation (Translator.translate(..., trace=True)) is read again by teacher forcing. For
the decoder position t, which predicts the output piece y_t, each lens gives one number per source
piece j (the language tag and </s> included: the model reads them too):

    cross-attention       alpha_tj of one layer and head, or averaged (the maps the app draws)
    rollout               Abnar & Zuidema 2020: through the encoder,
                          A_hat_l = rownorm(mean_h A_l + I) and R = A_hat_L ... A_hat_1; then
                          (mean over decoder layers and heads of the cross-attention) @ R
    norm-based            Kobayashi et al. 2020: what j actually adds, ||alpha_tj f(x_j)|| with
                          f(x) = (x W_V + b_V) W_O restricted to the head, averaged over layers and
                          heads
    gradient x input      sum_d e_jd * d log p(y_t) / d e_jd over j's scaled token embedding e_j
    integrated gradients  Sundararajan et al. 2017, from Captum, along e from 0 (positions kept)
                          to e; their sum equals log p(y_t | e) - log p(y_t | 0) up to the
                          convergence delta Captum reports
    occlusion             log p(y_t) - log p(y_t | piece j replaced by <unk>), all j in one batch

Gradient x input and integrated gradients come from Captum, not written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients
from scipy.stats import kendalltau

from core.errors import InputError
from core.model.transformer import Transformer
from core.text.tokenizer import UNK_ID

if TYPE_CHECKING:  # a type hint only: inspection does not import the translator above it
    from core.translator import Translation

# Integration steps. On the shipped model, |Captum's delta| / |f(x) - f(0)| over 15 output pieces
# (python -m benchmarks.explain_timings --convergence): 128 steps median 5.5%, max 22%; 160 steps
# 2.5%, max 19%; 192 steps median 1.9%, max 3.9%; 256 steps median 0.8%, max 7.6%. Gauss-Legendre
# quadrature's error is not monotone in the steps. The lenses of one piece on 1 thread (python -m
# benchmarks.explain_timings --threads 1, page budget 2 s): 160 steps 1.80 s, 192 steps 2.02 s.
IG_STEPS = 160


@dataclass(frozen=True)
class Lenses:
    """Every lens on decoder position ``position`` (which predicts ``predicted``), one value per
    source piece, in the order of ``source_labels``."""

    position: int
    predicted: str
    source_labels: list[str]
    values: dict[str, np.ndarray]  # lens name -> (S,)
    log_prob: float  # log p(y_t) under the model
    ig_delta: float  # integrated gradients' convergence delta (completeness error)


def rollout(encoder_weights: np.ndarray) -> np.ndarray:
    """Attention rollout through the encoder (Abnar & Zuidema 2020), (L, H, S, S) -> (S, S):
    R = A_hat_L ... A_hat_1 with A_hat_l = rownorm(mean_h A_l + I), the identity standing for the
    residual connection. Row i: how much of input piece j reaches encoder output i."""
    layers, _, length, _ = encoder_weights.shape
    flow = np.eye(length)
    for layer in range(layers):
        mixed = encoder_weights[layer].mean(axis=0) + np.eye(length)
        mixed /= mixed.sum(axis=-1, keepdims=True)
        flow = mixed @ flow
    return flow


def cross_rollout(result: Translation) -> np.ndarray:
    """(T, S): the cross-attention averaged over decoder layers and heads, carried back to the
    input pieces through the encoder's rollout. Rows sum to 1."""
    cross = result.attention.cross.weights.mean(axis=(0, 1))  # (T, S)
    return cross @ rollout(result.attention.encoder.weights)


def one_row(model: Transformer, ids: list[int]) -> torch.Tensor:
    """(1, len(ids)): token ids as a batch of one, on the model's device."""
    return torch.tensor([ids], device=model.embedding.weight.device)


@torch.inference_mode()
def norm_based(model: Transformer, result: Translation) -> np.ndarray:
    """(L, H, T, S): ||alpha_tj f_h(x_j)|| of every decoder layer's cross-attention (Kobayashi et
    al. 2020), where x_j is the encoder output j and f_h(x) = (x W_V + b_V)_h W_O,h the part of the
    head's output that x contributes before the output bias."""
    memory, _ = model.encode(one_row(model, result.source_ids))  # (1, S, D)
    norms = []
    for layer in model.decoder_layers:
        attn = layer.cross_attn
        values = attn.split_heads(attn.w_v(memory))[0]  # (H, S, d_k)
        # W_O's columns for head h: (D, d_k); f_h(x_j) = v_hj W_O,h^T -> (H, S, D)
        w_o = attn.w_o.weight.view(-1, attn.n_heads, attn.d_k).transpose(0, 1)  # (H, D, d_k)
        transformed = values @ w_o.transpose(1, 2)
        norms.append(transformed.norm(dim=-1))  # (H, S)
    size = torch.stack(norms).cpu().numpy()[:, :, None, :]  # (L, H, 1, S)
    return result.attention.cross.weights * size


def check_position(position: object, length: int) -> None:
    """An output position to explain: a whole number in 0 .. length - 1 (InputError otherwise)."""
    if isinstance(position, bool) or not isinstance(position, int):
        raise InputError(f"The position must be a whole number, got {position!r}.")
    if not 0 <= position < length:
        raise InputError(
            f"Position {position} is outside the translation's {length} output pieces "
            f"(0 to {length - 1})."
        )


class LogProbability(torch.nn.Module):
    """log p(y_t) as a function of the source's scaled token embeddings (B, S, D), the decoder
    reading the translation's own prefix: what Captum differentiates and integrates. With a
    ``foil`` piece, the contrast log p(y_t) - log p(foil) instead (Yin & Neubig 2022)."""

    def __init__(
        self, model: Transformer, result: Translation, position: int, foil: int | None = None
    ) -> None:
        super().__init__()
        check_position(position, len(result.output_ids))
        self.model, self.position, self.foil = model, position, foil
        self.source = one_row(model, result.source_ids)
        self.target = one_row(model, result.decoder_input_ids[: position + 1])
        self.predicted = result.output_ids[position]

    def forward(self, token_embedding: torch.Tensor) -> torch.Tensor:
        batch = token_embedding.size(0)
        memory, mask = self.model.encode(
            self.source.expand(batch, -1), token_embedding=token_embedding
        )
        hidden = self.model.decoder_output(self.target.expand(batch, -1), memory, mask)
        # only the explained position goes through the pre-softmax projection
        log_probs = self.model.unembed(hidden[:, self.position]).log_softmax(-1)  # (B, V)
        if self.foil is None:
            return log_probs[:, self.predicted]  # (B,)
        return log_probs[:, self.predicted] - log_probs[:, self.foil]


def source_token(model: Transformer, result: Translation) -> torch.Tensor:
    """(1, S, D): Embedding(source) * sqrt(D), the input the gradient lenses attribute to."""
    with torch.no_grad():
        return model.token_embedding(one_row(model, result.source_ids))


def occlusion(model: Transformer, result: Translation, position: int) -> np.ndarray:
    """(S,): the drop in log p(y_t) when source piece j is replaced by <unk>, all j in one
    batch."""
    ids = one_row(model, result.source_ids)
    occluded = ids.repeat(ids.size(1), 1)  # (S, S): row j has piece j replaced
    occluded.fill_diagonal_(UNK_ID)
    log_prob = LogProbability(model, result, position)
    with torch.no_grad():
        full = log_prob(source_token(model, result))
        scaled = model.token_embedding(occluded)
        return (full - log_prob(scaled)).cpu().numpy()


@dataclass(frozen=True)
class Contrast:
    """Why y_t rather than a foil: integrated gradients of log p(y_t) - log p(foil) over the
    source pieces (Yin & Neubig 2022, "Interpreting Language Models with Contrastive
    Explanations")."""

    foil: int  # the piece id compared against
    values: np.ndarray  # (S,)
    log_ratio: float  # log p(y_t) - log p(foil) under the model
    delta: float  # Captum's convergence delta (completeness error)


def integrated_gradients(log_prob: torch.nn.Module, embedding: torch.Tensor, steps: int = IG_STEPS):
    """Captum's integrated gradients from a zero embedding: attributions (1, S, D) and delta."""
    return IntegratedGradients(log_prob).attribute(
        embedding, torch.zeros_like(embedding), n_steps=steps, return_convergence_delta=True
    )


def contrast(model: Transformer, result: Translation, position: int, foil: int) -> Contrast:
    """What in the source makes the model write y_t rather than the piece ``foil`` at
    ``position``: integrated gradients of the contrast, summed over the embedding dimensions."""
    model.eval()
    log_ratio = LogProbability(model, result, position, foil)
    embedding = source_token(model, result)
    attributions, delta = integrated_gradients(log_ratio, embedding)
    with torch.no_grad():
        value = float(log_ratio(embedding)[0])
    return Contrast(foil, attributions.sum(-1)[0].detach().cpu().numpy(), value, float(delta[0]))


def lenses(model: Transformer, result: Translation, position: int) -> Lenses:
    """Every lens on decoder position ``position`` of a traced translation (see the module doc)."""
    if result.attention is None:
        raise ValueError("lenses need a traced translation: translate(..., trace=True)")
    model.eval()
    log_prob = LogProbability(model, result, position)
    embedding = source_token(model, result)
    gradient_x_input = InputXGradient(log_prob).attribute(embedding.clone().requires_grad_())
    integrated, delta = integrated_gradients(log_prob, embedding)
    cross = result.attention.cross.weights[:, :, position]  # (L, H, S)
    values = {
        "cross-attention (last layer, mean of heads)": cross[-1].mean(axis=0),
        "cross-attention (mean of layers and heads)": cross.mean(axis=(0, 1)),
        "rollout": cross_rollout(result)[position],
        "norm-based": norm_based(model, result)[:, :, position].mean(axis=(0, 1)),
        "gradient x input": gradient_x_input.sum(-1)[0].detach().cpu().numpy(),
        "integrated gradients": integrated.sum(-1)[0].detach().cpu().numpy(),
        "occlusion": occlusion(model, result, position),
    }
    with torch.no_grad():
        value = float(log_prob(embedding)[0])
    return Lenses(
        position,
        result.output_tokens[position],
        list(result.source_tokens),
        values,
        value,
        float(delta[0]),
    )


def rank_agreement(values: dict[str, np.ndarray]) -> np.ndarray:
    """(M, M): Kendall's tau (tau-b, from SciPy) between the source-piece rankings of every pair
    of lenses, in the order of ``values``; 1 on the diagonal, 0 where a lens is constant."""
    names = list(values)
    agreement = np.eye(len(names))
    for i, first in enumerate(names):
        for j in range(i + 1, len(names)):
            tau = kendalltau(values[first], values[names[j]]).statistic
            agreement[i, j] = agreement[j, i] = 0.0 if np.isnan(tau) else tau
    return agreement
