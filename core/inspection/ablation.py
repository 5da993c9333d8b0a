"""Intervening on heads: what does the translation lose without them, or with their attention
replaced?

Three interventions on a head, all on a copy of the model:

- **off**: its output is gated to 0 before the output projection W^O (Michel et al. 2019, "Are
  Sixteen Heads Really Better than One?"): MultiHead = Concat(g_1 head_1, ..., g_h head_h) W^O
  with g = 0 for the switched-off heads, 1 for the others. Its attention maps are still computed
  (and drawn); only its contribution is gone.
- **uniform**: its weights become 1/n over the n keys it may attend to, so it averages the values
  (the baseline of Wiegreffe & Pinter 2019, "Attention is not not Explanation").
- **permute**: each row's weights are shuffled among the keys it may attend to, same values in
  other places (Jain & Wallace 2019, "Attention is not Explanation"). The shuffle is random,
  drawn from a generator seeded once per model copy, so one copy decodes reproducibly.

Each is an :class:`core.model.transformer.Attend` put in the place of a multi-head attention's own:
the queries, keys and values are the model's, only how the heads weigh and pass on the values
changes. The copy is made for the request, never set on the shared model: the app serves many users
from one cached model at once.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.errors import InputError
from core.model.transformer import Attend, AttentionMaps, MultiHeadAttention, Transformer, attention
from core.translator import Translation, Translator

KINDS = {"encoder": "enc", "decoder": "dec", "cross": "cross"}
_NAME = re.compile(r"^(enc|dec|cross) L(\d+) H(\d+)$")


@dataclass(frozen=True, order=True)
class Head:
    """One attention head: its kind (encoder, decoder, cross), layer and head, counted from 0."""

    kind: str
    layer: int
    head: int

    @property
    def name(self) -> str:
        """As people count: "enc L5 H5" is encoder layer 5, head 5."""
        return f"{KINDS[self.kind]} L{self.layer + 1} H{self.head + 1}"

    @classmethod
    def parse(cls, name: str) -> Head:
        match = _NAME.match(name)
        if not match:
            raise InputError(f"{name!r} is not a head: write it like 'enc L5 H5' or 'cross L6 H1'.")
        kind = next(kind for kind, short in KINDS.items() if short == match[1])
        return cls(kind, int(match[2]) - 1, int(match[3]) - 1)


def attention_module(model: Transformer, head: Head) -> MultiHeadAttention:
    layers = model.encoder_layers if head.kind == "encoder" else model.decoder_layers
    if not 0 <= head.layer < len(layers) or not 0 <= head.head < model.config.n_heads:
        raise InputError(f"The model has no head {head.name}.")
    layer = layers[head.layer]
    return layer.cross_attn if head.kind == "cross" else layer.self_attn


INTERVENTIONS = {
    "off": "switched off (output 0)",
    "uniform": "uniform weights (1/n)",
    "permute": "weights shuffled",
}


def allowed_keys(weights: Tensor, mask: Tensor | None) -> Tensor:
    """True where a row may attend, in the shape of ``weights`` (B, H, T_q, T_k)."""
    if mask is None:  # a cached decoder step: every key seen so far is allowed
        return torch.ones_like(weights, dtype=torch.bool)
    return mask.expand_as(weights)


def uniform_weights(weights: Tensor, mask: Tensor | None) -> Tensor:
    """1/n on each of the n keys a row may attend to, 0 on the masked ones (B, H, T_q, T_k)."""
    allowed = allowed_keys(weights, mask).to(weights.dtype)
    return allowed / allowed.sum(-1, keepdim=True)


def permuted_weights(weights: Tensor, mask: Tensor | None, generator: torch.Generator) -> Tensor:
    """Each row's weights shuffled among the keys it may attend to; masked keys keep their 0.

    The allowed keys in a random order (random keys sort first, masked ones last) take the
    weights of the allowed keys in their own order: a permutation within each row's allowed set.
    """
    allowed = allowed_keys(weights, mask)
    noise = torch.rand(weights.shape, generator=generator).to(weights.device)
    # both orders list the allowed keys first: in a random order, and in their own order
    shuffled = noise.masked_fill(~allowed, 2.0).argsort(-1)
    in_order = (~allowed).to(torch.uint8).argsort(dim=-1, stable=True)
    return torch.zeros_like(weights).scatter(-1, shuffled, weights.gather(-1, in_order))


class HeadsOff(Attend):
    """MultiHead = Concat(g_1 head_1, ..., g_h head_h) W^O: every head attends as before, and
    its output is gated by g, (H,) or one row per batch item (B, H), 0 (off) or 1 (on)."""

    def __init__(self, gate: Tensor) -> None:
        super().__init__()
        self.gate = gate

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, with_maps: bool
    ) -> tuple[Tensor, AttentionMaps | None]:
        heads, maps = super().forward(query, key, value, mask, with_maps)  # (B, H, T_q, d_k)
        gate = self.gate.to(heads)  # the heads' device and dtype: a model may have moved since
        return heads * gate[..., None, None], maps  # gate (B or 1, H, 1, 1) broadcast


class WeightsReplaced(Attend):
    """The ``chosen`` heads weigh the values by other weights: ``replace(weights, mask)``, both
    (B, H, T_q, T_k), the weights of every head (uniform, permuted), of which the chosen take
    theirs. The maps show the weights that were used."""

    def __init__(
        self, chosen: list[int], replace: Callable[[Tensor, Tensor | None], Tensor]
    ) -> None:
        super().__init__()
        self.chosen, self.replace = chosen, replace

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, with_maps: bool
    ) -> tuple[Tensor, AttentionMaps | None]:
        _, maps = attention(query, key, value, mask)
        weights = maps.weights.clone()  # (B, H, T_q, T_k)
        weights[:, self.chosen] = self.replace(maps.weights, mask)[:, self.chosen]
        maps.weights = weights
        return weights @ value, maps  # (B, H, T_q, d_k)


def install(attend: Attend, module: MultiHeadAttention) -> None:
    """Put ``attend`` in the place of ``module``'s, in the module's mode: a new module starts in
    training mode, where :class:`core.model.transformer.Attend` takes the explicit path, not the
    fused one."""
    module.attend = attend.train(module.training)


def intervened(
    model: Transformer, heads: Iterable[Head], intervention: str = "off", seed: int = 0
) -> Transformer:
    """A copy of ``model`` with ``intervention`` ("off", "uniform" or "permute") on ``heads``;
    the model itself is untouched."""
    if intervention not in INTERVENTIONS:
        raise InputError(
            f"Unknown intervention {intervention!r}: choose one of {list(INTERVENTIONS)}."
        )
    copied = copy.deepcopy(model).eval()
    generator = torch.Generator().manual_seed(seed)
    replace = {
        "uniform": uniform_weights,
        "permute": functools.partial(permuted_weights, generator=generator),
    }
    for module, chosen in heads_by_module(copied, heads).items():
        if intervention == "off":
            gate = torch.ones(model.config.n_heads)
            gate[chosen] = 0.0
            install(HeadsOff(gate), module)
        else:
            install(WeightsReplaced(chosen, replace[intervention]), module)
    return copied


def heads_by_module(
    model: Transformer, heads: Iterable[Head]
) -> dict[MultiHeadAttention, list[int]]:
    """The attention modules that hold ``heads``, each with its chosen head indices."""
    chosen: dict[MultiHeadAttention, list[int]] = {}
    for head in heads:
        chosen.setdefault(attention_module(model, head), []).append(head.head)
    return chosen


def ablated(model: Transformer, heads: Iterable[Head]) -> Transformer:
    """A copy of ``model`` with ``heads`` switched off (gated to 0)."""
    return intervened(model, heads, "off")


def intervened_translator(
    translator: Translator, heads: Iterable[Head], intervention: str = "off"
) -> Translator:
    """The translator with ``intervention`` on ``heads``, sharing its vocabulary and card."""
    model = intervened(translator.model, heads, intervention)
    return Translator(model, translator.tokenizer, translator.card)


def layer_count(model: Transformer, kind: str) -> int:
    config = model.config
    return config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers


def all_heads(translator: Translator) -> list[Head]:
    """Every head of the model, kind by kind ("encoder", "decoder", "cross"), layer by layer."""
    model = translator.model
    return [
        Head(kind, layer, head)
        for kind in KINDS
        for layer in range(layer_count(model, kind))
        for head in range(model.config.n_heads)
    ]


@torch.inference_mode()
def head_importance(translator: Translator, result: Translation, kind: str) -> np.ndarray:
    """Importance of every head of one kind for ``result`` (layers, heads): the drop in the
    log-probability of its output when that head alone is switched off (Michel et al. 2019),
    teacher-forced. One batched pass: item 0 runs with every head on, item 1 + l * H + h with
    head h of layer l off."""
    if kind not in KINDS:
        raise InputError(f"Unknown kind of head {kind!r}: choose one of {', '.join(KINDS)}.")
    n_layers, n_heads = layer_count(translator.model, kind), translator.model.config.n_heads
    batch = 1 + n_layers * n_heads
    copied = copy.deepcopy(translator.model).eval()
    for layer in range(n_layers):
        gate = torch.ones(batch, n_heads)  # (B, H)
        for head in range(n_heads):
            gate[1 + layer * n_heads + head, head] = 0.0
        install(HeadsOff(gate), attention_module(copied, Head(kind, layer, 0)))
    device = translator.device
    # decoder and cross heads leave the encoder alone: encode once, share it (1, S, D) with all
    source = torch.tensor([result.source_ids] * (batch if kind == "encoder" else 1), device=device)
    decoder_input = torch.tensor([result.decoder_input_ids] * batch, device=device)
    output = torch.tensor(result.output_ids, device=device).expand(batch, -1)  # (B, T)
    logits = copied.decode(decoder_input, *copied.encode(source))
    log_probs = logits.float().log_softmax(-1).gather(2, output[..., None]).sum((1, 2))  # (B,)
    return (log_probs[0] - log_probs[1:]).view(n_layers, n_heads).cpu().numpy()


@dataclass(frozen=True)
class Shift:
    """How an intervention moved the distribution one output word was chosen from."""

    total_variation: float  # TV(P, Q) = 1/2 sum_w |P(w) - Q(w)|, 0 (same) .. 1 (disjoint)
    before: list[tuple[str, float]]  # the top pieces and their probabilities, without it
    after: list[tuple[str, float]]  # ... with the intervention


def distribution_shift(
    before: np.ndarray, after: np.ndarray, pieces: Sequence[str], top: int = 5
) -> Shift:
    """Compare two next-token distributions (V,) over the vocabulary ``pieces``."""

    def best(probs: np.ndarray) -> list[tuple[str, float]]:
        return [(pieces[index], float(probs[index])) for index in np.argsort(-probs)[:top]]

    distance = 0.5 * float(np.abs(before.astype(np.float64) - after).sum())
    return Shift(distance, best(before), best(after))
