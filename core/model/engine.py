"""A fast path for decoding: the weights of :class:`core.model.transformer.Transformer`, run with
less overhead.

core/model/transformer.py is the paper's code, written to be read, and the reference. This module
runs the same weights for translation and computes the same numbers: the same tokens, and in float32
every number within about 1e-5 (tests/core/test_engine.py compares translations, beam traces and
every attention map with the model's, within 5e-5):

- W^Q, W^K and W^V of a self-attention are one (3D, D) matrix [W^Q; W^K; W^V] built from the
  model's own, so one matmul projects all three; a cross-attention's W^K and W^V likewise.
- The decoder's keys and values go into a buffer allocated once per search, written in place at
  each step instead of concatenated into a new tensor; beam search reorders them into a second
  buffer and the two swap. The cross-attention's keys and values are laid out once per sentence.
- Activations are rows (B T, D) and every matmul is called directly, with the operands the model's
  nn.Linear and matmul pass on: no module calls, no per-call reshaping, folding and dispatch.
- Large weights (the vocabulary projection E, and from d192 on the Q/K/V stack and the
  feed-forward layers) run on a copy that oneDNN has laid out once for its matmul kernel (see
  PACK_ABOVE_BYTES): MKL's addmm with such a weight as it is took 1.4-2.8x longer at 4-32 rows.
  oneDNN orders its sums differently: on the shipped model logits agree within about 1e-5, not
  to the last bit.

Every other operation that decides a number is the one the model runs, on operands of the same
shapes and layouts, so those results agree to the last bit; what is saved is overhead: a decoder
step of a small model is a few hundred tiny operations, and on a CPU each costs microseconds
however small.
With several threads, or on another CPU, MKL may split the fused matmul differently from three
separate ones, and a last bit may differ (tests/core/test_engine.py bounds it).

An :class:`Engine` answers what core/decoding/search.py asks of a model (``config``, ``encode``,
``new_cache``, ``decode``), and ``engine(source, decoder_input, trace=True)`` is the model's traced
forward pass, so the searches and traces run on either. It is a CPU backend, and stands for a model
on the CPU in eval mode without interventions (core/inspection/ablation.py), built from its weights
at one moment (a model on a GPU decodes itself):
:meth:`Engine.can_run` and :meth:`Engine.is_current` say when it does (core.translator.Translator
checks both).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.model.config import ACTIVATIONS, ModelConfig
from core.model.transformer import (
    Attend,
    AttentionMaps,
    Intermediates,
    Transformer,
    padding_mask,
    positional_encoding,
    subsequent_mask,
)

# --------------------------------------------------------------------------------------------------
# Weights, gathered once from the model
# --------------------------------------------------------------------------------------------------


# oneDNN, given a weight laid out once for its kernel, computes x W^T for 4 rows 1.4-2.4x faster
# than MKL's addmm takes W as it is, for weights above 256 KB (measured at d192-d256: the Q/K/V
# stack, the feed-forward layers, the vocabulary projection), and slower below (a call costs it
# about 12 us, addmm 5-12 us): each layer takes the faster one.
PACK_ABOVE_BYTES = 2**18
BEAM_ROWS = 4  # the rows oneDNN lays a weight out for (it serves any number)


def onednn_layout(weight: Tensor) -> Tensor | None:
    """W (out, in) in oneDNN's layout for its matmul; None when the weight is small or PyTorch
    has no oneDNN."""
    large = weight.numel() * weight.element_size() > PACK_ABOVE_BYTES
    if not large or not torch.backends.mkldnn.is_available():
        return None
    return torch.ops.mkldnn._reorder_linear_weight(weight, BEAM_ROWS)


@dataclass
class Linear:
    """y = x W^T + b on rows (N, in) -> (N, out): by MKL as nn.Linear computes it, or by oneDNN
    when the weight is large (PACK_ABOVE_BYTES)."""

    weight_t: Tensor  # (in, out): a transposed view of the (out, in) W, as F.linear passes it
    bias: Tensor | None  # (out,)
    packed: Tensor | None = None  # W in oneDNN's layout, when it is large

    @classmethod
    def of(cls, weight: Tensor, bias: Tensor | None) -> Linear:
        """The layer of W (out, in) and b (out,)."""
        return cls(weight.t(), bias, onednn_layout(weight))

    def __call__(self, x: Tensor) -> Tensor:
        if self.packed is not None:
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
        if self.bias is None:
            return torch.mm(x, self.weight_t)
        return torch.addmm(self.bias, x, self.weight_t)

    def columns(self, start: int, stop: int) -> Linear:
        """The outputs start..stop of the layer, a view of its weights (by MKL)."""
        return Linear(self.weight_t[:, start:stop], self.bias[start:stop])


@dataclass
class Norm:
    """LayerNorm(x) = (x - mean) / sqrt(var + eps) * weight + bias, over the last dimension."""

    weight: Tensor  # (D,)
    bias: Tensor  # (D,)
    eps: float

    def __call__(self, x: Tensor) -> Tensor:
        return torch.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


@dataclass
class FeedForward:
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, or the model's other activation in max's place."""

    w_1: Linear  # D -> d_ff
    w_2: Linear  # d_ff -> D
    activation: Callable[[Tensor], Tensor]

    def __call__(self, x: Tensor) -> Tensor:
        return self.w_2(self.activation(self.w_1(x)))


