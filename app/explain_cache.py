"""The Explain page's computations, each cached per request (core.Request) and the piece it is
about: the attribution lenses, the contrast with a foil, the likeliest other pieces and a head's
effect on one piece; and the occlusion lens for every piece, the Coverage page's measured best."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.shared_cache import shared
from app.state import cached_analysis, load_translator
from core import (
    Request,
    Translation,
)
from core.inspection import (
    Head,
    Shift,
    attribution,
    distribution_shift,
    intervened_translator,
    occlusion_rows,
)

OCCLUSION_BYTES = 2**23  # a (rows, source pieces) array each: 4 bytes x 500 x 400 for a long text


@st.cache_data(
    max_entries=64,
    show_spinner=f"Computing every lens (integrated gradients: {attribution.IG_STEPS} passes)…",
)
def cached_lenses(request: Request, position: int) -> attribution.Lenses:
    result = cached_analysis(request).result
    return attribution.lenses(load_translator(request.model).model, result, position)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_alternatives(
    request: Request, position: int, count: int = 6
) -> list[tuple[int, str, float]]:
    """The ``count`` likeliest pieces at output ``position`` other than the one chosen, as
    (id, piece, probability), teacher-forced on the translation."""
    result = cached_analysis(request).result
    translator = load_translator(request.model)
    probabilities = translator.predictions(result)[position]
    ranked = [
        int(piece) for piece in np.argsort(-probabilities) if piece != result.output_ids[position]
    ]
    return [
        (piece, translator.tokenizer.pieces([piece])[0], float(probabilities[piece]))
        for piece in ranked[:count]
    ]


@st.cache_data(
    max_entries=64,
    show_spinner=f"Integrated gradients of the contrast ({attribution.IG_STEPS} passes)…",
)
def cached_contrast(request: Request, position: int, foil: int) -> attribution.Contrast:
    result = cached_analysis(request).result
    return attribution.contrast(load_translator(request.model).model, result, position, foil)


@st.cache_data(max_entries=64, show_spinner="Changing the head…")
def cached_word_shift(
    request: Request, position: int, head: str, how: str
) -> tuple[Shift, Translation]:
    """How ``how`` on ``head`` moves the distribution output position ``position`` was chosen
    from (teacher-forced), and the sentence re-translated with it."""
    normal = cached_analysis(request).result
    translator = load_translator(request.model)
    changed = intervened_translator(translator, [Head.parse(head)], how)
    vocabulary = translator.tokenizer.pieces(range(len(translator.tokenizer)))
    shift = distribution_shift(
        translator.predictions(normal)[position], changed.predictions(normal)[position], vocabulary
    )
    return shift, changed.translate(**request.arguments)


@shared(OCCLUSION_BYTES, spinner="Occlusion for every output piece: the sentence again with each "
        "source piece hidden in turn…")  # fmt: skip
def cached_occlusion(request: Request) -> np.ndarray:
    """The occlusion lens of :func:`cached_lenses` for every output piece, (rows, source pieces)
    (core.inspection.occlusion_rows, the function the coverage study read): what the Coverage
    page reads as coverage. Kept for every session (``cached_occlusion.stored``)."""
    result = cached_analysis(request).result
    return occlusion_rows(load_translator(request.model).model, result)
