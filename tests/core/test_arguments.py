"""Bad arguments from a program are a core.InputError naming the argument, refused before any
work: the model is never run."""

import math
import time

import pytest

from core import InputError
from core.translator import MAX_ALPHA, MAX_BEAM_SIZE

SENTENCE = "The dog runs."


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"beam_size": 1000}, "beam_size"),
        ({"beam_size": 0}, "beam_size"),
        ({"beam_size": 2.5}, "beam_size"),
        ({"beam_size": True}, "beam_size"),
        ({"alpha": 1e308}, "alpha"),
        ({"alpha": math.nan}, "alpha"),
        ({"alpha": -1.0}, "alpha"),
        ({"alpha": "0.6"}, "alpha"),
        ({"max_length": 0}, "max_length"),
        ({"target": "es"}, "target language"),
    ],
)
def test_bad_decoding_arguments_are_refused_at_once(translator, arguments, named):
    start = time.perf_counter()
    with pytest.raises(InputError, match=named):
        translator.translate(SENTENCE, **{"target": "de", **arguments, "trace": True})
    assert time.perf_counter() - start < 1.0  # refused, not run (beam 1000 ran for 160 s)


@pytest.mark.parametrize("text", ["abc\ud800", "\udfff", b"The dog runs.", None])
def test_text_that_is_not_valid_unicode_is_refused(translator, text):
    with pytest.raises(InputError, match=r"string|Unicode"):
        translator.translate(text, "de")


def test_translate_batch_checks_its_settings_too(translator):
    with pytest.raises(InputError, match="beam_size"):
        translator.translate_batch([SENTENCE], "de", beam_size=MAX_BEAM_SIZE + 1)
    with pytest.raises(InputError, match="Unicode"):
        translator.translate_batch([SENTENCE, "x\ud800"], "fr", beam_size=1)


def test_the_edges_of_the_ranges_translate(translator):
    for beam_size, alpha in ((1, 0.0), (MAX_BEAM_SIZE, MAX_ALPHA), (3, 1)):
        assert isinstance(translator.translate(SENTENCE, "de", beam_size, alpha).text, str)
