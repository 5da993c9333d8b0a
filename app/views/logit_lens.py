"""Logit lens: what each decoder layer would say if the decoder ended there, at which layer the
word the model writes becomes its first choice, and which heads put it there (core/inspection:
logit_lens.py, direct_contributions.py)."""

import numpy as np
import streamlit as st

from app import controls, state, ui
from app.display import piece_text
from app.figures.logit_lens import contribution_bars, lens_map, rank_curve
from app.numbering import index_of, shown_of
from core import Request
from core.inspection import DirectContributions, LogitLens, direct_contributions, logit_lens


@st.cache_data(max_entries=32, show_spinner="Reading every decoder state through the output…")
def cached_lens(request: Request) -> tuple[LogitLens, DirectContributions]:
    """The lens and the direct contributions of the request's translation."""
    translator = state.load_translator(request.model)
    result = state.cached_analysis(request).result
    return logit_lens(translator, result), direct_contributions(translator.model, result)


def measured_sentence(card: dict) -> str:
    """What the model's lens study (python -m train.studies.lens_study) measured, for students."""
    study = card.get("lens_study")
    if not study:
        return (
            "**Not measured on this model**: its card has no lens study (`python -m "
            "train.studies.lens_study --card <model>`)."
        )
    results = study["results"]
    means = ", ".join(f"layer {r['mean_layer']:.1f} into {t}" for t, r in results.items())
    late = study["decoder_layers"] - 1
    settled = " and ".join(
        f"{r['settled_by_layer'][late]:.0%}{' of the words' if i == 0 else ''} into {t}"
        for i, (t, r) in enumerate(results.items())
    )
    return (
        f"**Measured on this model** over {study['sentences']} {study['corpus']} sentences per "
        "language: the word it writes becomes the lens's first choice, and stays so, on average "
        f"at {means} (0 is the embedding); by layer {late}, {settled} have. "
        f"`{study['command']}`"
    )


PAGE = "logit_lens"  # its settings: app/page_settings.py

st.title("Logit lens: where the word forms")
translator = state.translator()
result = state.analysis().result
request = state.current()
lens, parts = cached_lens(request)
st.markdown(
    "Stop the decoder after any layer and read its state the way the model reads its last one: "
    "through the final normalisation and the output projection (the *logit lens*, nostalgebraist "
    "2020). Each cell writes that state's first choice for the next piece; its colour is the "
    "probability it gives the piece the translation finally chose. Watch the column of a word "
    "turn dark as you go up: the layer where it does is where the word forms. "
    + measured_sentence(translator.card)
)
every_sublayer = controls.toggle(PAGE, "lens_sublayers")
states = range(len(lens.states)) if every_sublayer else [0, *range(3, len(lens.states), 3)]
settled = lens.settled_layer()
positions = range(len(lens.chosen))
if st.session_state.get("lens_position", 0) not in positions:
    st.session_state.pop("lens_position", None)
latest = int(np.argmax(settled))  # the word that formed last: the most to watch
picked = controls.setting(PAGE, "lens_position")
position = st.selectbox(
    picked.label,
    positions,
    index=latest,
    # the URL holds this text: unique, as pieces repeat
    format_func=[f"{t}: {piece_text(label)}" for t, label in enumerate(lens.positions)].__getitem__,
    key="lens_position",
    bind="query-params",
    help=picked.help,
)
layer = controls.pick(PAGE, "lens_layer", default=max(int(settled[position]), 1))
chosen = piece_text(lens.chosen[position])
ui.chart(
    lens_map(lens, states, (3 * layer, position), "What each decoder layer would say"),
    "logit-lens",
    caption=ui.sentence_caption(word=lens.chosen[position]),
)
st.caption(
    "Columns: output positions, headed by the piece the translation chose there. Rows: the "
    "decoder's states, the embedding at the bottom, the last layer on top (the model's own "
    "output). Pre-LN models (the shipped one) read the residual stream through the final "
    "LayerNorm; post-LN ones (the paper's, MarianMT) read each sub-layer's sum before its own "
    "LayerNorm through the last one. The outlined cell is the position and layer picked."
)
settled_at = int(settled[position])
st.text(
    f"“{chosen}” becomes the first choice at "
    + (
        "the embedding"
        if settled_at == 0
        else f"layer {settled_at}"
        if settled_at > 0
        else "no layer: the search chose a piece the model ranks lower"
    )
    + f"; its rank after the embedding: {lens.chosen_rank[0, position]:,}."
)
ui.chart(
    rank_curve(lens, position, f"The rank of “{chosen}” through the decoder"),
    "logit-lens-rank",
    caption=ui.sentence_caption(word=lens.chosen[position]),
)

st.header(f"Which parts of layer {layer} pushed “{chosen}”")
heads = parts.self_heads.shape[1]
labels = [
    *(f"self-attention H{shown_of(h)}" for h in range(heads)),
    *(f"cross-attention H{shown_of(h)}" for h in range(heads)),
    "feed-forward",
]
values = [
    *parts.self_heads[index_of(layer), :, position],
    *parts.cross_heads[index_of(layer), :, position],
    parts.feed_forward[index_of(layer), position],
]
left, right = st.columns(2)
with left:
    ui.chart(
        contribution_bars(
            labels,
            values,
            f"What layer {layer}'s parts added to the logit of “{chosen}”",
            f"added to the logit of “{chosen}”",
            highlight=int(np.argmax(values)),
        ),
        "logit-lens-heads",
        caption=ui.sentence_caption(layer=layer, word=lens.chosen[position]),
    )
best = int(np.argmax(parts.cross_heads[index_of(layer), :, position]))
split = parts.cross_sources[index_of(layer), best, position]
with right:
    ui.chart(
        contribution_bars(
            [f"{s}: {piece}" for s, piece in enumerate(result.source_tokens)],
            split,
            f"Cross-attention L{layer} H{shown_of(best)}: what each source piece passed",
            f"added to the logit of “{chosen}”",
            highlight=int(np.argmax(split)),
        ),
        "logit-lens-source",
        caption=ui.sentence_caption(
            kind="cross", layer=layer, head=shown_of(best), word=lens.chosen[position]
        ),
    )
st.caption(
    "Direct contributions: each part's output, carried to the output with every LayerNorm's "
    "scale held at the real one, dotted with the chosen piece's embedding (direct logit "
    "attribution). A cross-attention head's part splits over the source pieces as attention "
    "weight × value; green marks the largest. Every part of every layer, the embedding and the "
    f"biases add up to the logit: {parts.logit[position]:.3f} = embedding "
    f"{parts.embedding[position]:+.3f}, heads "
    f"{(parts.self_heads + parts.cross_heads)[..., position].sum():+.3f}, feed-forwards "
    f"{parts.feed_forward[:, position].sum():+.3f}, biases {parts.biases[position]:+.3f}."
)
