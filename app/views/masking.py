"""Masking: the padding and causal masks, and one head's scores on their way to weights."""

import numpy as np
import streamlit as st

from app import presentation, state, ui
from app.display import ATTENTION_KINDS
from app.figures.heatmaps import attention_map, heatmap
from app.figures.masking import score_pipeline
from app.figures.style import MASK_SCALE
from core.inspection import W_KEY, W_QUERY, W_VALUE, walk_through
from core.model import subsequent_mask
from core.text import normalize_text

OTHER = "A dog runs."

SCORES_DEFAULTS = {"mkind": "decoder", "mlayer": 1, "mhead": 1}  # "From scores to weights"


def scores_head_named() -> bool:
    """Whether a deck's step, a link or a click chose another head for "From scores to weights"
    than the first (a step's settings are in the session before the page runs, a link's in the
    URL)."""
    chosen = {key: st.session_state.get(key, st.query_params.get(key)) for key in SCORES_DEFAULTS}
    return any(
        value is not None and str(value) != str(SCORES_DEFAULTS[key])
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
other = st.text_input("Second sentence", value=OTHER, key="other", bind="query-params")
if not normalize_text(other):  # nothing to translate: the default sentence instead
    other = OTHER
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
n_layers, n_heads = shown.weights.shape[:2]
left, right = st.columns(2)
with left:
    layer = ui.pick("Encoder layer", range(1, n_layers + 1), "player", in_presentation=True)
with right:
    head = ui.pick("Head", range(1, n_heads + 1), "phead", in_presentation=True)
if same_length:
    title = f"Attention of your sentence, layer {layer}, head {head}: nothing is padded"
else:
    title = f"Attention of the padded sentence, layer {layer}, head {head}: <pad> columns are 0"
ui.chart(attention_map(shown, layer - 1, head - 1, title), "padding-attention")
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
    kind = ui.pick(
        "Attention",
        list(ATTENTION_KINDS),
        "mkind",
        SCORES_DEFAULTS["mkind"],
        ATTENTION_KINDS.get,
    )
    attention = getattr(result.attention, kind)
    left, right = st.columns(2)
    with left:
        layer = ui.pick(
            "Layer", range(1, attention.weights.shape[0] + 1), "mlayer", in_presentation=True
        )
    with right:
        head = ui.pick(
            "Head", range(1, attention.weights.shape[1] + 1), "mhead", in_presentation=True
        )
    if kind != "decoder":
        st.caption("A single sentence has no padding, so here the mask lets everything through.")
    if kind != "encoder":
        st.caption(ui.decoder_rows(attention))
    if leading:  # the formula and the rows' caption stand above it too
        st.html(presentation.controls_above("pipeline", 1))
    ui.chart(
        score_pipeline(attention, layer - 1, head - 1),
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
scaled = st.toggle(
    "Divide by √d_k (the paper); off: the slides' unscaled version",
    value=True,
    key="scaled",
    bind="query-params",
)
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
