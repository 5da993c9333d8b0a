"""Blend a continued run with the model it started from, the blend weight chosen on validation data.

A run continued from a trained model on new data (``--init-from``; here general-domain text) learns
the new domain and forgets some of the old (Multi30k). Averaging the two sets of weights trades one
for the other smoothly (WiSE-FT: Wortsman et al. 2022, "Robust fine-tuning of zero-shot models"):

    theta(w) = (1 - w) * theta_start + w * theta_run,      w in [0, 1]

Both models share one vocabulary and shape, and the run started at theta_start, so the two lie in
one basin of the loss and their average is a model too. Each weight is scored with BLEU on
validation data only (Multi30k val for the in-domain side, the held-out general-domain pairs for
the new one; never a test set), and the chosen weight is the one with the best general-domain
BLEU, averaged over the languages, among those that keep Multi30k val at or above the start
model's in every language. The run's model directory gets the blend, and its card.json records the
table and the choice (train.shipping.card prints both in card.md); the run's own model is kept
beside it, so blending again starts from it, not from a blend.

    python -m train.shipping.blend --run runs/main             # weights 0 .. 1, choose, write
    python -m train.shipping.blend --run runs/main --weights 0.5 0.7 --no-write   # only the table
    python -m train.shipping.blend --run runs/main --dry-run   # seconds: 20 sentences, 2 weights
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from core.cli import beam_size, positive_int
from core.files.checkpoint import load_model
from core.files.model_dir import copy_atomically, open_model_dir
from core.model.transformer import Transformer
from core.text.tokenizer import LANGUAGES
from core.translator import Translator
from train.data.corpora import (
    CorpusError,
    default_data_dir,
    general_validation,
    multi30k_validation,
)
from train.loop.run_folder import RunDir
from train.shipping.evaluate import evaluate

VALIDATION_SETS = {"Multi30k val": multi30k_validation, "general val": general_validation}
IN_DOMAIN = "Multi30k val"  # the set a blend must not lose on


def blend_weights(start: Transformer, run: Transformer, weight: float) -> dict[str, torch.Tensor]:
    """(1 - weight) * start + weight * run, parameter by parameter, in float32."""
    run_state = run.state_dict()
    return {
        name: torch.lerp(tensor.float(), run_state[name].float(), weight)
        for name, tensor in start.state_dict().items()
    }


def evenly_spread(texts: tuple[list[str], list[str]], count: int) -> tuple[list[str], list[str]]:
    """``count`` (source, reference) pairs taken every k-th, so the sample spans the whole set."""
    sources, references = texts
    step = max(1, len(sources) // count)
    return sources[::step][:count], references[::step][:count]


def validation_data(data_dir: Path, sentences: int) -> dict[tuple[str, str], tuple]:
    """(set, language) -> (sources, references), ``sentences`` of each; a set whose files are
    not in ``data_dir`` is left out, with a note."""
    data = {}
    for name, read in VALIDATION_SETS.items():
        for target in LANGUAGES:
            try:
                data[name, target] = evenly_spread(read(data_dir, target), sentences)
            except CorpusError as error:
                if not isinstance(error.__cause__, FileNotFoundError):
                    raise
                print(f"skipped {name} en-{target}: not found in {data_dir}", file=sys.stderr)
    return data


def score_blend(translator: Translator, data: dict, beam_size: int) -> dict[str, float]:
    """BLEU of ``translator`` on every validation set and language, e.g. {"Multi30k val de": ..}."""
    return {
        f"{name} {target}": evaluate(translator, *texts, target, beam_size, progress=False)["bleu"]
        for (name, target), texts in data.items()
    }


def choose(rows: list[dict]) -> dict:
    """The row (a weight and its scores) with the best mean general-domain BLEU among those at or
    above the start model (the row of weight 0) on the in-domain set in every language."""
    start = next(row for row in rows if row["weight"] == 0)
    in_domain = [key for key in start["bleu"] if key.startswith(IN_DOMAIN)]
    general = [key for key in start["bleu"] if not key.startswith(IN_DOMAIN)]
    keeps = [r for r in rows if all(r["bleu"][key] >= start["bleu"][key] for key in in_domain)]
    return max(keeps, key=lambda row: sum(row["bleu"][key] for key in general))


def table_markdown(rows: list[dict], chosen: dict) -> str:
    """The blend table as Markdown, the chosen weight in bold."""
    keys = list(rows[0]["bleu"])
    lines = [
        "| w | " + " | ".join(keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for row in rows:
        weight = f"**{row['weight']:g}**" if row is chosen else f"{row['weight']:g}"
        lines.append(
            f"| {weight} | " + " | ".join(f"{row['bleu'][key]:.1f}" for key in keys) + " |"
        )
    return "\n".join(lines)


def run_own_model(run: RunDir) -> Path:
    """The run's own model file: the one kept before an earlier blend, else the model directory's
    model.pt, which is then kept (so that blending twice never blends a blend)."""
    kept = run.unblended_model_file
    if not kept.is_file():
        copy_atomically(run.model_dir.model_file, kept)
    return kept


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.shipping.blend", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--run", type=Path, required=True, help="training run folder (holds model/)"
    )
    parser.add_argument(
        "--start",
        type=Path,
        help="the model directory the run started from (default: the card's initialised_from)",
    )
    parser.add_argument(
        "--weights",
        type=float,
        nargs="+",
        default=[0.0, 0.5, 0.7, 0.85, 1.0],
        help="blend weights w of the run's model (0 = the start model, 1 = the run's)",
    )
    parser.add_argument(
        "--sentences", type=positive_int, default=500, help="validation pairs per set and language"
    )
    parser.add_argument("--beam-size", type=beam_size, default=4, help="beam size for the scores")
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder, as for training"
    )
    parser.add_argument(
        "--write",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the chosen blend into the run's model directory",
    )
    parser.add_argument("--dry-run", action="store_true", help="20 sentences, weights 0 and 1")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.sentences, args.weights = 20, [0.0, 1.0]
    if any(not 0 <= weight <= 1 for weight in args.weights):
        parser.error("--weights: every weight is between 0 and 1")
    if 0.0 not in args.weights:
        args.weights = [0.0, *args.weights]  # the start model is what a blend must not lose to
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = RunDir(args.run)
    card = run.model_dir.read_card()
    start_path = args.start or card.get("training", {}).get("initialised_from")
    if start_path is None:
        print(f"{run.path}: the run did not start from a model; give --start", file=sys.stderr)
        return 2
    start_dir = open_model_dir(start_path)
    start, _ = start_dir.load_model()
    own, _ = load_model(run_own_model(run))
    tokenizer = run.model_dir.load_tokenizer()
    data = validation_data(args.data_dir, args.sentences)
    blended = Transformer(own.config).eval()
    rows = []
    for weight in sorted(set(args.weights)):
        blended.load_state_dict(blend_weights(start, own, weight))
        rows.append(
            {
                "weight": weight,
                "bleu": score_blend(Translator(blended, tokenizer), data, args.beam_size),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr)
    chosen = choose(rows)
    print(table_markdown(rows, chosen))
    print(f"chosen: w = {chosen['weight']:g}")
    if args.write:
        blended.load_state_dict(blend_weights(start, own, chosen["weight"]))
        card.setdefault("training", {})["blend"] = {
            "start": str(start_path),
            "weight": chosen["weight"],
            "sentences": args.sentences,
            "beam_size": args.beam_size,
            "table": rows,
        }
        run.model_dir.write(blended, run.model_dir.tokenizer_file, card)
        print(f"wrote the blend w = {chosen['weight']:g} into {run.model_dir.path}")
    return 0


def blend_lines(record: dict | None) -> list[str]:
    """The blend of the run with the model it started from (train/shipping/blend.py), and its
    table."""
    if not record:
        return []
    return [
        "- the shipped weights are a blend (train/shipping/blend.py): "
        f"(1 - w) x `{record['start']}` + w x "
        f"this run's model, w = **{record['weight']:g}**, the weight with the best general-domain "
        "validation BLEU among those that keep Multi30k val at the start model's level "
        f"({record['sentences']} validation pairs per set and language, "
        f"beam {record['beam_size']}):",
        "",
        table_markdown(
            record["table"], next(r for r in record["table"] if r["weight"] == record["weight"])
        ),
        "",
    ]


if __name__ == "__main__":
    sys.exit(main())
