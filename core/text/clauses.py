"""A sentence too long for the model, translated clause by clause.

The model reads at most half of its positions as source (core.translator.SOURCE_SHARE_OF_MAX_LEN:
64 pieces of the shipped model's 128), so that its output still fits the rest. A longer sentence
is split at a clause boundary (after a comma, semicolon or colon, or before a conjunction or
relative pronoun), the one nearest its middle, and each side again until every part fits; the
parts' translations are joined with a space. On FLORES-200 devtest's 23 sentences over 64 pieces
(the shipped model, beam 4) this scored BLEU 17.8 / chrF 49.0 en-de and 15.0 / 47.0 en-fr, against
14.7 / 42.6 and 12.1 / 40.8 for cutting the source at 64 pieces and 15.1 / 45.3 and 14.8 / 43.6
for reading it whole (up to 127 positions, beyond what the model was trained to fill), and every
one of the 23 split into parts that fit. A part with no boundary left that is still too long is
cut by the translator, which counts it (Translator.long_sources).
"""

from __future__ import annotations

import re
from collections.abc import Callable

CLAUSE_BOUNDARY = re.compile(
    r"(?<=[,;:])\s+|\s+(?=(?:and|but|which|who|while|because|although|whereas)\b)"
)


def clause_parts(text: str, fits: Callable[[str], bool]) -> list[str]:
    """``text`` itself when it ``fits``, else its parts split at clause boundaries (the nearest to
    the middle first) until each fits or has no boundary left; ``" ".join`` of them is ``text``
    with the white space at each split made one space."""
    if fits(text):
        return [text]
    middle = len(text) / 2
    inner = [b for b in CLAUSE_BOUNDARY.finditer(text) if b.start() > 0 and b.end() < len(text)]
    if not inner:
        return [text]
    boundary = min(inner, key=lambda b: abs(b.start() - middle))
    left, right = text[: boundary.start()], text[boundary.end() :]
    return clause_parts(left, fits) + clause_parts(right, fits)
