"""Corpora in, clean parallel examples out: one preparation shared by training and evaluation.

Expected layout of the data directory (``--data-dir``, or $ATTENTION_LAB_DATA, default
``../shared/data`` beside the repository):

    tatoeba/eng-deu.tsv.gz     English TAB German  (Tatoeba via manythings.org/anki, CC-BY 2.0 FR)
    tatoeba/eng-fra.tsv.gz     English TAB French
    multi30k/{train,val,test_2016_flickr}.{en,de,fr}.gz   line-aligned captions (Multi30k task 1)
    general/en-{de,fr}.tsv.gz  English TAB target: news, Wikipedia, chat (general domain)
    dictionary/ding-sentences.en-de.tsv.gz   a dictionary's example sentences (Ding, GPL-2+)
    dictionary/ding-terms.en-de.tsv.gz       its headwords and phrases, one row per sense
    dictionary/freedict-terms.en-fr.tsv.gz   FreeDict's English-French senses (GPL-2+)
    hansard/en-fr.tsv.gz       English TAB French: Canadian parliamentary debates (research use)
    flores/devtest.{en,de,fr}.gz   FLORES-200 devtest: a test set only, never read for training

Any subset works: missing files are skipped with a note. Each example is (target language, English
source, target text), normalised by core.text.tokenizer.normalize_text, the same function inference
uses.

The mixture gives each corpus a weight: how many times each of its training pairs is seen per
epoch. A weight of 1.5 puts every pair in once and a fixed half of them (by a stable hash) twice.
The dictionaries weigh 0 unless the mixture names them (bare terms are not running text, and a
model fed too many answers like a glossary); they are training data only (no validation pairs),
and every row whose English is one of the term test's held-out terms (held_out_terms: drawn
from the dictionaries themselves with a fixed seed, so no list of their words is committed) is
left out of all of them.

The Hansard weighs 0 unless named too: 927,788 pairs of parliament, fifty times the rest of our
general French, would pull the model towards French and towards parliament. It is training data
only, optionally cleaned of what is parliament's alone (train/data/parliament.py). A corpus can be
tagged: its sources carry DOMAIN_TAG after the language tag in training (train/data/batching.py), so
the model learns what is that corpus's register and what is the language's; inference never
gives the tag (tagged back-translation, Caswell et al. 2019, does the same for synthetic data).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from core.text.tokenizer import LANGUAGES, normalize_text
from train.data.parliament import parliament_cleaned

REPO_ROOT = Path(__file__).resolve().parents[2]
TATOEBA_FILES = {"de": "tatoeba/eng-deu.tsv.gz", "fr": "tatoeba/eng-fra.tsv.gz"}
GENERAL_FILES = {"de": "general/en-de.tsv.gz", "fr": "general/en-fr.tsv.gz"}
DICTIONARY_FILES = {  # corpus -> {target: file}
    "ding-sentences": {"de": "dictionary/ding-sentences.en-de.tsv.gz"},
    "ding-terms": {"de": "dictionary/ding-terms.en-de.tsv.gz"},
    "freedict-terms": {"fr": "dictionary/freedict-terms.en-fr.tsv.gz"},
}
HANSARD_FILES = {"fr": "hansard/en-fr.tsv.gz"}
# corpora read only when the mixture gives them a weight, each with its target languages' files
NAMED_ONLY = {**DICTIONARY_FILES, "hansard": HANSARD_FILES}
CORPORA = ("tatoeba", "multi30k", "general", *NAMED_ONLY)
# how many distinct English terms the term test (train/studies/term_test.py) holds out of each
# dictionary
HELD_OUT_COUNTS = {"ding-terms": 500, "freedict-terms": 200}
HELD_OUT_SEED = 51  # issue #51


class MixtureError(ValueError):
    """A --mixture that names no known corpus or gives a weight that is not a number >= 0."""


def parse_mixture(spec: str) -> dict[str, float]:
    """ "tatoeba=1,multi30k=2,general.fr=4" -> {"tatoeba": 1.0, "multi30k": 2.0, "general.fr": 4.0}

    A key is a corpus, or a corpus and a target language ("general.fr"), which overrides the
    corpus's weight for that language. Corpora not named have weight 1."""
    weights = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, _, value = item.partition("=")
        corpus, _, language = key.strip().partition(".")
        if corpus not in CORPORA or (language and language not in corpus_languages(corpus)):
            raise MixtureError(
                f"{key!r}: a mixture key is one of {', '.join(CORPORA)}, optionally with a "
                f"target language it has ({', '.join(f'general.{lang}' for lang in LANGUAGES)})"
            )
        try:
            weight = float(value)
        except ValueError:
            raise MixtureError(f"{item!r}: the weight after '=' must be a number") from None
        if not weight >= 0:  # also refuses nan
            raise MixtureError(f"{item!r}: a weight is a number >= 0")
        weights[key.strip()] = weight
    return weights


