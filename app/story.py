"""The guided story's steps and the facts each one points at, read off the user's translation
(no Streamlit here: app/views/story.py draws them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.display import ATTENTION_KINDS, SENTENCEPIECE_WORD_START, WORD_START
from app.numbering import shown_of
from core import LabelledAttention
from core.inspection import (
    END,
    FARTHER,
    ITSELF,
    NEXT,
    PREVIOUS,
    TAG,
    HeadFocus,
    RowProfile,
    rank_heads,
    relation,
    row_profile,
    row_profiles,
    sentence_roles,
)
from core.text import MarianTokenizer, Tokenizer, is_special_piece


@dataclass(frozen=True)
class Step:
    title: str
    page: str  # the full page on this topic
    notice: str  # what to notice in the figure


QUESTION_STEP = 2  # the step of STEPS that asks the audience
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


def notice(step: int, tokenizer: Tokenizer | MarianTokenizer) -> str:
    """What to notice on ``step``; on the Pieces step, in the words of the model's own vocabulary
    (a MarianMT model's has two SentencePiece models and a language token only if it writes
    several languages)."""
    if step != 0 or not isinstance(tokenizer, MarianTokenizer):
        return STEPS[step].notice
    languages = " and ".join(tokenizer.languages.values())
    tag = (
        " The token in front (such as `>>fr<<`) says which language to write."
        if tokenizer.tag_ids
        else ""
    )
    return (
        "The model never sees words: this MarianMT model's SentencePiece models cut the English "
        f"into pieces (one model for English, one for {languages}, their pieces numbered in one "
        f"vocabulary of {len(tokenizer):,}). {WORD_START} (SentencePiece's "
        f"{SENTENCEPIECE_WORD_START}) starts a word; a rare word is spelled in several pieces."
        f"{tag} `</s>` ends."
    )


# The classic coreference sentences (Winograd schemas) and the word their "it" stands for: only
# where the story knows that word can it say whether a head finds it.
ANTECEDENTS = {
    "The animal didn't cross the street because it was too tired.": "animal",
    "The trophy didn't fit into the suitcase because it was too big.": "trophy",
}
STRONGEST_SHOWN = 3  # heads in the reveal's table, the strongest first
SHARE_COLUMNS = {  # the relations of core.inspection.head_focus, as the table's columns
    ITSELF: "itself",
    PREVIOUS: "previous word",
    NEXT: "next word",
    END: "</s>",
    TAG: "language tag",
    FARTHER: "farther words",
}


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
    """The head with the strongest focus on another word for ``query``: the answer to the
    question, which asks for a word other than the query's own."""
    return rank_heads(words, query, skip_self=True)[0]


def head_for(words: LabelledAttention, query: int, key: int) -> HeadFocus:
    """The head that puts the most weight on ``key`` for ``query``: the best case for a guess."""
    return rank_heads(words, query, key=key)[0]


def named(words: LabelledAttention, key: int, what: str) -> str:
    """A key with what it is to the query (a relation of core.inspection.head_focus): "“because”,
    the previous word", "“it” itself", "“street”" (a word farther away says nothing more)."""
    label = f"“{position_name(words.key_labels, key)}”"
    if what == ITSELF:
        return f"{label} itself"
    return label if what == FARTHER else f"{label}, {what}"


def top_word(words: LabelledAttention, profile: RowProfile) -> str:
    """A head's top word for the query, named as :func:`named` does."""
    return named(words, profile.top, profile.top_relation)


def reveal_text(words: LabelledAttention, query: int, guess: int | None, sentence: str) -> str:
    """The answer to the question, the most any head puts on the audience's guess (``guess``;
    None where the answer was revealed without one), each head told with its top word over its
    whole row, the query's own word included; and the head the reveal's map draws
    (:func:`map_head_text`), so that the text and the map speak of the same head."""
    word = words.query_labels[query]
    top = answer(words, query)
    top_profile = row_profile(words, query, top.layer, top.head)
    said = (
        f"of the words other than “{word}”, the most any head puts on one is {top.weight:.0%}: "
        f"encoder layer {shown_of(top.layer)}, head {shown_of(top.head)}, on "
        f"{named(words, top.key, relation(words.key_labels, query, top.key))}"
    )
    if top_profile.top != top.key:
        said += f" (its top word is {top_word(words, top_profile)}, {top_profile.weight:.0%})"
    if guess is None:
        said = f"{said[0].upper()}{said[1:]}."
    else:
        right = "Right" if guess == top.key else "Not quite"
        said = f"{right}: {said}. {most_on(words, query, guess, 'your')}"
    return f"{said} {map_head_text(words, query, shown_head(words, query, sentence), sentence)}"


