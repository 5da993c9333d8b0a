"""Minimal pairs: two sentences that differ in a word or two ("... because it was too tired." /
"... because it was too wide."), translated side by side, so that what the change does to the
translation and to the attention is a live experiment rather than a claim."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from core.labelled_attention import LabelledAttention

# The lecture's coreference pair: German "es" (das Tier) against "sie" (die Straße).
COREFERENCE_PAIR = (
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
)
# Bundled pairs, one phenomenon each: what must change in the translation, and what must not.
PAIRS = {
    "coreference: tired / wide": COREFERENCE_PAIR,
    "pronoun gender: her / him": (
        "The doctor asked the nurse to help her.",
        "The doctor asked the nurse to help him.",
    ),
    "number: dog / dogs": (
        "The dog is playing in the park.",
        "The dogs are playing in the park.",
    ),
    "tense: plays / played": (
        "The girl plays the guitar on the street.",
        "The girl played the guitar on the street.",
    ),
}


def word_changes(first: Sequence[str], second: Sequence[str]) -> list[tuple[str, str]]:
    """The stretches of words that differ between two word sequences, as (first, second) text;
    an empty side means inserted or deleted words."""
    matcher = SequenceMatcher(a=list(first), b=list(second), autojunk=False)
    return [
        (" ".join(first[i1:i2]), " ".join(second[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def partner(text: str) -> str:
    """The default second sentence: the other half of a bundled pair when ``text`` is one half,
    else the second half of the coreference pair."""
    for first, second in PAIRS.values():
        if text.strip() in (first, second):
            return first if text.strip() == second else second
    return COREFERENCE_PAIR[1]


def aligned_words(first: Sequence[str], second: Sequence[str]) -> list[tuple[int, int]]:
    """Positions (i, j) of the words that correspond in two word sequences: equal words, and the
    words of a changed stretch paired in order when both sides have as many (tired. / wide.).
    Inserted, deleted and unevenly changed words have no partner."""
    matcher = SequenceMatcher(a=list(first), b=list(second), autojunk=False)
    return [
        pair
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1)
        for pair in zip(range(i1, i2), range(j1, j2))
    ]


@dataclass(frozen=True)
class AttentionDifference:
    """Where one output word looks in each sentence of a pair, over the source words the two
    sentences share (aligned_words), and the second minus the first."""

    source_labels: list[str]  # "tired." where both read it, "tired. / wide." where they differ
    first: np.ndarray  # (K,) the first sentence's weights on the aligned source words
    second: np.ndarray  # (K,)

    @property
    def difference(self) -> np.ndarray:
        return self.second - self.first


def attention_difference(
    first: LabelledAttention,
    second: LabelledAttention,
    rows: tuple[int, int],
    layer: int | None = None,
) -> AttentionDifference:
    """The cross-attention (L, H, Q, K; queries are output words, keys source words) of row
    ``rows[0]`` of the first sentence and ``rows[1]`` of the second, averaged over the heads of
    ``layer`` (counted from 0) or over every layer and head with None, on the aligned source
    words. Source words without a partner are left out, so a row may sum to less than 1."""
    layers = slice(None) if layer is None else slice(layer, layer + 1)
    first_row = first.weights[layers, :, rows[0]].mean(axis=(0, 1))  # (K1,)
    second_row = second.weights[layers, :, rows[1]].mean(axis=(0, 1))  # (K2,)
    columns = aligned_words(first.key_labels, second.key_labels)
    labels = [
        a if a == b else f"{a} / {b}"
        for a, b in ((first.key_labels[i], second.key_labels[j]) for i, j in columns)
    ]
    return AttentionDifference(
        labels,
        first_row[[i for i, _ in columns]],
        second_row[[j for _, j in columns]],
    )
