"""The Hansard as a corpus (issue #61): weight 0 unless named, training pairs only, optionally
cleaned of parliament's formulas, its sources optionally tagged with a piece no text produces."""

import pytest

from core.text.tokenizer import Tokenizer
from tests.training import write_gz, write_tiny_data
from train.data.augment import Augmentation, epoch_examples
from train.data.batching import DOMAIN_TAG, encode_examples
from train.data.corpora import HANSARD_FILES, Example, load_corpus, parse_mixture
from train.data.parliament import parliament_cleaned, without_address
from train.data.sources import HANSARD_SOURCE, trained_named_corpora
from train.loop.config import parse_args
from train.shipping.card_md import mixture_text

HANSARD = [
    "Mr. Speaker, the budget helps families.\tMonsieur le Président, le budget aide les familles.",
    "The hon. member for Halifax asked a question.\tLe député de Halifax a posé une question.",
    "Pursuant to Standing Order 31, I rise.\tConformément à l'article 31, je prends la parole.",
    "The river flooded the town in May.\tLa rivière a inondé la ville en mai.",
    "Mr. Speaker, this is wrong.\tC'est une erreur.",  # the address on one side only
    "Winters are long in the north.\tLes hivers sont longs dans le nord.",
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = write_tiny_data(tmp_path_factory.mktemp("hansard"))
    write_gz(root / HANSARD_FILES["fr"], HANSARD)
    return root


def hansard_sources(corpus) -> set[str]:
    english = {line.split("\t")[0] for line in HANSARD}
    stripped = {"The budget helps families."}
    return {e.source_text for e in corpus.train if e.source_text in english | stripped}


def test_hansard_weighs_nothing_unless_named(data_dir):
    unnamed = load_corpus(data_dir, mixture=parse_mixture("tatoeba=1"))
    assert not hansard_sources(unnamed)
    named = load_corpus(data_dir, mixture=parse_mixture("hansard=2"))
    assert len(hansard_sources(named)) == len(HANSARD)
    assert sum(e.source_text == "Winters are long in the north." for e in named.train) == 2
    assert not {e.source_text for e in named.valid} & hansard_sources(named)  # training only


def test_cleaning_strips_the_address_and_drops_parliament(data_dir):
    corpus = load_corpus(data_dir, mixture=parse_mixture("hansard=1"), hansard_clean=True)
    assert hansard_sources(corpus) == {
        "The budget helps families.",
        "The river flooded the town in May.",
        "Winters are long in the north.",
    }
    pair = next(e for e in corpus.train if e.source_text == "The budget helps families.")
    assert pair.target_text == "Le budget aide les familles."


def test_an_address_on_one_side_only_is_no_pair():
    assert without_address("Mr. Speaker, yes.", "Oui.") is None
    assert without_address("Yes.", "Oui.") == ("Yes.", "Oui.")
    assert parliament_cleaned(
        [["Madam Speaker, I agree.", "Madame la Présidente, je suis d'accord."]]
    ) == [["I agree.", "Je suis d'accord."]]


def test_only_the_hansard_is_tagged(data_dir):
    corpus = load_corpus(data_dir, mixture=parse_mixture("hansard=1"), hansard_tag=True)
    tagged = {e.source_text for e in corpus.train if e.tagged}
    assert tagged == hansard_sources(corpus)


def test_the_tag_follows_the_language_tag_and_survives_augmentation(tiny_model_dir):
    tokenizer = Tokenizer(tiny_model_dir / "spm.model")
    tag = tokenizer.sp.piece_to_id(DOMAIN_TAG)
    assert tokenizer.sp.id_to_piece(tag) == DOMAIN_TAG  # a byte piece: no new vocabulary row
    assert tag not in tokenizer.sp.encode("Ÿ ÿ \u00ff and every other character")
    plain = Example("fr", "The river flooded the town.", "La rivière a inondé la ville.")
    tagged = Example("fr", plain.source_text, plain.target_text, tagged=True)
    [(plain_source, target), (tagged_source, tagged_target)] = encode_examples(
        tokenizer, [plain, tagged], max_len=96
    )
    assert tagged_source == [plain_source[0], tag, *plain_source[1:]]
    assert tagged_target == target
    spelled = Example("fr", "My neighbor's color.", "La couleur de mon voisin.", tagged=True)
    copies = epoch_examples([spelled], Augmentation(spelling_fraction=1.0), seed=0)[1:]
    assert copies and all(copy.tagged for copy in copies)


def test_flags_and_card(data_dir):
    config = parse_args(
        ["--dry-run", "--mixture", "hansard=0.4", "--hansard-tag", "--hansard-clean"]
    )
    assert config.hansard_tag and config.hansard_clean
    recipe = {"mixture": "tatoeba=1,hansard=0.4", "hansard_tag": True, "hansard_clean": True}
    text = mixture_text(recipe)
    assert "hansard 0.4" in text and "cleaned" in text and "tagged" in text
    assert "hansard" not in mixture_text({"mixture": "tatoeba=1"})
    assert HANSARD_SOURCE in trained_named_corpora(recipe)
    assert HANSARD_SOURCE not in trained_named_corpora({"mixture": "tatoeba=1"})
