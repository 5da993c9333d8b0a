"""Each epoch's augmented data: joined pairs, copies with invented names and numbers, sampled
segmentations. What they add must be well-formed pairs, and each epoch must be reproducible."""

import random
import re

from core.text.tokenizer import EOS_ID
from train.data.augment import (
    Augmentation,
    british_spelling,
    concatenated,
    copied_words,
    epoch_examples,
    names_in,
    with_copies,
)
from train.data.batching import encode_examples
from train.data.corpora import Example

CORPUS = [
    Example("de", "Tom was born in 1992.", "Tom wurde 1992 geboren."),
    Example("de", "I met Tom in Boston.", "Ich habe Tom in Boston getroffen."),
    Example("de", "In the morning I run.", "In der Früh laufe ich."),
    Example("fr", "Mary has 3 cats.", "Mary a 3 chats."),
    Example("fr", "The dog sleeps.", "Le chien dort."),
    Example("fr", "I live in London.", "J'habite à Londres."),
]


def test_joined_pairs_keep_one_language_and_both_halves_in_order():
    joined = concatenated(CORPUS, 50, random.Random(0))
    assert len(joined) == 50
    by_pair = {(e.source_text, e.target_text): e.target for e in CORPUS}
    for pair in joined:
        halves = [
            (source, target)
            for source, target in by_pair
            if pair.source_text.startswith(source + " ") and pair.target_text.startswith(target)
        ]
        assert halves, pair
        first_source, first_target = halves[0]
        second = (
            pair.source_text.removeprefix(first_source + " "),
            pair.target_text.removeprefix(first_target + " "),
        )
        assert by_pair[second] == by_pair[halves[0]] == pair.target


def test_names_are_the_capitalised_words_seen_inside_a_sentence():
    assert names_in(CORPUS) == {"Tom", "Boston", "London"}


def test_only_names_and_numbers_carried_over_unchanged_are_copied():
    names = names_in(CORPUS)
    assert copied_words(CORPUS[0], names) == ["1992", "Tom"]  # a name at the start counts too
    assert copied_words(CORPUS[1], names) == ["Boston", "Tom"]
    assert copied_words(CORPUS[2], names) == []  # "In" is no name
    assert copied_words(CORPUS[5], names) == []  # London becomes Londres: not a copy


def test_a_copy_replaces_each_copied_word_alike_on_both_sides():
    words = copied_words(CORPUS[0], names_in(CORPUS))
    copy = with_copies(CORPUS[0], words, random.Random(3))
    year = re.search(r"\d+", copy.source_text).group()
    name = copy.source_text.removesuffix(f" was born in {year}.")
    assert copy.target_text == f"{name} wurde {year} geboren."
    assert len(year) == 4 and year[0] != "0" and name != "Tom" and name[0].isupper()


def test_a_name_after_a_french_elision_is_replaced_by_one_that_starts_with_a_vowel():
    example = Example("fr", "It is Alice's book.", "C'est le livre d'Alice.")
    for seed in range(20):
        copy = with_copies(example, ["Alice"], random.Random(seed))
        name = copy.source_text.removeprefix("It is ").removesuffix("'s book.")
        assert copy.target_text == f"C'est le livre d'{name}." and name[0] in "AEIOU"
    unelided = with_copies(CORPUS[1], ["Boston", "Tom"], random.Random(0))
    assert unelided.source_text.removeprefix("I met ")[0] not in "AEIOU"  # as names usually do


def test_pairs_with_numbers_get_further_copies_with_other_numbers():
    plan = Augmentation(number_copies=4)
    extra = epoch_examples(CORPUS, plan, seed=1)[len(CORPUS) :]
    assert len(extra) == 4 + 4  # CORPUS[0] and CORPUS[3] carry a number
    years = {re.search(r"\d+", e.source_text).group() for e in extra if "geboren" in e.target_text}
    assert len(years) > 1 and "1992" not in years
    nameless = [Example("fr", "I have 3 cats.", "J'ai 3 chats.")]  # a corpus without names
    assert len(epoch_examples(nameless, plan, seed=1)) == 1 + 4


def test_british_spelling_changes_only_the_english_side_and_keeps_case_and_endings():
    american = Example("de", "Our neighbors' favorite color is gray.", "Die Farbe ...")
    british = british_spelling(american)
    assert british.source_text == "Our neighbours' favourite colour is grey."
    assert british.target_text == american.target_text and british.target == "de"
    assert british_spelling(Example("fr", "Neighborhoods realized it.", "x")).source_text == (
        "Neighbourhoods realised it."
    )
    assert british_spelling(Example("fr", "I live in Colorado.", "J'habite au Colorado.")) is None
    assert british_spelling(CORPUS[4]) is None


def test_an_epoch_is_the_corpus_and_its_extras_the_same_for_the_same_seed():
    plan = Augmentation(concat_fraction=0.5, copy_fraction=1.0)
    epoch = epoch_examples(CORPUS, plan, seed=7)
    assert epoch[: len(CORPUS)] == CORPUS
    assert len(epoch) == len(CORPUS) + 3 + 3  # 3 joined pairs, a copy of each of the 3 with copies
    assert epoch == epoch_examples(CORPUS, plan, seed=7)
    assert epoch != epoch_examples(CORPUS, plan, seed=8)
    assert epoch_examples(CORPUS, Augmentation(), seed=7) == CORPUS
    assert epoch_examples(CORPUS, Augmentation(spelling_fraction=1.0), seed=7) == CORPUS


def test_sampled_segmentations_spell_the_same_text_and_repeat_with_the_seed(translator):
    tokenizer = translator.tokenizer
    examples = [Example("de", "The happy woman reads a book.", "Die Frau liest ein Buch.")]
    best = encode_examples(tokenizer, examples * 20, max_len=128)
    sampled = encode_examples(tokenizer, examples * 20, max_len=128, alpha=0.3, seed=1)
    assert best[0][0] == tokenizer.encode_source(examples[0].source_text, "de")
    assert len({tuple(source) for source, _ in sampled}) > 1  # really sampled
    for (best_source, best_target), (source, target) in zip(best, sampled):
        assert source[0] == best_source[0] and source[-1] == target[-1] == EOS_ID
        assert tokenizer.decode(source) == tokenizer.decode(best_source)
        assert tokenizer.decode(target) == tokenizer.decode(best_target)
    assert sampled == encode_examples(tokenizer, examples * 20, max_len=128, alpha=0.3, seed=1)


def test_source_only_sampling_keeps_the_targets_best_segmentation(translator):
    tokenizer = translator.tokenizer
    examples = [Example("de", "The happy woman reads a book.", "Die glückliche Frau liest.")]
    best = encode_examples(tokenizer, examples * 20, max_len=128)
    both = encode_examples(tokenizer, examples * 20, max_len=128, alpha=0.1, seed=1)
    source_only = encode_examples(
        tokenizer, examples * 20, max_len=128, alpha=0.1, seed=1, sides="source"
    )
    assert len({tuple(target) for _, target in both}) > 1  # both sides: targets vary
    assert [target for _, target in source_only] == [target for _, target in best]
    assert len({tuple(source) for source, _ in source_only}) > 1
