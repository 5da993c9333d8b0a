"""No sentence is cut without a word (issue 59, finding 3): a sentence over the model's source
budget is translated clause by clause; a part with no boundary left is cut, and evaluation and the
command line say so on stderr and count it in the scores."""

import dataclasses
import json

import pytest

from core.files.model_dir import ModelDir
from core.model.transformer import Transformer
from core.text.clauses import clause_parts
from core.translate import main as translate_main
from core.translator import LongSources, Translator
from tests.core.test_cli import run
from train.shipping.evaluate import main as evaluate_main

# clauses of the tiny vocabulary's words (support/tiny_corpus.py), each well within 12 pieces
LONG = "The dog, the cat, the man, the woman, the child, the house, the garden, and the book"
NO_BOUNDARY = " ".join(["dog"] * 40)


def test_a_sentence_that_fits_is_itself():
    assert clause_parts("A short one, with a comma.", lambda text: True) == [
        "A short one, with a comma."
    ]


def test_a_long_sentence_is_split_at_the_boundary_nearest_its_middle_until_it_fits():
    text = "one two, three four, five six, seven eight"
    assert clause_parts(text, lambda part: len(part) <= 25) == [
        "one two, three four,",
        "five six, seven eight",
    ]
    assert clause_parts(text, lambda part: len(part) <= 10) == [
        "one two,",
        "three four,",
        "five six,",
        "seven eight",
    ]
    assert clause_parts("the cat sat and the dog ran", lambda p: len(p) < 20) == [
        "the cat sat",
        "and the dog ran",
    ]


def test_a_part_with_no_boundary_stays_whole():
    assert clause_parts(NO_BOUNDARY, lambda part: False) == [NO_BOUNDARY]


@pytest.fixture(scope="module")
def short_model(tiny_model_dir, tmp_path_factory):
    """The tiny model with room for 24 positions: a source budget of 12 pieces."""
    translator = Translator.load(tiny_model_dir)
    model = translator.model
    config = dataclasses.replace(model.config, max_len=24)
    short = Transformer(config)
    short.load_state_dict(model.state_dict())
    folder = ModelDir(tmp_path_factory.mktemp("short") / "model")
    return folder.write(short, translator.tokenizer.model_file, {"name": "short"}).path


def test_translate_batch_translates_a_long_sentence_clause_by_clause(short_model):
    translator = Translator.load(short_model)
    assert translator.max_source_tokens == 12 and not translator.fits(LONG, "de")
    parts = translator.source_parts(LONG, "de")
    assert len(parts) > 1 and all(translator.fits(part, "de") for part in parts)
    done = []
    whole = translator.translate_batch(
        [LONG, "", "A dog."], "de", beam_size=1, progress=done.append
    )
    assert whole[0] == " ".join(translator.translate_batch(parts, "de", beam_size=1))
    assert whole[1] == "" and sum(done) == 2
    assert translator.long_sources([LONG, "A dog.", NO_BOUNDARY], "de") == LongSources(12, 2, 1)


def test_evaluate_warns_of_a_cut_and_counts_it(short_model, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(f"{LONG}\tDer Mann.\n{NO_BOUNDARY}\tHund.\nA dog.\tEin Hund.\n")
    status, out, err = run(
        evaluate_main, "--model", str(short_model), "--target", "de", "--quiet",
        "--tsv", str(pairs), "--beam-size", "1",
    )  # fmt: skip
    assert status == 0
    assert json.loads(out)["long_sentences"] == {"source_budget": 12, "long": 2, "cut": 1}
    assert "warning: en-de: 2 sentence(s) over the model's 12 source pieces" in err
    assert "1 of them kept a part over 12 pieces" in err


def test_the_command_line_says_when_it_splits_or_cuts(short_model):
    status, out, err = run(translate_main, "--model", str(short_model), "--beam-size", "1", LONG)
    assert status == 0 and out.strip()
    said = "note: argument 1: 1 sentence(s) over the model's 12 source pieces, translated clause"
    assert said in err
    status, _, err = run(
        translate_main, "--model", str(short_model), "--beam-size", "1", NO_BOUNDARY
    )
    assert "warning: argument 1:" in err and "cut to 12 pieces" in err


@pytest.mark.slow
def test_the_command_line_notes_a_sentence_that_is_not_english(tiny_model_dir):
    german = "Der alte Mann geht mit seinem kleinen Hund am Fluss entlang spazieren."
    status, _, err = run(translate_main, "--model", str(tiny_model_dir), "--beam-size", "1", german)
    assert status == 0 and "note: argument 1: this looks like German, not English" in err
