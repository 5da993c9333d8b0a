"""The guided story's steps and the facts each one points at, read off the user's translation
(no Streamlit here: app/views/story.py draws them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.display import ATTENTION_KINDS, SENTENCEPIECE_WORD_START, WORD_START
from core.inspection.head_focus import HeadFocus, rank_heads
from core.inspection.head_statistics import EOS
from core.inspection.labelled_attention import LabelledAttention
from core.text.words import is_special_piece


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
        "chooses its own weights (each row sums to 1): most look at a neighbour or at the "
        "sentence's edges; the reveal says whether any links a pronoun to the word it stands "
        "for.",
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


# The classic coreference sentences (Winograd schemas) and the word their "it" stands for: only
# where the story knows that word can it say whether a head finds it.
ANTECEDENTS = {
    "The animal didn't cross the street because it was too tired.": "animal",
    "The trophy didn't fit into the suitcase because it was too big.": "trophy",
}
FARTHER = "a word farther away"
STRONGEST_SHOWN = 3  # heads named in the reveal, the strongest first


def has_question(words: LabelledAttention) -> bool:
    """Whether the sentence has two words, so that one can be asked about the other: "Hi." has
    only the tag and </s> beside it."""
    return sum(not is_special_piece(label) for label in words.query_labels) >= 2


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


def relation(labels: Sequence[str], query: int, key: int) -> str:
    """What a head whose top word for ``query`` is ``key`` looks at, in words: the previous or
    the next word, the language tag, the end of the sentence (</s>), else FARTHER."""
    if key == query - 1:
        return "the previous word"
    if key == query + 1:
        return "the next word"
    if labels[key] == EOS:
        return "the end of the sentence"
    if is_special_piece(labels[key]):
        return "the language tag"
    return FARTHER


def described(words: LabelledAttention, query: int, found: HeadFocus) -> str:
    """One head's focus for the reveal: 'layer 2, head 2: 97% on “because”, the previous word'."""
    where = relation(words.key_labels, query, found.key)
    label = position_name(words.key_labels, found.key)
    what = f"a link to “{label}”" if where == FARTHER else where
    return (
        f"layer {found.layer + 1}, head {found.head + 1}: {found.weight:.0%} on “{label}”, {what}"
    )


def strongest(words: LabelledAttention, query: int) -> str:
    """The STRONGEST_SHOWN strongest heads for ``query`` (its own position left out), each with
    what it looks at."""
    ranked = rank_heads(words, query, skip_self=True)[:STRONGEST_SHOWN]
    return "; ".join(described(words, query, found) for found in ranked)


def jobs(words: LabelledAttention, query: int) -> str:
    """How many heads do which job for ``query``, the most common first: "Of its 48 heads, 20
    look at the previous word, 8 at the next word and 13 at a word farther away (“street” 3,
    ...)"."""
    ranked = rank_heads(words, query, skip_self=True)
    kinds = Counter(relation(words.key_labels, query, found.key) for found in ranked)
    farther = Counter(
        position_name(words.key_labels, found.key)
        for found in ranked
        if relation(words.key_labels, query, found.key) == FARTHER
    )
    parts = []
    for i, (kind, count) in enumerate(kinds.most_common()):
        verb = ("looks at" if count == 1 else "look at") if i == 0 else "at"
        part = f"{count} {verb} {kind}"
        if kind == FARTHER:
            part += " (" + ", ".join(f"“{word}” {n}" for word, n in farther.most_common()) + ")"
        parts.append(part)
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"Of its {len(ranked)} heads, {listed}."


def coreference(words: LabelledAttention, query: int, sentence: str) -> str | None:
    """Whether any head links the pronoun ``query`` to the word it stands for (ANTECEDENTS),
    said plainly: the heads whose top word it is, with their weights, or that none does and the
    most weight any head puts on it. None where the story does not know that word."""
    antecedent = ANTECEDENTS.get(sentence.strip())
    if antecedent not in words.key_labels:
        return None
    key = words.key_labels.index(antecedent)
    pronoun = words.query_labels[query]
    total = words.weights.shape[0] * words.weights.shape[1]
    linking = [found for found in rank_heads(words, query, skip_self=True) if found.key == key]
    if not linking:
        best = head_for(words, query, key)
        return (
            f"No head links “{pronoun}” to “{antecedent}”, the word it stands for: in none of "
            f"the {total} is it the top word. The most weight any head puts on it is "
            f"{best.weight:.0%} (layer {best.layer + 1}, head {best.head + 1})."
        )
    heads = ", ".join(
        f"layer {found.layer + 1}, head {found.head + 1} with {found.weight:.0%}"
        for found in linking
    )
    count = "One head" if len(linking) == 1 else f"{len(linking)} heads"
    verb = "links" if len(linking) == 1 else "link"
    return (
        f"{count} of {total} {verb} “{pronoun}” to “{antecedent}”, the word it stands for: "
        f"{heads} of its weight."
    )


def shown_head(words: LabelledAttention, query: int, sentence: str) -> HeadFocus:
    """The head the reveal draws: the strongest that links the pronoun to the word it stands
    for, where one does, else the strongest head."""
    antecedent = ANTECEDENTS.get(sentence.strip())
    ranked = rank_heads(words, query, skip_self=True)
    linking = [found for found in ranked if words.key_labels[found.key] == antecedent]
    return (linking or ranked)[0]


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
