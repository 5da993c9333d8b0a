"""Heads lab: find the head you want, see what every head does, and switch heads off live."""

import streamlit as st

from app import figures, state, ui
from core.ablation import KINDS, Head
from core.head_focus import rank_heads
from core.head_statistics import (
    ALIGNMENT_THRESHOLD,
    BROAD_ENTROPY,
    POSITIONAL_THRESHOLD,
    SINK_THRESHOLD,
    head_roles,
    head_statistics,
    what_to_notice,
)

TOP_HEADS = 10
STATISTICS = {
    "confidence": "Confidence: mean top weight, </s> excluded (Voita et al. 2019)",
    "entropy": "Entropy of the rows, nats (Clark et al. 2019)",
    "sink_share": "Share on sinks: </s>, <s>/tag, punctuation (Clark et al. 2019)",
    "mean_distance": "Mean distance |i - j| (self-attention)",
    "same_share": "Rows whose top key is the same position (Voita et al. 2019)",
    "previous_share": "Rows whose top key is the previous position",
    "diagonality": "Diagonality, alignment-like (cross-attention)",
    "monotonicity": "Monotonicity, Spearman's rho (cross-attention)",
}
THRESHOLDS = (
    f"Roles, first match wins: **sink** if ≥ {SINK_THRESHOLD:.0%} of the weight is on sinks and "
    f"the head is not broad; **positional** if ≥ {POSITIONAL_THRESHOLD:.0%} of rows put their top "
    f"weight on one neighbour; **alignment-like** if diagonality ≥ {ALIGNMENT_THRESHOLD}; "
    f"**broad** if normalised entropy ≥ {BROAD_ENTROPY}."
)

st.title("Heads lab: what each head does")
a = state.analysis()
r = a.result
s = state.settings()
kind = ui.pick("Attention", list(ui.ATTENTION_KINDS), "kind", format_func=ui.ATTENTION_KINDS.get)

st.header("Find the head: focus on one word")
words = getattr(r.word_attention, kind)
if st.session_state.get("focus", 0) not in range(len(words.query_labels)):
    del st.session_state["focus"]
query = st.selectbox(
    "Word that attends",
    range(len(words.query_labels)),
    format_func=words.query_labels.__getitem__,
    key="focus",
    bind="query-params",
)
key = st.selectbox(
    "…looking at (optional)",
    [None, *range(len(words.key_labels))],
    format_func=lambda key: (
        "its top word, whichever it is" if key is None else words.key_labels[key]
    ),
    key="at_word",
    help="Pick the word it should find (for 'it': 'animal') to rank heads by the weight on it.",
)
ranking = rank_heads(words, query, key, skip_self=kind != "cross" and key is None)
label = words.query_labels[query]
top = ranking[:TOP_HEADS]
ui.chart(
    figures.focus_bars(
        [found.describe(label) for found in top],
        [found.weight for found in top],
        f"Where “{label}” looks: the {TOP_HEADS} strongest heads",
    ),
    "focus",
)
best = ranking[0]
title = f"{ui.ATTENTION_KINDS[kind]}, layer {best.layer + 1}, head {best.head + 1} (the top head)"
ui.chart(figures.attention_map(words, best.layer, best.head, title), "focus-head")
if kind != "cross":
    st.caption("A word's weight on itself is left out of the ranking.")

st.header("Head dashboard")
pieces = getattr(r.attention, kind)
statistics = head_statistics(pieces.weights, pieces.key_labels, self_attention=kind != "cross")
available = [name for name in STATISTICS if name in statistics]
statistic = ui.pick("Colour by", available, "stat", format_func=STATISTICS.get)
roles = head_roles(statistics)
ui.chart(
    figures.head_dashboard(
        statistics[statistic],
        [role.role for role in roles],
        f"{ui.ATTENTION_KINDS[kind]}: {STATISTICS[statistic]}",
        statistic,
    ),
    f"heads-{kind}-{statistic}",
)
st.caption(THRESHOLDS)
st.markdown(f"**What to notice.** {what_to_notice(roles)}")
st.caption("Computed on your sentence, piece by piece: one sentence is a small sample.")

st.header("Switch heads off")
n_layers, n_heads = pieces.weights.shape[:2]
options = [
    Head(name, layer, head).name
    for name in KINDS
    for layer in range(n_layers)
    for head in range(n_heads)
]
off = st.multiselect(
    "Heads to switch off",
    options,
    key="off",
    bind="query-params",
    placeholder="e.g. enc L5 H5",
    help="A switched-off head's output is set to 0 before W^O (Michel et al. 2019).",
)
if off:
    changed, normal_score = state.cached_ablation(
        str(state.model_dir()), s.text, s.to, s.beam, s.alpha, tuple(sorted(off))
    )
    left, right = st.columns(2)
    left.caption("All heads on")
    left.code(r.text, language=None, wrap_lines=True)
    right.caption(f"{len(off)} head(s) off")
    right.code(changed.text, language=None, wrap_lines=True)
    st.metric(
        "log P(the normal translation)",
        f"{normal_score:.2f}",
        delta=f"{normal_score - r.score:+.2f} with the heads off",
        help="How likely the model with those heads off finds the translation of the full model.",
    )
