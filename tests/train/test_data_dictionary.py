"""The dictionaries as corpora: their own mixture weights, 0 unless named, the term test's
held-out terms never trained on."""

import pytest

from tests.training import write_gz, write_tiny_data
from train.data.corpora import (
    DICTIONARY_FILES,
    HELD_OUT_COUNTS,
    Corpus,
    MixtureError,
    choose_terms,
    corpus_weight,
    default_data_dir,
    held_out_terms,
    load_corpus,
    parse_mixture,
    term_key,
)
from train.loop.config import parse_args

SHIPPED_MIXTURE = "tatoeba=1,multi30k=6,general=3,general.fr=2"


# more distinct terms than the test holds out, so that some of them train
DING_TERMS = [f"ding term {i}" for i in range(HELD_OUT_COUNTS["ding-terms"] + 40)]
FREEDICT_TERMS = [f"freedict term {i}" for i in range(HELD_OUT_COUNTS["freedict-terms"] + 30)]


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    """The same tiny corpora twice, the second with dictionaries beside them; one held-out term
    is written again in upper case (as another row of Ding might), and a held-out term of each
    dictionary stands in the dictionary's example sentences."""
    plain = write_tiny_data(tmp_path_factory.mktemp("plain"))
    with_dictionaries = write_tiny_data(tmp_path_factory.mktemp("dictionaries"))
    ding = ["fox\tFuchs", "neural network\tneuronales Netz"] + [f"{t}\tWort" for t in DING_TERMS]
    write_gz(with_dictionaries / DICTIONARY_FILES["ding-terms"]["de"], ding)
    write_gz(
        with_dictionaries / DICTIONARY_FILES["freedict-terms"]["fr"],
        ["horse\tcheval", *(f"{t}\tmot" for t in FREEDICT_TERMS)],
    )
    held_out = held_out_terms(with_dictionaries)
    write_gz(  # the same distinct terms, so the same draw
        with_dictionaries / DICTIONARY_FILES["ding-terms"]["de"],
        [*ding, f"{held_out['ding-terms'][0].upper()}\tGeheimnis"],
    )
    write_gz(
        with_dictionaries / DICTIONARY_FILES["ding-sentences"]["de"],
        [
            "I enjoyed my supper.\tDas Abendessen hat mir geschmeckt.",
            f"{held_out['ding-terms'][1]}\tGeheim",
            f"{held_out['freedict-terms'][0]}\tRätsel",
        ],
    )
    return plain, with_dictionaries


def dictionary_keys(corpus: Corpus) -> set[str]:
    """The term keys of a corpus's training pairs that come from the dictionaries' terms."""
    terms = {"fox", "neural network", "horse", *DING_TERMS, *FREEDICT_TERMS}
    return {term_key(e.source_text) for e in corpus.train} & terms


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
    held_out = held_out_terms(with_dictionaries)
    ding = [t for t in ("fox", "neural network", *DING_TERMS) if t not in held_out["ding-terms"]]
    freedict = [t for t in ("horse", *FREEDICT_TERMS) if t not in held_out["freedict-terms"]]
    assert all(sources.count(("de", term)) == 2 for term in ding)
    assert sources.count(("de", "I enjoyed my supper.")) == 1
    assert all(sources.count(("fr", term)) == 1 for term in freedict)
    only_terms = load_corpus(with_dictionaries, mixture={"ding-terms": 1})
    assert "I enjoyed my supper." not in {e.source_text for e in only_terms.train}


def test_held_out_terms_never_reach_training_in_any_dictionary(data_dirs):
    _, with_dictionaries = data_dirs
    mixture = {"ding-terms": 3, "ding-sentences": 1, "freedict-terms": 1}
    corpus = load_corpus(with_dictionaries, mixture=mixture)
    trained = {term_key(e.source_text) for e in corpus.train}
    held_out = held_out_terms(with_dictionaries)
    assert {corpus: len(set(keys)) for corpus, keys in held_out.items()} == HELD_OUT_COUNTS
    every_held_out = set(held_out["ding-terms"] + held_out["freedict-terms"])
    assert not trained & every_held_out
    # every other term is kept: 42 of Ding's and 31 of FreeDict's, and the example sentence
    assert len(dictionary_keys(corpus)) == 42 + 31
    assert "i enjoyed my supper." in trained


def test_terms_are_drawn_at_random_the_same_way_every_time():
    keys = [f"term {i}" for i in range(1000)]
    drawn = choose_terms(keys, 50)
    assert drawn == choose_terms(list(reversed(keys)), 50)  # order of reading aside
    assert drawn != choose_terms(keys, 50, seed=52)
    assert len(set(drawn)) == 50 and drawn != sorted(drawn)[:50]
    assert sorted(choose_terms(keys[:30], 50)) == sorted(keys[:30])  # fewer: every one


def test_the_draw_does_not_depend_on_a_dry_runs_limit(data_dirs):
    _, with_dictionaries = data_dirs
    mixture = {"ding-terms": 1}
    limited = load_corpus(with_dictionaries, limit=60, mixture=mixture)
    first_lines = {"fox", "neural network", *(term_key(t) for t in DING_TERMS[:58])}
    held_out = set(held_out_terms(with_dictionaries)["ding-terms"])
    assert dictionary_keys(limited) == first_lines - held_out


@pytest.mark.slow
@pytest.mark.skipif(
    not (default_data_dir() / "dictionary").is_dir(), reason="needs ../shared/data/dictionary"
)
def test_the_real_dictionaries_give_500_ding_and_200_freedict_terms_once_each():
    held_out = held_out_terms(default_data_dir())
    assert {corpus: len(set(keys)) for corpus, keys in held_out.items()} == HELD_OUT_COUNTS
    # the first terms drawn in session 2026-11-28, when the list was still a committed file
    assert held_out["ding-terms"][:3] == [
        "indemnity insurance",
        "to fuel",
        "urban development plans",
    ]


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
