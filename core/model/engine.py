"""The layers' fused CPU kernels: each encoder and decoder layer of
:class:`core.model.transformer.Transformer`, its weights packed once, computed with less overhead.

core/model/transformer.py is the paper's code, written to be read, and the one forward pass: the
model embeds, masks, loops over its layers, keeps the cache and projects to the vocabulary, and
for each layer calls either the layer's modules or, given ``kernels``, the kernel here for the
same layer (the kernel choice the anchors make inside one forward: nanoGPT's flash branch,
fairseq's fast path, Hugging Face's attention interface). An :class:`Engine` is those kernels
for one model: ``engine.encode``, ``engine.decode`` and ``engine(source, decoder_input,
trace=True)`` are the model's own passes, called with them.

A kernel walks the model's modules (no weight is named here by a string): it takes each module's
own weights, LayerNorm epsilon, activation and residual order, splits heads with the model's
``split_heads``, computes every attention map with the module's own :class:`Attend` (so every
map comes from core.model.transformer.attention; untraced, it calls the fused kernel Attend
would), joins sub-layers with its ``residual_connection``, and keeps the decoder's keys and
values in core/model/kv_cache.py's :class:`StepBuffers`. It computes the same numbers: the same
tokens, and in float32 every number within about 1e-5 (tests/core/test_engine.py compares
translations, beam traces and every attention map with the modules', for every setting of
:class:`core.model.config.ModelConfig`). What the kernels buy:

- W^Q, W^K and W^V of a self-attention are one (3D, D) matrix [W^Q; W^K; W^V] stacked from the
  module's own, so one matmul projects all three; a cross-attention's W^K and W^V likewise.
- The decoder's keys and values go into a buffer allocated once per search, written in place at
  each step instead of concatenated into a new tensor (kv_cache.StepBuffers).
- Inside a layer, activations are rows (B T, D), every matmul called directly: no module calls
  (but Attend's, when maps are asked for), no per-call reshaping and dispatch.
- Large weights (the vocabulary projection E, and from d192 on the Q/K/V stack and the
  feed-forward layers) run on a copy that oneDNN has laid out once for its matmul kernel (see
  PACK_ABOVE_BYTES): MKL's addmm with such a weight as it is took 1.4-2.8x longer at 4-32 rows.
  oneDNN orders its sums differently: on the shipped model logits agree within about 1e-5, not
  to the last bit.

Every other operation that decides a number is the model's, on operands of the same shapes and
layouts, so those agree to the last bit; what is saved is overhead: a decoder step of a small model
is a few hundred tiny operations, each costing microseconds on a CPU however small.

The kernels are an object beside the model, not a state of it: a model shared by the app's
sessions is decoded with them by one and differentiated by another (attribution) at once. They
stand for a model on the CPU in eval mode without interventions (core/inspection/ablation.py),
packed from its weights at one moment (a model on a GPU computes itself):
:meth:`Engine.can_run` and :meth:`Engine.is_current` say when they do
(core.translator.Translator checks both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.model.config import ModelConfig
from core.model.kv_cache import StepBuffers
from core.model.transformer import (
    Attend,
    AttentionMaps,
    DecoderLayer,
    EncoderLayer,
    FeedForward,
    Intermediates,
    MultiHeadAttention,
    Residual,
    Transformer,
    residual_connection,
    split_heads,
)

# --------------------------------------------------------------------------------------------------
# The modules, packed
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
class PackedLinear:
    """y = x W^T + b on rows (N, in) -> (N, out): by MKL as nn.Linear computes it, or by oneDNN
    when the weight is large (PACK_ABOVE_BYTES)."""

    weight_t: Tensor  # (in, out): a transposed view of the (out, in) W, as F.linear passes it
    bias: Tensor | None  # (out,)
    packed: Tensor | None = None  # W in oneDNN's layout, when it is large

    @classmethod
    def of(cls, weight: Tensor, bias: Tensor | None) -> PackedLinear:
        """The layer of W (out, in) and b (out,)."""
        return cls(weight.t(), bias, onednn_layout(weight))

    def __call__(self, x: Tensor) -> Tensor:
        if self.packed is not None:
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
        if self.bias is None:
            return torch.mm(x, self.weight_t)
        return torch.addmm(self.bias, x, self.weight_t)

    def columns(self, start: int, stop: int) -> PackedLinear:
        """The outputs start..stop of the layer, a view of its weights (by MKL)."""
        return PackedLinear(self.weight_t[:, start:stop], self.bias[start:stop])


@dataclass
class PackedNorm:
    """An nn.LayerNorm's (x - mean) / sqrt(var + eps) * weight + bias, without the module call."""

    weight: Tensor  # (D,)
    bias: Tensor  # (D,)
    eps: float  # the module's own

    def __call__(self, x: Tensor) -> Tensor:
        return torch.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


