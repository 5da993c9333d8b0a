"""Minimal pairs: two sentences that differ in a word or two ("... because it was too tired." /
"... because it was too wide."), translated side by side, so that what the change does to the
translation and to the attention is a live experiment rather than a claim."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

# The lecture's coreference pair: German "es" (das Tier) against "sie" (die Straße).
COREFERENCE_PAIR = (
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
)


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
    """The default second sentence: the other half of the coreference pair when ``text`` is one
    half, else the first half."""
    first, second = COREFERENCE_PAIR
    return first if text.strip() == second else second
