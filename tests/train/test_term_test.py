"""The term test: held-out terms drawn reproducibly, a sense found as whole words, the carrier's
own words never counted as the term's."""

import json

import pytest

from tests.training import write_gz
from train.data.corpora import DICTIONARY_FILES, default_data_dir
from train.studies import term_test
from train.studies.term_test import Term, contains_sense, score_terms, term_part_of_carrier


@pytest.mark.parametrize(
    "translation, senses, expected",
    [
        ("Der Fuchs.", ("Fuchs",), True),  # an article and a full stop around it
        ("FUCHS", ("fuchs",), True),  # case-insensitive
        ("L'essence", ("essence",), True),  # after an elided article
        ("Der Fuchsbau.", ("Fuchs",), False),  # whole words only
        ("Ein neuronales Netz", ("Netz", "neuronales Netzwerk"), True),  # any sense
        ("Ein neuronales Netzwerk", ("neuronales Netz",), False),
        ("Le\u202fmot", ("le mot",), True),  # after normalize_text
    ],
)
def test_a_sense_matches_as_whole_words_case_insensitively(translation, senses, expected):
    assert contains_sense(translation, senses) is expected


def test_the_carriers_own_words_are_not_the_terms():
    assert term_part_of_carrier("Das Wort ist Fuchs.", "de") == "Fuchs."
    assert term_part_of_carrier("le mot est la vache.", "fr") == "la vache."
    # the term "is" -> "ist": the frame's "ist" is not its translation
    assert not contains_sense(term_part_of_carrier("Das Wort ist Haus.", "de"), ("ist",))
    assert term_part_of_carrier("Das Wort ist.", "de") == "."
    assert term_part_of_carrier("Das Wort istanbul.", "de") == "Das Wort istanbul."
    # another frame: the whole output is searched
    assert term_part_of_carrier("Das Wort lautet Fuchs.", "de") == "Das Wort lautet Fuchs."


class ScriptedTranslator:
    """Answers each source with the translation a test gives it."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers

    def translate_batch(self, texts, target, *settings):
        assert not settings  # decoded as Translator decodes by default: PAPER_DECODING
        return [self.answers[text] for text in texts]


def test_the_score_is_the_share_of_terms_matched_alone_and_in_the_carrier():
    terms = [
        Term("ding-terms", "de", "fox", ("Fuchs",), in_sentences=True),
        Term("ding-terms", "de", "neural network", ("neuronales Netz",)),
        Term("ding-terms", "de", "is", ("ist",)),
        Term("freedict-terms", "fr", "cow", ("vache",)),
    ]
    answers = {
        "fox": "Der Fuchs.",
        "The word is fox.": "Das Wort ist Fox.",
        "neural network": "Neuronales Netzwerk",
        "The word is neural network.": "Das Wort ist neuronales Netz.",
        "is": "Ist",
        "The word is is.": "Das Wort ist.",
        "cow": "Une vache",
        "The word is cow.": "Le mot est vache.",
    }
    results = score_terms(ScriptedTranslator(answers), terms)
    ding, freedict = results
    assert (ding["terms"], ding["alone"], ding["carrier"]) == (3, round(2 / 3, 4), round(1 / 3, 4))
    assert ding["carrier_frame_kept"] == 1.0
    # "fox" is in the training sentences: the unseen are "neural network" and "is"
    unseen = (ding["unseen_terms"], ding["unseen_alone"], ding["unseen_carrier"])
    assert unseen == (2, 0.5, 0.5)
    assert (freedict["unseen_terms"], freedict["unseen_alone"]) == (1, 1.0)
    assert (freedict["pair"], freedict["alone"], freedict["carrier"]) == ("en-fr", 1.0, 1.0)


def test_held_out_terms_take_every_listed_sense_from_the_dictionary(tmp_path):
    write_gz(
        tmp_path / DICTIONARY_FILES["ding-terms"]["de"],
        ["fox\tFuchs", "Fox\tFüchsin", "fox\tFuchs", "dog\tHund"],
    )
    write_gz(tmp_path / DICTIONARY_FILES["freedict-terms"]["fr"], ["cow\tvache"])
    write_gz(
        tmp_path / "tatoeba/eng-deu.tsv.gz", ["The Fox runs.\tDer Fuchs rennt.", "Cows.\tKühe."]
    )
    terms = term_test.held_out_test(tmp_path)  # fewer terms than the draw takes: every one
    assert sorted(terms, key=lambda term: term.english) == [
        Term("freedict-terms", "fr", "cow", ("vache",), in_sentences=False),  # "Cows" is not "cow"
        Term("ding-terms", "de", "dog", ("Hund",), in_sentences=False),
        Term("ding-terms", "de", "fox", ("Fuchs", "Füchsin"), in_sentences=True),
    ]


@pytest.mark.slow
@pytest.mark.skipif(
    not (default_data_dir() / "dictionary").is_dir(), reason="needs ../shared/data/dictionary"
)
def test_the_dry_run_scores_five_terms_of_each_dictionary_on_the_shipped_model(capsys):
    assert term_test.main(["--dry-run"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [(r["dictionary"], r["terms"]) for r in record["results"]] == [
        ("ding-terms", 5),
        ("freedict-terms", 5),
    ]
    assert record["command"] == "python -m train.studies.term_test --dry-run"
    assert all(0 <= r["alone"] <= 1 and 0 <= r["carrier"] <= 1 for r in record["results"])
