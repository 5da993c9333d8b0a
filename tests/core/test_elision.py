"""French elision: split for the vocabulary, joined for the reader, and nothing else touched."""

import pytest

from core.text.elision import join_elisions, split_elisions
from core.text.tokenizer import EOS_ID
from train.data.batching import encode_examples
from train.data.corpora import Example


@pytest.mark.parametrize(
    ("written", "split"),
    [
        ("L'animal n'a pas traversé.", "L' animal n' a pas traversé."),
        ("Je crois qu'il l'aime.", "Je crois qu' il l' aime."),
        ("Jusqu'à l’école d'été", "Jusqu' à l’ école d' été"),  # the typographic apostrophe too
        ("Lorsqu'elle s'en va, c'est fini.", "Lorsqu' elle s' en va, c' est fini."),
    ],
)
def test_elided_words_are_split_and_joined_back(written, split):
    assert split_elisions(written) == split
    assert join_elisions(split) == written


@pytest.mark.parametrize(
    "text",
    [
        "aujourd'hui",  # the apostrophe inside a word is no elision
        "presqu'île",
        "Tom's car isn't here.",
        "rock 'n' roll",
        "Il a dit 'oui' .",
        "l'",
    ],
)
def test_what_is_no_elision_is_left_alone(text):
    assert split_elisions(text) == text
    assert join_elisions(text) == text


def test_the_word_after_an_elision_gets_the_pieces_it_has_alone(translator):
    tokenizer = translator.tokenizer
    alone = tokenizer.encode("animal")
    split = tokenizer.encode(tokenizer.target_text("l'animal", "fr"))
    assert split[-len(alone) :] == alone
    assert tokenizer.encode("l'animal")[-len(alone) :] != alone  # why the split is made


def test_only_french_is_split_and_only_french_output_is_joined(translator):
    tokenizer = translator.tokenizer
    assert tokenizer.target_text("L'animal", "fr") == "L' animal"
    assert tokenizer.target_text("L'animal", "de") == "L'animal"
    ids = tokenizer.encode(tokenizer.target_text("Qu'il vient.", "fr"))
    assert tokenizer.decode(ids, "fr") == "Qu'il vient."
    assert tokenizer.decode(ids) == "Qu' il vient."  # a source is shown as it was encoded


def test_training_targets_are_split_as_the_output_is_joined(translator):
    tokenizer = translator.tokenizer
    examples = [Example("fr", "The animal.", "L'animal."), Example("de", "It's.", "L'animal.")]
    (_, french), (_, german) = encode_examples(tokenizer, examples, max_len=64)
    assert french == [*tokenizer.encode("L' animal."), EOS_ID]
    assert german == [*tokenizer.encode("L'animal."), EOS_ID]
    assert tokenizer.decode(french, "fr") == "L'animal."
