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
