"""The one place the app's names come from (app/display.py): pieces are classified and shown
alike on every page, and every kind has a colour in the token chips."""

from dataclasses import fields

from app.display import (
    ATTENTION_KINDS,
    PIECE_KINDS,
    WORD_START,
    piece_count,
    piece_kind,
    piece_text,
)
from app.figures.tokens import KIND_COLOURS
from core.inspection.labelled_attention import AttentionSet


def test_piece_kinds_follow_the_tokenizer_and_the_word_start_mark():
    assert piece_kind("▁dog", is_special=False, is_byte=False) == "word start"
    assert piece_kind("s", is_special=False, is_byte=False) == "continuation"
    assert piece_kind("<2de>", is_special=True, is_byte=False) == "special"
    assert piece_kind("<0xF0>", is_special=False, is_byte=True) == "byte"
    # special wins over the mark: a special piece never counts as a word's start
    assert piece_kind("▁x", is_special=True, is_byte=False) == "special"


def test_every_piece_kind_has_its_own_chip_colour():
    assert tuple(KIND_COLOURS) == PIECE_KINDS
    assert len(set(KIND_COLOURS.values())) == len(PIECE_KINDS)


def test_pieces_counted_without_special_tokens():
    assert piece_count(["special", "word start", "continuation", "byte", "special"]) == 3


def test_piece_text_shows_every_word_start_mark_and_nothing_else():
    assert piece_text("▁un believ ▁able") == f"{WORD_START}un believ {WORD_START}able"
    assert piece_text("<s> → </s>") == "<s> → </s>"


def test_attention_kinds_are_named_as_core_holds_them():
    """The pages read a kind's trace with getattr(result.attention, kind)."""
    assert list(ATTENTION_KINDS) == [field.name for field in fields(AttentionSet)]
