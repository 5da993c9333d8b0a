"""The flags that the scripts measuring a trained model share (train.studies.term_test,
train.studies.leakage, train.studies.term_pieces): which model, which corpora, and where the result
goes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.cli import positive_int
from core.files.model_dir import ModelDir
from core.translator import DEFAULT_MODEL
from train.data.corpora import default_data_dir
from train.shipping.card import write_card


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
            "--threads",
            type=positive_int,
            default=1,
            help="torch threads for the translations (default 1)",
        )
    return parser


def command_line(prog: str, argv: list[str] | None) -> str:
    """The command that made a record, for the card."""
    return f"{prog} {' '.join(argv if argv is not None else sys.argv[1:])}".strip()


def publish(record: dict, key: str, card: Path | None) -> None:
    """Print ``record``; with ``card``, also put it in that model's card under ``key``."""
    print(json.dumps(record, ensure_ascii=False, indent=1))
    if card:
        model_dir = ModelDir(card)
        model_card = model_dir.read_card()
        model_card[key] = record
        write_card(model_dir, model_card)