@dataclass
class AttentionWeights:
    """One multi-head attention's projections, W^Q, W^K, W^V stacked into one (D -> 3D) layer."""

    n_heads: int
    qkv: Linear  # x -> [Q | K | V]
    q: Linear  # x -> Q, a view of qkv's weights
    kv: Linear  # x -> [K | V], a view of qkv's weights
    out: Linear  # Concat(heads) -> Concat(heads) W^O
    sqrt_d_k: Tensor  # sqrt(d_k), 0-dim: the scores' divisor


@dataclass
class EncoderLayer:
    """Self-attention over the source, then the feed-forward network."""

    self_attn: AttentionWeights
    feed_forward: FeedForward
    norm_attn: Norm
    norm_ff: Norm


@dataclass
class DecoderLayer:
    """Masked self-attention, cross-attention over the encoder output, then the feed-forward."""

    self_attn: AttentionWeights
    cross_attn: AttentionWeights
    feed_forward: FeedForward
    norm_self: Norm
    norm_cross: Norm
    norm_ff: Norm


# nn.LayerNorm's default epsilon, which every norm of the model keeps (it is not in a state_dict)
LAYER_NORM_EPS = 1e-5


class Weights:
    """The model's ``state_dict()``, read by key, every tensor's shape checked against the config:
    the engine knows the model by these keys alone, and must read every one of them.

    Keys as the readable model names them: ``embedding.weight`` (V, D), ``output_bias`` (V,),
    ``encoder_layers.{i}.self_attn.w_q.weight`` (D, D) ... ``.residual_attn.norm.bias`` (D,),
    ``decoder_layers.{i}.cross_attn.w_o.bias`` (D,) ..., ``encoder_norm.weight`` (D,) (pre-LN).
    """

    def __init__(self, model: nn.Module, config: ModelConfig) -> None:
        self.state = model.state_dict()  # detached tensors sharing the parameters' storage
        self.config = config
        self.unread = set(self.state)

    def tensor(self, key: str, *shape: int) -> Tensor:
        if key not in self.state:
            raise ValueError(f"The model has no weight {key!r}: the engine cannot run it.")
        tensor = self.state[key]
        if tuple(tensor.shape) != shape:
            raise ValueError(f"{key} has shape {tuple(tensor.shape)}, the engine expects {shape}.")
        self.unread.discard(key)
        return tensor

    def linear(self, *names: str, d_in: int, d_out: int) -> Linear:
        """The layer ``name`` (W (d_out, d_in), b (d_out,)), or several stacked into one,
        [W_1; W_2; ...] (a copy)."""
        weights = [self.tensor(f"{name}.weight", d_out, d_in) for name in names]
        biases = [self.tensor(f"{name}.bias", d_out) for name in names]
        if len(names) == 1:
            return Linear.of(weights[0], biases[0])
        return Linear.of(torch.cat(weights), torch.cat(biases))

    def norm(self, name: str) -> Norm:
        d_model = self.config.d_model
        weight, bias = self.tensor(f"{name}.weight", d_model), self.tensor(f"{name}.bias", d_model)
        return Norm(weight, bias, LAYER_NORM_EPS)

    def attention(self, name: str) -> AttentionWeights:
        """W^Q, W^K, W^V (stacked) and W^O of the multi-head attention ``name``."""
        config, d_model = self.config, self.config.d_model
        projections = (f"{name}.w_q", f"{name}.w_k", f"{name}.w_v")
        qkv = self.linear(*projections, d_in=d_model, d_out=d_model)
        return AttentionWeights(
            config.n_heads,
            qkv,
            qkv.columns(0, d_model),
            qkv.columns(d_model, 3 * d_model),
            self.linear(f"{name}.w_o", d_in=d_model, d_out=d_model),
            torch.tensor(math.sqrt(config.d_k)),
        )

    def feed_forward(self, name: str) -> FeedForward:
        config = self.config
        # relu in place, the same numbers without a copy
        activation = torch.relu_ if config.activation == "relu" else ACTIVATIONS[config.activation]
        return FeedForward(
            self.linear(f"{name}.w_1", d_in=config.d_model, d_out=config.d_ff),
            self.linear(f"{name}.w_2", d_in=config.d_ff, d_out=config.d_model),
            activation,
        )

    def encoder_layer(self, i: int) -> EncoderLayer:
        name = f"encoder_layers.{i}"
        return EncoderLayer(
            self.attention(f"{name}.self_attn"),
            self.feed_forward(f"{name}.feed_forward"),
            self.norm(f"{name}.residual_attn.norm"),
            self.norm(f"{name}.residual_ff.norm"),
        )

    def decoder_layer(self, i: int) -> DecoderLayer:
        name = f"decoder_layers.{i}"
        return DecoderLayer(
            self.attention(f"{name}.self_attn"),
            self.attention(f"{name}.cross_attn"),
            self.feed_forward(f"{name}.feed_forward"),
            self.norm(f"{name}.residual_self.norm"),
            self.norm(f"{name}.residual_cross.norm"),
            self.norm(f"{name}.residual_ff.norm"),
        )

    def check_all_read(self) -> None:
        """Every weight of the model is one the engine runs: none is left out of its numbers."""
        if self.unread:
            raise ValueError(f"Weights the engine does not run: {', '.join(sorted(self.unread))}.")


