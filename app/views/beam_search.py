"""Beam search, step by step: the tree of hypotheses, each step's candidates and the
cross-attention behind them, and the finished hypotheses re-ranked by the length penalty."""

import numpy as np
import streamlit as st

from app import figures, state, ui
from app.analysis import beam_tree, candidate_rows, prefix_text, rerank, rerank_curves

PLAY_INTERVAL_S = 0.8  # seconds per step while the search plays
LEGEND_CHARS = 60  # a finished hypothesis is named by the end of its text in the legend

st.title("Beam search, step by step")
a = state.analysis()
r = a.result
s = state.settings()
last = len(r.steps) - 1
if s.beam == 1:
    st.info(
        "Beam size 1 is greedy search: every step keeps only the single most probable next piece."
    )
else:
    st.markdown(
        f"At every step each of the {s.beam} live hypotheses is extended by every piece of the "
        f"vocabulary. Of the {2 * s.beam} best extensions by cumulative log-probability, those "
        f"that end with `</s>` within the top {s.beam} are finished, and the {s.beam} best others "
        f"stay live. The search stops when {s.beam} hypotheses have finished; the output is the "
        "finished one with the best length-normalised score, log P / lp."
    )
if st.session_state.get("step", 0) > last:
    st.session_state.step = last


def move(delta: int) -> None:
    st.session_state.step = min(max(st.session_state.get("step", 0) + delta, 0), last)


playing = st.toggle("▶ Play the search", key="play", disabled=last == 0)


def step_view() -> None:
    if playing:
        if st.session_state.get("step", 0) >= last:
            st.session_state.play = False
            st.rerun()
        move(1)
    back, forward, slider = st.columns([1.3, 1.3, 7], vertical_alignment="bottom")
    back.button("◀ Previous", key="previous", on_click=move, args=(-1,), width="stretch")
    forward.button("Next ▶", key="next", on_click=move, args=(1,), width="stretch")
    with slider:
        step = st.slider("Step", 0, last, key="step", bind="query-params") if last else 0
    beam_step = r.steps[step]
    ui.chart(figures.beam_tree(beam_tree(r.steps, a.pieces, step), r.output_ids, step), "beam-tree")
    st.caption(
        "Green path: the output. Blue: kept live, green dots: finished, grey: pruned at this step "
        "(shown for the shaded step only). Hover a node for its probabilities and scores."
    )
    rows = candidate_rows(beam_step, a.pieces)
    left, right = st.columns(2)
    with left:
        st.subheader(f"Step {step}: the candidates")
        ui.chart(figures.candidate_bars(rows), "candidates")
    with right:
        st.subheader("Cross-attention behind this step")
        cross = beam_step.cross_attention
        n_layers, n_heads = cross.weights.shape[:2]
        layer = ui.pick("Layer", range(1, n_layers + 1), "xlayer", default=n_layers)
        head = ui.pick("Head", ["avg", *range(1, n_heads + 1)], "xhead")
        head_index = None if head == "avg" else head - 1
        ui.chart(figures.attention_map(cross, layer - 1, head_index), "step-cross-attention")
        st.caption(
            "A row per live hypothesis: its newest position, which reads the end of its prefix "
            "and predicts the piece this step chooses (?), attending over the source."
        )
    ui.table(
        rows,
        {"probability": "%.3f", "log-prob": "%.3f", "cumulative": "%.3f", "normalised": "%.3f"},
    )


st.fragment(step_view, run_every=PLAY_INTERVAL_S if playing else None)()

st.header("Finished hypotheses, re-ranked by the length penalty")
st.markdown(
    "Log-probabilities only fall as a hypothesis grows, so raw scores favour short outputs. "
    "Dividing by lp = ((5 + length) / 6)^α evens that out (Wu et al., 2016). Move α in the "
    "sidebar: the ranking below changes with it."
)
ui.table(
    rerank(r.finished, s.alpha, a.pieces), {"log P": "%.3f", "lp": "%.3f", "normalised": "%.3f"}
)
alphas = np.linspace(0.0, 2.0, 41)
labels = [prefix_text(h.tokens, a.pieces)[-LEGEND_CHARS:] for h in r.finished]
ui.chart(figures.rerank_lines(labels, rerank_curves(r.finished, alphas), alphas, s.alpha), "rerank")
