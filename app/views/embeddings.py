"""Embeddings and positional encoding: what enters the first layer, position by position."""

import streamlit as st

from app import figures, state, ui
from core.model import positional_encoding

st.title("Embeddings & positional encoding")
a = state.analysis()
r = a.result
config = state.translator().model.config
st.markdown(
    "Attention alone ignores order, so each position adds a fixed pattern of sines and "
    "cosines of geometrically spaced wavelengths (section 3.5):"
)
st.latex(
    r"PE_{(pos,\,2i)} = \sin\!\left(pos / 10000^{2i/d_{model}}\right) \qquad "
    r"PE_{(pos,\,2i+1)} = \cos\!\left(pos / 10000^{2i/d_{model}}\right)"
)

st.subheader("Your sentence")
ui.chart(
    figures.positional_heatmap(
        r.embeddings.source_position,
        r.source_tokens,
        f"PE of the {len(r.source_tokens)} source positions",
    ),
    "pe-sentence",
)

st.subheader("A longer range")
length = st.slider(
    "Positions",
    16,
    config.max_len,
    value=min(100, config.max_len),
    key="positions",
    bind="query-params",
)
pe = positional_encoding(length, config.d_model).numpy()
ui.chart(figures.positional_heatmap(pe, title=f"PE, positions 0..{length - 1}"), "pe-range")
dims = st.multiselect(
    "Dimensions to draw",
    list(range(config.d_model)),
    default=sorted({0, 1, config.d_model // 4, config.d_model // 2}),
    key="dims",
    bind="query-params",
)
if dims:
    ui.chart(figures.positional_curves(pe, dims), "pe-curves")
st.markdown(
    "**Similarity between positions.** The dot product PE(p)·PE(q) depends only on the distance "
    "p − q, which lets attention find relative positions."
)
ui.chart(figures.positional_similarity(pe), "pe-similarity")

st.subheader("Token embedding + positional encoding")
st.caption(
    "The encoder input is Embedding(token) × √d_model + PE; the same embedding matrix is the "
    "decoder's input embedding and its output projection (section 3.4)."
)
e = r.embeddings
ui.chart(figures.embedding_sum(e.source_token, e.source_position, r.source_tokens), "embedding-sum")
