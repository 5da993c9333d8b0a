"""How the app names and shows what core computes: the three kinds of attention, the kinds of
pieces, and a piece's text. Core's labels are the data ("▁Das", "<s>");
this is only how pages, figures and tables show them, and every one of them takes the names from
here."""

from __future__ import annotations

from collections.abc import Sequence

# The keys are core's names of the kinds of pieces (core.PIECE_KINDS: Translation.source_kinds,
# output_kinds), in the order the token chips' legend lists them.
PIECE_KINDS = {
    "word_start": "word start",
    "continuation": "continuation",
    "special": "special",
    "byte": "byte",
}

# The keys are core's names of the kinds (LabelledAttention's encoder, decoder and cross).
ATTENTION_KINDS = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Cross-attention",
}

SENTENCEPIECE_WORD_START = "▁"
# ▁ (U+2581, a block element) is drawn as a heavy underline that reads like part of the word; a
# middle dot marks the word start as lightly as editors mark a space.
WORD_START = "·"


def piece_text(text: str) -> str:
    """Text as the app shows it, in figures, tables and selectors alike: SentencePiece's
    word-start mark ▁ as WORD_START (core's labels keep ▁: they are the data; this is only how
    they are shown)."""
    return text.replace(SENTENCEPIECE_WORD_START, WORD_START)


def piece_count(kinds: Sequence[str]) -> int:
    """How many pieces, special tokens (the language tag, </s>) not counted: what the
    Tokenization and Translate pages both call pieces."""
    return sum(kind != "special" for kind in kinds)
