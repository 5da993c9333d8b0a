"""Choose the vocabulary by measurement, and record it in a model card.

Two measurements: what a vocabulary costs on general-domain text (pieces per word on FLORES-200
devtest, only counted, never trained on) and how it cuts the terms a lecturer types; and short
training runs from scratch that differ only in their vocabulary, given the same minutes side by
side on one machine, compared by their validation curves (as train/studies/width_study.py does for
width).

    for V in 8000 16000; do
      python -m train --preset cpu --fresh --vocab-size $V --out runs/v$V --max-minutes 100
    done
    python -m train.studies.vocab_study runs/v8000 runs/v16000 --reference pretrained/en-de-fr \
        --reference-learnt-on "tatoeba, multi30k" --card pretrained/en-de-fr

``--reference`` adds the vocabulary of a model directory without a training curve: the shipped
model's, learnt before the general-domain data came (its card does not say on what, as a
continued run keeps the vocabulary of the model it started from: hence the second flag).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli import positive_int
from core.files.model_dir import ModelDir, open_model_dir
from core.text.tokenizer import LANGUAGES, Tokenizer
from train.data.corpora import (
    CORPORA,
    corpus_weight,
    default_data_dir,
    flores_devtest,
    parse_mixture,
)
from train.loop.run_folder import RunDir
from train.shipping.card import write_card
from train.shipping.card_sections.vocabulary import FLORES_LANGUAGES, vocabulary_study_section
from train.studies.width_study import study_run, unfinished

# Terms from issue #27: the paper's subject, a name, a long German compound, in all three languages
TERMS = (
    "attention",
    "deep learning",
    "machine translation",
    "Salt Lake City",
    "Aufmerksamkeit",
    "maschinelle Übersetzung",
    "Wirtschaftsraum",
    "apprentissage profond",
)


def pieces_per_word(tokenizer: Tokenizer, sentences: list[str]) -> float:
    """Pieces (without special tokens) per whitespace-separated word: 1.0 is a piece a word."""
    pieces = sum(len(tokenizer.encode(sentence)) for sentence in sentences)
    return pieces / sum(len(sentence.split()) for sentence in sentences)


def flores_sentences(data_dir: Path, limit: int | None) -> dict[str, list[str]]:
    """FLORES-200 devtest by language (en, de, fr), the first ``limit`` lines of each."""
    english, german = flores_devtest(data_dir, "de")
    french = flores_devtest(data_dir, "fr")[1]
    by_language = dict(zip(FLORES_LANGUAGES, (english, german, french)))
    return {language: lines[:limit] for language, lines in by_language.items()}


def vocabulary_profile(
    name: str, tokenizer: Tokenizer, learnt_on: str, flores: dict[str, list[str]]
) -> dict:
    """A vocabulary's size, its pieces per word on each FLORES language and its cut of TERMS."""
    return {
        "name": name,
        "learnt_on": learnt_on,
        "pieces": len(tokenizer),
        "pieces_per_word": {
            language: round(pieces_per_word(tokenizer, lines), 4)
            for language, lines in flores.items()
        },
        "terms": {term: " ".join(tokenizer.pieces(tokenizer.encode(term))) for term in TERMS},
    }


def corpora_of(card: dict) -> str:
    """The corpora a run's vocabulary was learnt on: those its mixture gave a weight above 0
    for some target (a corpus the mixture does not name has weight 1)."""
    # train.shipping.card's summary keeps the recipe; the trainer, its config
    training = card["training"]
    weights = parse_mixture((training.get("recipe") or training["train_config"])["mixture"])
    return ", ".join(
        corpus
        for corpus in CORPORA
        if any(corpus_weight(weights, corpus, target) > 0 for target in LANGUAGES)
    )


class NotFromScratch(ValueError):
    """A run of the study that continued another model: its vocabulary is that model's."""


def study(
    runs: list[Path],
    data_dir: Path,
    reference: tuple[Path, str] | None = None,
    limit: int | None = None,
) -> dict:
    """The card's ``vocabulary_study``: every vocabulary's profile (the reference, a model folder
    and what its vocabulary was learnt on, first) and each run's training curve
    (width_study.study_run) with its vocabulary size."""
    cards = {run: RunDir(run).model_dir.read_card() for run in runs}
    for run, card in cards.items():
        if card["training"].get("initialised_from"):
            raise NotFromScratch(f"{run} continued {card['training']['initialised_from']}")
    flores = flores_sentences(data_dir, limit)
    profiles = []
    if reference:
        folder, learnt_on = reference
        tokenizer = open_model_dir(folder).load_tokenizer()
        profiles.append(vocabulary_profile(folder.name, tokenizer, learnt_on, flores))
    curves = []
    for run, card in cards.items():
        tokenizer = RunDir(run).model_dir.load_tokenizer()
        profiles.append(vocabulary_profile(run.name, tokenizer, corpora_of(card), flores))
        curves.append({**study_run(run), "vocab_size": len(tokenizer)})
    return {"vocabularies": profiles, "runs": curves}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.studies.vocab_study", description=__doc__.split("\n")[0]
    )
    parser.add_argument("runs", type=Path, nargs="*", help="the study's training run folders")
    parser.add_argument(
        "--reference",
        type=Path,
        help="a model folder whose vocabulary is profiled too, without a training curve",
    )
    parser.add_argument(
        "--reference-learnt-on",
        default="earlier data",
        help="what the reference's vocabulary was learnt on, for the table",
    )
    parser.add_argument(
        "--card", type=Path, help="model folder whose card gets the study (default: only print)"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder with flores/"
    )
    parser.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="count only the first N FLORES lines (tests)",
    )
    args = parser.parse_args(argv)
    if not args.runs and not args.reference:
        parser.error("give at least one run folder or --reference")
    if problems := unfinished(args.runs):
        parser.error("; ".join(problems) + " (a model folder goes to --reference)")
    reference = (args.reference, args.reference_learnt_on) if args.reference else None
    found = study(args.runs, args.data_dir, reference, args.limit)
    if args.card:
        model_dir = ModelDir(args.card)
        card = model_dir.read_card()
        card["vocabulary_study"] = found
        write_card(model_dir, card)
    print("\n".join(vocabulary_study_section(found)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
