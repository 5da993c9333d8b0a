"""core.model.sinusoids names the wave that positional_encoding computes at every dimension."""

import numpy as np
import pytest

from core.model.config import POSITIONAL_LAYOUTS
from core.model.sinusoids import wave
from core.model.transformer import positional_encoding

FUNCTIONS = {"sin": np.sin, "cos": np.cos}


@pytest.mark.parametrize("layout", POSITIONAL_LAYOUTS)
@pytest.mark.parametrize("d_model", [2, 8, 32])
def test_each_dimension_holds_its_named_wave(layout, d_model):
    length = 60
    pe = positional_encoding(length, d_model, layout).numpy()  # (length, d_model)
    position = np.arange(length, dtype=np.float64)
    for dimension in range(d_model):
        named = wave(dimension, d_model, layout)
        expected = FUNCTIONS[named.function](position / 10000 ** (named.two_i / d_model))
        np.testing.assert_allclose(pe[:, dimension], expected, atol=1e-6, err_msg=named.formula)


@pytest.mark.parametrize("layout", POSITIONAL_LAYOUTS)
def test_every_wave_is_held_by_one_dimension(layout):
    d_model = 16
    held = {(w.function, w.two_i) for w in (wave(d, d_model, layout) for d in range(d_model))}
    assert held == {(f, two_i) for f in FUNCTIONS for two_i in range(0, d_model, 2)}


def test_marian_dimensions_are_named_by_their_halves():
    # the examples (#50): a d_model 32 MarianMT model
    assert wave(1, 32, "halves").formula == "sin(pos / 10000^(2/32))"
    assert wave(8, 32, "halves").formula == "sin(pos / 10000^(16/32))"
    assert wave(16, 32, "halves").formula == "cos(pos / 10000^(0/32))"
    assert wave(1, 32, "interleaved").formula == "cos(pos / 10000^(0/32))"
