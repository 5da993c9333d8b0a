"""Survey every attention head of a model on a validation sample and write heads.json beside it.

    python -m train.shipping.head_survey --model pretrained/en-de-fr --data-dir ../shared/data \
        --sentences 200
    python -m train.shipping.head_survey --dry-run     # end to end in seconds, written under runs/

The sample is read by path from the validation split that training holds out (train.data.corpora:
Tatoeba held out by English sentence + Multi30k val), half en->de and half en->fr, each language's
pairs taken evenly spread over the split (every k-th pair, as the model card's validation score
does): the same data gives the same sample. For each sentence: the attention statistics and head
importance of its beam translation; then the pruning curve (see core.inspection.head_survey). The
app reads the file and says when it was computed on an earlier model.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import torch
from tqdm import tqdm

from core.cli import add_decoding_flags, check_output, positive_int, whole_number
from core.device import DEVICE_CHOICES, DEVICE_HELP, resolve_device
from core.files.checkpoint import CheckpointError
from core.files.model_dir import HEADS_FILE, ModelDir, open_model_dir
from core.inspection.ablation import all_heads
from core.inspection.head_survey import (
    SamplePair,
    check_counts,
    pruning_counts,
    save_survey,
    survey,
    work_units,
)
from core.text.tokenizer import LANGUAGES
from core.translator import DEFAULT_MODEL, InputError, Translator, check_decoding
from train.data.corpora import CorpusError, default_data_dir, load_corpus

DRY_RUN_SENTENCES = 4
DRY_RUN_LINES = 300  # lines read from each corpus file in a dry run
DRY_RUN_OUTPUT = Path("runs") / "head-survey-dry-run" / HEADS_FILE


def spread(items: list, n: int) -> list:
    """``n`` items evenly spread over ``items`` (every k-th, k = len // n), in their order."""
    return items[:: max(1, len(items) // n)][:n] if n > 0 else []


def validation_sample(
    data_dir: Path, sentences: int, limit: int | None = None, languages: Iterable[str] = LANGUAGES
) -> tuple[list[SamplePair], str]:
    """About ``sentences`` pairs of the validation split, split evenly between the target
    languages the model translates into (the first ones take the remainder), and a description
    of the sample."""
    targets = sorted(set(languages) & set(LANGUAGES))
    if not targets:
        raise CorpusError(f"the model translates into {', '.join(languages)}; the data has de, fr")
    corpus = load_corpus(data_dir, limit=limit)
    if not corpus.valid:
        notes = "; ".join(corpus.notes)
        raise CorpusError(f"{data_dir}: no validation pairs found ({notes})")
    pairs, parts = [], []
    for index, target in enumerate(targets):
        wanted = sentences // len(targets) + (index < sentences % len(targets))
        examples = [example for example in corpus.valid if example.target == target]
        chosen = spread(examples, wanted)
        pairs += [SamplePair(target, e.source_text, e.target_text) for e in chosen]
        parts.append(f"{len(chosen)} en-{target} of {len(examples)}")
    description = f"validation split of {data_dir.name}/ ({', '.join(parts)}), evenly spread" + (
        f", first {limit} lines of each file" if limit else ""
    )
    return pairs, description


def heads_off_list(text: str) -> list[int]:
    """argparse type: comma-separated numbers of heads, such as "0,6,12,144"."""
    return [whole_number(part.strip()) for part in text.split(",") if part.strip()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.shipping.head_survey", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", type=Path, default=DEFAULT_MODEL, help="model directory (default: %(default)s)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="corpora folder, as for training (default: %(default)s)",
    )
    parser.add_argument(
        "--sentences",
        type=positive_int,
        help="validation pairs in the sample, split evenly between de and fr (default 200; "
        f"{DRY_RUN_SENTENCES} with --dry-run)",
    )
    parser.add_argument(
        "--heads-off",
        type=heads_off_list,
        help="points of the pruning curve, heads off, comma-separated (default: 0, 1/24, 1/12, "
        "1/6, 1/3, 1/2, 2/3, 5/6 and all of the heads; with --dry-run 0, half and all)",
    )
    add_decoding_flags(parser)
    parser.add_argument(
        "--output",
        type=Path,
        help=f"file to write (default: MODEL/{HEADS_FILE}; with --dry-run {DRY_RUN_OUTPUT})",
    )
    parser.add_argument(
        "--threads", type=positive_int, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=f"a tiny sample ({DRY_RUN_SENTENCES} sentences, {DRY_RUN_LINES} lines per corpus "
        "file, 3 points of the curve), written under runs/ and not beside the model",
    )
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto", help=DEVICE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def resolve_defaults(args: argparse.Namespace, total_heads: int) -> None:
    """Fill the flags whose default depends on --dry-run and on the model's number of heads."""
    if args.sentences is None:
        args.sentences = DRY_RUN_SENTENCES if args.dry_run else 200
    if args.output is None:
        args.output = DRY_RUN_OUTPUT if args.dry_run else ModelDir(args.model).heads_file
    if args.heads_off is None:
        dry = [0, total_heads // 2, total_heads]
        args.heads_off = dry if args.dry_run else pruning_counts(total_heads)
    args.heads_off = check_counts(args.heads_off, total_heads)


def check_writable(path: Path) -> None:
    """Fail before the work, not after it, when the output cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not os.access(path.parent, os.W_OK) or path.is_dir():
        raise OSError(f"{path}: cannot write here")


def prepare(args: argparse.Namespace) -> tuple[Translator, str, list[SamplePair], str]:
    """Load the model (its sha256 first), check the flags, read the sample."""
    check_decoding(args.beam_size, args.alpha)
    sha256 = open_model_dir(args.model).model_sha256()
    translator = Translator.load(args.model, resolve_device(args.device))
    resolve_defaults(args, len(all_heads(translator)))
    check_writable(args.output)
    model_dir = ModelDir(args.model)
    check_output(args.output, [model_dir.model_file, model_dir.tokenizer_file, model_dir.card_file])
    limit = DRY_RUN_LINES if args.dry_run else None
    pairs, description = validation_sample(
        args.data_dir, args.sentences, limit, translator.languages
    )
    return translator, sha256, pairs, description


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        translator, sha256, pairs, description = prepare(args)
    except (OSError, ValueError, CheckpointError) as error:  # CorpusError, InputError: ValueError
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{len(pairs)} sentences: {description}", file=sys.stderr)
    units = work_units(len(pairs), len(args.heads_off))
    with tqdm(total=units, unit="sent", disable=args.quiet, file=sys.stderr) as bar:

        def progress(what: str) -> None:
            bar.set_description(what, refresh=False)
            bar.update()

        try:
            result = survey(
                translator,
                pairs,
                sha256,
                description,
                args.heads_off,
                args.beam_size,
                args.alpha,
                progress,
            )
        except InputError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    save_survey(args.output, result)
    for point in result.pruning:
        print(f"{point.heads_off:4d} heads off: BLEU {point.bleu:5.1f}  chrF {point.chrf:5.1f}")
    print(f"wrote {args.output} in {result.seconds:.0f} s ({result.bleu_signature})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
