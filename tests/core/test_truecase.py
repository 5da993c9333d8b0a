"""Truecasing: sentence-initial words take their usual spelling, names and capitals stay, and the
truecaser travels with the vocabulary wherever a model directory goes."""

import shutil

import pytest

from core.files.checkpoint import CheckpointError
from core.files.model_dir import TRUECASE_FILE, ModelDir
from core.text.tokenizer import Tokenizer
from core.text.truecase import Truecaser, is_capitalised
from core.translator import Translator

# Inside sentences: "attention", "the", "learning" in lower case; "John", "Paris" capitalised.
ENGLISH = [
    "I pay attention to the teacher.",
    "We need the attention of the class.",
    "Give the book to John.",
    "She met John in Paris.",
    "They like deep learning and the sea.",
    "Then the US army left.",
]


@pytest.fixture(scope="module")
def truecaser(tmp_path_factory) -> Truecaser:
    return Truecaser.learn(ENGLISH, tmp_path_factory.mktemp("truecase") / TRUECASE_FILE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Attention is all you need.", "attention is all you need."),
        ("The cat sleeps. John sings! Paris is far.", "the cat sleeps. John sings! Paris is far."),
        ('"The dog," she said.', '"the dog," she said.'),
        ("(Learning) is fun: The end.", "(learning) is fun: the end."),
        ("US troops left.", "US troops left."),  # capitals are not a sentence start's doing
        ("Zebras are unseen words.", "Zebras are unseen words."),  # unknown: left as typed
        ("Let's go.", "Let's go."),  # "let" never occurs inside a sentence here
        ("", ""),
        ("... 42 ?", "... 42 ?"),
    ],
)
def test_the_first_word_of_each_sentence_takes_its_usual_spelling(truecaser, text, expected):
    assert truecaser(text) == expected


def test_only_capitalised_words_are_candidates():
    assert is_capitalised("The") and is_capitalised("A")
    assert not any(map(is_capitalised, ["US", "iPhone", "the", "McDonald"]))


def test_a_truecasing_vocabulary_reads_a_sentence_start_as_the_word_inside_a_sentence(
    tiny_model_dir, truecaser
):
    plain = ModelDir(tiny_model_dir).load_tokenizer()
    cased = Tokenizer(plain.model_file, truecaser)
    assert plain.truecaser is None
    assert plain.encode_source("Attention please.", "de") != plain.encode_source(
        "attention please.", "de"
    )
    assert cased.encode_source("Attention please.", "de") == cased.encode_source(
        "attention please.", "de"
    )
    assert cased.encode("Attention") == plain.encode("Attention")  # targets are not truecased


@pytest.fixture
def truecasing_dir(tiny_model_dir, truecaser, tmp_path) -> ModelDir:
    directory = ModelDir(tmp_path / "truecasing")
    shutil.copytree(tiny_model_dir, directory.path)
    shutil.copy(truecaser.model_file, directory.truecase_file)
    return directory


def test_a_model_directory_with_truecase_en_translates_truecased_english(truecasing_dir):
    translator = Translator.load(truecasing_dir.path)
    assert translator.tokenizer.truecaser is not None
    trace = translator.translate("The attention.", target="de", beam_size=1)
    assert translator.tokenizer.decode(trace.source_ids) == "the attention."


def test_writing_a_model_carries_its_truecaser_and_drops_a_stale_one(
    truecasing_dir, tiny_model_dir, tmp_path
):
    model, _, _ = truecasing_dir.load()
    written = ModelDir(tmp_path / "written").write(model, truecasing_dir.tokenizer_file)
    assert written.truecase_file.read_bytes() == truecasing_dir.truecase_file.read_bytes()
    written.write(model, ModelDir(tiny_model_dir).tokenizer_file)  # a vocabulary without one
    assert not written.truecase_file.exists()
    assert written.load_tokenizer().truecaser is None


def test_a_broken_truecase_file_is_a_checkpoint_error_naming_it(truecasing_dir):
    truecasing_dir.truecase_file.write_text("attention (3/4) Attention\n")  # an odd field count
    with pytest.raises(CheckpointError, match=TRUECASE_FILE):
        truecasing_dir.load_tokenizer()
