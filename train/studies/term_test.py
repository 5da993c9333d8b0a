"""The term test: does a model translate dictionary terms whose entries it never trained on?

    python -m train.studies.term_test --model pretrained/en-de-fr                # score, print JSON
    python -m train.studies.term_test --model pretrained/en-de-fr --card pretrained/en-de-fr

The held-out terms (train/data/corpora.py held_out_terms) are 500 English terms of Ding's en-de
terms and 200 of FreeDict's en-fr terms, drawn at random with a fixed seed from each dictionary's
distinct English terms whenever they are needed; the trainer leaves every row of them out of
training. Nothing of the dictionaries (GPL-2+) is kept in the repository: the terms and their senses
(one row of the dictionary per sense, several rows for one English term) are read from --data-dir.

Each term is translated twice (Translator.translate_batch, the paper's beam 4 and alpha 0.6): alone,
and inside one fixed carrier sentence, "The word is X." A translation matches when one of the
term's listed senses occurs in it as whole words, case-insensitively, after normalize_text (the
output's own normalisation): alone, anywhere in the output ("der Fuchs" matches "Fuchs"); in the
carrier, in what follows the carrier's own translation ("Das Wort ist" / "Le mot est") when the
output starts with it, so that the frame's words never count as the term's (else the whole
output is searched). The score is the share of terms matched, among all of them and among those
whose English never occurs (as whole words) in the English of the sentence corpora: the
dictionary rows are held out, not the words, and most of FreeDict's are everyday words.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from core.decoding.search import PAPER_DECODING
from core.text.tokenizer import normalize_text
from core.translator import Translator
from train.data.corpora import (
    DICTIONARY_FILES,
    HELD_OUT_COUNTS,
    HELD_OUT_SEED,
    dictionary_senses,
    held_out_terms,
    load_corpus,
)
from train.studies.study_args import command_line, publish, study_parser

TERM_CORPORA = tuple(HELD_OUT_COUNTS)  # the dictionaries the test draws terms from
CARRIER = "The word is {}."
# the carrier's translation without the term, as the shipped model writes it
CARRIER_TRANSLATIONS = {"de": "Das Wort ist", "fr": "Le mot est"}


@dataclass(frozen=True)
class Term:
    corpus: str
    target: str
    english: str
    senses: tuple[str, ...]
    in_sentences: bool = False  # its English occurs in the training sentences (as whole words)


def held_out_test(data_dir: Path) -> list[Term]:
    """The held-out terms with their senses from the dictionaries in data_dir, each marked by
    whether the English of the sentence corpora (the default mixture's training pairs) has it:
    the dictionary rows are held out, not the words."""
    sentences = sorted({e.source_text for e in load_corpus(data_dir).train})
    shown = sentences_with_words(sentences)
    terms = []
    for corpus, keys in held_out_terms(data_dir).items():
        senses = dictionary_senses(data_dir, corpus)
        target = next(iter(DICTIONARY_FILES[corpus]))
        for key in keys:
            first_written, listed = senses[key]
            seen = any(
                contains_sense(sentences[i], (first_written,))
                for i in candidate_sentences(first_written, shown)
            )
            terms.append(Term(corpus, target, first_written, tuple(dict.fromkeys(listed)), seen))
    return terms


def words_of(text: str) -> list[str]:
    return re.findall(r"\w+", normalize_text(text).casefold())


def sentences_with_words(sentences: list[str]) -> dict[str, set[int]]:
    """Each word (case folded) -> the indices of the sentences that hold it."""
    index: dict[str, set[int]] = {}
    for i, sentence in enumerate(sentences):
        for word in words_of(sentence):
            index.setdefault(word, set()).add(i)
    return index


def candidate_sentences(term: str, index: dict[str, set[int]]) -> set[int]:
    """The sentences that hold every word of the term (where it may occur whole)."""
    found = [index.get(word, set()) for word in words_of(term)]
    return set.intersection(*found) if found else set()


def contains_sense(translation: str, senses: tuple[str, ...]) -> bool:
    """Whether a sense occurs in the translation as whole words, case-insensitively."""
    text = normalize_text(translation).casefold()
    return any(
        re.search(rf"(?<!\w){re.escape(normalize_text(sense).casefold())}(?!\w)", text)
        for sense in senses
    )


def term_part_of_carrier(translation: str, target: str) -> str:
    """What follows the carrier's own translation ("Das Wort ist Fuchs." -> "Fuchs."), or the
    whole translation when the model wrote the frame another way."""
    text = normalize_text(translation)
    frame = re.match(rf"(?i){re.escape(CARRIER_TRANSLATIONS[target])}(?!\w) ?", text)
    return text[frame.end() :] if frame else text


def share(hits: list[bool]) -> float | None:
    """The share of hits, to 4 places; None for no terms at all."""
    return round(sum(hits) / len(hits), 4) if hits else None


def score_terms(translator: Translator, terms: list[Term]) -> list[dict]:
    """Per dictionary: the share of its terms matched alone and in the carrier, the same for the
    terms the training sentences never show, and a few examples."""
    results = []
    for corpus in TERM_CORPORA:
        chosen = [term for term in terms if term.corpus == corpus]
        if not chosen:
            continue
        target = chosen[0].target
        english = [term.english for term in chosen]
        alone = translator.translate_batch(english, target)
        carried = translator.translate_batch([CARRIER.format(text) for text in english], target)
        alone_hits = [contains_sense(out, term.senses) for out, term in zip(alone, chosen)]
        carrier_hits = [
            contains_sense(term_part_of_carrier(out, target), term.senses)
            for out, term in zip(carried, chosen)
        ]
        unseen = [i for i, term in enumerate(chosen) if not term.in_sentences]
        results.append(
            {
                "dictionary": corpus,
                "pair": f"en-{target}",
                "terms": len(chosen),
                "alone": share(alone_hits),
                "carrier": share(carrier_hits),
                "unseen_terms": len(unseen),
                "unseen_alone": share([alone_hits[i] for i in unseen]),
                "unseen_carrier": share([carrier_hits[i] for i in unseen]),
                "carrier_frame_kept": share(
                    [term_part_of_carrier(out, target) != out for out in carried]
                ),
                "examples": [
                    {
                        "term": term.english,
                        "senses": list(term.senses[:3]),
                        "alone": a,
                        "carrier": c,
                    }
                    for term, a, c in list(zip(chosen, alone, carried))[:5]
                ],
            }
        )
    return results


def term_test_record(translator: Translator, terms: list[Term], command: str) -> dict:
    """card.json's ``term_test``: the scores and how they were made."""
    return {
        "command": command,
        "held_out": ", ".join(f"{count} of {corpus}" for corpus, count in HELD_OUT_COUNTS.items()),
        "seed": HELD_OUT_SEED,
        "carrier": CARRIER,
        "carrier_translations": CARRIER_TRANSLATIONS,
        "beam_size": PAPER_DECODING.beam_size,
        "alpha": PAPER_DECODING.alpha,
        "results": score_terms(translator, terms),
    }


def main(argv: list[str] | None = None) -> int:
    parser = study_parser("python -m train.studies.term_test", __doc__, "the result")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="score the first 5 terms of each dictionary only, and write no card",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    terms = held_out_test(args.data_dir)
    if args.dry_run:
        terms = [t for corpus in TERM_CORPORA for t in [t for t in terms if t.corpus == corpus][:5]]
    command = command_line("python -m train.studies.term_test", argv)
    record = term_test_record(Translator.load(args.model), terms, command)
    publish(record, "term_test", None if args.dry_run else args.card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
