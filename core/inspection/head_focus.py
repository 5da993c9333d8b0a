"""Find the head you want: for one query (a word that attends), every head ranked by the weight
on its top key, so that a head with a job (the "it -> animal" head of coreference) is found in one
look instead of dozens of clicks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.inspection.labelled_attention import LabelledAttention


@dataclass(frozen=True)
class HeadFocus:
    """Where one head (layer and head counted from 0) sends the query's weight."""

    layer: int
    head: int
    key: int  # the key with the largest weight
    key_label: str
    weight: float

    def describe(self, query_label: str) -> str:
        return f"L{self.layer + 1} H{self.head + 1}: {query_label} → {self.key_label}"


def rank_heads(
    attention: LabelledAttention, query: int, key: int | None = None, skip_self: bool = False
) -> list[HeadFocus]:
    """Every (layer, head) of ``attention`` for row ``query``, the largest weight first: the
    weight on ``key`` when one is given ("which head links it to animal?"), else on each head's
    own top key. ``skip_self`` leaves out the query's own position (self-attention), so that a
    head is ranked by what it finds elsewhere."""
    rows = attention.weights[:, :, query, :].copy()  # (L, H, K)
    if skip_self:
        rows[:, :, query] = -1.0
    layers, heads, _ = rows.shape
    chosen = rows.argmax(axis=-1) if key is None else np.full((layers, heads), key)
    focus = [
        HeadFocus(
            layer,
            head,
            int(chosen[layer, head]),
            attention.key_labels[int(chosen[layer, head])],
            float(rows[layer, head, chosen[layer, head]]),
        )
        for layer in range(layers)
        for head in range(heads)
    ]
    return sorted(focus, key=lambda found: -found.weight)
