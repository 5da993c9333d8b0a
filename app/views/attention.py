"""Attention: every head of every layer, for the three kinds of attention."""

import streamlit as st

from app import figures, state, ui
from app.analysis import merge_words

KINDS = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Cross-attention",
}
EXPLAIN = {
    "encoder": "Each source piece (row) attends to every source piece (column).",
    "decoder": "Each decoder position (row) attends to itself and the positions before it: the "
    "causal mask sets every later position to exactly 0.",
    "cross": "Each decoder position (row) attends to the encoder output (columns): this is where "
    "the translation looks at the source.",
}

st.title("Attention")
a = state.analysis()
r = a.result
kind = ui.pick("Attention", list(KINDS), "kind", format_func=KINDS.get)
st.caption(EXPLAIN[kind])
weights = getattr(r.attention, kind)  # (L, H, q, k)
queries = r.source_tokens if kind == "encoder" else r.target_tokens
keys = r.target_tokens if kind == "decoder" else r.source_tokens
words = st.toggle("Merge pieces into words", key="words", bind="query-params")
if words:
    weights, queries, keys = merge_words(weights, queries, keys)

single, grid = st.tabs(
    ["One head", "All layers and heads"], key="view", bind="query-params", on_change="rerun"
)
if single.open is not False:  # None: tabs without state (AppTest); draw it
    with single:
        left, right = st.columns([2, 3])
        with left:
            layer = ui.pick("Layer", range(1, len(weights) + 1), "layer", default=len(weights))
        with right:
            head = ui.pick("Head", ["avg", *range(1, weights.shape[1] + 1)], "head", default=1)
        if head == "avg":
            selected, head_name = weights[layer - 1].mean(axis=0), "average of the heads"
        else:
            selected, head_name = weights[layer - 1, head - 1], f"head {head}"
        title = f"{KINDS[kind]}, layer {layer}, {head_name}"
        ui.chart(figures.heatmap(selected, queries, keys, title=title), "attention-head")
if grid.open:
    with grid:
        st.caption("A row of maps per layer, a column per head. Hover a cell for its tokens.")
        ui.chart(figures.attention_grid(weights, queries, keys), "attention-grid")
