"""A text translated sentence by sentence.

The model learnt from single sentences (and from pairs that the training augmentation joins), so
a paragraph given as one sequence comes out with whole sentences missing. A text is therefore cut
into sentences by sentencex (Wikimedia's rule-based segmenter, with abbreviation lists; it would
rather leave two sentences together than split one), each is translated on its own, and the
translations are joined with the text's own spaces and line breaks between them. A text longer
than a reader takes is cut between sentences (:func:`excerpt`), not inside one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.text.tokenizer import normalize_text

_SPACES_AROUND = re.compile(r"(\s*)(.*?)(\s*)", re.DOTALL)


def split_sentences(text: str) -> list[str]:
    """``text`` as sentences and the white space between them, in order: ``"".join`` of the parts
    is ``text`` again, and a part is a sentence exactly when :func:`is_sentence` says so."""
    from sentencex import segment  # here: a machine that only trains needs no segmenter

    parts = []
    for piece in segment("en", text):
        before, sentence, after = _SPACES_AROUND.fullmatch(piece).groups()
        parts += [part for part in (before, sentence, after) if part]
    return parts


def is_sentence(part: str) -> bool:
    """Whether a part holds anything to translate (not only spaces, control or zero-width
    characters)."""
    return bool(normalize_text(part))


def translate_text(text: str, translate: Callable[[str], str]) -> list[tuple[str, str]]:
    """(part, its translation) for each part of :func:`split_sentences`, ``translate`` turning
    one sentence into its translation (a Translator's beam search, or a cached one); a part
    between sentences is its own translation."""
    return [
        (part, translate(part) if is_sentence(part) else part) for part in split_sentences(text)
    ]


def joined(pairs: list[tuple[str, str]]) -> str:
    """The translations of :func:`translate_text`'s pairs as one text, the spaces and line
    breaks between the sentences kept."""
    return "".join(translation for _, translation in pairs)


def translate_by_sentence(text: str, translate: Callable[[str], str]) -> str:
    """The translation of ``text``, sentence by sentence, as one text."""
    return joined(translate_text(text, translate))


@dataclass(frozen=True)
class Excerpt:
    """The start of a text that fits a number of characters: whole sentences where it can."""

    text: str  # the text itself when it fits, else its first sentences (no space after them)
    sentences: int  # how many sentences it holds
    whole: bool  # False when the first sentence alone is too long: text is the start of it
    sentences_left_out: int  # sentences after it (not counting one it cuts short)
    characters_left_out: int  # of the text after it, spaces between sentences included


def excerpt(text: str, max_chars: int) -> Excerpt:
    """The longest run of whole sentences at the start of ``text`` that is at most ``max_chars``
    characters long; when even the first sentence is longer, its first ``max_chars``
    characters."""
    parts = split_sentences(text)
    holds_sentence = [is_sentence(part) for part in parts]
    if len(text) <= max_chars:
        return Excerpt(text, sum(holds_sentence), True, 0, 0)
    length, end = 0, 0  # parts[:end] fit and end with a sentence
    for index, part in enumerate(parts):
        length += len(part)
        if length > max_chars:
            break
        if holds_sentence[index]:
            end = index + 1
    if end:
        kept, whole = "".join(parts[:end]), True
    else:
        kept, whole = text[:max_chars], False
        end = holds_sentence.index(True) + 1 if any(holds_sentence) else len(parts)
    left_out = sum(holds_sentence[end:])
    return Excerpt(kept, sum(holds_sentence[:end]), whole, left_out, len(text) - len(kept))