# --------------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------------


@dataclass
class Mask:
    """Where a query may attend (True), broadcasting to (B, H, T_q, T_k), and its complement for
    a traced pass: None when nothing is masked, and the masked scores are the scores."""

    allowed: Tensor
    forbidden: Tensor | None

    @classmethod
    def of(cls, allowed: Tensor, trace: bool) -> Mask:
        return cls(allowed, None if not trace or allowed.all() else ~allowed)


def split_heads(rows: Tensor, batch: int, n_heads: int) -> Tensor:
    """(B T, H d_k) -> (B, H, T, d_k), a view."""
    return rows.view(batch, -1, n_heads, rows.size(1) // n_heads).transpose(1, 2)


class KeysValues:
    """Keys and values to attend to, (B, H, T_k, d_k) each; ``folded``: as the explicit path's
    matmuls take them, K^T (B H, d_k, T_k) and V (B H, T_k, d_k), folded as torch.matmul folds
    them (a view where it can, else the same copy)."""

    def __init__(self, key: Tensor, value: Tensor) -> None:
        self.key, self.value = key, value

    @cached_property
    def folded(self) -> tuple[Tensor, Tensor]:
        batch, n_heads, length, d_k = self.key.shape
        key_t = self.key.transpose(2, 3).reshape(batch * n_heads, d_k, length)
        return key_t, self.value.reshape(batch * n_heads, length, d_k)


def attend(
    query: Tensor,
    keys: KeysValues,
    mask: Mask,
    sqrt_d_k: Tensor,
    trace: list[AttentionMaps] | None,
) -> Tensor:
    """Concat(softmax(Q K^T / sqrt(d_k)) V) for (B, H, T_q, d_k) queries -> rows (B T_q, D).

    As the model's :class:`core.model.transformer.Attend` does: with a trace, the explicit path of
    core.model.transformer.attention, appending its maps; without, the fused kernel, with the same
    mask.
    """
    batch, n_heads, length, d_k = query.shape
    if trace is None:
        heads = F.scaled_dot_product_attention(query, keys.key, keys.value, mask.allowed)
    else:
        key_t, value = keys.folded
        scores = torch.bmm(query.reshape(batch * n_heads, length, d_k), key_t).div_(sqrt_d_k)
        scores = scores.view(batch, n_heads, length, -1)  # (B, H, T_q, T_k)
        masked = scores if mask.forbidden is None else scores.masked_fill(mask.forbidden, -math.inf)
        weights = masked.softmax(dim=-1)
        heads = torch.bmm(weights.view(batch * n_heads, length, -1), value)
        heads = heads.view(batch, n_heads, length, d_k)
        trace.append(AttentionMaps(scores, masked, weights))
    return heads.transpose(1, 2).reshape(batch * length, n_heads * d_k)


def residual(
    x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: Norm, norm_first: bool
) -> Tensor:
    """Pre-LN x + Sublayer(LN(x)), or the paper's post-LN LN(x + Sublayer(x)) (eval: no dropout)."""
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


# --------------------------------------------------------------------------------------------------
# The decoder's keys and values
# --------------------------------------------------------------------------------------------------


class DecoderBuffers:
    """Every decoder layer's keys and values between steps.

    Self-attention: one buffer (T_max, L, 2, B, H, d_k) for all L layers, positions outermost, so
    that a step writes one block per layer and the pages of positions not reached are never
    touched; beam search reorders the rows of every layer in one copy into a second buffer, and
    the two swap. Cross-attention: each layer's K and V of the encoder output, (B or 1, H, S, d_k)
    each, projected at the first step (batch 1 when every row decodes the same sentence), and for
    the explicit path folded once for each number of rows, where the model's matmul folds them
    at every step.
    """

    def __init__(self, max_len: int, n_layers: int, n_heads: int, d_k: int) -> None:
        self.shape = (max_len, n_layers, 2, n_heads, d_k)  # (T_max, L, 2, H, d_k), rows apart
        self.length = 0  # positions held
        self.buffer: Tensor | None = None  # (T_max, L, 2, B, H, d_k)
        self.spare: Tensor | None = None
        self.memory: list[tuple[Tensor, Tensor] | None] = [None] * n_layers  # K, V per layer
        self.memory_by_rows: list[dict[int, KeysValues]] = [{} for _ in range(n_layers)]

    def new_buffer(self, rows: int, like: Tensor) -> Tensor:
        max_len, n_layers, two, n_heads, d_k = self.shape
        return like.new_empty(max_len, n_layers, two, rows, n_heads, d_k)

    def append(self, layer: int, kv: Tensor, batch: int) -> KeysValues:
        """Write layer ``layer``'s [K | V] of the new positions, rows (B T_new, 2D), after the
        positions held; return its every key and value so far, views of the buffer."""
        new = kv.size(0) // batch
        if self.buffer is None:
            self.buffer = self.new_buffer(batch, kv)
        end = self.length + new
        _, _, _, n_heads, d_k = self.shape
        # (B, T_new, 2, H, d_k) -> (T_new, 2, B, H, d_k)
        block = kv.view(batch, new, 2, n_heads, d_k).permute(1, 2, 0, 3, 4)
        self.buffer[self.length : end, layer, :, :batch] = block
        held = self.buffer[:end, layer, :, :batch].permute(1, 2, 3, 0, 4)  # (2, B, H, T_k, d_k)
        return KeysValues(held[0], held[1])

    def memory_keys_values(
        self, layer: int, memory: Tensor, weights: AttentionWeights, rows: int
    ) -> KeysValues:
        """Layer ``layer``'s K and V of the encoder output memory (B or 1, S, D) for ``rows``
        queries: projected at the first step, and kept for each number of rows, folded once."""
        if self.memory[layer] is None:
            batch, length, _ = memory.shape
            kv = weights.kv(memory.reshape(batch * length, -1))
            self.memory[layer] = split_heads(kv, batch, 2 * weights.n_heads).chunk(2, dim=1)
        by_rows = self.memory_by_rows[layer]
        if rows not in by_rows:
            key, value = (x.expand(rows, *x.shape[1:]) for x in self.memory[layer])
            by_rows[rows] = KeysValues(key, value)
        return by_rows[rows]

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index`` (beam search: each survivor takes its parent's keys and
        values). A batch-1 cross-attention cache serves every row alike and stays as it is."""
        rows = index.numel()
        if self.spare is None or self.spare.size(3) != rows:
            self.spare = self.new_buffer(rows, self.buffer)
        torch.index_select(self.buffer[: self.length], 3, index, out=self.spare[: self.length])
        self.buffer, self.spare = self.spare, self.buffer
        for layer, (key, value) in enumerate(self.memory):
            if key.size(0) > 1:
                self.memory[layer] = key.index_select(0, index), value.index_select(0, index)
                self.memory_by_rows[layer].clear()


@dataclass
class LayerBuffers:
    """One decoder layer's share of the :class:`DecoderBuffers`."""

    buffers: DecoderBuffers
    layer: int

    def append(self, kv: Tensor, batch: int) -> KeysValues:
        return self.buffers.append(self.layer, kv, batch)

    def memory_keys_values(
        self, memory: Tensor, weights: AttentionWeights, rows: int
    ) -> KeysValues:
        return self.buffers.memory_keys_values(self.layer, memory, weights, rows)


# --------------------------------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------------------------------


def encoder_layer(
    layer: EncoderLayer,
    x: Tensor,
    batch: int,
    mask: Mask,
    norm_first: bool,
    trace: list[AttentionMaps] | None,
) -> Tensor:
    """Rows (B S, D) -> (B S, D): x attends to itself, then the feed-forward."""
    weights = layer.self_attn

    def self_attention(h: Tensor) -> Tensor:
        query, key, value = split_heads(weights.qkv(h), batch, 3 * weights.n_heads).chunk(3, 1)
        heads = attend(query, KeysValues(key, value), mask, weights.sqrt_d_k, trace)
        return weights.out(heads)

    x = residual(x, self_attention, layer.norm_attn, norm_first)
    return residual(x, layer.feed_forward, layer.norm_ff, norm_first)


def decoder_layer(
    layer: DecoderLayer,
    x: Tensor,
    batch: int,
    memory: Tensor,
    masks: tuple[Mask, Mask],
    buffers: LayerBuffers,
    norm_first: bool,
    trace: Intermediates | None,
) -> Tensor:
    """Rows (B T_new, D) of the new decoder positions -> (B T_new, D); memory (B or 1, S, D) the
    encoder output; masks: the self-attention's (T_new, T_k) and the memory's."""
    self_mask, source_mask = masks
    self_maps, cross_maps = (trace.decoder_self, trace.cross) if trace else (None, None)

    def self_attention(h: Tensor) -> Tensor:
        weights = layer.self_attn
        qkv = weights.qkv(h)  # (B T_new, 3D)
        d_model = qkv.size(1) // 3
        keys = buffers.append(qkv[:, d_model:], batch)
        query = split_heads(qkv[:, :d_model], batch, weights.n_heads)
        return weights.out(attend(query, keys, self_mask, weights.sqrt_d_k, self_maps))

    def cross_attention(h: Tensor) -> Tensor:
        weights = layer.cross_attn
        query = split_heads(weights.q(h), batch, weights.n_heads)
        keys = buffers.memory_keys_values(memory, weights, batch)
        return weights.out(attend(query, keys, source_mask, weights.sqrt_d_k, cross_maps))

    x = residual(x, self_attention, layer.norm_self, norm_first)
    x = residual(x, cross_attention, layer.norm_cross, norm_first)
    return residual(x, layer.feed_forward, layer.norm_ff, norm_first)


# --------------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------------


def on_cpu(model: nn.Module) -> bool:
    """Whether every weight of ``model`` is on the CPU, the one device the engine runs on (oneDNN
    and MKL are CPU libraries; a model on a GPU computes itself)."""
    return all(p.device.type == "cpu" for p in model.parameters())


def weights_version(model: nn.Module) -> list[tuple[int, int]]:
    """Changes whenever a parameter is written in place or replaced."""
    return [(p._version, p.data_ptr()) for p in model.parameters()]


class Engine:
    """A model's weights, run fast: what core/decoding/search.py and the traces ask of a model."""

    def __init__(self, model: Transformer) -> None:
        if not on_cpu(model):
            device = next(p.device for p in model.parameters() if p.device.type != "cpu")
            raise ValueError(
                f"The engine runs on the CPU, and the model's weights are on {device}: decode "
                "with the model itself (Translator does when Engine.can_run says no)."
            )
        self.model = model
        self.config = config = model.config
        self.norm_first = config.norm_first
        weights = Weights(model, config)
        self.embedding = weights.tensor("embedding.weight", config.vocab_size, config.d_model)
        bias = weights.tensor("output_bias", config.vocab_size) if config.output_bias else None
        self.unembedding = Linear.of(self.embedding, bias)  # x E^T (+ b)
        # sqrt(D), or 1 for a model trained without the scale (as the model's token_embedding)
        scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.embedding_scale = torch.tensor(scale)
        pe = positional_encoding(config.max_len, config.d_model, config.positional_layout)
        self.pe = pe.to(self.embedding.device)  # (max_len, D), as the model's own buffer
        self.causal = subsequent_mask(config.max_len, self.embedding.device)
        self.encoder_layers = [weights.encoder_layer(i) for i in range(config.n_encoder_layers)]
        self.decoder_layers = [weights.decoder_layer(i) for i in range(config.n_decoder_layers)]
        self.encoder_norm = weights.norm("encoder_norm") if config.norm_first else None
        self.decoder_norm = weights.norm("decoder_norm") if config.norm_first else None
        weights.check_all_read()
        self.version = weights_version(model)

    @staticmethod
    def can_run(model: Transformer) -> bool:
        """An engine computes what ``model`` computes: a float32 model on the CPU in eval mode
        whose every attention attends with the model's own
        :class:`core.model.transformer.Attend`, not an intervention (core/inspection/ablation.py)
        put in its place."""
        float32 = model.embedding.weight.dtype == torch.float32
        attends = [module for module in model.modules() if isinstance(module, Attend)]
        return (
            float32
            and on_cpu(model)
            and not model.training
            and all(type(a) is Attend for a in attends)
        )

    def is_current(self) -> bool:
        """The model's weights are still those the engine was built from."""
        return weights_version(self.model) == self.version

    def embed(self, tokens: Tensor, offset: int = 0) -> tuple[Tensor, Tensor, Tensor]:
        """Embedding(x) * sqrt(D) + PE for positions offset.. offset+T: the input as rows (B T, D),
        the scaled token embedding (B, T, D) and the positional encoding (T, D)."""
        batch, length = tokens.shape
        if offset + length > self.config.max_len:
            raise ValueError(
                f"sequence of {offset + length} tokens > max_len={self.config.max_len}"
            )
        token_embedding = F.embedding(tokens, self.embedding) * self.embedding_scale
        pe = self.pe[offset : offset + length]
        return (token_embedding + pe).view(batch * length, -1), token_embedding, pe

    def encode(self, source: Tensor, trace: Intermediates | None = None) -> tuple[Tensor, Tensor]:
        """source (B, S) -> memory (B, S, D) and its padding mask (B, 1, 1, S); a trace gets the
        embeddings and each layer's maps."""
        source_mask = padding_mask(source, self.config.pad_id)
        mask = Mask.of(source_mask, trace is not None)
        x, token_embedding, pe = self.embed(source)
        if trace is not None:
            trace.source_token, trace.source_position = token_embedding, pe
        batch = source.size(0)
        for layer in self.encoder_layers:
            maps = trace.encoder_self if trace else None
            x = encoder_layer(layer, x, batch, mask, self.norm_first, maps)
        memory = self.encoder_norm(x) if self.encoder_norm else x
        return memory.view(batch, source.size(1), -1), source_mask

    def new_cache(self) -> list[DecoderBuffers]:
        """Empty key/value buffers of every decoder layer, as one entry (the model's cache has
        one per layer): beam search reorders them all in one copy."""
        config = self.config
        n_layers = len(self.decoder_layers)
        return [DecoderBuffers(config.max_len, n_layers, config.n_heads, config.d_k)]

    def decode(
        self,
        decoder_input: Tensor,
        memory: Tensor,
        source_mask: Tensor,
        cache: list[DecoderBuffers] | None = None,
        trace: Intermediates | None = None,
    ) -> Tensor:
        """Logits (B, T, V) for the next token after each decoder position, as the model's
        :meth:`core.model.transformer.Transformer.decode`: with a cache (from :meth:`new_cache`),
        decoder_input holds the positions after those already cached."""
        (buffers,) = cache or self.new_cache()
        offset = buffers.length
        batch, length = decoder_input.shape
        x, token_embedding, pe = self.embed(decoder_input, offset)
        if trace is not None:
            trace.decoder_input_token, trace.decoder_input_position = token_embedding, pe
        # new queries see every cached position and the causal part of the new block
        causal = self.causal[:, :, offset : offset + length, : offset + length]
        masks = (Mask.of(causal, trace is not None), Mask.of(source_mask, trace is not None))
        for i, layer in enumerate(self.decoder_layers):
            layer_buffers = LayerBuffers(buffers, i)
            x = decoder_layer(layer, x, batch, memory, masks, layer_buffers, self.norm_first, trace)
        buffers.length += length
        if self.decoder_norm:
            x = self.decoder_norm(x)
        return self.unembed(x).view(batch, length, -1)

    def unembed(self, x: Tensor) -> Tensor:
        """The pre-softmax projection, tied to the embedding E (section 3.4): logits = x E^T
        (+ b where the model has an output bias), rows (N, D) -> (N, V)."""
        return self.unembedding(x)

    def __call__(
        self, source: Tensor, decoder_input: Tensor, trace: bool = False
    ) -> tuple[Tensor, Intermediates | None]:
        """Teacher-forced pass: source (B, S), decoder_input (B, T) -> logits (B, T, V) and, with
        trace=True, the :class:`core.model.transformer.Intermediates`."""
        traced = Intermediates() if trace else None
        memory, source_mask = self.encode(source, traced)
        return self.decode(decoder_input, memory, source_mask, trace=traced), traced
