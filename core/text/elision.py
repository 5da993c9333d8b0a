"""French elision, split for the vocabulary and joined again for the reader.

French drops the vowel of a short word before a vowel and writes an apostrophe: "le animal" is
written "l'animal", "que il" "qu'il". SentencePiece marks a word's first piece with "▁", so
"l'animal" becomes ``▁l ' ani mal``: the word after the apostrophe is cut into rare inner pieces
and shares nothing with ``▁animal``, the piece the model writes everywhere else. The model then
prefers "▁Le ▁animal". Splitting after the elided word ("l' animal") gives ``▁l ' ▁animal``; the
output is joined back ("l'animal") before anyone reads it. Moses's French tokenizer splits the
same way; only these words are touched, so "aujourd'hui" and "presqu'île" stay whole.
"""

from __future__ import annotations

import re

# the words French elides: le/la, de, je, me, ne, se, te, ce, que and its compounds
_ELIDED = r"(?:jusqu|lorsqu|puisqu|quoiqu|qu|[cdjlmnst])"
_APOSTROPHES = "['’]"
# an elided word starts a word and is not itself quoted ("rock 'n' roll" is English)
_START = r"(?<![\w'’])"
_GLUED = re.compile(rf"(?i){_START}({_ELIDED}{_APOSTROPHES})(?=\w)")
_SPLIT = re.compile(rf"(?i){_START}({_ELIDED}{_APOSTROPHES}) (?=\w)")


# for readers joining the split text themselves (train/shipping/export_hf.py prints it)
JOIN_PATTERN = _SPLIT.pattern


def split_elisions(text: str) -> str:
    """ "L'animal qu'il voit" -> "L' animal qu' il voit": a space after each elided word."""
    return _GLUED.sub(r"\1 ", text)


def join_elisions(text: str) -> str:
    """The inverse of split_elisions: "L' animal qu' il voit" -> "L'animal qu'il voit"."""
    return _SPLIT.sub(r"\1", text)
