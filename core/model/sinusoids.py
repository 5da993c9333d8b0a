"""Which wave each dimension of the sinusoidal positional encoding holds (section 3.5), in either
layout of core.model.config.POSITIONAL_LAYOUTS: what a figure names a dimension by, and what
core.model.transformer.positional_encoding computes there (tests/core/test_sinusoids.py holds
them to each other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wave:
    """PE(pos, d) = function(pos / 10000^(two_i / d_model)) at one dimension d."""

    function: str  # "sin" or "cos"
    two_i: int  # the exponent's 2i: the wavelength is 2π · 10000^(2i / d_model)
    d_model: int

    @property
    def formula(self) -> str:
        return f"{self.function}(pos / 10000^({self.two_i}/{self.d_model}))"


def wave(dimension: int, d_model: int, layout: str) -> Wave:
    """The wave of ``dimension``. interleaved (the paper): sin at 2i, cos at 2i + 1. halves
    (Marian, tensor2tensor): sin at i, cos at d_model/2 + i, for i < d_model/2."""
    if layout == "halves":
        half = d_model // 2
        is_sine, i = dimension < half, dimension % half
    else:
        is_sine, i = dimension % 2 == 0, dimension // 2
    return Wave("sin" if is_sine else "cos", 2 * i, d_model)
