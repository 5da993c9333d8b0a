"""Language leakage: German words in French translations, and French words in German ones.

    python -m train.studies.leakage --model pretrained/en-de-fr                  # print JSON
    python -m train.studies.leakage --model pretrained/en-de-fr --card pretrained/en-de-fr

The rule: a word of a translation into one language (a run of letters, case folded) is a word of
the other language when it occurs in the other language's side of the training sentences (the
default mixture's corpora: Tatoeba, Multi30k train, general), never in its own language's side,
and not in the English source sentence (a name copied from the source is no leak). FLORES-200
devtest is translated with the paper's beam 4 and alpha 0.6; its human references are counted by the
same rule, as the rule's own false alarms.

Beside it, for French, parliament's register (issue #61): the translations that say "Monsieur le
Président", "député(e)" or "honorable" where the English source has no "Speaker", "member" or
"honourable" (a Hansard-trained model's habit, not the source's meaning).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import torch

from core.decoding.search import PAPER_DECODING
from core.text.tokenizer import LANGUAGES
from core.translator import Translator
from train.data.corpora import flores_devtest, load_corpus
from train.studies.study_args import command_line, publish, study_parser

WORD = re.compile(r"[^\W\d_]+")  # a run of letters
SHOWN = 10  # the most frequent leaked words a count lists
REGISTER = re.compile(r"Monsieur le Président|\bdéputée?s?\b|\bhonorables?\b", re.IGNORECASE)
REGISTER_SOURCE = re.compile(r"\b(?:speaker|members?|honou?rable)\b", re.IGNORECASE)


def words(text: str) -> list[str]:
    return [word.casefold() for word in WORD.findall(text)]


def training_vocabularies(data_dir: Path, limit: int | None = None) -> dict[str, set[str]]:
    """Each target language's words in the training sentences of the default mixture."""
    vocabularies: dict[str, set[str]] = {language: set() for language in LANGUAGES}
    for example in load_corpus(data_dir, limit=limit).train:
        vocabularies[example.target].update(words(example.target_text))
    return vocabularies


def leaked_words(translation: str, source: str, own: set[str], other: set[str]) -> list[str]:
    """The translation's words of the other language, by the rule above."""
    copied = set(words(source))
    return [w for w in words(translation) if w in other and w not in own and w not in copied]


def leakage_counts(
    translations: list[str], sources: list[str], own: set[str], other: set[str]
) -> dict:
    """How many of the translations hold a word of the other language, how many such words
    there are, and the most frequent."""
    leaks = [leaked_words(t, s, own, other) for t, s in zip(translations, sources)]
    counts = Counter(word for leak in leaks for word in leak)
    return {
        "sentences": len(translations),
        "sentences_with_leak": sum(bool(leak) for leak in leaks),
        "words": sum(counts.values()),
        "most_frequent": [f"{word} {n}" for word, n in counts.most_common(SHOWN)],
    }


def register_count(translations: list[str], sources: list[str]) -> dict:
    """How many French translations speak parliament's register that their source does not
    (REGISTER without REGISTER_SOURCE), with the first few of them."""
    hits = [
        (source, translation)
        for translation, source in zip(translations, sources)
        if REGISTER.search(translation) and not REGISTER_SOURCE.search(source)
    ]
    return {
        "sentences": len(translations),
        "sentences_with_register": len(hits),
        "examples": [f"{source} -> {translation}" for source, translation in hits[:3]],
    }


def leakage_record(translator: Translator, data_dir: Path, limit: int | None, command: str):
    """card.json's ``leakage``: per target language, the counts in the model's FLORES devtest
    translations and in the references."""
    vocabularies = training_vocabularies(data_dir)
    results = []
    for target in sorted(LANGUAGES):
        other = next(language for language in LANGUAGES if language != target)
        sources, references = (lines[:limit] for lines in flores_devtest(data_dir, target))
        outputs = translator.translate_batch(sources, target)
        own, foreign = vocabularies[target], vocabularies[other]
        result = {
            "pair": f"en-{target}",
            "words_of": other,
            "translations": leakage_counts(outputs, sources, own, foreign),
            "references": leakage_counts(references, sources, own, foreign),
        }
        if target == "fr":
            result["register"] = {
                "translations": register_count(outputs, sources),
                "references": register_count(references, sources),
            }
        results.append(result)
    return {
        "command": command,
        "test_set": "FLORES-200 devtest",
        "beam_size": PAPER_DECODING.beam_size,
        "alpha": PAPER_DECODING.alpha,
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = study_parser("python -m train.studies.leakage", __doc__, "the counts")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="count the first 10 FLORES sentences per language only, and write no card",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    command = command_line("python -m train.studies.leakage", argv)
    translator = Translator.load(args.model)
    limit = 10 if args.dry_run else None
    record = leakage_record(translator, args.data_dir, limit, command)
    publish(record, "leakage", None if args.dry_run else args.card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
