"""Score a model on any parallel data with sacreBLEU and chrF; prints one JSON object.

python -m train.shipping.evaluate --model pretrained/en-de-fr --target de --src test.en \\
    --ref test.de
python -m train.shipping.evaluate --model pretrained/en-de-fr --target fr --tsv pairs.tsv
python -m train.shipping.evaluate --target de --test-set multi30k  # test_2016_flickr of --data-dir
python -m train.shipping.evaluate --target fr --test-set flores  # FLORES-200 devtest of --data-dir
python -m train.shipping.evaluate --target de --src paragraphs.en --ref paragraphs.de \\
    --split-sentences

Sentences are translated in batches of similar length (Translator.translate_batch), by the same
search as one at a time. A sentence over the model's source budget (64 pieces for the shipped
model) is translated clause by clause (core/text/clauses.py); the report counts such sentences
and those still cut ("long_sentences"), and stderr says so.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from core.cli import add_decoding_flags, check_output, non_negative_int
from core.decoding.search import PAPER_DECODING
from core.device import DEVICE_CHOICES, DEVICE_HELP, resolve_device
from core.files.checkpoint import CheckpointError, write_text_atomically
from core.scoring import score_translations
from core.text.sentences import is_sentence, translate_by_sentence
from core.text.sentences import split_sentences as sentence_parts
from core.translator import DEFAULT_MODEL, Translator
from train.data.corpora import default_data_dir, flores_devtest, multi30k_test, read_parallel

TEST_SETS = {"multi30k": multi30k_test, "flores": flores_devtest}


def distinct_sentences(texts: list[str]) -> list[str]:
    """Every sentence of the texts (core/text/sentences.py), once, in the order they first come."""
    parts = (part for text in texts for part in sentence_parts(text))
    return list(dict.fromkeys(part for part in parts if is_sentence(part)))


def evaluate(
    translator: Translator,
    sources: list[str],
    references: list[str],
    target: str,
    beam_size: int = PAPER_DECODING.beam_size,
    alpha: float = PAPER_DECODING.alpha,
    progress: bool = True,
    split_sentences: bool = False,
) -> dict:
    """Translate every source and score against the references; ``split_sentences``: each
    sentence of a source on its own (core/text/sentences.py)."""
    started = time.perf_counter()
    texts = distinct_sentences(sources) if split_sentences else sources
    long = translator.long_sources(texts, target)
    if long.warning():  # never a silent cut: said here, and counted in the scores
        kind = "warning" if long.cut else "note"
        print(f"{kind}: en-{target}: {long.warning()}", file=sys.stderr)
    with tqdm(
        total=len(texts), desc=f"en-{target}", unit="sent", disable=not progress, file=sys.stderr
    ) as bar:
        translations = translator.translate_batch(texts, target, beam_size, alpha, bar.update)
    if split_sentences:
        translated = dict(zip(texts, translations))
        hypotheses = [translate_by_sentence(source, translated.__getitem__) for source in sources]
    else:
        hypotheses = translations
    scores = score_translations(hypotheses, references)
    return {
        **scores,
        "sentences": len(sources),
        "seconds": round(time.perf_counter() - started, 1),
        "target": target,
        "beam_size": beam_size,
        "split_sentences": split_sentences,
        "long_sentences": dataclasses.asdict(long),
        "hypotheses": hypotheses,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.shipping.evaluate", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL), help="model directory (default: %(default)s)"
    )
    parser.add_argument(
        "--target", required=True, help="target language, one of the model's (ours: de, fr)"
    )
    parser.add_argument(
        "--test-set",
        choices=sorted(TEST_SETS),
        help="instead of --src/--ref/--tsv: a standard test set of --data-dir (multi30k: "
        "test_2016_flickr, flores: FLORES-200 devtest)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="where --test-set is read (default: %(default)s)",
    )
    parser.add_argument("--src", type=Path, help="English sources, one per line (.gz accepted)")
    parser.add_argument(
        "--ref", type=Path, help="references, line-aligned with --src (.gz accepted)"
    )
    parser.add_argument(
        "--tsv", type=Path, help="instead of --src/--ref: source TAB reference per line"
    )
    add_decoding_flags(parser)
    parser.add_argument(
        "--limit",
        type=non_negative_int,
        default=0,
        help="score only the first N sentences (0 = all)",
    )
    parser.add_argument(
        "--output", type=Path, help="also write the translations here, one per line"
    )
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="translate each sentence of a line on its own (for sources of several sentences)",
    )
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto", help=DEVICE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.test_set and (args.src or args.ref or args.tsv):
        parser.error("--test-set replaces --src, --ref and --tsv: give one or the other")
    return args


def read_data(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Sources and references, cut to --limit; no sentence at all is an error."""
    if args.test_set:
        sources, references = TEST_SETS[args.test_set](args.data_dir, args.target)
    else:
        sources, references = read_parallel(args.src, args.ref, args.tsv)
    if not sources:
        raise ValueError(f"{args.tsv or args.src or args.test_set}: no sentences to score")
    if args.limit:
        sources, references = sources[: args.limit], references[: args.limit]
    return sources, references


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.output:  # before any work: an output that replaces an input, or cannot be written
            check_output(args.output, [args.src, args.ref, args.tsv, args.model])
        sources, references = read_data(args)
        translator = Translator.load(args.model, resolve_device(args.device))
        if args.target not in translator.languages:
            languages = ", ".join(translator.languages)
            raise ValueError(f"--target {args.target}: the model translates into {languages}")
    except (OSError, ValueError, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    result = evaluate(
        translator,
        sources,
        references,
        args.target,
        args.beam_size,
        args.alpha,
        progress=not args.quiet,
        split_sentences=args.split_sentences,
    )
    hypotheses = result.pop("hypotheses")
    if args.output:  # whole or not at all: a kill mid-write leaves the file as it was
        write_text_atomically(args.output, "".join(h + "\n" for h in hypotheses))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
