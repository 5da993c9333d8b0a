"""The flags that the scripts measuring a trained model share (train.term_test, train.leakage,
train.term_pieces): which model, which corpora, and where the result goes."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.translator import DEFAULT_MODEL
from train.data import default_data_dir


def study_parser(prog: str, doc: str, card_gets: str | None = None) -> argparse.ArgumentParser:
    """--model and --data-dir; with ``card_gets`` (what the card receives) also --card, and
    --threads for the translations."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument(
        "--model", type=Path, default=DEFAULT_MODEL, help=f"model folder (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder, as for training"
    )
    if card_gets:
        parser.add_argument(
            "--card",
            type=Path,
            help=f"model folder whose card gets {card_gets} (default: print only)",
        )
        parser.add_argument(
            "--threads", type=int, default=1, help="torch threads for the translations (default 1)"
        )
    return parser
