"""The guided story's steps and the facts each one points at, read off the user's translation
(no Streamlit here: app/views/story.py draws them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.display import ATTENTION_KINDS, SENTENCEPIECE_WORD_START, WORD_START
from core.head_focus import HeadFocus, rank_heads
from core.labelled_attention import LabelledAttention
from core.words import is_special_piece


@dataclass(frozen=True)
class Step:
    title: str
    page: str  # the full page on this topic
    notice: str  # what to notice in the figure


STEPS = [
    Step(
        "Pieces",
        "views/tokenization.py",
        "The model never sees words: SentencePiece cuts the sentence into pieces from one "
        f"vocabulary shared by English, German and French. {WORD_START} (SentencePiece's "
        f"{SENTENCEPIECE_WORD_START}) starts a word; "
        "a rare word is spelled in several pieces. The tag in front says which language to "
        "write, `</s>` ends.",
    ),
    Step(
        "Positions",
        "views/embeddings.py",
        "Attention itself has no notion of order, so each piece's embedding gets a position "
        "pattern added: sines and cosines of many wavelengths. Left columns change fast from row "
        "to row, right columns slowly: every position has its own pattern.",
    ),
    Step(
        "Self-attention",
        "views/attention.py",
        "Each piece builds its new representation from a weighted mix of all pieces. Every head "
        "chooses its own weights (each row sums to 1): some look at a neighbour, some at the "
        "word a pronoun stands for.",
    ),
    Step(
        "The mask",
        "views/masking.py",
        "The decoder writes left to right, so while training a position must not see the words "
        "after it: the causal mask sets every cell above the diagonal to exactly 0.",
    ),
    Step(
        ATTENTION_KINDS["cross"],
        "views/attention.py",
        "Here the decoder looks at the source: each row is a position of the translation, each "
        "column a source word. Bright cells line up like a dictionary alignment.",
    ),
    Step(
        "Decoding",
        "views/beam_search.py",
        "The translation is chosen piece by piece. Beam search keeps the best few partial "
        "translations at every step instead of only one, and ranks finished ones by their "
        "log-probability divided by a length penalty.",
    ),
]


def question_word(words: LabelledAttention) -> int:
    """The word to ask about in the predict-then-reveal question: "it" when the sentence has it
    (the coreference example), else the last real word."""
    labels = words.query_labels
    if "it" in labels:
        return labels.index("it")
    real = [i for i, label in enumerate(labels) if not is_special_piece(label)]
    return real[-1] if real else 0


def answer(words: LabelledAttention, query: int) -> HeadFocus:
    """The head with the strongest focus on another word for ``query``: the reveal."""
    return rank_heads(words, query, skip_self=True)[0]


def head_for(words: LabelledAttention, query: int, key: int) -> HeadFocus:
    """The head that puts the most weight on ``key`` for ``query``: the best case for a guess."""
    return rank_heads(words, query, key=key)[0]


def head_votes(words: LabelledAttention, query: int) -> list[tuple[str, int]]:
    """For ``query``, how many heads look most at each other word (its own position left out),
    the most chosen first: one strong head can disagree with most of the others. Votes count by
    position; a word that occurs twice is named with its position ("the @5") in both places."""
    votes = Counter(found.key for found in rank_heads(words, query, skip_self=True))
    return [(position_name(words.key_labels, key), count) for key, count in votes.most_common()]


def position_name(labels: Sequence[str], position: int) -> str:
    """The label at ``position``, with "@position" when the same label occurs elsewhere too."""
    label = labels[position]
    return f"{label} @{position}" if labels.count(label) > 1 else label


def alignment(cross: LabelledAttention) -> list[tuple[str, str, float]]:
    """For each row of the cross-attention in words, averaged over the last layer's heads: the
    source word with the most weight, as (target row, source word, weight)."""
    weights = cross.weights[-1].mean(axis=0)  # (T, S)
    return [
        (row, cross.key_labels[int(weights[i].argmax())], float(weights[i].max()))
        for i, row in enumerate(cross.query_labels)
    ]


def largest_masked_weight(decoder: LabelledAttention) -> float:
    """The largest weight above the diagonal of any decoder head: 0.0 when the mask works."""
    length = decoder.weights.shape[-1]
    above = np.triu(np.ones((length, length), dtype=bool), k=1)
    return float(decoder.weights[..., above].max(initial=0.0))
