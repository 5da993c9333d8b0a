"""Masking: the padding and causal masks, and one head's scores on their way to weights."""

import numpy as np
import streamlit as st

from app import controls, presentation, state, ui
from app.figures.heatmaps import attention_map, heatmap
from app.figures.masking import score_pipeline
from app.figures.style import MASK_SCALE
from app.numbering import index_of
from core.inspection import W_KEY, W_QUERY, W_VALUE, walk_through
from core.model import subsequent_mask
from core.text import normalize_text

PAGE = "masking"  # its settings: app/page_settings.py
SCORES_HEAD = ("mkind", "mlayer", "mhead")  # the settings of "From scores to weights"


def scores_head_named() -> bool:
    """Whether a deck's step, a link or a click chose another head for "From scores to weights"
    than the first (a step's settings are in the session before the page runs, a link's in the
    URL)."""
    chosen = {key: st.session_state.get(key, st.query_params.get(key)) for key in SCORES_HEAD}
    return any(
        value is not None and str(value) != str(controls.default(PAGE, key))
        for key, value in chosen.items()
    )


st.title("Masking")
result = state.analysis().result
settings = state.settings()
translator = state.translator()
# presentation mode with the scores' head named (a deck's step, a link): that section is the
# view, drawn here, first, so that a clicker's projector shows it without scrolling
leading = settings.present and scores_head_named()
lead = st.container()

st.header("Padding mask")
st.markdown(
    "Sentences in a batch are padded to one length with `<pad>`; the padding mask keeps every "
    "query from attending to those positions. Your sentence is batched here with a second one."
)
second = controls.setting(PAGE, "other")
other = st.text_input(second.label, value=second.default, key="other", bind="query-params")
if not normalize_text(other):  # nothing to translate: the default sentence instead
    other = second.default
batch = state.padded_batch(state.current(), other)
ui.chart(
    heatmap(
        batch.padding_mask.astype(float),
        ["your sentence", "second sentence"],
        None,
        title="Padding mask: blue = a real token, grey = <pad>",
        axis_names=("sentence", "position"),
        value_name="piece",
        colorscale=MASK_SCALE,
        value_text=np.array(batch.source_tokens),
        show_text=True,
    ),
    "padding-mask",
)
lengths = batch.padding_mask.sum(axis=1)  # real pieces of each sentence
same_length = lengths[0] == lengths[1]
if same_length:
    st.info(
        f"Both sentences have {lengths[0]} pieces, so nothing is padded: type a shorter or a "
        "longer second sentence to see `<pad>` at work."
    )
shown = batch.attention[int(np.argmin(lengths))]  # the shorter sentence: the padded one
left, right = st.columns(2)
with left:
    layer = controls.pick(PAGE, "player")
with right:
    head = controls.pick(PAGE, "phead")
if same_length:
    title = f"Attention of your sentence, layer {layer}, head {head}: nothing is padded"
else:
    title = f"Attention of the padded sentence, layer {layer}, head {head}: <pad> columns are 0"
ui.chart(attention_map(shown, index_of(layer), index_of(head), title), "padding-attention")
if not same_length:
    st.caption("The rows of <pad> queries are computed too, but nothing downstream uses them.")

st.header("Causal mask")
st.markdown(
    "The decoder predicts each next piece from the ones before it, so position *i* may only "
    "attend to positions *j* ≤ *i*: scores above the diagonal become −∞ before the softmax."
)
decoder = result.attention.decoder
causal = subsequent_mask(len(decoder.query_labels))[0, 0].numpy()
st.caption(ui.decoder_rows(decoder))
ui.chart(
    heatmap(
        causal.astype(float),
        decoder.query_labels,
        decoder.key_labels,
        title="Causal mask: blue = may attend",
        value_text=np.where(causal, "may attend", "masked"),
        value_name="",
        colorscale=MASK_SCALE,
    ),
    "causal-mask",
)

with lead if leading else st.container():
    st.header("From scores to weights, for one head")
    st.latex(
        r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right),"
        r"\quad M_{ij} \in \{0, -\infty\}"
    )
    kind = controls.pick(PAGE, "mkind")
    attention = getattr(result.attention, kind)
    left, right = st.columns(2)
    with left:
        layer = controls.pick(PAGE, "mlayer")
    with right:
        head = controls.pick(PAGE, "mhead")
    if kind != "decoder":
        st.caption("A single sentence has no padding, so here the mask lets everything through.")
    if kind != "encoder":
        st.caption(ui.decoder_rows(attention))
    if leading:  # the formula and the rows' caption stand above it too
        st.html(presentation.controls_above("pipeline", 1))
    ui.chart(
        score_pipeline(attention, index_of(layer), index_of(head)),
        "pipeline",
        caption=ui.sentence_caption(kind=kind, layer=layer, head=head),
    )
    st.caption(
        "Panels 1 and 2 share one colour scale: masking changes no score, it only sets the "
        "forbidden ones to −∞ (grey), which the softmax turns into weights of exactly 0."
    )

st.header("Worked example: 3 inputs of dimension 4")
st.markdown(
    "The lecture example of self-attention, small enough to check by hand, computed by the same "
    "`attention()` function as the model."
)
scaled = controls.toggle(PAGE, "scaled")
example = walk_through(scaled)


def matrix(label: str, values, rows: str = "input") -> None:
    st.markdown(f"**{label}**")
    values = np.asarray(values, dtype=float)
    ui.table(
        [
            {
                "": f"{rows} {row + 1}",
                **{f"{column + 1}": round(float(value), 4) for column, value in enumerate(line)},
            }
            for row, line in enumerate(values)
        ]
    )


matrix("X: three inputs", example.inputs)
panels = st.columns(3)
for panel, (name, weight, product) in zip(
    panels,
    [("Q", W_QUERY, example.queries), ("K", W_KEY, example.keys), ("V", W_VALUE, example.values)],
):
    with panel:
        matrix(f"W_{name}", weight, "row")
        matrix(f"{name} = X W_{name}", product)
divisor = f"√d_k = {example.scale:.3f}" if scaled else "1 (unscaled)"
matrix(
    f"Scores Q Kᵀ / {divisor}: row i, column j is how much input i attends to input j",
    example.scores,
)
matrix("Softmax over each row: the attention weights", example.weights)
matrix("Output = weights V: each row a weighted mix of the values", example.outputs)
