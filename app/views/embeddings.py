"""Embeddings and positional encoding: what enters the first layer, position by position."""

import math

import numpy as np
import streamlit as st

from app import controls, state, ui
from app.figures.positional import (
    embedding_sum,
    positional_curves,
    positional_heatmap,
    positional_similarity,
)
from core.model import positional_encoding

PAGE = "embeddings"  # its settings: app/page_settings.py

st.title("Embeddings & positional encoding")
result = state.analysis().result
config = state.translator().model.config
layout = config.positional_layout
st.markdown(
    "Attention alone ignores order, so each position adds a fixed pattern of sines and "
    "cosines of geometrically spaced wavelengths (section 3.5):"
)
if layout == "halves":  # a model trained elsewhere (Marian)
    st.latex(
        r"PE_{(pos,\,i)} = \sin\!\left(pos / 10000^{2i/d_{model}}\right) \qquad "
        r"PE_{(pos,\,d_{model}/2+i)} = \cos\!\left(pos / 10000^{2i/d_{model}}\right)"
    )
    st.caption(
        "This model lays the paper's waves out as Marian does: all sines in the first half of "
        "the dimensions, all cosines in the second. The heatmaps draw them as it stores them."
    )
    order = "blocks"  # as computed: this model's own order is the two blocks
else:
    st.latex(
        r"PE_{(pos,\,2i)} = \sin\!\left(pos / 10000^{2i/d_{model}}\right) \qquad "
        r"PE_{(pos,\,2i+1)} = \cos\!\left(pos / 10000^{2i/d_{model}}\right)"
    )
    order = controls.pick(PAGE, "peorder")
order_note = " (sines, then cosines)" if order == "blocks" else ""

st.subheader("Your sentence")
ui.chart(
    positional_heatmap(
        result.embeddings.source_position,
        result.source_tokens,
        f"PE of the {len(result.source_tokens)} source positions{order_note}",
        order,
        layout=layout,
    ),
    "pe-sentence",
)

st.subheader("A longer range")
length = controls.slider(PAGE, "positions")
pe = positional_encoding(length, config.d_model, layout).numpy()  # (T, D)
ui.chart(
    positional_heatmap(
        pe, title=f"PE, positions 0..{length - 1}{order_note}", order=order, layout=layout
    ),
    "pe-range",
)
dims = controls.multiselect(PAGE, "dims")
if dims:
    ui.chart(positional_curves(pe, dims, layout=layout), "pe-curves")
else:
    st.info("No dimension chosen: pick one or more under “Dimensions to draw” to see its curve.")
st.markdown(
    "**Similarity between positions.** The dot product PE(p)·PE(q) depends only on the distance "
    "p − q, which lets attention find relative positions."
)
ui.chart(positional_similarity(pe), "pe-similarity")

st.subheader("Token embedding + positional encoding")
st.caption(
    "The encoder input is Embedding(token) × √d_model + PE; the same embedding matrix is the "
    "decoder's input embedding and its output projection (section 3.4)."
)
embeddings = result.embeddings
token_largest = float(np.abs(embeddings.source_token).max())
position_largest = float(np.abs(embeddings.source_position).max())
st.markdown(
    f"Why the middle panel looks washed out on one scale: the embeddings are multiplied by "
    f"√d_model = √{config.d_model} ≈ {math.sqrt(config.d_model):.1f}, so on this sentence they "
    f"reach ±{token_largest:.2f} while the positional encoding stays within "
    f"±{position_largest:.2f}. On one scale PE is pale beside them: it is that small a part of "
    "the sum the encoder reads. Give each panel its own scale to see its pattern."
)
scale = controls.pick(PAGE, "escale")
ui.chart(
    embedding_sum(
        embeddings.source_token,
        embeddings.source_position,
        result.source_tokens,
        shared_scale=scale == "shared",
        order=order,
        layout=layout,
    ),
    "embedding-sum",
)
