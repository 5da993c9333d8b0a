"""What the model reads well (core/text/readable.py): text that is not English is named, English
with names and technical terms is not; sentences over about 40 words, or cut at the model's pieces,
are found before the translation."""

import gzip
import random
from pathlib import Path

import pytest

from core.text import readable

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
ENGLISH = [
    "John lives in Salt Lake City.",
    "Attention is all you need.",
    "Hi.",
    "OK.",
    "Paris.",
    "The animal didn't cross the street because it was too tired.",
    "Kubernetes runs on Linux.",
    "Angela Merkel met Emmanuel Macron in Berlin.",
    "The GPU trains the Transformer with Adam and label smoothing.",
    "She reads the book that her friend gave her.",
]


@pytest.mark.parametrize(
    "text, language",
    [
        ("Ich habe heute keine Zeit.", "German"),
        ("Je suis très fatigué aujourd'hui.", "French"),
        ("Das Tier überquerte die Straße nicht.", "German"),
        ("Hoy no tengo tiempo para nada.", "Spanish"),
    ],
)
def test_text_in_another_language_is_named(text, language):
    assert readable.other_language(text) == language
    (notice,) = readable.notices(text, lambda sentence: 10, 64)
    assert notice.startswith(f"This looks like {language}, not English.")
    assert "reads English only" in notice


@pytest.mark.parametrize("text", ENGLISH)
def test_english_with_names_and_technical_terms_gets_no_notice(text):
    assert readable.other_language(text) is None
    assert readable.notices(text, lambda sentence: 10, 64) == []


def words(n: int) -> str:
    """An English sentence of ``n`` words."""
    story = [
        "the",
        "small",
        "dog",
        "runs",
        "after",
        "the",
        "red",
        "ball",
        "in",
        "the",
        "park",
        "and",
    ]
    return " ".join(["Today", *(story[i % len(story)] for i in range(n - 2)), "again."])


def test_sentences_over_forty_words_or_the_models_pieces_are_found_before_translating():
    assert readable.long_sentences(words(40), lambda s: 50, 64) == []
    assert readable.long_sentences(words(41), lambda s: 50, 64) == [
        readable.LongSentence(1, 41, 50)
    ]
    # few words, but more pieces than the model reads: it would be cut
    assert readable.long_sentences(words(30), lambda s: 70, 64) == [
        readable.LongSentence(1, 30, 70)
    ]
    (notice,) = readable.notices(words(42), lambda s: 70, 64)
    assert notice.startswith("The sentence has 42 words (70 pieces, more than the 64 pieces")
    assert "split it into shorter sentences" in notice
    text = f"A short one. {words(45)} Another short one."
    (notice,) = readable.notices(text, lambda s: len(s.split()), 64)
    assert notice.startswith("Sentence 2 has 45 words (45 pieces). The model translates")


def test_a_long_sentence_notice_names_only_the_limit_it_is_over():
    # a MarianMT model reads 32 pieces here: 11 words in 60 pieces are cut, not too many words
    (pieces,) = readable.notices(words(11), lambda s: 60, 32)
    assert pieces == (
        "The sentence has 11 words (60 pieces, more than the 32 pieces the model reads: the rest "
        "would be cut). Split it into shorter sentences."
    )
    (too_many_words,) = readable.notices(words(45), lambda s: 50, 64)
    assert too_many_words.startswith("The sentence has 45 words (50 pieces). The model")
    assert "about 40 words well" in too_many_words
    (both,) = readable.notices(words(45), lambda s: 70, 64)
    assert "more than the 64 pieces the model reads" in both and "about 40 words well" in both


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="no ../shared/data")
def test_no_english_sentence_of_multi30k_or_tatoeba_is_called_another_language():
    def sample(path: Path, n: int, column: int | None = None) -> list[str]:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            rows = [line.rstrip("\n") for line in lines]
        if column is not None:
            rows = [row.split("\t")[column] for row in rows]
        return random.Random(0).sample(rows, n)

    english = sample(DATA / "multi30k" / "val.en.gz", 500)
    english += sample(DATA / "tatoeba" / "eng-deu.tsv.gz", 500, column=0)
    called_other = [text for text in english if readable.other_language(text)]
    assert called_other == []  # measured: 0 of these 1,000
    german = sample(DATA / "multi30k" / "val.de.gz", 200)
    assert sum(readable.other_language(text) == "German" for text in german) >= 190
