"""Attention: every head of every layer, for the three kinds of attention."""

import streamlit as st

from app import figures, state, ui

EXPLAIN = {
    "encoder": "Each source piece (row) attends to every source piece (column).",
    "decoder": "Each decoder position (row) attends to itself and the positions before it: the "
    "causal mask sets every later position to exactly 0.",
    "cross": "Each decoder position (row) attends to the encoder output (columns): this is where "
    "the translation looks at the source.",
}

st.title("Attention")
r = state.analysis().result
earlier = ui.snapshot_picker()
if earlier is not None:
    r = earlier.forced
kind = ui.pick("Attention", list(ui.ATTENTION_KINDS), "kind", format_func=ui.ATTENTION_KINDS.get)
st.caption(EXPLAIN[kind])
if kind != "encoder":
    st.caption(ui.DECODER_ROWS)
words = st.toggle("Merge pieces into words", key="words", bind="query-params")
attention = getattr(r.word_attention if words else r.attention, kind)
n_layers, n_heads = attention.weights.shape[:2]

single, grid = st.tabs(
    ["One head", "All layers and heads"], key="view", bind="query-params", on_change="rerun"
)
if single.open is not False:  # None: tabs without state (AppTest); draw it
    with single:
        left, right = st.columns([2, 3])
        with left:
            layer = ui.pick("Layer", range(1, n_layers + 1), "layer", default=n_layers)
        with right:
            head = ui.pick("Head", ["avg", *range(1, n_heads + 1)], "head", default=1)
        head_name = "average of the heads" if head == "avg" else f"head {head}"
        title = f"{ui.ATTENTION_KINDS[kind]}, layer {layer}, {head_name}"
        if earlier is not None:
            title += f", step {earlier.step:,}"
        head_index = None if head == "avg" else head - 1
        ui.chart(figures.attention_map(attention, layer - 1, head_index, title), "attention-head")
if grid.open:
    with grid:
        st.caption("A row of maps per layer, a column per head. Hover a cell for its tokens.")
        ui.chart(figures.attention_grid(attention), "attention-grid")
