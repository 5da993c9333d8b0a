"""Each epoch's training data: the corpus, plus examples made from it that teach what it lacks.

The corpora are short (Tatoeba's median English sentence has 6 words), almost free of years and
place names, and their names are nearly all "Tom" and "Mary". So the model never had to carry a
long sentence to its end or copy an unseen name or number piece by piece. Three remedies, each
drawn afresh every epoch from a seeded generator (a resumed run rebuilds the same epoch):

- concatenation: two random pairs of one language joined into one longer pair (Nguyen et al.
  2021, "Data augmentation by concatenation for low-resource translation");
- copies: a name or number that a pair carries unchanged from English into the target is replaced
  on both sides by an invented name or a random number, so that copying is learned as copying
  (numbers, in 1% of the pairs, can get several copies an epoch);
- British spellings: Tatoeba writes American English ("neighbor" 318 times, "neighbour" 13), so a
  pair with an American spelling gets a copy whose English side is spelled the British way;
- subword sampling (train/data/batching.py): pieces drawn from the unigram model's distribution over
  segmentations instead of its single best one (Kudo 2018, "Subword regularization"), so that a
  rare word is seen split in several ways.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass

from train.data.corpora import Example

NUMBER = re.compile(r"\d+")
CAPITALISED_WORD = re.compile(r"\b[A-Z][a-z]+\b")
CONSONANTS = "bcdfghjklmnprstvwz"
VOWELS = "aeiou"
BRITISH_STEMS = {  # American -> British; a stem matches with the endings below
    "neighbor": "neighbour",
    "color": "colour",
    "favorite": "favourite",
    "honor": "honour",
    "humor": "humour",
    "flavor": "flavour",
    "behavior": "behaviour",
    "harbor": "harbour",
    "rumor": "rumour",
    "labor": "labour",
    "center": "centre",
    "theater": "theatre",
    "gray": "grey",
    "jewelry": "jewellery",
    "pajamas": "pyjamas",
    "defense": "defence",
    "catalog": "catalogue",
    "traveler": "traveller",
    "traveling": "travelling",
    "traveled": "travelled",
    "canceled": "cancelled",
    "realiz": "realis",
    "organiz": "organis",
    "recogniz": "recognis",
    "apologiz": "apologis",
    "memoriz": "memoris",
    "criticiz": "criticis",
}
AMERICAN_SPELLING = re.compile(
    r"\b(" + "|".join(BRITISH_STEMS) + r")(?=(?:e|es|ed|ing|s|ly|ful|hood|hoods|ation|ations)?\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Augmentation:
    concat_fraction: float = 0.0  # extra joined pairs, as a fraction of the corpus
    copy_fraction: float = 0.0  # of the pairs that carry a name or number, how many get a copy
    number_copies: int = 0  # further copies of each pair that carries a number
    spelling_fraction: float = 0.0  # of the pairs spelled the American way, how many get a copy


def concatenated(examples: list[Example], count: int, rng: random.Random) -> list[Example]:
    """count pairs, each two random examples of one target language joined by a space."""
    by_language: dict[str, list[Example]] = {}
    for example in examples:
        by_language.setdefault(example.target, []).append(example)
    languages = sorted(by_language)
    joined = []
    for _ in range(count):
        first, second = rng.choices(by_language[rng.choice(languages)], k=2)
        joined.append(
            Example(
                first.target,
                f"{first.source_text} {second.source_text}",
                f"{first.target_text} {second.target_text}",
                first.tagged or second.tagged,  # a joined pair that holds a tagged one is tagged
            )
        )
    return joined


def invented_name(rng: random.Random, vowel_first: bool = False) -> str:
    """A pronounceable name no corpus holds: 2-3 syllables, sometimes two words; vowel_first for
    a name after an elision (French "d'Alice": "d'Malofu" would be no French)."""

    def word() -> str:
        syllables = rng.randint(2, 3)
        letters = "".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(syllables))
        if rng.random() < 0.5:
            letters += rng.choice(CONSONANTS)
        return letters.capitalize()

    name = " ".join(word() for _ in range(rng.choice((1, 1, 2))))
    return rng.choice(VOWELS).upper() + name[0].lower() + name[1:] if vowel_first else name


def random_number(digits: int, rng: random.Random) -> str:
    first = rng.choice("123456789") if digits > 1 else rng.choice("0123456789")
    return first + "".join(rng.choice("0123456789") for _ in range(digits - 1))


def names_in(examples: list[Example]) -> set[str]:
    """Capitalised words seen after a sentence's first word: names, not "In" or "Hey"."""
    return {
        word
        for example in examples
        for word in CAPITALISED_WORD.findall(example.source_text.split(" ", 1)[-1])
    }


def copied_words(example: Example, names: set[str]) -> list[str]:
    """Numbers and names that occur once on each side of the example, unchanged."""

    def once(word: str, text: str) -> bool:
        return len(re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", text)) == 1

    capitalised = [w for w in CAPITALISED_WORD.findall(example.source_text) if w in names]
    return sorted(
        {
            word
            for word in NUMBER.findall(example.source_text) + capitalised
            if once(word, example.source_text) and once(word, example.target_text)
        }
    )


def with_copies(example: Example, words: list[str], rng: random.Random) -> Example:
    """The example with each of words (its copied names and numbers) replaced, alike on both
    sides."""

    def elided(word: str) -> bool:
        return re.search(rf"['’]{re.escape(word)}(?!\w)", example.target_text) is not None

    replacement = {
        word: random_number(len(word), rng) if word.isdigit() else invented_name(rng, elided(word))
        for word in words
    }
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, words)) + r")(?!\w)")

    def replace(text: str) -> str:
        return pattern.sub(lambda match: replacement[match.group(1)], text)

    return dataclasses.replace(
        example, source_text=replace(example.source_text), target_text=replace(example.target_text)
    )


def british_spelling(example: Example) -> Example | None:
    """The example with its English spelled the British way; None when nothing changes."""

    def british(match: re.Match) -> str:
        american = match.group(1)
        spelled = BRITISH_STEMS[american.lower()]
        return spelled.capitalize() if american[0].isupper() else spelled

    source = AMERICAN_SPELLING.sub(british, example.source_text)
    if source == example.source_text:
        return None
    return dataclasses.replace(example, source_text=source)


def copies_of(
    example: Example, names: set[str], plan: Augmentation, rng: random.Random
) -> list[Example]:
    """This epoch's copies of one example with new names and numbers: one with probability
    copy_fraction, and number_copies more when it carries a number."""
    words = copied_words(example, names)
    if not words:
        return []
    count = int(rng.random() < plan.copy_fraction)
    if any(word.isdigit() for word in words):
        count += plan.number_copies
    return [with_copies(example, words, rng) for _ in range(count)]


def epoch_examples(examples: list[Example], plan: Augmentation, seed: int) -> list[Example]:
    """The corpus followed by this epoch's concatenations, copies and British spellings (the
    batcher shuffles)."""
    rng = random.Random(seed)
    extra = concatenated(examples, round(plan.concat_fraction * len(examples)), rng)
    copying = bool(plan.copy_fraction or plan.number_copies)
    names = names_in(examples) if copying else set()
    for example in examples:
        if copying:
            extra += copies_of(example, names, plan, rng)
        british = british_spelling(example) if plan.spelling_fraction else None
        if british is not None and rng.random() < plan.spelling_fraction:
            extra.append(british)
    return examples + extra
