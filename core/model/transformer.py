"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), written to be read.

One encoder-decoder model for translation. Every function is named after an idea of the paper and
its docstring gives the formula. Tracing is a return value, not a hook: with ``trace=True`` a
forward pass also returns :class:`Intermediates`, holding the embeddings that went in and, for every
layer, the attention of every head. The pass is written once, here: given ``kernels``, it asks them
for each layer in the modules' place (core/model/engine.py's fused CPU kernels, same numbers).

Shapes, once for the whole package (B batch, H heads, S source length, T decoder length,
D d_model, d_k = D / H, L layers):

    source tokens                (B, S)          decoder_input tokens     (B, T)
    masks (True = may attend)    (B, 1, 1, S) padding, (1, 1, T, T) subsequent, broadcast to
                                 (B, H, T_q, T_k)
    AttentionMaps.*              (B, H, T_q, T_k): encoder self (B, H, S, S),
                                 decoder self (B, H, T, T), cross (B, H, T, S)
    Intermediates.encoder_self   list of L AttentionMaps, likewise decoder_self and cross
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.model.config import ACTIVATIONS, ModelConfig
from core.model.dropout import Dropout
from core.model.kv_cache import KVCache, LayerCache, broadcast_batch
from core.model.sinusoids import wave

# ---- Positional encoding and masks ---------------------------------------------------------------


def positional_encoding(length: int, d_model: int, layout: str = "interleaved") -> Tensor:
    """Sinusoidal positional encoding (section 3.5), shape (length, d_model).

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

    layout "halves" (Marian, tensor2tensor) holds the same waves, the sines in dimensions
    0..d_model/2 - 1 and the cosines after them: PE(pos, i) = sin, PE(pos, d_model/2 + i) = cos.
    """
    waves = [wave(d, d_model, layout) for d in range(d_model)]  # core/model/sinusoids.py
    position = torch.arange(length, dtype=torch.float64).unsqueeze(1)  # (length, 1)
    two_i = torch.tensor([w.two_i for w in waves], dtype=torch.float64)  # (d_model,)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (length, d_model)
    is_sine = torch.tensor([w.function == "sin" for w in waves])  # (d_model,)
    return torch.where(is_sine, torch.sin(angle), torch.cos(angle)).float()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Which keys are real tokens: (B, T) -> (B, 1, 1, T), True where a query may attend."""
    return (tokens != pad_id)[:, None, None, :]


def subsequent_mask(length: int, device: torch.device | None = None) -> Tensor:
    """The decoder's causal mask, (1, 1, T, T): position i may attend to positions j <= i."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()[None, None]


def restricting(allowed: Tensor) -> Tensor | None:
    """A mask (True = may attend), or None where it allows every key: attention then skips
    masking, and its masked scores are its scores (a single sentence has no padding, and one new
    decoder position sees every earlier one). It reads the mask's values, a wait for a GPU and a
    break in a compiled graph: only the CPU's fused kernels ask for it."""
    return None if bool(allowed.all()) else allowed


# ---- Attention -----------------------------------------------------------------------------------


@dataclass
class AttentionMaps:
    """What one multi-head attention computed, every tensor (B, H, T_q, T_k)."""

    scores: Tensor  # QK^T / sqrt(d_k)
    masked_scores: Tensor  # the same, with -inf where the mask forbids attending
    weights: Tensor  # softmax(masked_scores) over the keys; masked cells exactly 0


def softmax_type(dtype: torch.dtype) -> torch.dtype | None:
    """What attention's softmax computes in: at least float32, as autocast does on GPUs (bf16
    scores would take the CPU's slow bf16 kernel); None, the scores' own type, where they are
    float32 or float64 (softmax given a dtype copies its input even when it is the same)."""
    return None if dtype in (torch.float32, torch.float64) else torch.float32


def attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, AttentionMaps]:
    """Scaled dot-product attention (section 3.2.1), the explicit path that shows its work.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

    query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v); mask broadcasts to
    (..., T_q, T_k) with True where attending is allowed. Returns the output (..., T_q, d_v) and the
    maps that produced it."""
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    masked_scores = scores if mask is None else scores.masked_fill(~mask, float("-inf"))
    weights = masked_scores.softmax(-1, dtype=softmax_type(scores.dtype))
    return weights @ value, AttentionMaps(scores, masked_scores, weights)


def split_heads(x: Tensor, batch: int, d_k: int) -> Tensor:
    """(B, T, n D), or the same as rows (B T, n D) -> (B, n H, T, d_k), a view: the heads of n
    projections side by side (n = 1: Q; n = 3: the fast path's stacked [Q | K | V])."""
    return x.view(batch, -1, x.size(-1) // d_k, d_k).transpose(1, 2)


class Attend(nn.Module):
    """Every head's softmax(Q K^T / sqrt(d_k)) V at once, where queries meet keys; interventions
    on heads (core/inspection/ablation.py) put a subclass in its place. query (B, H, T_q, d_k), key
    and value (B, H, T_k, d_k) -> heads (B, H, T_q, d_k) and their :class:`AttentionMaps`, or None
    where the fused kernel computed the same output (when the maps are not asked for).

    ``explicit_in_training``: training takes the explicit path too, as on a CPU its backward
    measured 2x faster than the fused kernel's (benchmarks/training_throughput.py); a GPU's fused
    kernel is the faster there. The trainer chooses by device (train/loop/hardware.py,
    FastPaths)."""

    explicit_in_training = True

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, with_maps: bool
    ) -> tuple[Tensor, AttentionMaps | None]:
        if with_maps or (self.training and self.explicit_in_training):
            return attention(query, key, value, mask)
        return F.scaled_dot_product_attention(query, key, value, mask), None


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O (section 3.2.2),
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.d_k = config.n_heads, config.d_k
        self.w_q = nn.Linear(config.d_model, config.d_model)
        self.w_k = nn.Linear(config.d_model, config.d_model)
        self.w_v = nn.Linear(config.d_model, config.d_model)
        self.w_o = nn.Linear(config.d_model, config.d_model)
        self.attend = Attend()

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, T, D) -> (B, H, T, d_k)"""
        return split_heads(x, x.size(0), self.d_k)

    def project_kv(self, context: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of what is attended to: (B, T_k, D) -> two (B, H, T_k, d_k)."""
        return self.split_heads(self.w_k(context)), self.split_heads(self.w_v(context))

    def keys_values(
        self, context: Tensor, cache: KVCache | None, rows: int
    ) -> tuple[Tensor, Tensor]:
        """K and V of the context for B ``rows``, two (B, H, T_k, d_k): with a cache, only the new
        part is projected; a context (1, T_k, D) shared by all B rows is broadcast, not copied."""
        project = self.project_kv
        key, value = cache.keys_values(context, project) if cache else project(context)
        return broadcast_batch(key, rows), broadcast_batch(value, rows)

    def forward(
        self,
        x: Tensor,
        context: Tensor,
        mask: Tensor | None,
        cache: KVCache | None = None,
        maps: list[AttentionMaps] | None = None,
    ) -> Tensor:
        """x (B, T_q, D) attends to its context (B or 1, T_k, D): x itself in self-attention, the
        encoder output in cross-attention; with a cache, only what it has not seen. ``maps``, a
        list, gets the maps. No dropout on the attention weights: section 5.4 has none there."""
        query = self.split_heads(self.w_q(x))  # (B, H, T_q, d_k)
        key, value = self.keys_values(context, cache, x.size(0))  # (B, H, T_k, d_k) each
        heads, computed = self.attend(query, key, value, mask, with_maps=maps is not None)
        if maps is not None:
            maps.append(computed)
        concat = heads.transpose(1, 2).flatten(2)  # (B, H, T_q, d_k) -> (B, T_q, D)
        return self.w_o(concat)  # (B, T_q, D)


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (section 3.3), applied at every position alike."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.w_1 = nn.Linear(config.d_model, config.d_ff)
        self.w_2 = nn.Linear(config.d_ff, config.d_model)
        self.activation = ACTIVATIONS[config.activation]

    def forward(self, x: Tensor) -> Tensor:
        return self.w_2(self.activation(self.w_1(x)))


