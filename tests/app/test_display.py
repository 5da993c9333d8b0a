"""The one place the app's names come from (app/display.py): pieces are shown alike on every
page, and every kind of piece (core's PIECE_KINDS) has a name and a colour in the token chips."""

from dataclasses import fields

import core
from app.display import ATTENTION_KINDS, PIECE_KINDS, WORD_START, piece_count, piece_text
from app.figures.tokens import KIND_COLOURS
from core.labelled_attention import AttentionSet


def test_every_piece_kind_has_a_name_and_its_own_chip_colour():
    assert tuple(PIECE_KINDS) == core.PIECE_KINDS  # core's kinds, each with the app's words
    assert tuple(KIND_COLOURS) == core.PIECE_KINDS
    assert len(set(KIND_COLOURS.values())) == len(PIECE_KINDS)


def test_pieces_counted_without_special_tokens():
    assert piece_count(["special", "word_start", "continuation", "byte", "special"]) == 3


def test_piece_text_shows_every_word_start_mark_and_nothing_else():
    assert piece_text("▁un believ ▁able") == f"{WORD_START}un believ {WORD_START}able"
    assert piece_text("<s> → </s>") == "<s> → </s>"


def test_attention_kinds_are_named_as_core_holds_them():
    """The pages read a kind's trace with getattr(result.attention, kind)."""
    assert list(ATTENTION_KINDS) == [field.name for field in fields(AttentionSet)]
