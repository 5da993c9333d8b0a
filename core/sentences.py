"""A text translated sentence by sentence.

The model learnt from single sentences (and from pairs that the training augmentation joins), so
a paragraph given as one sequence comes out with whole sentences missing. A text is therefore cut
into sentences by sentencex (Wikimedia's rule-based segmenter, with abbreviation lists; it would
rather leave two sentences together than split one), each is translated on its own, and the
translations are joined with the text's own spaces and line breaks between them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sentencex import segment

from core.tokenizer import normalize_text

_SPACES_AROUND = re.compile(r"(\s*)(.*?)(\s*)", re.DOTALL)


def split_sentences(text: str) -> list[str]:
    """``text`` as sentences and the white space between them, in order: ``"".join`` of the parts
    is ``text`` again, and a part is a sentence exactly when :func:`is_sentence` says so."""
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
