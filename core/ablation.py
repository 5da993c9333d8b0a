"""Switching heads off: what does the translation lose without them?

A head is ablated by gating its output to 0 before the output projection W^O (Michel et al. 2019,
"Are Sixteen Heads Really Better than One?"): MultiHead = Concat(g_1 head_1, ..., g_h head_h) W^O
with g = 0 for the switched-off heads, 1 for the others. The attention maps of a switched-off head
are still computed (and drawn); only its contribution is gone.

The gates live on a copy of the model, never on the shared one: the app serves many users from
one cached model at once.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from core.model import MultiHeadAttention, Transformer
from core.translator import InputError, Translator

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


def ablated(model: Transformer, heads: Iterable[Head]) -> Transformer:
    """A copy of ``model`` with ``heads`` switched off (gated to 0); the model is untouched."""
    copied = copy.deepcopy(model).eval()
    for head in heads:
        attn = attention_module(copied, head)
        if attn.head_gate is None:
            attn.head_gate = torch.ones(model.config.n_heads)
        attn.head_gate[head.head] = 0.0
    return copied


def ablated_translator(translator: Translator, heads: Iterable[Head]) -> Translator:
    """The translator with ``heads`` switched off, sharing its vocabulary and card."""
    return Translator(ablated(translator.model, heads), translator.tokenizer, translator.card)