@dataclass
class PackedFeedForward:
    """A :class:`core.model.transformer.FeedForward`: w_2(activation(w_1(x)))."""

    w_1: PackedLinear  # D -> d_ff
    w_2: PackedLinear  # d_ff -> D
    activation: Callable[[Tensor], Tensor]

    def __call__(self, x: Tensor) -> Tensor:
        return self.w_2(self.activation(self.w_1(x)))


@dataclass
class PackedAttention:
    """A :class:`core.model.transformer.MultiHeadAttention`, W^Q, W^K, W^V stacked into one
    (D -> 3D) layer."""

    qkv: PackedLinear  # x -> [Q | K | V]
    q: PackedLinear  # x -> Q, a view of qkv's weights
    kv: PackedLinear  # x -> [K | V], a view of qkv's weights
    out: PackedLinear  # Concat(heads) -> Concat(heads) W^O
    d_k: int
    attend: Attend  # the module's: softmax(Q K^T / sqrt(d_k)) V, and its maps when asked

    def heads(self, rows: Tensor, batch: int) -> Tensor:
        """Rows (B T, n D) -> (B, n H, T, d_k): the model's split_heads."""
        return split_heads(rows, batch, self.d_k)

    def project_kv(self, context: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of what is attended to: (B, T_k, D) -> two (B, H, T_k, d_k)."""
        batch, length, _ = context.shape
        return self.heads(self.kv(context.reshape(batch * length, -1)), batch).chunk(2, dim=1)


# A Residual's connection x -> x + Sublayer(LN(x)) or LN(x + Sublayer(x)), its norm and order
# bound (eval: its dropout is off): called with (x, sublayer)
PackedSublayer = Callable[[Tensor, Callable[[Tensor], Tensor]], Tensor]


@dataclass
class PackedEncoderLayer:  # core.model.transformer.EncoderLayer, packed
    self_attn: PackedAttention
    feed_forward: PackedFeedForward
    residual_attn: PackedSublayer
    residual_ff: PackedSublayer


@dataclass
class PackedDecoderLayer:  # core.model.transformer.DecoderLayer, packed
    self_attn: PackedAttention
    cross_attn: PackedAttention
    feed_forward: PackedFeedForward
    residual_self: PackedSublayer
    residual_cross: PackedSublayer
    residual_ff: PackedSublayer


class Packer:
    """Packs a model's modules, noting every parameter it takes: a parameter it did not take
    would be left out of the engine's numbers, and is an error naming it."""

    def __init__(self, model: Transformer) -> None:
        self.names = {id(p): name for name, p in model.named_parameters()}
        self.taken: set[int] = set()

    def take(self, parameter: Tensor, *shape: int) -> Tensor:
        """The parameter's values (a view: the engine sees in-place changes, see is_current),
        checked against the ``shape`` the config gives it."""
        name = self.names.get(id(parameter), "a weight outside the model")
        if tuple(parameter.shape) != shape:
            actual = tuple(parameter.shape)
            raise ValueError(f"{name} has shape {actual}, the engine expects {shape}.")
        self.taken.add(id(parameter))
        return parameter.detach()

    def linear(self, *linears: nn.Linear) -> PackedLinear:
        """One nn.Linear, or several stacked into one [W_1; W_2; ...] (a copy)."""
        weights = [self.take(m.weight, m.out_features, m.in_features) for m in linears]
        biases = [self.take(m.bias, m.out_features) for m in linears]
        if len(linears) == 1:
            return PackedLinear.of(weights[0], biases[0])
        return PackedLinear.of(torch.cat(weights), torch.cat(biases))

    def norm(self, norm: nn.LayerNorm) -> PackedNorm:
        (d_model,) = norm.normalized_shape
        return PackedNorm(self.take(norm.weight, d_model), self.take(norm.bias, d_model), norm.eps)

    def attention(self, attention: MultiHeadAttention) -> PackedAttention:
        d_model = attention.w_q.in_features
        qkv = self.linear(attention.w_q, attention.w_k, attention.w_v)
        return PackedAttention(
            qkv,
            qkv.columns(0, d_model),
            qkv.columns(d_model, 3 * d_model),
            self.linear(attention.w_o),
            attention.d_k,
            attention.attend,
        )

    def feed_forward(self, feed_forward: FeedForward) -> PackedFeedForward:
        activation = feed_forward.activation
        in_place = torch.relu_ if activation is F.relu else activation  # no copy, same numbers
        w_1, w_2 = self.linear(feed_forward.w_1), self.linear(feed_forward.w_2)
        return PackedFeedForward(w_1, w_2, in_place)

    def residual(self, residual: Residual) -> PackedSublayer:
        norm = self.norm(residual.norm)
        return partial(residual_connection, norm=norm, norm_first=residual.norm_first)

    def encoder_layer(self, layer: EncoderLayer) -> PackedEncoderLayer:
        return PackedEncoderLayer(
            self.attention(layer.self_attn),
            self.feed_forward(layer.feed_forward),
            self.residual(layer.residual_attn),
            self.residual(layer.residual_ff),
        )

    def decoder_layer(self, layer: DecoderLayer) -> PackedDecoderLayer:
        return PackedDecoderLayer(
            self.attention(layer.self_attn),
            self.attention(layer.cross_attn),
            self.feed_forward(layer.feed_forward),
            self.residual(layer.residual_self),
            self.residual(layer.residual_cross),
            self.residual(layer.residual_ff),
        )

    def take_all(self, module: nn.Module) -> None:
        """Notes the module's parameters as run: by the model itself."""
        for parameter in module.parameters():
            self.taken.add(id(parameter))

    def check_all_taken(self) -> None:
        """Every parameter of the model is one the engine runs."""
        left = [name for key, name in self.names.items() if key not in self.taken]
        if left:
            raise ValueError(f"Weights the engine does not run: {', '.join(sorted(left))}.")


# --------------------------------------------------------------------------------------------------
# Attention and the layers
# --------------------------------------------------------------------------------------------------


def attend(
    weights: PackedAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    maps: list[AttentionMaps] | None,
) -> Tensor:
    """Concat(softmax(Q K^T / sqrt(d_k)) V) for (B, H, T_q, d_k) queries -> rows (B T_q, D), as
    the module's own :class:`core.model.transformer.Attend` computes it in eval mode: the fused
    kernel, called directly (a module call per attention measured a few % of a step), or with
    ``maps`` by the module, on the explicit path of core.model.transformer.attention, whose maps
    are appended. mask: True where a query may attend, as the model's masks say."""
    if maps is None:
        heads = F.scaled_dot_product_attention(query, key, value, mask)
    else:
        heads, computed = weights.attend(query, key, value, mask, with_maps=True)
        maps.append(computed)
    batch, n_heads, length, d_k = query.shape
    return heads.transpose(1, 2).reshape(batch * length, n_heads * d_k)


def encoder_layer(
    layer: PackedEncoderLayer,
    x: Tensor,
    batch: int,
    mask: Tensor | None,
    maps: list[AttentionMaps] | None,
) -> Tensor:
    """Rows (B S, D) -> (B S, D): x attends to itself, then the feed-forward."""
    weights = layer.self_attn

    def self_attention(h: Tensor) -> Tensor:
        query, key, value = weights.heads(weights.qkv(h), batch).chunk(3, 1)
        return weights.out(attend(weights, query, key, value, mask, maps))

    x = layer.residual_attn(x, self_attention)
    return layer.residual_ff(x, layer.feed_forward)


def decoder_layer(
    layer: PackedDecoderLayer,
    i: int,
    x: Tensor,
    batch: int,
    memory: Tensor,
    masks: tuple[Tensor | None, Tensor | None],
    buffers: StepBuffers,
    intermediates: Intermediates | None,
) -> Tensor:
    """Decoder layer ``i``: rows (B T_new, D) of the new decoder positions -> (B T_new, D); memory
    (B or 1, S, D) the encoder output; masks: the self-attention's (T_new, T_k) and the memory's."""
    self_mask, source_mask = masks
    self_maps, cross_maps = (
        (intermediates.decoder_self, intermediates.cross) if intermediates else (None, None)
    )

    def self_attention(h: Tensor) -> Tensor:
        weights = layer.self_attn
        qkv = weights.qkv(h)  # (B T_new, 3D)
        d_model = qkv.size(1) // 3
        key, value = buffers.append(i, qkv[:, d_model:], batch)
        query = weights.heads(qkv[:, :d_model], batch)
        return weights.out(attend(weights, query, key, value, self_mask, self_maps))

    def cross_attention(h: Tensor) -> Tensor:
        weights = layer.cross_attn
        query = weights.heads(weights.q(h), batch)
        key, value = buffers.memory_keys_values(i, memory, weights.project_kv, batch)
        return weights.out(attend(weights, query, key, value, source_mask, cross_maps))

    x = layer.residual_self(x, self_attention)
    x = layer.residual_cross(x, cross_attention)
    return layer.residual_ff(x, layer.feed_forward)


# --------------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------------


def on_cpu(model: nn.Module) -> bool:
    """Whether every weight of ``model`` is on the CPU, the one device the engine runs on (oneDNN
    and MKL are CPU libraries; a model on a GPU computes itself)."""
    return all(p.device.type == "cpu" for p in model.parameters())


def weights_version(model: nn.Module) -> list[tuple[int, int]]:
    """Changes whenever a parameter is written in place (PyTorch counts in-place writes in a
    tensor's version; the stacked and laid-out copies would not see them) or replaced."""
    return [(p._version, p.data_ptr()) for p in model.parameters()]


class Engine:
    """A model with its layers' fused kernels: what core/decoding/search.py and the traces ask of
    a model (:class:`core.decoding.decoder.Decoder`), answered by the model's own passes, and the
    kernels they call (:class:`core.model.transformer.LayerKernels`)."""

    def __init__(self, model: Transformer) -> None:
        if not on_cpu(model):
            device = next(p.device for p in model.parameters() if p.device.type != "cpu")
            raise ValueError(
                f"The engine runs on the CPU, and the model's weights are on {device}: decode "
                "with the model itself (Translator does when Engine.can_run says no)."
            )
        self.model = model
        self.config: ModelConfig = model.config
        packer = Packer(model)
        self.encoder_layers = [packer.encoder_layer(layer) for layer in model.encoder_layers]
        self.decoder_layers = [packer.decoder_layer(layer) for layer in model.decoder_layers]
        for norm in (model.encoder_norm, model.decoder_norm):  # the model's, called by the model
            packer.take_all(norm)
        self.unembedding = self.pack_unembedding(packer)  # x E^T (+ b)
        packer.check_all_taken()
        self.version = weights_version(model)

    def pack_unembedding(self, packer: Packer) -> PackedLinear:
        """The model's pre-softmax projection x E^T (+ b), E the embedding (section 3.4)."""
        config = self.config
        if config.output_bias and not hasattr(self.model, "output_bias"):
            raise ValueError("The model has no weight 'output_bias': the engine cannot run it.")
        weight, bias = self.model.unembedding()
        weight = packer.take(weight, config.vocab_size, config.d_model)
        bias = None if bias is None else packer.take(bias, config.vocab_size)
        return PackedLinear.of(weight, bias)

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
        """The model's weights are still those the engine was packed from."""
        return weights_version(self.model) == self.version

    # ---- What the searches and the traces ask: the model's own passes, with these kernels ----

    def encode(
        self, source: Tensor, intermediates: Intermediates | None = None
    ) -> tuple[Tensor, Tensor]:
        """The model's :meth:`Transformer.encode`, its layers computed here."""
        return self.model.encode(source, intermediates, kernels=self)

    def decode(
        self,
        decoder_input: Tensor,
        memory: Tensor,
        source_mask: Tensor,
        cache: list[StepBuffers] | None = None,
        intermediates: Intermediates | None = None,
    ) -> Tensor:
        """The model's :meth:`Transformer.decode`, its layers computed here; a cache comes from
        :meth:`new_cache`."""
        return self.model.decode(decoder_input, memory, source_mask, cache, intermediates, self)

    def __call__(
        self, source: Tensor, decoder_input: Tensor, trace: bool = False
    ) -> tuple[Tensor, Intermediates | None]:
        """The model's teacher-forced pass, its layers computed here."""
        return self.model(source, decoder_input, trace, kernels=self)

    # ---- core.model.transformer.LayerKernels: what the model's pass asks of its kernels ----

    def new_cache(self) -> list[StepBuffers]:
        """Empty key/value buffers of every decoder layer, as one entry (the model's cache has
        one per layer): beam search reorders them all in one copy."""
        config = self.config
        n_layers = len(self.decoder_layers)
        return [StepBuffers(config.max_len, n_layers, config.n_heads, config.d_k)]

    def encoder_layer(
        self, i: int, x: Tensor, mask: Tensor | None, intermediates: Intermediates | None
    ) -> Tensor:
        """Encoder layer ``i``: x (B, S, D) -> (B, S, D), computed on rows."""
        maps = intermediates.encoder_self if intermediates else None
        batch, length, d_model = x.shape
        rows = x.view(batch * length, d_model)
        y = encoder_layer(self.encoder_layers[i], rows, batch, mask, maps)
        return y.view(batch, length, d_model)

    def decoder_layer(
        self,
        i: int,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None,
        source_mask: Tensor | None,
        cache: list[StepBuffers],
        intermediates: Intermediates | None,
    ) -> Tensor:
        """Decoder layer ``i``: x (B, T_new, D) the new decoder positions -> (B, T_new, D)."""
        batch, length, d_model = x.shape
        rows = x.view(batch * length, d_model)
        masks = (self_mask, source_mask)
        layer = self.decoder_layers[i]
        y = decoder_layer(layer, i, rows, batch, memory, masks, cache[0], intermediates)
        return y.view(batch, length, d_model)

    def unembed(self, x: Tensor) -> Tensor:
        """The pre-softmax projection, tied to the embedding E (section 3.4): logits = x E^T
        (+ b where the model has an output bias), (B, T, D) -> (B, T, V)."""
        batch, length, d_model = x.shape
        return self.unembedding(x.view(batch * length, d_model)).view(batch, length, -1)