def residual_connection(
    x: Tensor,
    sublayer: Callable[[Tensor], Tensor],
    norm: Callable[[Tensor], Tensor],
    norm_first: bool,
) -> Tensor:
    """The paper's post-LN LayerNorm(x + Sublayer(x)) (section 3.1), or pre-LN
    x + Sublayer(LayerNorm(x)) with ``norm_first``."""
    if norm_first:
        return x + sublayer(norm(x))  # pre-LN
    return norm(x + sublayer(x))  # post-LN, the paper's


class Residual(nn.Module):
    """A sub-layer's residual connection with layer normalisation, dropout on the sub-layer's
    output (section 5.4)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(config.d_model)
        self.dropout = Dropout(config.dropout)
        self.norm_first = config.norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        def dropped_sublayer(h: Tensor) -> Tensor:
            return self.dropout(sublayer(h))

        return residual_connection(x, dropped_sublayer, self.norm, self.norm_first)


# ---- Encoder and decoder layers ------------------------------------------------------------------


class EncoderLayer(nn.Module):
    """Self-attention over the source, then the feed-forward network (Figure 1, left)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(config)
        self.feed_forward = FeedForward(config)
        self.residual_attn = Residual(config)
        self.residual_ff = Residual(config)

    def forward(
        self, x: Tensor, mask: Tensor, intermediates: Intermediates | None = None
    ) -> Tensor:
        """x (B, S, D) -> (B, S, D), mask (B, 1, 1, S); ``intermediates`` get the maps in
        encoder_self."""
        maps = intermediates.encoder_self if intermediates else None
        x = self.residual_attn(x, lambda h: self.self_attn(h, h, mask, maps=maps))  # (B, S, D)
        return self.residual_ff(x, self.feed_forward)  # (B, S, D)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, then the feed-forward."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(config)
        self.cross_attn = MultiHeadAttention(config)
        self.feed_forward = FeedForward(config)
        self.residual_self = Residual(config)
        self.residual_cross = Residual(config)
        self.residual_ff = Residual(config)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor,
        source_mask: Tensor,
        cache: LayerCache | None = None,
        intermediates: Intermediates | None = None,
    ) -> Tensor:
        """x (B, T, D) the new decoder positions -> (B, T, D); memory (B, S, D) the encoder output,
        or (1, S, D) shared by all B rows when they decode the same sentence. With a cache, x holds
        only the positions not seen before (one per step when decoding) and self_mask covers
        (T_new, T_cached + T_new). ``intermediates`` get the maps in decoder_self and cross."""
        self_cache, cross_cache = (cache.self_attn, cache.cross_attn) if cache else (None, None)
        self_maps, cross_maps = (
            (intermediates.decoder_self, intermediates.cross) if intermediates else (None, None)
        )
        x = self.residual_self(x, lambda h: self.self_attn(h, h, self_mask, self_cache, self_maps))
        x = self.residual_cross(  # queries from x, keys and values from memory: (B, T, D)
            x, lambda h: self.cross_attn(h, memory, source_mask, cross_cache, cross_maps)
        )
        return self.residual_ff(x, self.feed_forward)  # (B, T, D)


# ---- The whole model -----------------------------------------------------------------------------


@dataclass
class Intermediates:
    """Everything one traced forward pass computed on the way (shapes: see the module doc)."""

    source_token: Tensor | None = None  # (B, S, D) token embeddings * sqrt(D), before PE
    source_position: Tensor | None = None  # (S, D) the positional encoding added to them
    decoder_input_token: Tensor | None = None  # (B, T, D)
    decoder_input_position: Tensor | None = None  # (T, D)
    encoder_self: list[AttentionMaps] = field(default_factory=list)  # L x (B, H, S, S)
    decoder_self: list[AttentionMaps] = field(default_factory=list)  # L x (B, H, T, T)
    cross: list[AttentionMaps] = field(default_factory=list)  # L x (B, H, T, S)


