"""Beam search, step by step: the tree of hypotheses, each step's candidates and the
cross-attention behind them, and the finished hypotheses re-ranked by the length penalty."""

import numpy as np
import streamlit as st

from app import controls, lectern, state, ui
from app.display import ATTENTION_KINDS
from app.figures.beam_layout import (
    candidate_rows,
    candidates_per_beam,
    reason_explanations,
    rerank,
    rerank_ranks,
    shown_candidates,
    traced_per_beam,
    tree_candidates_per_beam,
    tree_layout,
)
from app.figures.beam_search import (
    beam_tree,
    candidate_bars,
    first_step_in_view,
    legend_text,
    rerank_lines,
)
from app.figures.coverage import coverage_map
from app.figures.heatmaps import attention_map
from app.numbering import index_of, index_or_every
from core.inspection import step_coverage

PLAY_INTERVAL_S = 0.8  # seconds per step while the search plays

PAGE = "beam_search"  # its settings: app/page_settings.py

st.title("Beam search, step by step")
analysis = state.analysis()
result = analysis.result
settings = state.settings()
detokenize = state.translator().tokenizer.decode  # token ids -> text, special tokens dropped
explanations = reason_explanations(settings.beam)
last = len(result.steps) - 1
if settings.beam == 1:
    st.info(
        "Beam size 1 is greedy search: every step keeps only the single most probable next piece."
    )
else:
    st.markdown(
        f"At every step each of the {settings.beam} live hypotheses is extended by every piece of "
        f"the vocabulary. Of the {2 * settings.beam} best extensions by cumulative "
        f"log-probability, those that end with `</s>` within the top {settings.beam} are "
        f"finished, and the {settings.beam} best others stay live. The search stops when "
        f"{settings.beam} hypotheses have finished; the output is the finished one with the best "
        "length-normalised score, log P / lp (log P: the natural-log probability, in nats)."
    )
st.caption(
    "Steps count from 0, as the search does: step 0 chooses the first piece after `<s>`, step n "
    "the (n + 1)-th. The slider, the shaded column of the tree and the candidates share that "
    "number."
)
if st.session_state.get("step", 0) > last:
    st.session_state.step = last


step_numbers = range(last + 1)
playing = lectern.play_toggle("▶ Play the search", "play", "step", step_numbers, disabled=last == 0)
lectern.keys("previous", "next")


def step_view() -> None:
    if playing:
        lectern.play_on("step", step_numbers)
    with ui.step_buttons("step", step_numbers, {"previous": "◀ Previous", "next": "Next ▶"}):
        step = controls.slider(PAGE, "step", last) if last else 0
    beam_step = result.steps[step]
    per_beam = candidates_per_beam(settings.beam)  # bars per beam
    tree_per_beam = tree_candidates_per_beam(settings.beam)
    traced = traced_per_beam(beam_step)
    nodes = tree_layout(
        result.steps, analysis.pieces, step, per_beam=tree_per_beam, detokenize=detokenize
    )
    ui.chart(
        beam_tree(nodes, result.output_ids, step, explanations),
        "beam-tree",
        caption=ui.sentence_caption(search_step=step),
    )
    first_in_view = first_step_in_view(step)
    window = (
        f" Steps {first_in_view}–{step} are in view: drag the chart sideways, or double-click it, "
        "for the earlier ones."
        if first_in_view > 0
        else ""
    )
    pruned_shown = (
        f"the {tree_per_beam} most probable of each beam, of {traced}, at the shaded step only"
        if tree_per_beam < traced
        else "at the shaded step only"
    )
    st.caption(
        f"The shaded column is step {step}. Green path: the output. Blue: kept live, green dots: "
        f"finished, grey: pruned ({pruned_shown}). Hover a node for its text, probabilities, "
        f"scores and why it was kept or dropped.{window}"
    )
    rows = candidate_rows(
        beam_step, analysis.pieces, detokenize, shown_candidates(beam_step, per_beam)
    )
    left, right = st.columns(2)
    with left:
        st.subheader(f"Step {step}: the candidates")
        ui.chart(
            candidate_bars(rows, explanations),
            "candidates",
            caption=ui.sentence_caption(search_step=step),
        )
        if per_beam < traced:
            st.caption(
                f"For readability the bars show the {per_beam} most probable candidates of each "
                f"beam (of the {traced} the search traced), and every one it kept or finished; "
                "the table below lists them all."
            )
    with right:
        st.subheader(f"{ATTENTION_KINDS['cross']} behind this step")
        cross = result.step_attention[step]
        layer = controls.pick(PAGE, "xlayer")
        head = controls.pick(PAGE, "xhead")
        head_index = index_or_every(head)
        ui.chart(
            attention_map(cross, index_of(layer), head_index),
            "step-cross-attention",
            caption=ui.sentence_caption(kind="cross", layer=layer, head=head, search_step=step),
        )
        st.caption(
            "A row per live hypothesis: its newest position, which reads the end of its prefix "
            "and predicts the piece this step chooses (?), attending over the source."
        )
        grown = step_coverage(result, step, state.translator().tokenizer.pieces)
        so_far = np.stack([found.values(index_of(layer), head_index) for found in grown])  # (n, S)
        heads = "mean of heads" if head_index is None else f"head {head}"
        ui.chart(
            coverage_map(
                so_far,
                cross.query_labels,
                cross.key_labels,
                f"Coverage so far, layer {layer}, {heads}",
            ),
            "step-coverage",
            caption=ui.sentence_caption(kind="cross", layer=layer, head=head, search_step=step),
        )
        st.caption(
            "Each hypothesis's coverage so far: the row above added to its own rows of the steps "
            "before, C(i, j) = C(i − 1, j) + α(i, j) (Tu et al. 2016). A source piece that stays "
            "pale has had little attention yet; one that darkens again and again is being "
            "attended more than once. The Coverage page flags the output's dropped and repeated "
            "words."
        )
    ui.table(
        candidate_rows(beam_step, analysis.pieces, detokenize),
        {"probability": "%.3f", "log-prob": "%.3f", "cumulative": "%.3f", "normalised": "%.3f"},
    )


ui.playable(step_view, playing, PLAY_INTERVAL_S)

with st.expander("What the reasons in the tree, the bars and the table mean", expanded=True):
    st.table({"meaning": explanations})  # a row per reason, named by it

st.header("Finished hypotheses, re-ranked by the length penalty")
st.markdown(
    "Log-probabilities only fall as a hypothesis grows, so raw scores favour short outputs. "
    "Dividing by lp = ((5 + length) / 6)^α evens that out (Wu et al., 2016). Move α in the "
    "sidebar: the ranking below changes with it."
)
ui.table(
    rerank(result.finished, settings.alpha, detokenize),
    {"log P": "%.3f", "lp": "%.3f", "normalised": "%.3f"},
)
alphas = np.linspace(0.0, 2.0, 41)
ranks, gaps = rerank_ranks(result.finished, alphas)
labels = [legend_text(detokenize(h.ids), len(h.ids)) for h in result.finished]
ui.chart(rerank_lines(labels, ranks, gaps, alphas, settings.alpha), "rerank")
st.caption(
    "Each line is a finished hypothesis, its rank against α (1, on top, is the output); where "
    "two lines cross, the length penalty swaps them. Hover a point for its gap to the best."
)
