"""The Attention page's computations: one query of one head, step by step, on the translation the
page draws (the model's, or a snapshot's reading of it)."""

from __future__ import annotations

import streamlit as st

from app.snapshot_cache import load_snapshot, snapshot_view
from app.state import cached_analysis, load_translator
from core import Request
from core.files import ModelDir
from core.inspection import Head, ScaledDotProduct, scaled_dot_product_of


@st.cache_data(max_entries=64, show_spinner=False)
def cached_scaled_dot_product(
    request: Request, step: int | None, head: Head, position: int
) -> ScaledDotProduct:
    """Query ``position`` of ``head`` through scaled dot-product attention
    (core.inspection.scaled_dot_product), computed by the model (``step`` None) on its
    translation, or by its snapshot at training step ``step`` on the translation it reads by
    teacher forcing: the maps the Attention page draws (a few kB an entry)."""
    if step is None:
        translator, translation = load_translator(request.model), cached_analysis(request).result
    else:
        (snapshot,) = [found for found in ModelDir(request.model).snapshots() if found.step == step]
        translator = load_snapshot(request.model, snapshot)
        translation = snapshot_view(request, snapshot).forced
    return scaled_dot_product_of(translator.model, translation, head, position)
