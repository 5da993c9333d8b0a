"""Find the head you want: for one query (a word that attends), every head ranked by the weight
on its top key, so that a head with a job (the "it -> animal" head of coreference) is found in one
look instead of dozens of clicks; and one head's whole row described by what each key is to the
query (the word itself, a neighbour, the end of the sentence, the language tag, a word farther
away), the one description the Story and the Heads lab give."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.inspection.head_statistics import EOS, sink_kind
from core.labelled_attention import LabelledAttention

ITSELF = "the word itself"
PREVIOUS = "the previous word"
NEXT = "the next word"
END = "the end of the sentence"
TAG = "the language tag"
START = "the start of the translation"
FARTHER = "a word farther away"
RELATIONS = (ITSELF, PREVIOUS, NEXT, END, TAG, START, FARTHER)  # every key is exactly one


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


def relation(labels: list[str], query: int, key: int) -> str:
    """What key ``key`` is to query ``query`` of self-attention, by its label: the query itself,
    the end of the sentence (</s>: after the last word, but never "the next word"), the language
    tag (or a Marian model's >>fr<<), the start of the translation (the decoder's <s>), the
    previous or the next word, else a word farther away."""
    if key == query:
        return ITSELF
    if labels[key] == EOS:
        return END
    if sink_kind(labels[key]) == "tag_bos":
        return START if key == 0 and labels[key] in ("<s>", "<pad>") else TAG
    if key == query - 1:
        return PREVIOUS
    if key == query + 1:
        return NEXT
    return FARTHER


@dataclass(frozen=True)
class RowProfile:
    """One head's whole row for one query of self-attention (layer and head counted from 0): its
    top key, the query's own included, what that key is to the query, and the weight on each
    relation of :data:`RELATIONS` (summed over the keys that have it, so that they add up to the
    row's 1)."""

    layer: int
    head: int
    top: int  # the key with the largest weight
    weight: float  # its weight
    top_relation: str
    shares: dict[str, float]  # relation -> weight, for the relations some key of the row has


def row_profile(attention: LabelledAttention, query: int, layer: int, head: int) -> RowProfile:
    """:class:`RowProfile` of head (``layer``, ``head``) for row ``query``."""
    row = attention.weights[layer, head, query]
    labels = attention.key_labels
    relations = [relation(labels, query, key) for key in range(len(labels))]
    top = int(row.argmax())
    return RowProfile(
        layer,
        head,
        top=top,
        weight=float(row[top]),
        top_relation=relations[top],
        shares={
            name: float(sum(row[key] for key, of in enumerate(relations) if of == name))
            for name in RELATIONS
            if name in relations
        },
    )


def row_profiles(attention: LabelledAttention, query: int) -> list[RowProfile]:
    """:func:`row_profile` of every head for row ``query``, layer by layer."""
    layers, heads = attention.weights.shape[:2]
    return [
        row_profile(attention, query, layer, head)
        for layer in range(layers)
        for head in range(heads)
    ]
