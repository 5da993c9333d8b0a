"""Argument types shared by the command lines (core.translate, train.shipping.evaluate): a bad value
is an argparse error (usage, message, exit status 2) before any work is done."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Iterable
from pathlib import Path

from core.decoding.search import PAPER_DECODING
from core.translator import MAX_ALPHA, MAX_BEAM_SIZE


def add_decoding_flags(parser: argparse.ArgumentParser) -> None:
    """--beam-size and --alpha (the length penalty's; --length-penalty is its older name), with
    the paper's decoding (PAPER_DECODING) as their defaults."""
    parser.add_argument(
        "--beam-size",
        type=beam_size,
        default=PAPER_DECODING.beam_size,
        help=f"beam size, 1 to {MAX_BEAM_SIZE}; 1 is greedy search (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        "--length-penalty",
        dest="alpha",
        type=length_penalty_alpha,
        default=PAPER_DECODING.alpha,
        help=f"the GNMT length penalty's alpha, 0 to {MAX_ALPHA:g}; 0 ranks by log-probability "
        "alone (default: %(default)s)",
    )


def positive_int(text: str) -> int:
    """An integer of at least 1, such as a beam size (0 would silently mean greedy search)."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def beam_size(text: str) -> int:
    """A beam size the translator takes: 1 to MAX_BEAM_SIZE (checked before any work)."""
    value = positive_int(text)
    if value > MAX_BEAM_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BEAM_SIZE}, got {value}")
    return value


def length_penalty_alpha(text: str) -> float:
    """A length penalty's alpha the translator takes: 0 to MAX_ALPHA."""
    value = finite_float(text)
    if not 0 <= value <= MAX_ALPHA:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_ALPHA:g}, got {value:g}")
    return value


def check_output(output: Path, inputs: Iterable[Path | str | None], flag: str = "--output") -> None:
    """Refuse, before any work, an output file that cannot be written or that is one of the
    command's ``inputs`` (writing it would replace what is being read): a ValueError naming it."""
    output = Path(output)
    for given in inputs:
        if given is not None and output.resolve() == Path(given).resolve():
            raise ValueError(f"{flag} {output}: that is an input of this command ({given})")
    if output.is_dir():
        raise ValueError(f"{flag} {output}: a folder, not a file")
    folder = output.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {output}: cannot write in {folder}")


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
