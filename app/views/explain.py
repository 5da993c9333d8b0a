"""Explain: for one produced word, what the model attended to beside what the word depends on."""

import streamlit as st

from app import figures, state, ui
from core.attribution import IG_STEPS, rank_agreement

READING_GUIDE = (
    "**How to read this.** The first four rows are attention in different guises: the raw "
    "cross-attention, attention rolled out through the encoder (Abnar & Zuidema 2020), and "
    "attention weighted by the size of what each source piece adds (Kobayashi et al. 2020). The "
    "last three ask the model what the word *depends on*: gradient × input and integrated "
    "gradients (Captum) measure how the word's log-probability responds to each source "
    "embedding, occlusion removes a piece and measures the drop. Where attention and the "
    "dependence lenses rank the pieces alike (tau near 1), attention is a fair explanation for "
    "this word; where they disagree, the model attends to one place while the prediction hinges "
    "on another: attention says where information flows, not why the word was chosen (Jain & "
    "Wallace 2019; Wiegreffe & Pinter 2019). Pieces such as the language tag and `</s>` often "
    "soak up attention without mattering much: look for them."
)

st.title("Explain: is attention an explanation?")
a = state.analysis()
r = a.result
s = state.settings()
rows = r.attention.cross.query_labels  # "reads → predicts", one per produced piece
if st.session_state.get("word", 0) not in range(len(rows)):
    del st.session_state["word"]
position = st.selectbox(
    "Produced piece to explain",
    range(len(rows)),
    index=min(1, len(rows) - 1),
    format_func=rows.__getitem__,
    key="word",
    bind="query-params",
    help="Each decoder position reads one piece and predicts the next.",
)
lenses = state.cached_lenses(str(state.model_dir()), s.text, s.to, s.beam, s.alpha, position)
title = f"Why “{lenses.predicted}”? Every lens over the source pieces"
ui.chart(figures.lens_map(lenses.values, lenses.source_labels, title), f"lenses-{position}")
st.caption(
    f"log p(“{lenses.predicted}”) = {lenses.log_prob:.3f}. Each row is divided by its largest "
    "absolute value (hover for the raw value); red: for the word, blue: against it. Integrated "
    f"gradients: {IG_STEPS} steps from a zero embedding, completeness error (Captum's convergence "
    f"delta) {lenses.ig_delta:+.4f}: the attributions sum to the change in log p up to it."
)
ui.chart(
    figures.agreement_map(list(lenses.values), rank_agreement(lenses.values)),
    "lens-agreement",
)
st.markdown(READING_GUIDE)
