"""The dictionaries as corpora: their own mixture weights, 0 unless named, the term test's
held-out terms never trained on."""

import pytest

from tests.training import write_gz, write_tiny_data
from train.config import parse_args
from train.data import (
    DICTIONARY_FILES,
    HELD_OUT_TERMS,
    MixtureError,
    corpus_weight,
    held_out_terms,
    load_corpus,
    parse_mixture,
    read_lines,
    term_key,
)

SHIPPED_MIXTURE = "tatoeba=1,multi30k=6,general=3,general.fr=2"


def held_out_english(corpus: str, count: int) -> list[str]:
    """The first ``count`` held-out English terms of a dictionary, as the file writes them."""
    rows = [line.split("\t") for line in read_lines(HELD_OUT_TERMS)[1:]]
    return [english for name, english in rows if name == corpus][:count]


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    """The same tiny corpora twice, the second with dictionaries beside them whose rows
    include held-out terms (one written in upper case, as another row of Ding might)."""
    plain = write_tiny_data(tmp_path_factory.mktemp("plain"))
    with_dictionaries = write_tiny_data(tmp_path_factory.mktemp("dictionaries"))
    ding = held_out_english("ding-terms", 3)
    freedict = held_out_english("freedict-terms", 2)
    write_gz(
        with_dictionaries / DICTIONARY_FILES["ding-terms"]["de"],
        [
            "fox\tFuchs",
            "neural network\tneuronales Netz",
            f"{ding[0]}\tGeheim",
            f"{ding[1].upper()}\tGeheimnis",
            f"{ding[2]}\tRätsel",
        ],
    )
    write_gz(
        with_dictionaries / DICTIONARY_FILES["ding-sentences"]["de"],
        ["I enjoyed my supper.\tDas Abendessen hat mir geschmeckt.", f"{freedict[0]}\tGeheim"],
    )
    write_gz(
        with_dictionaries / DICTIONARY_FILES["freedict-terms"]["fr"],
        [
            "horse\tcheval",
            f"{freedict[0]}\tsecret",
            f"{freedict[1]}\tmystère",
            f"{ding[0]}\tsecret",
        ],
    )
    return plain, with_dictionaries


def test_the_default_and_the_shipped_mixtures_read_the_same_corpus_beside_dictionaries(data_dirs):
    plain, with_dictionaries = data_dirs
    for spec in ("", SHIPPED_MIXTURE):
        before = load_corpus(plain, mixture=parse_mixture(spec))
        after = load_corpus(with_dictionaries, mixture=parse_mixture(spec))
        assert after.train == before.train and after.valid == before.valid
        assert not any(e.source_text in ("fox", "horse") for e in after.train)


def test_named_dictionaries_train_with_their_weight_and_never_validate(data_dirs):
    plain, with_dictionaries = data_dirs
    base = load_corpus(plain, mixture=parse_mixture(SHIPPED_MIXTURE))
    mixture = parse_mixture(SHIPPED_MIXTURE + ",ding-terms=2,ding-sentences=1,freedict-terms=1")
    corpus = load_corpus(with_dictionaries, mixture=mixture)
    added = corpus.train[len(base.train) :]
    assert corpus.train[: len(base.train)] == base.train and corpus.valid == base.valid
    sources = [(e.target, e.source_text) for e in added]
    assert sources.count(("de", "fox")) == 2 and sources.count(("de", "neural network")) == 2
    assert sources.count(("de", "I enjoyed my supper.")) == 1
    assert sources.count(("fr", "horse")) == 1
    only_terms = load_corpus(with_dictionaries, mixture={"ding-terms": 1})
    assert "I enjoyed my supper." not in {e.source_text for e in only_terms.train}


def test_held_out_terms_never_reach_training_in_any_dictionary(data_dirs):
    _, with_dictionaries = data_dirs
    mixture = {"ding-terms": 3, "ding-sentences": 1, "freedict-terms": 1}
    corpus = load_corpus(with_dictionaries, mixture=mixture)
    trained = {term_key(e.source_text) for e in corpus.train}
    planted = held_out_english("ding-terms", 3) + held_out_english("freedict-terms", 2)
    assert {term_key(english) for english in planted} <= held_out_terms()
    assert not trained & held_out_terms()
    assert {"fox", "neural network", "horse"} <= trained  # the other rows are kept


def test_the_held_out_file_names_500_ding_and_200_freedict_terms_once_each():
    rows = [line.split("\t") for line in read_lines(HELD_OUT_TERMS)[1:]]
    assert [name for name, _ in rows].count("ding-terms") == 500
    assert [name for name, _ in rows].count("freedict-terms") == 200
    assert len({(name, term_key(english)) for name, english in rows}) == 700


def test_the_mixture_names_the_dictionaries_and_weighs_them_0_unless_named():
    weights = parse_mixture("ding-sentences=1,ding-terms=0.05,freedict-terms=0.1,ding-terms.de=0.2")
    assert weights == {
        "ding-sentences": 1.0,
        "ding-terms": 0.05,
        "freedict-terms": 0.1,
        "ding-terms.de": 0.2,
    }
    assert corpus_weight(weights, "ding-terms", "de") == 0.2
    assert corpus_weight({}, "ding-sentences", "de") == 0.0
    assert corpus_weight({}, "freedict-terms", "fr") == 0.0
    assert corpus_weight({}, "tatoeba", "de") == 1.0


@pytest.mark.parametrize("spec", ["ding-terms.fr=1", "freedict-terms.de=1", "ding=1"])
def test_a_dictionary_key_for_a_language_it_lacks_is_refused(spec, capsys):
    with pytest.raises(MixtureError, match="a mixture key"):
        parse_mixture(spec)
    with pytest.raises(SystemExit):
        parse_args(["--dry-run", "--mixture", spec])
    assert "a mixture key" in capsys.readouterr().err
