"""The shared vocabulary: text survives the round trip, tags and specials sit where promised."""

import pytest

from core.text.tokenizer import (
    EOS_ID,
    PAD_ID,
    Tokenizer,
    has_control_characters,
    language_tag,
    normalize_text,
)
from support.tiny_corpus import tiny_corpus


@pytest.fixture(scope="module")
def tokenizer(translator) -> Tokenizer:
    return translator.tokenizer


@pytest.mark.parametrize(
    "text",
    [
        "The dog runs quickly.",
        "Der Hund läuft schnell.",
        "Le chien court très vite !",
        "Emoji 🐶 and 漢字 and Ω survive.",
        "Numbers 12,345.67 and (brackets)",
    ],
)
def test_tokenizer_round_trips_text(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == normalize_text(text)


def test_unknown_characters_fall_back_to_bytes(tokenizer):
    ids = tokenizer.encode("🐶")
    assert all(tokenizer.is_byte(i) for i in ids if tokenizer.pieces([i])[0] != "▁")
    assert len([i for i in ids if tokenizer.is_byte(i)]) == 4  # U+1F436 is 4 bytes of UTF-8


def test_source_carries_the_target_tag_and_ends_with_eos(tokenizer):
    ids = tokenizer.encode_source("The dog.", "fr")
    assert tokenizer.pieces(ids[:1]) == ["<2fr>"] and ids[-1] == EOS_ID
    assert tokenizer.is_special(ids[0]) and tokenizer.is_special(PAD_ID)
    assert tokenizer.decode(ids) == "The dog."
    with pytest.raises(ValueError, match="unknown target language"):
        language_tag("xx")


def test_normalize_text_is_the_one_decided_form():
    assert normalize_text("  Bonjour\u202f!\u00a0Ça va\u00a0?  ") == "Bonjour ! Ça va ?"
    assert normalize_text("Cafe\u0301") == "Café"  # NFC composes
    assert normalize_text("a\tb\n\x07c\u200bd") == "a b c d"
    assert normalize_text(" \n\t ") == ""


def test_control_characters_are_reported_where_normalisation_replaces_them():
    assert has_control_characters("a\x07b") and has_control_characters("a\u200bb")
    assert not has_control_characters("tab\tnewline\n and\r\n are white space")
    assert normalize_text("a\x07b") == "a b"


def test_digits_are_pieces_of_their_own_so_numbers_are_copied_digit_by_digit(tmp_path):
    # a corpus where numbers are frequent enough that SentencePiece would merge them if allowed
    corpus = tiny_corpus() + [f"In 1992 it cost {345 + i % 3} euros." for i in range(300)]
    tokenizer = Tokenizer.train(corpus, tmp_path / "spm", vocab_size=400)
    pieces = tokenizer.pieces(tokenizer.encode("In 1992 it cost 345 euros."))
    digit_pieces = [piece.lstrip("▁") for piece in pieces if any(c.isdigit() for c in piece)]
    assert "".join(digit_pieces) == "1992345"
    assert all(len(piece) == 1 for piece in digit_pieces)