def corpus_languages(corpus: str) -> tuple[str, ...]:
    """The target languages a corpus has: a dictionary or the Hansard its own, the others every
    one."""
    return tuple(NAMED_ONLY.get(corpus, LANGUAGES))


def corpus_weight(weights: dict[str, float], corpus: str, target: str) -> float:
    """The corpus's weight for ``target``; a corpus the mixture does not name weighs 1, a
    dictionary or the Hansard 0 (so that a mixture written before them reads the same corpus)."""
    unnamed = 0.0 if corpus in NAMED_ONLY else 1.0
    return weights.get(f"{corpus}.{target}", weights.get(corpus, unnamed))


def repeat_by_weight(examples: list[Example], weight: float) -> list[Example]:
    """Each example int(weight) times, and once more for a fixed share of them (the fractional
    part of the weight), chosen by a stable hash of the English so every run draws the same."""
    whole = int(weight)
    extra = [e for e in examples if stable_fraction(e.source_text + e.target_text) < weight - whole]
    return examples * whole + extra


def stable_fraction(text: str) -> float:
    """A number in [0, 1) that depends only on the text (the same in every process and run)."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def default_data_dir() -> Path:
    return Path(os.environ.get("ATTENTION_LAB_DATA", REPO_ROOT.parent / "shared" / "data"))


@dataclass(frozen=True)
class Example:
    target: str  # "de" or "fr"
    source_text: str  # English
    target_text: str
    tagged: bool = False  # the source carries the domain tag in training (a tagged corpus's pair)


class CorpusError(ValueError):
    """A corpus file that cannot be read; the message names the file, and the line at fault."""


def read_lines(path: Path) -> list[str]:
    """A UTF-8 text file, gzip-compressed or not, as lines without their \\n or \\r\\n.

    Read as bytes and decoded line by line, so that an error can name the line it is on.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    lines: list[str] = []
    try:
        with opener(path, "rb") as f:
            for raw in f:
                lines.append(raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8"))
    except UnicodeDecodeError as error:
        raise CorpusError(
            f"{path}, line {len(lines) + 1}: not valid UTF-8 "
            f"(byte 0x{error.object[error.start]:02x} at position {error.start + 1})"
        ) from error
    except (OSError, EOFError, zlib.error) as error:  # not gzip, truncated, damaged, unreadable
        raise CorpusError(f"{path}, line {len(lines) + 1}: cannot be read ({error})") from error
    return lines


def read_parallel(
    src: Path | None = None, ref: Path | None = None, tsv: Path | None = None
) -> tuple[list[str], list[str]]:
    """Sources and references from two line-aligned files or one ``source TAB reference`` file."""
    if tsv is not None:
        rows = [line.split("\t") for line in read_lines(tsv)]
        bad = [i + 1 for i, row in enumerate(rows) if len(row) < 2]
        if bad:
            raise CorpusError(f"{tsv}: line {bad[0]} has no TAB between source and reference")
        return [row[0] for row in rows], [row[1] for row in rows]
    if src is None or ref is None:
        raise ValueError("give --tsv FILE, or both --src FILE and --ref FILE")
    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise CorpusError(f"{src} has {len(sources)} lines but {ref} has {len(references)}")
    return sources, references


def keep_pair(source: str, target: str, max_chars: int = 300, max_ratio: float = 3.0) -> bool:
    """Drop broken pairs: an empty side, an overlong side, or an extreme length ratio."""
    if not source or not target or len(source) > max_chars or len(target) > max_chars:
        return False
    short, long = sorted((len(source), len(target)))
    return long <= max_ratio * short + 10


def in_validation(english: str, fraction: float) -> bool:
    """Split by English sentence, by a stable hash: all translations of one English sentence
    land on the same side, so no English sentence is seen in both training and validation."""
    return stable_fraction(english) < fraction


@dataclass
class Corpus:
    train: list[Example]
    valid: list[Example]  # Tatoeba and general held out by English sentence + Multi30k val
    notes: list[str]  # what was read, skipped and filtered, for the log and the model card


def load_corpus(
    data_dir: Path,
    valid_fraction: float = 0.01,
    limit: int | None = None,
    mixture: dict[str, float] | None = None,
    hansard_tag: bool = False,
    hansard_clean: bool = False,
) -> Corpus:
    """Read every corpus found in data_dir, normalise, filter, de-duplicate and split.

    limit keeps the first ``limit`` examples of each file (for dry runs); mixture weighs each
    corpus's training pairs (parse_mixture); the validation pairs are never repeated. With
    hansard_tag the Hansard's pairs carry the domain tag; hansard_clean takes what is
    parliament's alone out of them (train/data/parliament.py)."""
    weights = mixture or {}
    train: list[Example] = []
    valid: list[Example] = []
    notes: list[str] = []
    for corpus, files in (("tatoeba", TATOEBA_FILES), ("general", GENERAL_FILES)):
        for target, name in files.items():
            path = data_dir / name
            if not path.is_file():
                notes.append(f"skipped {path}: not found")
                continue
            pairs = read_tsv_pairs(path, limit)
            kept = clean_pairs(target, pairs)
            held_out = [e for e in kept if in_validation(e.source_text, valid_fraction)]
            trained = [e for e in kept if not in_validation(e.source_text, valid_fraction)]
            weight = corpus_weight(weights, corpus, target)
            valid.extend(held_out)
            train.extend(repeat_by_weight(trained, weight))
            notes.append(
                f"{name}: {len(pairs)} pairs, {len(kept)} kept after cleaning, weight {weight:g}"
            )
    for target in LANGUAGES:
        for split, bucket in (("train", train), ("val", valid)):
            src, ref = (
                data_dir / f"multi30k/{split}.en.gz",
                data_dir / f"multi30k/{split}.{target}.gz",
            )
            if not (src.is_file() and ref.is_file()):
                notes.append(f"skipped multi30k {split} en-{target}: not found")
                continue
            sources, references = read_parallel(src, ref)
            kept = clean_pairs(target, list(zip(sources[:limit], references[:limit])))
            weight = corpus_weight(weights, "multi30k", target) if split == "train" else 1.0
            bucket.extend(repeat_by_weight(kept, weight))
            notes.append(
                f"multi30k/{split} en-{target}: {len(sources[:limit])} pairs, {len(kept)} kept"
                + (f", weight {weight:g}" if split == "train" else "")
            )
    train.extend(dictionary_examples(data_dir, weights, limit, notes))
    train.extend(hansard_examples(data_dir, weights, limit, hansard_tag, hansard_clean, notes))
    return Corpus(train, valid, notes)


def term_key(english: str) -> str:
    """What makes two rows the same English term: normalised text, case folded ("Eel", "eel")."""
    return normalize_text(english).casefold()


def dictionary_senses(data_dir: Path, corpus: str) -> dict[str, tuple[str, list[str]]]:
    """term_key -> (the English as first written, every listed sense), cleaned as training cleans
    the dictionary's pairs; empty when the file is missing."""
    target, name = next(iter(DICTIONARY_FILES[corpus].items()))
    path = data_dir / name
    if not path.is_file():
        return {}
    senses: dict[str, tuple[str, list[str]]] = {}
    for example in clean_pairs(target, read_tsv_pairs(path)):
        _, listed = senses.setdefault(term_key(example.source_text), (example.source_text, []))
        listed.append(example.target_text)
    return senses


def choose_terms(keys: list[str], count: int, seed: int = HELD_OUT_SEED) -> list[str]:
    """``count`` of the keys at random (all of them when there are fewer), the same for the same
    keys and seed in every run, whatever order they were read in."""
    return random.Random(seed).sample(sorted(keys), min(count, len(keys)))


def held_out_terms(data_dir: Path) -> dict[str, list[str]]:
    """The term test's held-out terms, per dictionary: HELD_OUT_COUNTS of its distinct English
    terms (term_key), drawn with HELD_OUT_SEED from the whole file (never from a dry run's first
    lines), in the order drawn."""
    return {
        corpus: choose_terms(list(dictionary_senses(data_dir, corpus)), count)
        for corpus, count in HELD_OUT_COUNTS.items()
    }


def dictionary_examples(
    data_dir: Path, weights: dict[str, float], limit: int | None, notes: list[str]
) -> list[Example]:
    """The training pairs of each dictionary the mixture gives a weight above 0, without any
    row whose English is a held-out term (in every dictionary: the test's terms never train)."""
    weighed = [  # a dictionary of weight 0 is not read at all: the default corpus stays as it was
        (target, name, corpus_weight(weights, corpus, target))
        for corpus, files in DICTIONARY_FILES.items()
        for target, name in files.items()
        if corpus_weight(weights, corpus, target)
    ]
    if not weighed:
        return []
    held_out = {key for keys in held_out_terms(data_dir).values() for key in keys}
    examples = []
    for target, name, weight in weighed:
        path = data_dir / name
        if not path.is_file():
            notes.append(f"skipped {path}: not found")
            continue
        pairs = read_tsv_pairs(path, limit)
        kept = [e for e in clean_pairs(target, pairs) if term_key(e.source_text) not in held_out]
        examples.extend(repeat_by_weight(kept, weight))
        notes.append(
            f"{name}: {len(pairs)} pairs, {len(kept)} kept after cleaning and leaving out "
            f"the held-out terms, weight {weight:g}"
        )
    return examples


def hansard_examples(
    data_dir: Path,
    weights: dict[str, float],
    limit: int | None,
    tag: bool,
    clean: bool,
    notes: list[str],
) -> list[Example]:
    """The Hansard's training pairs when the mixture gives it a weight above 0: cleaned of what
    is parliament's alone (``clean``), carrying the domain tag (``tag``)."""
    weight = corpus_weight(weights, "hansard", "fr")
    path = data_dir / HANSARD_FILES["fr"]
    if not weight:
        return []
    if not path.is_file():
        notes.append(f"skipped {path}: not found")
        return []
    pairs = read_tsv_pairs(path, limit)
    chosen = parliament_cleaned(pairs) if clean else pairs
    kept = [replace(e, tagged=tag) for e in clean_pairs("fr", chosen)]
    notes.append(
        f"{HANSARD_FILES['fr']}: {len(pairs)} pairs, "
        + (f"{len(chosen)} after taking out parliament's formulas, " if clean else "")
        + f"{len(kept)} kept after cleaning, weight {weight:g}"
        + (", sources tagged" if tag else "")
    )
    return repeat_by_weight(kept, weight)


def read_tsv_pairs(path: Path, limit: int | None = None) -> list[list[str]]:
    """The (English, translation) pairs of a ``source TAB target ...`` file, its first ``limit``
    lines; a line without a TAB is skipped."""
    return [line.split("\t")[:2] for line in read_lines(path)[:limit] if "\t" in line]


def clean_pairs(target: str, pairs: list) -> list[Example]:
    """Normalise, filter and de-duplicate (source, target) pairs, keeping their first order."""
    seen = set()
    kept = []
    for source, translation in pairs:
        example = Example(target, normalize_text(source), normalize_text(translation))
        if keep_pair(example.source_text, example.target_text) and example not in seen:
            seen.add(example)
            kept.append(example)
    return kept


def multi30k_test(data_dir: Path, target: str) -> tuple[list[str], list[str]]:
    """The standard in-domain test set, test_2016_flickr, English -> target."""
    return read_parallel(
        data_dir / "multi30k/test_2016_flickr.en.gz",
        data_dir / f"multi30k/test_2016_flickr.{target}.gz",
    )


def general_validation(
    data_dir: Path, target: str, valid_fraction: float = 0.01
) -> tuple[list[str], list[str]]:
    """The general-domain pairs load_corpus holds out for validation, English -> target."""
    pairs = read_tsv_pairs(data_dir / GENERAL_FILES[target])
    held_out = [
        e for e in clean_pairs(target, pairs) if in_validation(e.source_text, valid_fraction)
    ]
    return [e.source_text for e in held_out], [e.target_text for e in held_out]


def multi30k_validation(data_dir: Path, target: str) -> tuple[list[str], list[str]]:
    """Multi30k val, the in-domain validation set, English -> target."""
    return read_parallel(data_dir / "multi30k/val.en.gz", data_dir / f"multi30k/val.{target}.gz")


def flores_devtest(data_dir: Path, target: str) -> tuple[list[str], list[str]]:
    """The standard general-domain test set, FLORES-200 devtest, English -> target."""
    return read_parallel(
        data_dir / "flores/devtest.en.gz", data_dir / f"flores/devtest.{target}.gz"
    )
