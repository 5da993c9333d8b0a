"""How a model's vocabulary cuts the dictionaries: pieces per word, and common words cut up.

    python -m train.studies.term_pieces --model pretrained/en-de-fr

Pieces per word (whitespace words) of each side of each dictionary file under the model's
SentencePiece vocabulary, and the common words it cuts into more than one piece: one-word terms
of the dictionary that occur, written as the dictionary writes them (German nouns with their
capital), at least --min-count times in that language's side of the sentence corpora the default
mixture trains on (Tatoeba, Multi30k train, general). Prints one JSON object.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from core.cli import non_negative_int, positive_int
from core.files.model_dir import open_model_dir
from core.text.tokenizer import Tokenizer
from train.data.corpora import DICTIONARY_FILES, load_corpus, read_tsv_pairs
from train.studies.study_args import study_parser

WORD = re.compile(r"[^\W\d_]+")  # a run of letters


def pieces_per_word(tokenizer: Tokenizer, texts: list[str]) -> float:
    words = sum(len(text.split()) for text in texts)
    return sum(len(tokenizer.encode(text)) for text in texts) / max(1, words)


def word_counts(texts: list[str]) -> Counter:
    """How often each word (a run of letters, as written) occurs in the texts."""
    return Counter(word for text in texts for word in WORD.findall(text))


def common_words(terms: list[str], counts: Counter, min_count: int) -> list[str]:
    """The one-word terms occurring at least min_count times, most frequent first."""
    words = {term for term in terms if WORD.fullmatch(term) and counts[term] >= min_count}
    return sorted(words, key=lambda word: (-counts[word], word))


def cut_words(tokenizer: Tokenizer, words: list[str], counts: Counter) -> list[dict]:
    """The words the vocabulary cuts into more than one piece, with their pieces."""
    cut = []
    for word in words:
        pieces = tokenizer.pieces(tokenizer.encode(word))
        if len(pieces) > 1:
            cut.append({"word": word, "count": counts[word], "pieces": " ".join(pieces)})
    return cut


def profile(
    tokenizer: Tokenizer, data_dir: Path, min_count: int, shown: int, limit: int | None = None
) -> dict:
    """Per dictionary file and side: pieces per word and the common words cut (``limit``: the
    first lines of each file only)."""
    corpus = load_corpus(data_dir, limit=limit)
    english = sorted({e.source_text for e in corpus.train})
    targets = {
        language: sorted({e.target_text for e in corpus.train if e.target == language})
        for language in ("de", "fr")
    }
    counts = {"en": word_counts(english)} | {k: word_counts(v) for k, v in targets.items()}
    result = {}
    for corpus_name, files in DICTIONARY_FILES.items():
        for target, name in files.items():
            pairs = read_tsv_pairs(data_dir / name, limit)
            for language, texts in (("en", [p[0] for p in pairs]), (target, [p[1] for p in pairs])):
                common = common_words(texts, counts[language], min_count)
                cut = cut_words(tokenizer, common, counts[language])
                result[f"{corpus_name} {language}"] = {
                    "pieces_per_word": round(pieces_per_word(tokenizer, texts), 3),
                    "common_words": len(common),
                    "common_words_cut": len(cut),
                    "most_frequent_cut": cut[:shown],
                }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = study_parser("python -m train.studies.term_pieces", __doc__)
    parser.add_argument(
        "--min-count",
        type=positive_int,
        default=50,
        help="times a word occurs in the sentence corpora to count as common (default 50)",
    )
    parser.add_argument(
        "--show",
        type=non_negative_int,
        default=15,
        help="cut common words listed per side (default 15)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="read the first 2,000 lines of each file only"
    )
    args = parser.parse_args(argv)
    tokenizer = Tokenizer(open_model_dir(args.model).tokenizer_file)
    limit = 2000 if args.dry_run else None
    result = profile(tokenizer, args.data_dir, args.min_count, args.show, limit)
    print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
