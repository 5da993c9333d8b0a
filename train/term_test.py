"""The term test: does a model translate dictionary terms whose entries it never trained on?

    python -m train.term_test --model pretrained/en-de-fr                # score, print JSON
    python -m train.term_test --model pretrained/en-de-fr --card pretrained/en-de-fr
    python -m train.term_test --choose      # write the held-out list (once; fixed seed)

The held-out list (train/held_out_terms.tsv, HELD_OUT_TERMS) names 500 English terms of Ding's
en-de terms and 200 of FreeDict's en-fr terms, drawn at random with a fixed seed from each
dictionary's distinct English terms; the trainer leaves every row of them out of training
(train/data.py). Only the English terms are kept in the repository; their senses (one row of the
dictionary per sense, several rows for one English term) are read from --data-dir.

Each term is translated twice (Translator.translate_batch, beam 4, length penalty 0.6): alone,
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

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from core.text.tokenizer import normalize_text
from core.translator import Translator
from train.data import (
    DICTIONARY_FILES,
    HELD_OUT_TERMS,
    clean_pairs,
    load_corpus,
    read_lines,
    read_tsv_pairs,
    term_key,
)
from train.study_args import command_line, publish, study_parser

TERM_CORPORA = ("ding-terms", "freedict-terms")  # the dictionaries the test draws terms from
HELD_OUT_COUNTS = {"ding-terms": 500, "freedict-terms": 200}
SEED = 51  # issue #51
CARRIER = "The word is {}."
# the carrier's translation without the term, as the shipped model writes it
CARRIER_TRANSLATIONS = {"de": "Das Wort ist", "fr": "Le mot est"}
BEAM_SIZE, LENGTH_PENALTY = 4, 0.6


@dataclass(frozen=True)
class Term:
    corpus: str
    target: str
    english: str
    senses: tuple[str, ...]
    in_sentences: bool = False  # its English occurs in the training sentences (as whole words)


def dictionary_senses(data_dir: Path, corpus: str) -> dict[str, tuple[str, list[str]]]:
    """term_key -> (the English as first written, every listed sense), cleaned as the trainer
    cleans the dictionary's pairs."""
    target, name = next(iter(DICTIONARY_FILES[corpus].items()))
    senses: dict[str, tuple[str, list[str]]] = {}
    for example in clean_pairs(target, read_tsv_pairs(data_dir / name)):
        _, listed = senses.setdefault(term_key(example.source_text), (example.source_text, []))
        listed.append(example.target_text)
    return senses


def choose_terms(keys: list[str], count: int, seed: int = SEED) -> list[str]:
    """``count`` of the keys at random, the same for the same keys and seed in every run."""
    return random.Random(seed).sample(sorted(keys), count)


def write_held_out(data_dir: Path, path: Path = HELD_OUT_TERMS) -> None:
    lines = ["corpus\tterm"]
    for corpus, count in HELD_OUT_COUNTS.items():
        senses = dictionary_senses(data_dir, corpus)
        lines += [f"{corpus}\t{senses[key][0]}" for key in choose_terms(list(senses), count)]
    path.write_text("\n".join(lines) + "\n")


def held_out_test(data_dir: Path, path: Path = HELD_OUT_TERMS) -> list[Term]:
    """The held-out terms with their senses from the dictionaries in data_dir, each marked by
    whether the English of the sentence corpora (the default mixture's training pairs) has it:
    the dictionary rows are held out, not the words."""
    rows = [line.split("\t") for line in read_lines(path)[1:]]
    sentences = sorted({e.source_text for e in load_corpus(data_dir).train})
    shown = sentences_with_words(sentences)
    terms = []
    for corpus in TERM_CORPORA:
        senses = dictionary_senses(data_dir, corpus)
        target = next(iter(DICTIONARY_FILES[corpus]))
        for _, english in (row for row in rows if row[0] == corpus):
            first_written, listed = senses[term_key(english)]
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
        alone = translator.translate_batch(english, target, BEAM_SIZE, LENGTH_PENALTY)
        carried = translator.translate_batch(
            [CARRIER.format(text) for text in english], target, BEAM_SIZE, LENGTH_PENALTY
        )
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
        "held_out": str(HELD_OUT_TERMS.relative_to(HELD_OUT_TERMS.parents[1])),
        "seed": SEED,
        "carrier": CARRIER,
        "carrier_translations": CARRIER_TRANSLATIONS,
        "beam_size": BEAM_SIZE,
        "length_penalty": LENGTH_PENALTY,
        "results": score_terms(translator, terms),
    }


def main(argv: list[str] | None = None) -> int:
    parser = study_parser("python -m train.term_test", __doc__, "the result")
    parser.add_argument(
        "--choose",
        action="store_true",
        help=f"draw the held-out terms (seed {SEED}) and write {HELD_OUT_TERMS.name}, then stop",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="score the first 5 terms of each dictionary only, and write no card",
    )
    args = parser.parse_args(argv)
    if args.choose:
        write_held_out(args.data_dir)
        print(f"wrote {HELD_OUT_TERMS}")
        return 0
    torch.set_num_threads(args.threads)
    terms = held_out_test(args.data_dir)
    if args.dry_run:
        terms = [t for corpus in TERM_CORPORA for t in [t for t in terms if t.corpus == corpus][:5]]
    command = command_line("python -m train.term_test", argv)
    record = term_test_record(Translator.load(args.model), terms, command)
    publish(record, "term_test", None if args.dry_run else args.card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
