"""Scaled dot-product attention (section 3.2.1) for one query of one head on a real sentence, step
by step: what the paper's Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V does for one row.

For query position i of head h (head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V), section 3.2.2):

    q   = x_i W_h^Q + b_h^Q          (d_k,)      the query
    K   = C W_h^K + b_h^K            (n, d_k)    a key per position j of the context C
    V   = C W_h^V + b_h^V            (n, d_k)    a value per position j
    q . k_j                          (n,)        the dot products
    s_j = q . k_j / sqrt(d_k)        (n,)        the scores
    w   = softmax(s + M)             (n,)        the weights; M_j = -inf where the mask forbids j
    z   = sum_j w_j v_j              (d_k,)      the head's output for query i

x is what the layer's attention reads: the residual stream after the layer norm in a pre-LN
model, the stream itself in a post-LN one (Residual in core/model/transformer.py). C is x itself
in self-attention and the encoder's output in cross-attention. W_h^Q is head h's d_k columns of
the projection (rows h * d_k .. (h + 1) * d_k of nn.Linear's weight, as split_heads cuts them);
the linear layers carry a bias b, which the paper leaves out.

The readable model (core/model/transformer.py) computes it, teacher-forced on the translation:
its weights are the traced map's row exactly; a map the decoding engine traced agrees within
5e-5 (tests/core/test_engine.py)."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.errors import InputError
from core.inspection.ablation import KINDS, Head, attention_module
from core.labelled_attention import LabelledAttention
from core.model.transformer import MultiHeadAttention, Transformer

if TYPE_CHECKING:
    from core.translator import Translation


@dataclass(frozen=True)
class ScaledDotProduct:
    """One query of one head (layer and head counted from 0), every step of its attention, with
    the labels of the translation's map of that kind (LabelledAttention)."""

    head: Head
    position: int  # the query's row in the map
    query_label: str
    key_labels: list[str]
    query: np.ndarray  # (d_k,) q
    keys: np.ndarray  # (n, d_k) K, a row per key
    values: np.ndarray  # (n, d_k) V, a row per key
    dot_products: np.ndarray  # (n,) q . k_j
    scores: np.ndarray  # (n,) q . k_j / sqrt(d_k)
    allowed: np.ndarray  # (n,) bool: where the mask lets the query attend
    weights: np.ndarray  # (n,) softmax of the masked scores; exactly 0 where masked
    output: np.ndarray  # (d_k,) sum_j w_j v_j

    @property
    def d_k(self) -> int:
        return self.query.shape[0]

    @property
    def masked_scores(self) -> np.ndarray:
        """The scores with -inf where the mask forbids attending: s + M, (n,)."""
        return np.where(self.allowed, self.scores, np.float32(-np.inf))


def kind_of_attention(translation: Translation, kind: str) -> LabelledAttention:
    """The translation's map of ``kind`` (encoder, decoder or cross), piece by piece."""
    if kind not in KINDS:
        raise InputError(f"Unknown kind of attention {kind!r}: choose one of {', '.join(KINDS)}.")
    if translation.attention is None:
        raise InputError("The translation holds no attention: translate it with trace=True.")
    return getattr(translation.attention, kind)


def attention_input(
    model: Transformer, translation: Translation, module: MultiHeadAttention
) -> tuple[Tensor, Tensor, Tensor | None]:
    """What ``module``, one attention of ``model``, reads in the teacher-forced pass over
    ``translation``: x (T_q, D) the queries' input, the context (T_k, D) the keys' and values'
    input, and the mask that broadcasts to (1, 1, T_q, T_k) (None: every key allowed)."""
    seen: dict[str, object] = {}

    def keep(attention: nn.Module, args: tuple, kwargs: dict) -> None:
        seen.update(inspect.signature(attention.forward).bind(*args, **kwargs).arguments)

    device = next(model.parameters()).device
    source = torch.tensor([translation.source_ids], device=device)  # (1, S)
    decoder_input = torch.tensor([translation.decoder_input_ids], device=device)  # (1, T)
    hook = module.register_forward_pre_hook(keep, with_kwargs=True)
    try:
        memory, source_mask = model.encode(source)
        if not seen:  # the module is the decoder's
            model.decoder_output(decoder_input, memory, source_mask)
    finally:
        hook.remove()
    return seen["x"][0], seen["context"][0], seen["mask"]


def head_projection(linear: nn.Linear, head: int, d_k: int, x: Tensor) -> Tensor:
    """x W_h + b_h for head ``head``: its d_k output features of ``linear``, (..., D) ->
    (..., d_k), the slice split_heads gives that head."""
    rows = slice(head * d_k, (head + 1) * d_k)
    return F.linear(x, linear.weight[rows], linear.bias[rows])


def allowed_keys(mask: Tensor | None, position: int, queries: int, keys: int) -> Tensor:
    """The mask's row for query ``position``: (keys,) bool, True where it may attend."""
    if mask is None:
        return torch.ones(keys, dtype=torch.bool)
    return torch.broadcast_to(mask, (1, 1, queries, keys))[0, 0, position].cpu()


def softmax_weights(scores: Tensor, allowed: Tensor) -> Tensor:
    """w = softmax(s + M), M_j = -inf where key j is not allowed: (n,) -> (n,)."""
    return scores.masked_fill(~allowed, float("-inf")).softmax(-1)


def scaled_dot_product_of(
    model: Transformer, translation: Translation, head: Head, position: int
) -> ScaledDotProduct:
    """Query ``position`` of ``head`` (kind, layer and head counted from 0) on a traced
    ``translation``, step by step (see the module's docstring), computed by ``model`` (a
    Translator's ``model``, the readable one). Raises InputError for a kind, head or position
    the model or the map does not have."""
    attention = kind_of_attention(translation, head.kind)
    module = attention_module(model, head)  # refuses a layer or head the model lacks
    queries, keys = len(attention.query_labels), len(attention.key_labels)
    if position not in range(queries):
        raise InputError(
            f"There is no query {position}: the {head.kind} map has {queries} rows (from 0)."
        )
    with torch.inference_mode():
        x, context, mask = attention_input(model, translation, module)
        d_k = module.d_k
        query = head_projection(module.w_q, head.head, d_k, x[position]).cpu()  # (d_k,)
        key = head_projection(module.w_k, head.head, d_k, context).cpu()  # (n, d_k)
        value = head_projection(module.w_v, head.head, d_k, context).cpu()  # (n, d_k)
        dot_products = key @ query  # (n,)
        scores = dot_products / math.sqrt(d_k)  # (n,)
        allowed = allowed_keys(mask, position, queries, keys)  # (n,)
        weights = softmax_weights(scores, allowed)  # (n,)
        output = weights @ value  # (d_k,)
    return ScaledDotProduct(
        head,
        position,
        attention.query_labels[position],
        list(attention.key_labels),
        query.numpy(),
        key.numpy(),
        value.numpy(),
        dot_products.numpy(),
        scores.numpy(),
        allowed.numpy(),
        weights.numpy(),
        output.numpy(),
    )
