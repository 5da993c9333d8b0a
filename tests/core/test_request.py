"""core.Request: one sentence for one model directory, checked once when it is made, and a key
that the app's caches find again for an equal request: equal hashes and equal fields here, the
caches themselves (st.cache_data and app/shared_cache.py) in tests/app/test_request_cache.py."""

import math
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from core import InputError, Request, Translator
from core.files.model_dir import ModelDir, NotAModelDir
from core.request import target_languages
from core.translator import MAX_BEAM_SIZE

SENTENCE = "The dog runs."


@pytest.fixture
def nothing_loaded(monkeypatch):
    """Fail the test if a model is loaded or translates: a refused request computes nothing."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded for a request that should have been refused")

    monkeypatch.setattr(ModelDir, "load_model", refuse)
    monkeypatch.setattr("core.translator.beam_search", refuse)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"beam_size": 0}, "beam_size must be between 1"),
        ({"beam_size": MAX_BEAM_SIZE + 1}, "beam_size must be between 1"),
        ({"beam_size": 2.0}, "beam_size must be an integer"),
        ({"beam_size": True}, "beam_size must be an integer"),
        ({"alpha": -0.1}, r"alpha \(the length penalty\) must be between 0"),
        ({"alpha": math.inf}, r"alpha \(the length penalty\) must be between 0"),
        ({"alpha": "0.6"}, r"alpha \(the length penalty\) must be a number"),
        ({"max_length": 0}, "max_length must be a whole number"),
        ({"max_length": 2.5}, "max_length must be a whole number"),
        ({"target": "es"}, "Unknown target language 'es': choose one of de, fr."),
        ({"target": None}, "Unknown target language None"),
        ({"text": " \n\t "}, "There is nothing to translate"),
        ({"text": "abc\ud800"}, "not valid Unicode"),
        ({"text": b"The dog runs."}, "must be a string"),
    ],
)
def test_each_bad_field_is_refused_before_anything_is_computed(
    tiny_model_dir, nothing_loaded, fields, message
):
    with pytest.raises(InputError, match=message):
        Request(**{"model": tiny_model_dir, "text": SENTENCE, **fields})


def test_a_folder_that_is_no_model_directory_is_refused(tmp_path, nothing_loaded):
    with pytest.raises(NotAModelDir):
        Request(tmp_path, SENTENCE)


def test_a_changed_copy_is_checked_again(tiny_model_dir):
    request = Request(tiny_model_dir, SENTENCE)
    with pytest.raises(InputError, match="beam_size"):
        replace(request, beam_size=0)


def test_a_request_is_frozen(tiny_model_dir):
    with pytest.raises(AttributeError):
        Request(tiny_model_dir, SENTENCE).beam_size = 8


def test_equal_requests_are_equal_keys_and_different_ones_differ(tiny_model_dir):
    request = Request(str(tiny_model_dir), SENTENCE, "de", 4, 1.0)
    same = Request(Path(tiny_model_dir), SENTENCE, "de", 4, 1)  # a Path, an int alpha
    assert request == same and hash(request) == hash(same)
    assert same.model == str(tiny_model_dir) and isinstance(same.alpha, float)
    others = [
        replace(request, text="The cat runs."),
        replace(request, target="fr"),
        replace(request, beam_size=3),
        replace(request, alpha=0.6),
        replace(request, max_length=20),
        replace(request, model=str(tiny_model_dir) + "/."),  # another name: another key
    ]
    keys = {request, *others}
    assert len(keys) == 1 + len(others)


def test_the_arguments_translate_as_the_request_says(translator, tiny_model_dir):
    request = Request(tiny_model_dir, SENTENCE, "fr", beam_size=2, alpha=0.0, max_length=3)
    result = translator.translate(**request.arguments)
    assert result.target == "fr" and len(result.output_ids) <= 3
    assert result.output_ids == translator.translate(SENTENCE, "fr", 2, 0.0, False, 3).output_ids


def test_equal_requests_have_equal_fields_of_the_same_types(tiny_model_dir):
    """st.cache_data hashes a dataclass by its fields (dataclasses.asdict): equal requests give the
    same fields, types and all, whether made with a str or a Path, an int or a float alpha."""
    request = Request(str(tiny_model_dir), SENTENCE, "de", 4, 1.0)
    same = Request(Path(tiny_model_dir), SENTENCE, "de", 4, 1)
    fields, same_fields = asdict(request), asdict(same)
    assert fields == same_fields
    assert [type(v) for v in fields.values()] == [type(v) for v in same_fields.values()]


def test_a_marian_directory_is_checked_against_its_own_languages(tmp_path):
    pytest.importorskip("transformers")  # builds the model
    from tests.marian_model import build_marian_dir

    path = build_marian_dir(tmp_path, targets=("de",))
    assert target_languages(str(path)) == tuple(Translator.load(path).languages) == ("de",)
    assert Request(path, SENTENCE, "de").model == str(path)
    with pytest.raises(InputError, match=r"Unknown target language 'fr': choose one of de\.$"):
        Request(path, SENTENCE, "fr")
