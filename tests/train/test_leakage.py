"""Language leakage counted by the stated rule on a tiny example."""

import json

import pytest

from train.data.corpora import default_data_dir
from train.studies import leakage
from train.studies.leakage import leakage_counts, leaked_words, register_count

GERMAN = {"die", "maschine", "hat", "sich", "verbessert", "hallo", "berlin", "art"}
FRENCH = {"la", "machine", "a", "beaucoup", "art", "dans", "ces"}


def test_a_word_of_the_other_side_only_and_not_in_the_source_is_a_leak():
    translation = "La machine a beaucoup verbessert, Hallo Berlin ! L'art"
    source = "The machine has improved a lot, hello Berlin! Art"
    # "verbessert" and "hallo": German only; "berlin" is copied from the source; "art" is both
    assert leaked_words(translation, source, FRENCH, GERMAN) == ["verbessert", "hallo"]
    assert leaked_words("La machine", "The machine", FRENCH, GERMAN) == []


def test_counts_are_sentences_with_a_leak_words_and_the_most_frequent():
    translations = ["La machine verbessert.", "Hallo, hallo !", "La machine."]
    sources = ["The machine improved.", "Hello, hello!", "The machine."]
    counts = leakage_counts(translations, sources, FRENCH, GERMAN)
    assert counts == {
        "sentences": 3,
        "sentences_with_leak": 2,
        "words": 3,
        "most_frequent": ["hallo 2", "verbessert 1"],
    }


@pytest.mark.slow
@pytest.mark.skipif(not (default_data_dir() / "flores").is_dir(), reason="needs ../shared/data")
def test_the_dry_run_counts_ten_flores_sentences_each_way_on_the_shipped_model(capsys):
    assert leakage.main(["--dry-run"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [(r["pair"], r["words_of"]) for r in record["results"]] == [
        ("en-de", "fr"),
        ("en-fr", "de"),
    ]
    assert all(r["translations"]["sentences"] == 10 for r in record["results"])


def test_the_register_count_is_parliament_that_the_source_does_not_say():
    sources = ["The member of the team won.", "The command was given.", "Mr. Speaker, no."]
    outputs = [
        "Le député de l'équipe a gagné.",
        "Le député a donné l'ordre.",
        "Monsieur le Président, non.",
    ]
    count = register_count(outputs, sources)
    assert count["sentences_with_register"] == 1
    assert count["examples"] == ["The command was given. -> Le député a donné l'ordre."]
    assert register_count(["L'honorable juge."], ["The judge."])["sentences_with_register"] == 1