def map_head_text(words: LabelledAttention, query: int, shown: RowProfile, sentence: str) -> str:
    """Which head the reveal's map draws (``shown``, :func:`shown_head`) and why."""
    word = words.query_labels[query]
    head = f"The map: encoder layer {shown_of(shown.layer)}, head {shown_of(shown.head)}"
    key = antecedent_of(words, sentence)
    if key is None:
        return f"{head}, the head with the largest weight in “{word}”'s row."
    stands_for = f"“{words.key_labels[key]}”, the word “{word}” stands for"
    if shown.top == key:
        return f"{head}, the strongest head whose top word is {stands_for}."
    return f"{head}, the head that puts the most on {stands_for}."


def most_on(words: LabelledAttention, query: int, key: int, whose: str = "") -> str:
    """The most weight any head puts on ``key`` for ``query``, and that head's own top word when
    it is another: "The most weight any head puts on your “animal” is 13% (layer 3, head 7, whose
    top word is “street”, 16%)"."""
    best = head_for(words, query, key)
    profile = row_profile(words, query, best.layer, best.head)
    label = position_name(words.key_labels, key)
    head = f"layer {shown_of(best.layer)}, head {shown_of(best.head)}"
    if profile.top == key:
        where = f"{head}, its top word"
    else:
        where = f"{head}, whose top word is {top_word(words, profile)}, {profile.weight:.0%}"
    mine = f"{whose} " if whose else ""
    return f"The most weight any head puts on {mine}“{label}” is {best.weight:.0%} ({where})."


def strongest(words: LabelledAttention, query: int) -> list[RowProfile]:
    """The STRONGEST_SHOWN heads with the largest top weight for ``query``, its own word
    included, the strongest first."""
    return sorted(row_profiles(words, query), key=lambda profile: -profile.weight)[:STRONGEST_SHOWN]


def strongest_table(words: LabelledAttention, query: int) -> list[dict[str, str]]:
    """The strongest heads as table rows: the head, its role over the whole sentence (the Heads
    lab's), its top word and its weight, and the weight of its row on each relation."""
    roles = sentence_roles(words, self_attention=True)
    heads = words.weights.shape[1]
    rows = []
    for profile in strongest(words, query):
        role = roles[profile.layer * heads + profile.head]
        row = {
            "head": f"layer {shown_of(profile.layer)}, head {shown_of(profile.head)}",
            "role in this sentence": role.label,
            "top word": top_word(words, profile),
            "its weight": f"{profile.weight:.0%}",
        }
        row |= {
            column: f"{profile.shares[name]:.0%}"
            for name, column in SHARE_COLUMNS.items()
            if name in profile.shares
        }
        rows.append(row)
    return rows


def jobs(words: LabelledAttention, query: int) -> str:
    """How many heads look most at what, for ``query``, its own word included, the most common
    first: "Of its 48 heads, 17 look most at the previous word, 9 at the next word, 6 at the word
    itself and 8 at a word farther away (“street” 3, ...)"."""
    profiles = row_profiles(words, query)
    kinds = Counter(profile.top_relation for profile in profiles)
    farther = Counter(
        position_name(words.key_labels, profile.top)
        for profile in profiles
        if profile.top_relation == FARTHER
    )
    parts = []
    for i, (kind, count) in enumerate(kinds.most_common()):
        verb = ("looks most at" if count == 1 else "look most at") if i == 0 else "at"
        part = f"{count} {verb} {kind}"
        if kind == FARTHER:
            part += " (" + ", ".join(f"“{word}” {n}" for word, n in farther.most_common()) + ")"
        parts.append(part)
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"Of its {len(profiles)} heads, {listed}."


