"""Attention: every head of every layer, for the three kinds of attention; one query followed
through scaled dot-product attention in one head, and into every head of its layer."""

import streamlit as st

from app import attention_cache, controls, slides, state, ui
from app.display import ATTENTION_KINDS, piece_text
from app.figures.heads import layer_lines
from app.figures.heatmaps import attention_grid, attention_map
from app.figures.scaled_dot_product import scaled_dot_product_steps
from app.numbering import index_of, index_or_every
from app.word_choice import follow
from core.inspection import Head

EXPLAIN = {
    "encoder": "Each source piece (row) attends to every source piece (column).",
    "decoder": "Each decoder position (row) attends to itself and the positions before it: the "
    "causal mask sets every later position to exactly 0.",
    "cross": "Each decoder position (row) attends to the encoder output (columns): this is where "
    "the translation looks at the source.",
}

PAGE = "attention"  # its settings: app/page_settings.py

st.title("Attention")
r = state.analysis().result
earlier = ui.snapshot_picker()
if earlier is not None:
    r = earlier.forced
kind = controls.pick(PAGE, "kind")
st.caption(EXPLAIN[kind])
words = controls.toggle(PAGE, "words")
attention = getattr(r.word_attention if words else r.attention, kind)
if kind != "encoder":
    st.caption(ui.decoder_rows(attention))


def open_tile(points: list[dict]) -> None:
    """A click on a tile of the grid: its (layer, head) become the page's layer and head, the
    One head tab's, in the state and the URL, so the head opened below the grid survives reruns
    and shared links. A click that deselects (no point) keeps the head open."""
    tiles = [point["customdata"] for point in points if len(point.get("customdata") or []) == 2]
    if not tiles:
        return
    for key, value in zip(("layer", "head"), tiles[-1]):
        if int(value) not in controls.options(PAGE, key):
            return  # a tile of another model or kind
        st.session_state[key] = int(value)
        if int(value) == controls.default(PAGE, key):
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = str(int(value))


def head_title(layer: int, head: int | str) -> str:
    head_name = "average of the heads" if head == "avg" else f"head {head}"
    title = f"{ATTENTION_KINDS[kind]}, layer {layer}, {head_name}"
    if earlier is not None:
        title += f", step {earlier.step:,}"
    return title


def caption(
    layer: int | None = None, head: int | str | None = None, word: str | None = None
) -> slides.Caption:
    """The caption of a chart of this page: the kind, the layer and head, the training step, the
    query followed."""
    step = None if earlier is None else earlier.step
    return ui.sentence_caption(kind=kind, layer=layer, head=head, training_step=step, word=word)


# presentation mode with a query named (a deck's step, a link): the query's steps are the view,
# drawn here, above the map, so that the projector shows them without scrolling
lead = st.container()
single, grid = st.tabs(
    controls.options(PAGE, "view"), key="view", bind="query-params", on_change="rerun"
)
if single.open is not False:  # None: tabs without state (AppTest); draw it
    with single:
        left, right = st.columns([2, 3])
        with left:
            layer = controls.pick(PAGE, "layer")
        with right:
            head = controls.pick(PAGE, "head")
        head_index = index_or_every(head)
        ui.chart(
            attention_map(attention, index_of(layer), head_index, head_title(layer, head)),
            "attention-head",
            caption=caption(layer, head),
        )
if grid.open:
    with grid:
        st.caption(
            "A row of maps per layer, a column per head. Hover a cell for its tokens; click the "
            "ring at the centre of a tile to open that head large below (the same head as on the "
            "One head tab)."
        )
        layer, head = controls.value(PAGE, "layer"), controls.value(PAGE, "head")
        head_index = index_or_every(head)
        ui.chart(
            attention_grid(attention, selected=(index_of(layer), head_index)),
            "attention-grid",
            on_select=open_tile,
            caption=caption(),
        )
        ui.chart(
            attention_map(attention, index_of(layer), head_index, head_title(layer, head)),
            "attention-grid-head",
            caption=caption(layer, head),
        )
ui.attention_download(
    attention,
    caption(controls.value(PAGE, "layer"), controls.value(PAGE, "head")),
    f"{kind}-{'words' if words else 'pieces'}",
)

pieces = getattr(r.attention, kind)
rows = range(len(pieces.query_labels))
if "query" not in st.session_state:  # a link: the URL holds the row's number
    st.session_state.query = {str(row): row for row in rows}.get(st.query_params.get("query"))
lost = follow("query", pieces.query_labels, None)
leading = state.settings().present and st.session_state.get("query") in rows
with lead if leading else st.container():
    st.header("One query, step by step")
    st.caption(
        "Follow one row of the map through scaled dot-product attention in the chosen head: its "
        "query q against every key k, the dot products, the scaling by √d_k, the softmax, and the "
        "weighted sum of the values; then where it looks in every head of the layer. Piece by "
        "piece: a word's pieces each have their own query."
    )
    position = st.selectbox(
        controls.setting(PAGE, "query").label,
        rows,
        index=None,
        # numbered as the map's hover numbers its rows: a piece that occurs twice keeps two rows
        format_func={
            row: f"{row}: {piece_text(q)}" for row, q in zip(rows, pieces.query_labels)
        }.get,
        key="query",
        placeholder="Pick a piece to follow",
    )
    # the row's number, not its text, in the URL: a bound selectbox cannot take a piece with a
    # comma
    if position is None:
        st.query_params.pop("query", None)
    else:
        st.query_params["query"] = str(position)
    if lost is not None:
        st.text(f"No “{piece_text(lost)}” in {ATTENTION_KINDS[kind].lower()}: pick a query again.")
    if position is not None:
        layer, head = controls.value(PAGE, "layer"), controls.value(PAGE, "head")
        label = pieces.query_labels[position]
        if head == "avg":
            st.info("The average of the heads has no query of its own: pick a head to follow it.")
        else:
            step = attention_cache.cached_scaled_dot_product(
                state.current(),
                None if earlier is None else earlier.step,
                Head(kind, index_of(layer), index_of(head)),
                position,
            )
            ui.chart(
                scaled_dot_product_steps(step, f"Scaled dot-product attention for “{label}”"),
                "scaled-dot-product",
                caption=caption(layer, head, label),
            )
        ui.chart(
            layer_lines(
                pieces, index_of(layer), position, f"“{label}” in every head of layer {layer}"
            ),
            "layer-lines",
            caption=caption(layer, word=label),
        )
        st.caption(
            "BertViz's head view with every head of the layer: a line from the query to each key "
            "per head, in the head's colour, as opaque as its weight. Click a head in the legend "
            "to hide it."
        )
