"""Argument types shared by the command lines (core.translate, train.evaluate): a bad value is an
argparse error (usage, message, exit status 2) before any work is done."""

from __future__ import annotations

import argparse
import math

from core.decoding.search import PAPER_DECODING


def add_decoding_flags(parser: argparse.ArgumentParser) -> None:
    """--beam-size and --alpha (the length penalty's; --length-penalty is its older name), with
    the paper's decoding (PAPER_DECODING) as their defaults."""
    parser.add_argument(
        "--beam-size",
        type=positive_int,
        default=PAPER_DECODING.beam_size,
        help="beam size; 1 is greedy search (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        "--length-penalty",
        dest="alpha",
        type=finite_float,
        default=PAPER_DECODING.alpha,
        help="the GNMT length penalty's alpha; 0 ranks by log-probability alone "
        "(default: %(default)s)",
    )


def positive_int(text: str) -> int:
    """An integer of at least 1, such as a beam size (0 would silently mean greedy search)."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An integer of at least 0, such as a limit where 0 means none."""
    value = whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def finite_float(text: str) -> float:
    """A real number, neither nan nor infinite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite real number above 0, such as a duration (0 or nan would silently mean none)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text!r}")
    return value


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