def antecedent_of(words: LabelledAttention, sentence: str) -> int | None:
    """The position of the word the pronoun of a classic coreference sentence stands for
    (ANTECEDENTS), None for any other sentence."""
    antecedent = ANTECEDENTS.get(sentence.strip())
    return words.key_labels.index(antecedent) if antecedent in words.key_labels else None


def coreference(words: LabelledAttention, query: int, sentence: str) -> str | None:
    """Whether any head links the pronoun ``query`` to the word it stands for (ANTECEDENTS): the
    heads whose top word it is over the whole row, the pronoun's own word included, with their
    weights; else that none does, the heads in which it would be the top word were the pronoun
    left out, and the most weight any head puts on it. None where the story does not know that
    word."""
    key = antecedent_of(words, sentence)
    if key is None:
        return None
    pronoun, antecedent = words.query_labels[query], words.key_labels[key]
    profiles = row_profiles(words, query)
    stands_for = f"“{pronoun}” to “{antecedent}”, the word it stands for"
    linking = [profile for profile in profiles if profile.top == key]
    if linking:
        heads = ", ".join(
            f"layer {shown_of(p.layer)}, head {shown_of(p.head)} with {p.weight:.0%}"
            for p in linking
        )
        count = "One head" if len(linking) == 1 else f"{len(linking)} heads"
        verb = "links" if len(linking) == 1 else "link"
        return f"{count} of {len(profiles)} {verb} {stands_for}: {heads} of its weight."
    said = (
        f"No head links {stands_for}: in none of the {len(profiles)} is it the top word of "
        f"“{pronoun}”'s row, “{pronoun}” itself included."
    )
    behind_self = [found for found in rank_heads(words, query, skip_self=True) if found.key == key]
    if behind_self:
        heads = ", ".join(
            f"layer {shown_of(found.layer)}, head {shown_of(found.head)} ({found.weight:.0%}, with "
            f"{words.weights[found.layer, found.head, query, query]:.0%} on “{pronoun}” itself)"
            for found in behind_self
        )
        said += f" Only with “{pronoun}” left out is it the top word: {heads}."
    return f"{said} {most_on(words, query, key)}"


def shown_head(words: LabelledAttention, query: int, sentence: str) -> RowProfile:
    """The head the reveal draws: the strongest that links the pronoun to the word it stands
    for, where one does; else the one that puts the most weight on that word; else the strongest
    head (its top weight, its own word included)."""
    key = antecedent_of(words, sentence)
    profiles = sorted(row_profiles(words, query), key=lambda profile: -profile.weight)
    linking = [profile for profile in profiles if profile.top == key]
    if linking or key is None:
        return (linking or profiles)[0]
    best = head_for(words, query, key)
    return row_profile(words, query, best.layer, best.head)


def map_title(words: LabelledAttention, query: int, shown: RowProfile, sentence: str) -> str:
    """What the reveal's map shows for ``query`` in head ``shown``: a link to the word the
    pronoun stands for only where that is the row's top word; else its top word, and the weight
    on that word where the head was drawn for it."""
    word = words.query_labels[query]
    key = antecedent_of(words, sentence)
    if shown.top == key:
        return f"“{word}” → links “{word}” to “{words.key_labels[key]}”"
    title = f"“{word}” → {top_word(words, shown)} ({shown.weight:.0%})"
    if key is not None:
        title += (
            f"; “{words.key_labels[key]}” {words.weights[shown.layer, shown.head, query, key]:.0%}"
        )
    return title


def head_votes(words: LabelledAttention, query: int) -> list[tuple[str, int]]:
    """For ``query``, how many heads look most at each word, its own included (named "it
    (itself)"), the most chosen first: every head votes once. Votes count by position; a word
    that occurs twice is named with its position ("the @5") in both places."""
    votes = Counter(profile.top for profile in row_profiles(words, query))
    return [
        (position_name(words.key_labels, key) + (" (itself)" if key == query else ""), count)
        for key, count in votes.most_common()
    ]


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
