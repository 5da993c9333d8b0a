"""What the model reads well, told before it translates: English, the only language it learnt to
translate from, in sentences of up to about WELL_READ_WORDS words (it reads at most
Translator.max_source_tokens pieces of a sentence, 64 for the shipped model, and learnt from far
shorter ones).

Whether a text is English is py3langid's call (langid.py's naive Bayes model of byte n-grams, 97
languages, the model inside the package: nothing is downloaded). It only ever leads to a notice:
the model translates whatever it is given. Measured on English sentences the model learnt from or
is scored on (1,000 of Multi30k's and Tatoeba's, 5,012 more of Multi30k, Tatoeba and FLORES), it
called none of them another language at NOT_ENGLISH_PROBABILITY; it called 984 of 1,000 German
and French sentences not English.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from core.text.sentences import is_sentence, split_sentences

WELL_READ_WORDS = 40
# A text is "not English" when py3langid's likeliest language is another one with at least this
# probability (its probabilities over the 97 languages, normalised): below it, a two-word
# sentence like "Hi." or "Paris." is a guess among many languages, not a finding.
NOT_ENGLISH_PROBABILITY = 0.5
# the names of the languages people most often type by mistake; any other is "another language"
LANGUAGE_NAMES = {
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
}


@cache
def _identifier():
    """py3langid's identifier with probabilities, loaded once (a few seconds)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def language_of(text: str) -> tuple[str, float]:
    """The likeliest language of ``text`` (an ISO 639-1 code, "en") and its probability."""
    code, probability = _identifier().classify(text)
    return code, float(probability)


def other_language(text: str) -> str | None:
    """The name of the language ``text`` is in when it is confidently not English
    (NOT_ENGLISH_PROBABILITY), else None; "another language" when it has no name here."""
    if not is_sentence(text):
        return None
    code, probability = language_of(text)
    if code == "en" or probability < NOT_ENGLISH_PROBABILITY:
        return None
    return LANGUAGE_NAMES.get(code, "another language")


@dataclass(frozen=True)
class LongSentence:
    number: int  # counted from 1 among the text's sentences
    words: int
    pieces: int  # source pieces, with the language tag and </s>


def long_sentences(
    text: str, count_pieces: Callable[[str], int], max_pieces: int
) -> list[LongSentence]:
    """The sentences of ``text`` longer than the model reads well: over WELL_READ_WORDS words,
    or over ``max_pieces`` source pieces (``count_pieces``: a sentence's, as the model reads
    it), where it would be cut."""
    sentences = [part for part in split_sentences(text) if is_sentence(part)]
    found = []
    for number, sentence in enumerate(sentences, start=1):
        words, pieces = len(sentence.split()), count_pieces(sentence)
        if words > WELL_READ_WORDS or pieces > max_pieces:
            found.append(LongSentence(number, words, pieces))
    return found


def notices(text: str, count_pieces: Callable[[str], int], max_pieces: int) -> list[str]:
    """What to tell someone about ``text`` before it is translated: that it does not look like
    English, that a sentence is longer than the model reads well; [] when neither."""
    said = []
    language = other_language(text)
    if language is not None:
        said.append(
            f"This looks like {language}, not English. The model reads English only: other "
            "languages come out as invented words. Type an English sentence."
        )
    several = sum(map(is_sentence, split_sentences(text))) > 1
    for long in long_sentences(text, count_pieces, max_pieces):
        which = f"Sentence {long.number}" if several else "The sentence"
        said.append(_length_notice(long, which, max_pieces))
    return said


def _length_notice(long: LongSentence, which: str, max_pieces: int) -> str:
    """What is too long about a sentence, naming only the limit it is over: the ``max_pieces``
    the model reads (the rest would be cut), about WELL_READ_WORDS words (read less well), or
    both. ``which`` names the sentence."""
    cut = (
        f", more than the {max_pieces} pieces the model reads: the rest would be cut"
        if long.pieces > max_pieces
        else ""
    )
    advice = (
        f"The model translates sentences of up to about {WELL_READ_WORDS} words well (it learnt "
        "from far shorter ones): split it into shorter sentences."
        if long.words > WELL_READ_WORDS
        else "Split it into shorter sentences."
    )
    return f"{which} has {long.words} words ({long.pieces} pieces{cut}). {advice}"