class LayerKernels(Protocol):
    """Another way to compute the layers: the same numbers, from the same weights, by other
    kernels (core/model/engine.py fuses them for the CPU). The model keeps its one forward pass
    (embedding, masks, the stacks, the cache, the output projection) and asks the kernels for
    layer i where it would call the module; shapes and arguments as the modules'."""

    def encoder_layer(
        self, i: int, x: Tensor, mask: Tensor | None, intermediates: Intermediates | None
    ) -> Tensor: ...

    def decoder_layer(
        self,
        i: int,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None,
        source_mask: Tensor | None,
        cache: Sequence[object],
        intermediates: Intermediates | None,
    ) -> Tensor: ...

    def new_cache(self) -> Sequence[object]: ...

    def unembed(self, x: Tensor) -> Tensor: ...


class Transformer(nn.Module):
    """Encoder-decoder Transformer with one embedding matrix shared by the encoder input, the
    decoder input and the pre-softmax projection (section 3.4)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        pe = positional_encoding(config.max_len, config.d_model, config.positional_layout)
        self.register_buffer("pe", pe, persistent=False)  # (max_len, D)
        causal = subsequent_mask(config.max_len)
        self.register_buffer("causal", causal, persistent=False)  # (1, 1, max_len, max_len)
        self.dropout = Dropout(config.dropout)
        n_encoder_layers, n_decoder_layers = config.n_encoder_layers, config.n_decoder_layers
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config) for _ in range(n_decoder_layers))
        # pre-LN leaves the last residual stream un-normalised; post-LN already ends on a norm
        self.encoder_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        if config.output_bias:
            self.output_bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform projections; embeddings N(0, D^-1/2), so that after the sqrt(D) scale the
        token signal is about as large as the positional encoding."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        nn.init.normal_(self.embedding.weight, std=self.config.d_model**-0.5)
        with torch.no_grad():
            self.embedding.weight[self.config.pad_id].zero_()

    def token_embedding(self, tokens: Tensor) -> Tensor:
        """Embedding(x) * sqrt(D) (section 3.4), (B, T) -> (B, T, D); unscaled for a model
        trained so (config.scale_embedding off)."""
        scale = math.sqrt(self.config.d_model) if self.config.scale_embedding else 1.0
        return self.embedding(tokens) * scale

    def embed(
        self, tokens: Tensor, offset: int = 0, token_embedding: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Embedding(x) * sqrt(D) + PE for positions offset.. offset+T: the model input (B, T, D),
        the scaled token embedding (B, T, D) and the positional encoding (T, D). A given
        ``token_embedding`` (B, T, D) stands for Embedding(x) * sqrt(D): attribution methods move
        along it (core/inspection/attribution.py)."""
        length = tokens.size(1)
        if offset + length > self.config.max_len:
            raise ValueError(
                f"sequence of {offset + length} tokens > max_len={self.config.max_len}"
            )
        if token_embedding is None:
            token_embedding = self.token_embedding(tokens)
        pe = self.pe[offset : offset + length]
        return self.dropout(token_embedding + pe), token_embedding, pe

    def encode(
        self,
        source: Tensor,
        intermediates: Intermediates | None = None,
        token_embedding: Tensor | None = None,
        kernels: LayerKernels | None = None,
    ) -> tuple[Tensor, Tensor]:
        """source (B, S) -> memory (B, S, D) and its padding mask (B, 1, 1, S). ``intermediates``
        get the embeddings and each layer's maps; a ``token_embedding`` is as in :meth:`embed`;
        ``kernels`` compute the layers in the modules' place."""
        source_mask = padding_mask(source, self.config.pad_id)
        x, token_embedding, pe = self.embed(source, token_embedding=token_embedding)
        if intermediates is not None:
            intermediates.source_token = token_embedding
            intermediates.source_position = pe
        mask = source_mask if kernels is None else restricting(source_mask)
        for i, layer in enumerate(self.encoder_layers):
            if kernels is None:
                x = layer(x, mask, intermediates)  # (B, S, D)
            else:
                x = kernels.encoder_layer(i, x, mask, intermediates)
        return self.encoder_norm(x), source_mask

    def decode(
        self,
        decoder_input: Tensor,
        memory: Tensor,
        source_mask: Tensor,
        cache: Sequence[LayerCache] | None = None,
        intermediates: Intermediates | None = None,
        kernels: LayerKernels | None = None,
    ) -> Tensor:
        """Logits (B, T, V) for the next token after each position: :meth:`decoder_output`'s,
        through :meth:`unembed`."""
        x = self.decoder_output(decoder_input, memory, source_mask, cache, intermediates, kernels)
        return self.unembed(x) if kernels is None else kernels.unembed(x)

    def decoder_output(
        self,
        decoder_input: Tensor,
        memory: Tensor,
        source_mask: Tensor,
        cache: Sequence[LayerCache] | None = None,
        intermediates: Intermediates | None = None,
        kernels: LayerKernels | None = None,
    ) -> Tensor:
        """The decoder stack's output (B, T, D), normalised, before the pre-softmax projection.

        decoder_input (B, T): the whole decoder input (<s> and the output so far), or with a cache
        the positions after those cached. Padded decoder positions only matter as keys, which the
        causal mask already hides from every real query before them. memory (B or 1, S, D) and
        its mask (source_mask) come from :meth:`encode`.
        ``intermediates`` get the embeddings and each layer's maps; ``kernels`` compute the layers
        in the modules' place, keeping keys and values in a cache of their own."""
        if kernels is not None and cache is None:
            cache = kernels.new_cache()
        offset = cache[0].length if cache else 0
        length = decoder_input.size(1)
        x, token_embedding, pe = self.embed(decoder_input, offset)
        if intermediates is not None:
            intermediates.decoder_input_token = token_embedding
            intermediates.decoder_input_position = pe
        # new queries see every cached position and the causal part of the new block
        self_mask = self.causal[:, :, offset : offset + length, : offset + length]
        if kernels is not None:  # they skip a mask that hides nothing (see restricting)
            self_mask = self_mask if length > 1 else None  # one new position sees all before it
            source_mask = restricting(source_mask)
        for i, layer in enumerate(self.decoder_layers):
            if kernels is None:
                layer_cache = cache[i] if cache else None
                x = layer(x, memory, self_mask, source_mask, layer_cache, intermediates)
            else:
                x = kernels.decoder_layer(
                    i, x, memory, self_mask, source_mask, cache, intermediates
                )
        return self.decoder_norm(x)  # (B, T, D)

    def unembedding(self) -> tuple[Tensor, Tensor | None]:
        """The output projection's weights: E (V, D), tied to the embedding (section 3.4), and the
        bias b (V,) where the model has one (config.output_bias), else None."""
        return self.embedding.weight, self.output_bias if self.config.output_bias else None

    def unembed(self, x: Tensor) -> Tensor:
        """Logits x E^T + b, (..., D) -> (..., V): the output projection (:meth:`unembedding`)."""
        weight, bias = self.unembedding()
        logits = x @ weight.T
        return logits if bias is None else logits + bias

    def forward(
        self,
        source: Tensor,
        decoder_input: Tensor,
        trace: bool = False,
        kernels: LayerKernels | None = None,
    ) -> tuple[Tensor, Intermediates | None]:
        """Teacher-forced pass: source (B, S), decoder_input (B, T) -> logits (B, T, V) and, with
        trace=True, the :class:`Intermediates`."""
        traced = Intermediates() if trace else None
        memory, source_mask = self.encode(source, traced, kernels=kernels)
        logits = self.decode(decoder_input, memory, source_mask, None, traced, kernels)
        return logits, traced

    def new_cache(self) -> list[LayerCache]:
        """An empty key/value cache, one entry per decoder layer."""
        return [LayerCache() for _ in self.decoder_layers]

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
