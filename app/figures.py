"""Plotly figures for the app: pure functions from numbers and labels to ``go.Figure``.

Conventions: heatmap axes are positions 0..n-1 with the token text as tick labels, so a word that
occurs twice keeps two rows (category axes would merge them); rows are queries from top to
bottom, columns are keys; attention weights share one colour scale from 0 to 1. Every label that
came from text goes through :func:`plot_text`, because plotly reads ``<b>``, ``<s>``, ``<br>``... in
labels as markup, and ``</s>`` would vanish.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.analysis import TreeNode
from core.labelled_attention import LabelledAttention

ATTENTION_SCALE = "Blues"
DIVERGING_SCALE = "RdBu_r"
MASK_SCALE = [[0.0, "#d0d0d0"], [0.5, "#d0d0d0"], [0.5, "#2c7fb8"], [1.0, "#2c7fb8"]]
STATUS_COLOURS = {"root": "#444444", "kept": "#2c7fb8", "finished": "#31a354", "pruned": "#bbbbbb"}
KIND_COLOURS = {
    "word start": "#9ecae1",
    "continuation": "#deebf7",
    "special": "#fdae6b",
    "byte": "#fc9272",
}
MINUS_INF = "−∞"
SENTENCEPIECE_WORD_START = "▁"
# ▁ (U+2581, a block element) is drawn as a heavy underline that reads like part of the word; a
# middle dot marks the word start as lightly as editors mark a space.
WORD_START = "·"
GRID_HOVER_CELLS = 40_000  # model view cells that get token names on hover


CELL_TEXT_MAX = 13  # px, text written into heatmap cells
NARROWEST_PLOT_PX = 760  # a heatmap's plot area on the narrowest desktop page (presentation: 960)
CHARACTER_WIDTH = 0.5  # of the font size, the mean width of a character in the app's font


def piece_text(text: str) -> str:
    """Text as the app shows it, in figures, tables and selectors alike: SentencePiece's
    word-start mark ▁ as WORD_START (core's labels keep ▁: they are the data; this is only how
    they are shown)."""
    return text.replace(SENTENCEPIECE_WORD_START, WORD_START)


def plot_text(text: str) -> str:
    """Text shown literally by plotly: & < > as entities, and pieces as :func:`piece_text`."""
    return piece_text(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def plot_lines(text: str) -> str:
    """Text shown literally by plotly, as :func:`plot_text`, with a line break at each newline."""
    return "<br>".join(plot_text(line) for line in text.split("\n"))


def _labels(tokens: Sequence[str]) -> list[str]:
    return [plot_text(t) for t in tokens]


def _numbered(labels: Sequence[str] | None, n: int) -> np.ndarray:
    """'3: the' for each position (plain '3' without labels)."""
    if labels is None:
        return np.arange(n).astype(str)
    return np.array([f"{i}: {label}" for i, label in enumerate(labels)], dtype=str)


def _value_text(z: np.ndarray) -> np.ndarray:
    """Values as text, -inf as −∞."""
    return np.where(np.isneginf(z), MINUS_INF, np.char.mod("%.4f", np.nan_to_num(z, neginf=0.0)))


def _hover(
    rows: np.ndarray, columns: np.ndarray, values: np.ndarray, names: Sequence[str]
) -> np.ndarray:
    """Hover text per cell, 'query 3: the<br>key 5: cat<br>weight 0.1250', as a 2-D str array
    (plotly takes it far faster than nested lists or object arrays)."""
    add = np.char.add
    text = add(add(f"{names[0]} ", rows)[:, None], add(f"<br>{names[1]} ", columns)[None, :])
    return add(text, add(f"<br>{names[2]} ", values))


def _height(rows: int, per_row: int = 28, minimum: int = 320, maximum: int = 900) -> int:
    return int(min(max(minimum, 140 + per_row * rows), maximum))


def cell_text_size(text: np.ndarray) -> float:
    """The font size (px) at which the longest line of ``text`` (rows x columns) fits its cell in
    the narrowest plot a desktop page gives a heatmap, at most CELL_TEXT_MAX: the pieces of a
    long sentence shrink instead of running into each other. (Plotly's own "auto" size reckons
    a character as wide as the font is high, and so halves text that would fit.)"""
    longest = max((len(line) for cell in text.ravel() for line in cell.split("\n")), default=1)
    cell_width = NARROWEST_PLOT_PX / max(text.shape[-1], 1)
    return min(CELL_TEXT_MAX, cell_width / (CHARACTER_WIDTH * max(longest, 1)))


def heatmap(
    z: np.ndarray,
    rows: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    *,
    title: str = "",
    axis_names: tuple[str, str] = ("query", "key"),
    value_name: str = "weight",
    colorscale: str | list = ATTENTION_SCALE,
    zmin: float | None = 0.0,
    zmax: float | None = 1.0,
    value_text: np.ndarray | None = None,
    show_text: bool = False,
) -> go.Figure:
    """A heatmap of z (rows x columns) on position axes.

    ``rows`` and ``columns``, when given, label the positions (tick labels and hover); without them
    an axis shows plain position numbers (long axes: dimensions, positions). -inf cells are left
    empty and marked −∞. Hover shows the row, the column and the value, or ``value_text`` (plain
    text, a newline breaks its line), which ``show_text`` also writes into the cells.
    """
    z = np.asarray(z, dtype=float)
    n_rows, n_cols = z.shape
    trace = go.Heatmap(
        z=np.where(np.isneginf(z), np.nan, z),
        x=np.arange(n_cols),
        y=np.arange(n_rows),
        colorscale=colorscale,
        zmin=zmin,
        zmax=zmax,
        colorbar={"title": {"text": value_name}},
        showscale=colorscale is not MASK_SCALE,  # two colours need no scale
    )
    row_labels = _labels(rows) if rows is not None else None
    col_labels = _labels(columns) if columns is not None else None
    shown_text = value_text
    if value_text is not None:
        value_text = np.vectorize(plot_lines, otypes=[str])(np.asarray(value_text, dtype=str))
    if row_labels is None and col_labels is None and value_text is None:
        trace.hovertemplate = (
            f"{axis_names[0]} %{{y}}<br>{axis_names[1]} %{{x}}<br>{value_name} %{{z:.4f}}"
            "<extra></extra>"
        )
    else:
        trace.customdata = _hover(
            _numbered(row_labels, n_rows),
            _numbered(col_labels, n_cols),
            _value_text(z) if value_text is None else value_text,
            (*axis_names, value_name),
        )
        trace.hovertemplate = "%{customdata}<extra></extra>"
    if show_text and value_text is not None:
        size = cell_text_size(np.asarray(shown_text, dtype=str))
        trace.update(text=value_text, texttemplate="%{text}", textfont={"size": size})
    elif np.isneginf(z).any():
        trace.update(text=np.where(np.isneginf(z), MINUS_INF, ""), texttemplate="%{text}")
    fig = go.Figure(trace)
    fig.update_layout(
        # "container" with automargin: the title keeps clear of the tick labels on top
        title={"text": plot_text(title), "yref": "container", "automargin": True},
        height=_height(n_rows),
        plot_bgcolor="#f3f3f3",
        xaxis={"title": axis_names[1], "side": "top"},
        yaxis={"title": axis_names[0], "autorange": "reversed"},
        margin={"t": 110},
    )
    if col_labels is not None:
        fig.update_xaxes(tickvals=list(range(n_cols)), ticktext=col_labels, tickangle=-60)
    if row_labels is not None:
        fig.update_yaxes(tickvals=list(range(n_rows)), ticktext=row_labels)
    return fig


def attention_map(
    attention: LabelledAttention, layer: int, head: int | None = None, title: str = ""
) -> go.Figure:
    """One layer of a LabelledAttention (layer and head count from 0): one head, or with
    head=None the average of the heads; rows and columns carry core's labels."""
    weights = attention.weights[layer]  # (H, Q, K)
    z = weights.mean(axis=0) if head is None else weights[head]
    return heatmap(z, attention.query_labels, attention.key_labels, title=title)


def attention_grid(
    attention: LabelledAttention, selected: tuple[int, int | None] | None = None
) -> go.Figure:
    """The model view: weights (L, H, q, k) as one mosaic of small maps, a row of tiles per layer
    and a column per head, one cell apart, on one 0..1 colour scale. (One heatmap, not L x H
    subplots: far faster to build and draw.) Hover names the layer, head and tokens, up to
    GRID_HOVER_CELLS cells; beyond that (long sentences) only the weight, to keep the page light.

    A second trace, a nearly invisible marker at the centre of every tile with customdata
    (layer, head) counted from 1, is what a click selects (heatmaps emit no point selections):
    the page opens that head large. ``selected`` = (layer, head) counted from 0 outlines that
    tile, or with head None the whole layer (the average of its heads).
    """
    weights, queries, keys = attention.weights, attention.query_labels, attention.key_labels
    layers, heads, q, k = weights.shape
    z = np.full((layers * (q + 1) - 1, heads * (k + 1) - 1), np.nan)
    tiles = [
        (
            layer,
            head,
            np.s_[layer * (q + 1) : layer * (q + 1) + q, head * (k + 1) : head * (k + 1) + k],
        )
        for layer in range(layers)
        for head in range(heads)
    ]
    for layer, head, tile in tiles:
        z[tile] = weights[layer, head]
    trace = go.Heatmap(
        z=z,
        colorscale=ATTENTION_SCALE,
        zmin=0.0,
        zmax=1.0,
        hoverongaps=False,
        colorbar={"title": {"text": "weight"}},
        hovertemplate="weight %{z:.4f}<extra></extra>",
    )
    if weights.size <= GRID_HOVER_CELLS:
        pairs = np.char.add(
            np.char.add(_numbered(_labels(queries), q)[:, None], " → "),
            _numbered(_labels(keys), k)[None, :],
        )
        hover = np.full(z.shape, "", dtype=object)
        for layer, head, tile in tiles:
            hover[tile] = np.char.add(f"L{layer + 1} H{head + 1} · ", pairs)
        trace.update(
            customdata=hover.astype(str),
            hovertemplate="%{customdata}<br>weight %{z:.4f}<extra></extra>",
        )
    fig = go.Figure([trace, _tile_markers(layers, heads, q, k)])
    if selected is not None:
        fig.add_shape(_tile_outline(selected, heads, q, k))
    fig.update_xaxes(
        tickvals=[h * (k + 1) + (k - 1) / 2 for h in range(heads)],
        ticktext=[f"head {h + 1}" for h in range(heads)],
        side="top",
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickvals=[layer * (q + 1) + (q - 1) / 2 for layer in range(layers)],
        ticktext=[f"layer {layer + 1}" for layer in range(layers)],
        autorange="reversed",
        scaleanchor="x",
        showgrid=False,
        zeroline=False,
    )
    fig.update_layout(
        height=int(min(max(300, 80 + 900 * z.shape[0] / z.shape[1]), 1400)),
        plot_bgcolor="rgba(0,0,0,0)",
        margin={"t": 40, "l": 20, "r": 20, "b": 20},
        showlegend=False,
    )
    return fig


def _tile_markers(layers: int, heads: int, rows: int, columns: int) -> go.Scatter:
    """One faint ring at the centre of each tile of attention_grid's mosaic (tiles of ``rows`` x
    ``columns`` cells, one cell apart), customdata (layer, head) counted from 1; hovering it
    invites the click that opens the head."""
    tiles = [(layer, head) for layer in range(layers) for head in range(heads)]
    return go.Scatter(
        x=[head * (columns + 1) + (columns - 1) / 2 for _, head in tiles],
        y=[layer * (rows + 1) + (rows - 1) / 2 for layer, _ in tiles],
        customdata=[[layer + 1, head + 1] for layer, head in tiles],
        mode="markers",
        marker={"symbol": "circle-open", "size": 16, "color": "rgba(110, 110, 110, 0.3)"},
        selected={"marker": {"opacity": 1.0}},
        unselected={"marker": {"opacity": 1.0}},
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}: click to open it large"
        "<extra></extra>",
        name="tiles",
    )


def _tile_outline(selected: tuple[int, int | None], heads: int, rows: int, columns: int) -> dict:
    """A rectangle around the tile (layer, head) of attention_grid's mosaic, counted from 0, or
    around the whole layer when head is None."""
    layer, head = selected
    first, last = (0, heads - 1) if head is None else (head, head)
    return {
        "type": "rect",
        "x0": first * (columns + 1) - 0.5,
        "x1": last * (columns + 1) + columns - 0.5,
        "y0": layer * (rows + 1) - 0.5,
        "y1": layer * (rows + 1) + rows - 0.5,
        "line": {"color": "#e6550d", "width": 2},
        "name": "zoomed",
    }


def token_chips(
    pieces: Sequence[str], ids: Sequence[int], kinds: Sequence[str], per_row: int = 12
) -> go.Figure:
    """Pieces as chips, ``per_row`` to a line: the piece above its id, coloured by kind."""
    n = len(pieces)
    lines = max(1, -(-n // per_row))
    codes = list(KIND_COLOURS)
    z = np.full((lines, per_row), np.nan)
    text = np.full((lines, per_row), "", dtype=object)
    hover = np.full((lines, per_row), "", dtype=object)
    for i, (piece, token_id, kind) in enumerate(zip(pieces, ids, kinds)):
        r, c = divmod(i, per_row)
        z[r, c] = codes.index(kind)
        text[r, c] = f"{plot_text(piece)}<br><sub>{token_id}</sub>"
        hover[r, c] = f"{i}: {plot_text(piece)}<br>id {token_id}, {kind}"
    scale = []
    for k, colour in enumerate(KIND_COLOURS.values()):
        scale += [[k / len(codes), colour], [(k + 1) / len(codes), colour]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            text=text.astype(str),
            texttemplate="%{text}",
            textfont={"size": 15},
            customdata=hover.astype(str),
            hovertemplate="%{customdata}<extra></extra>",
            hoverongaps=False,
            colorscale=scale,
            zmin=-0.5,
            zmax=len(codes) - 0.5,
            showscale=False,
            xgap=4,
            ygap=4,
        )
    )
    for kind, colour in KIND_COLOURS.items():  # legend entries for the kinds
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=kind,
                marker={"color": colour, "size": 12, "symbol": "square"},
            )
        )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(
        height=90 + 56 * lines,
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
        plot_bgcolor="rgba(0,0,0,0)",
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


# --------------------------------------------------------------------------------------------------
# Positional encoding and embeddings
# --------------------------------------------------------------------------------------------------


# How the PE heatmap orders its dimensions (the URL holds the key)
PE_ORDERS = {
    "interleaved": "The paper's order: sin, cos, sin, cos, …",
    "blocks": "All sines, then all cosines",
}


def pe_dimension_order(d_model: int, order: str) -> np.ndarray:
    """The dimensions in drawing order: 0..d-1 (interleaved, the paper's), or the even (sine)
    dimensions then the odd (cosine) ones (blocks)."""
    if order == "blocks":
        return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])
    return np.arange(d_model)


def positional_heatmap(
    pe: np.ndarray, rows: Sequence[str] | None = None, title: str = "", order: str = "interleaved"
) -> go.Figure:
    """PE (positions x dimensions) on a diverging scale from -1 to 1; rows labelled with tokens
    when given, else with position numbers. ``order`` (a key of PE_ORDERS) draws the dimensions
    interleaved as computed, or as a block of sines and a block of cosines, which turns the
    barcode of alternating columns into two smooth sweeps from fast to slow waves; hover and
    ticks then give each column's own dimension."""
    dims = pe_dimension_order(pe.shape[1], order)
    z = pe[:, dims]
    fig = heatmap(
        z,
        rows,
        title=title,
        axis_names=("position", "dimension"),
        value_name="PE",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
    )
    if order == "blocks":
        half = (pe.shape[1] + 1) // 2  # the sines: dimensions 0, 2, 4, ...
        names = np.array([f"{d} ({'sin' if d % 2 == 0 else 'cos'})" for d in dims])
        positions = _numbered(_labels(rows) if rows is not None else None, len(pe))
        fig.data[0].update(
            customdata=_hover(
                positions, names, np.char.mod("%.4f", z), ("position", "dimension", "PE")
            ),
            hovertemplate="%{customdata}<extra></extra>",
        )
        ticks = list(range(0, len(dims), max(1, len(dims) // 12)))
        fig.update_xaxes(
            title="dimension: the sines (even), then the cosines (odd)",
            tickvals=ticks,
            ticktext=[str(dims[column]) for column in ticks],
            tickangle=0,
        )
        fig.add_vline(x=half - 0.5, line_color="#222222", line_width=2)
        for x, text in ((half / 2, "sin block"), (half + (len(dims) - half) / 2, "cos block")):
            fig.add_annotation(
                x=x, y=0, yref="paper", yanchor="top", text=text, showarrow=False, yshift=-4
            )
    return fig


def positional_curves(pe: np.ndarray, dims: Sequence[int]) -> go.Figure:
    """Chosen dimensions of PE against position: sines (even d) and cosines (odd d)."""
    fig = go.Figure()
    d_model = pe.shape[1]
    for d in dims:
        i = d // 2
        kind = "sin" if d % 2 == 0 else "cos"
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(pe)),
                y=pe[:, d],
                mode="lines",
                name=f"dim {d}: {kind}(pos / 10000^({2 * i}/{d_model}))",
            )
        )
    fig.update_layout(
        xaxis_title="position",
        yaxis_title="PE",
        height=380,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def positional_similarity(pe: np.ndarray) -> go.Figure:
    """PE · PE^T: how alike the encodings of two positions are (it depends on their distance)."""
    return heatmap(
        pe @ pe.T,
        axis_names=("position", "position"),
        value_name="dot product",
        colorscale="Viridis",
        zmin=None,
        zmax=None,
    )


def embedding_sum(
    token: np.ndarray,
    position: np.ndarray,
    tokens: Sequence[str],
    shared_scale: bool = True,
    order: str = "interleaved",
) -> go.Figure:
    """The encoder input, side by side: token embedding x sqrt(d_model), PE, and their sum
    (tokens x dimensions). With ``shared_scale`` one diverging scale (true proportions: PE, within
    ±1, looks pale next to the scaled embedding); else each panel its own scale, symmetric around
    0 at its largest absolute value, each with its own colour bar below it. ``order`` (a key of
    PE_ORDERS) orders the dimensions of every panel alike; hover names each column's dimension."""
    dims = pe_dimension_order(token.shape[1], order)
    parts = [
        ("token embedding × √d_model", token[:, dims]),
        ("+ positional encoding", position[:, dims]),
        ("= encoder input", (token + position)[:, dims]),
    ]
    dimension_of = np.broadcast_to(dims, token.shape)  # (positions, d_model): each cell's dim
    limits = [float(np.abs(values).max()) or 1.0 for _, values in parts]
    spacing = 0.02 if shared_scale else 0.04
    fig = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        subplot_titles=[name for name, _ in parts],
        horizontal_spacing=spacing,
    )
    labels = _labels(tokens)
    width = (1 - 2 * spacing) / 3  # of each panel, in paper units
    for col, (name, values) in enumerate(parts, start=1):
        axis = "coloraxis" if shared_scale or col == 1 else f"coloraxis{col}"
        fig.add_trace(
            go.Heatmap(
                z=values,
                coloraxis=axis,
                customdata=dimension_of,
                hovertemplate=(
                    f"{name}<br>position %{{y}}<br>dimension %{{customdata}}<br>value %{{z:.4f}}"
                    "<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
        if not shared_scale:
            limit = limits[col - 1]
            fig.update_layout(
                {
                    axis: {
                        "colorscale": DIVERGING_SCALE,
                        "cmin": -limit,
                        "cmax": limit,
                        "colorbar": {
                            "orientation": "h",
                            "x": (col - 1) * (width + spacing) + width / 2,
                            "xanchor": "center",
                            "y": -0.12,
                            "yanchor": "top",
                            "len": width,
                            "thickness": 12,
                        },
                    }
                }
            )
    fig.update_yaxes(
        autorange="reversed", tickvals=list(range(len(labels))), ticktext=labels, row=1, col=1
    )
    fig.update_yaxes(autorange="reversed")
    if order == "blocks":
        _mark_dimension_blocks(fig, len(dims))
    else:
        fig.update_xaxes(title="dimension")
    if shared_scale:
        limit = max(limits)
        fig.update_layout(coloraxis={"colorscale": DIVERGING_SCALE, "cmin": -limit, "cmax": limit})
    fig.update_layout(
        height=_height(len(tokens)) + (0 if shared_scale else 60),
        margin={"b": 40 if shared_scale else 110},
    )
    return fig


# (x axis title, name of the even block, of the odd block) of embedding_sum's panels in blocks
# order: only the positional encoding's even dimensions are sines and its odd ones cosines
DIMENSION_BLOCKS = (
    ("dimension: the even, then the odd", "even: 0, 2, …", "odd: 1, 3, …"),
    ("dimension: the sines, then the cosines", "sin: 0, 2, …", "cos: 1, 3, …"),
    ("dimension: the even, then the odd", "even: 0, 2, …", "odd: 1, 3, …"),
)


def _mark_dimension_blocks(fig: go.Figure, d_model: int) -> None:
    """Name the two blocks of each of :func:`embedding_sum`'s panels in blocks order under their
    middles (DIMENSION_BLOCKS), and draw the line between them."""
    half = (d_model + 1) // 2  # the even dimensions: 0, 2, 4, ...
    middles = [(half - 1) / 2, (half + d_model - 1) / 2]
    for col, (title, even, odd) in enumerate(DIMENSION_BLOCKS, start=1):
        fig.update_xaxes(
            title=title, tickvals=middles, ticktext=[even, odd], tickangle=0, row=1, col=col
        )
        fig.add_vline(x=half - 0.5, line_color="#222222", line_width=2, row=1, col=col)


# --------------------------------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------------------------------


TREE_STEPS_SHOWN = 12  # steps of the beam tree in view at once; earlier ones by panning
# The shaded step: a translucent amber, so the grey edges stay visible on light and dark themes
STEP_SHADE = "rgba(245, 166, 35, 0.16)"
STEP_EDGE = "rgba(245, 166, 35, 0.7)"
# Inner nodes' labels sit on a chip above their edges, dark on light in either theme
LABEL_CHIP = {"bgcolor": "rgba(255, 255, 255, 0.88)", "font": {"color": "#222222", "size": 11}}
STATUS_MEANINGS = {
    "root": "start (<s>)",
    "kept": "kept: stays live",
    "finished": "finished: ended",
    "pruned": "pruned: dropped",
}
LEGEND_CHARS = 90  # a finished hypothesis's text in the re-rank legend: wrapped at this width
LEGEND_MAX_CHARS = 400  # and cut with … beyond this


def first_step_in_view(current_step: int, steps_shown: int = TREE_STEPS_SHOWN) -> int:
    """The earliest step column the beam tree shows (-1: the root, start), the current step
    being the last of ``steps_shown``."""
    return max(-1, current_step - steps_shown + 1)


def beam_tree(
    nodes: Sequence[TreeNode],
    chosen: Sequence[int],
    current_step: int,
    explanations: dict[str, str] | None = None,
    steps_shown: int = TREE_STEPS_SHOWN,
) -> go.Figure:
    """The search tree from :func:`app.analysis.beam_tree`: a column per step, numbered as core
    and the step slider number them (the root, <s>, at -1 is 'start'), one colour per status,
    the chosen output's path drawn thick, the current step's column shaded. Inner nodes' labels
    sit on chips above their edges, leaves' to their right; hover adds the prefix as text and
    what the node's reason means (``explanations``: reason -> meaning). At most ``steps_shown``
    steps are in view, ending at the current one."""
    inner = {n.parent for n in nodes if n.prefix}
    explanations = explanations or {}
    chosen = tuple(chosen)
    fig = go.Figure()
    fig.add_vrect(
        x0=current_step - 0.5,
        x1=current_step + 0.5,
        fillcolor=STEP_SHADE,
        line={"color": STEP_EDGE, "width": 1, "dash": "dot"},
        layer="below",
    )
    for on_path in (False, True):
        fig.add_trace(_tree_edges(nodes, chosen, on_path))
    for status in STATUS_COLOURS:
        group = [n for n in nodes if n.status == status]
        if group:
            fig.add_trace(_tree_nodes(group, status, inner, explanations))
    for node in nodes:
        if node.prefix in inner:
            fig.add_annotation(
                x=node.step,
                y=node.y,
                text=plot_text(node.piece),
                showarrow=False,
                yshift=14,
                borderpad=1,
                **LABEL_CHIP,
            )
    last = max(n.step for n in nodes)
    first = first_step_in_view(current_step, steps_shown)
    # the rows of the nodes in view (and their parents, whose edges enter the view)
    in_view = [n.y for n in nodes if n.step >= first - 1]
    top, bottom = min(in_view) - 0.8, max(in_view) + 0.8
    fig.update_xaxes(
        title="step",
        tickvals=list(range(-1, last + 1)),
        ticktext=["start", *map(str, range(last + 1))],
        range=[first - 0.6, current_step + 1.3],
    )
    fig.update_yaxes(visible=False, range=[bottom, top])  # reversed: the best on top
    fig.update_layout(
        height=_height(int(bottom - top), per_row=26, maximum=2000),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        plot_bgcolor="rgba(0,0,0,0)",
        hoverlabel={"align": "left"},
    )
    return fig


def _tree_edges(nodes: Sequence[TreeNode], chosen: tuple[int, ...], on_path: bool) -> go.Scatter:
    """The edges from parent to child of the nodes on the chosen output's path (thick), or of
    all the others (thin), as one line trace broken by None."""
    by_prefix = {n.prefix: n for n in nodes}
    xs, ys = [], []
    for node in nodes:
        if node.prefix and (chosen[: len(node.prefix)] == node.prefix) == on_path:
            parent = by_prefix[node.parent]
            xs += [parent.step, node.step, None]
            ys += [parent.y, node.y, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line={"color": "#31a354" if on_path else "#999999", "width": 4 if on_path else 1.2},
        hoverinfo="skip",
        name="chosen output" if on_path else "search",
        showlegend=on_path,
    )


def _tree_nodes(
    group: Sequence[TreeNode], status: str, inner: set, explanations: dict[str, str]
) -> go.Scatter:
    """The nodes of one status, leaves labelled to their right (inner nodes get chips), with
    the node's numbers, reason and text on hover."""
    return go.Scatter(
        x=[n.step for n in group],
        y=[n.y for n in group],
        mode="markers+text",
        text=["" if n.prefix in inner else plot_text(n.piece) for n in group],
        textposition="middle right",
        marker={
            "color": STATUS_COLOURS[status],
            "size": 11,
            "line": {"color": "white", "width": 1},
        },
        name=plot_text(STATUS_MEANINGS[status]),
        customdata=[
            [
                plot_text(n.piece),
                n.log_prob,
                np.exp(n.log_prob),
                n.score,
                n.normalized,
                plot_text(n.reason),
                plot_text(explanations.get(n.reason, "")),
                plot_text(n.text),
            ]
            for n in group
        ],
        hovertemplate=(
            "<b>%{customdata[0]}</b>: %{customdata[7]}<br>log P(token) %{customdata[1]:.3f}"
            " (P %{customdata[2]:.3f})<br>cumulative %{customdata[3]:.3f}"
            "<br>normalised %{customdata[4]:.3f}<br><b>%{customdata[5]}</b>"
            "<br>%{customdata[6]}<extra></extra>"
        ),
    )


def candidate_bars(rows: Sequence[dict], explanations: dict[str, str] | None = None) -> go.Figure:
    """Each candidate's probability given its beam, coloured by what the search decided; hover
    says what the reason means (``explanations``: reason -> meaning)."""
    explanations = explanations or {}
    fig = go.Figure()
    labels = [plot_text(f"beam {r['beam']}: {r['next piece']}") for r in rows]
    for status, colour in STATUS_COLOURS.items():
        index = [i for i, r in enumerate(rows) if r["status"] == status]
        if index:
            fig.add_trace(
                go.Bar(
                    x=[rows[i]["probability"] for i in index],
                    y=index,
                    orientation="h",
                    marker_color=colour,
                    name=plot_text(STATUS_MEANINGS[status]),
                    customdata=[
                        [
                            labels[i],
                            plot_text(rows[i]["why"]),
                            plot_text(explanations.get(rows[i]["why"], "")),
                            plot_text(rows[i]["prefix"]),
                        ]
                        for i in index
                    ],
                    hovertemplate=(
                        "%{customdata[0]} after “%{customdata[3]}”<br>P %{x:.3f}"
                        "<br><b>%{customdata[1]}</b><br>%{customdata[2]}<extra></extra>"
                    ),
                )
            )
    fig.update_yaxes(tickvals=list(range(len(rows))), ticktext=labels, autorange="reversed")
    fig.update_xaxes(title="probability given the beam's prefix", range=[0, 1])
    fig.update_layout(
        height=_height(len(rows), per_row=22, maximum=1200),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        hoverlabel={"align": "left"},
    )
    return fig


def legend_text(text: str, length: int, limit: int = LEGEND_MAX_CHARS) -> str:
    """A hypothesis in a legend: its whole text (cut with … only after ``limit`` characters)
    and its length in pieces, which tells apart two that read alike."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"{cut} ({length} pieces)"


def _wrapped(text: str, width: int = LEGEND_CHARS) -> str:
    """Plot text broken into lines of at most ``width`` characters (at spaces)."""
    return "<br>".join(plot_text(line) for line in textwrap.wrap(text, width)) or plot_text(text)


def rerank_lines(
    labels: Sequence[str],
    ranks: np.ndarray,
    gaps: np.ndarray,
    alphas: np.ndarray,
    alpha: float,
) -> go.Figure:
    """Each finished hypothesis's rank by log P / lp(alpha) as alpha varies (ranks and gaps to
    the best, (hypotheses, alphas), from :func:`app.analysis.rerank_ranks`): rank 1, on top, is
    the output; ranks never share a point, so no line hides another. The legend, below, lists
    the hypotheses (``labels``) in full, wrapped, in their order at the current alpha (dashed
    line); hover gives the gap to the best."""
    at = int(np.argmin(np.abs(alphas - alpha)))  # the grid point nearest the current alpha
    names = [_wrapped(label) for label in labels]
    lines = sum(name.count("<br>") + 1 for name in names)  # of the legend
    fig = go.Figure()
    for name, rank, gap in zip(names, ranks, gaps):
        fig.add_trace(
            go.Scatter(
                x=alphas,
                y=rank,
                mode="lines+markers",
                marker={"size": [10 if i == at else 0 for i in range(len(alphas))]},
                name=name,
                legendrank=int(rank[at]),
                customdata=gap,
                hovertemplate=(
                    "%{fullData.name}<br>α %{x:.2f}: rank %{y}, "
                    "%{customdata:.3f} below the best log P / lp<extra></extra>"
                ),
            )
        )
    fig.add_vline(x=alpha, line_dash="dash", line_color="#888888")
    count = len(labels)
    fig.update_layout(
        xaxis_title="length penalty α",
        yaxis={
            "title": "rank (1 = the output)",
            "range": [count + 0.5, 0.5],
            "tickvals": list(range(1, count + 1)),
        },
        height=330 + 20 * lines + 6 * count,
        legend={  # below the axis title, in the figure's own margin: the full start of each text
            "orientation": "v",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "x": 0,
            "xanchor": "left",
            "title": {"text": f"rank at α = {alpha:.1f}, best first"},
        },
        margin={"t": 30, "b": 90 + 20 * lines + 6 * count},
    )
    return fig


# --------------------------------------------------------------------------------------------------
# Masking
# --------------------------------------------------------------------------------------------------

MASKED_COLOUR = "#7f7f7f"  # masked cells, on any theme
PIPELINE_TITLES = ("1. scores QKᵀ/√d_k", "2. masked scores: + M", "3. softmax weights")
PIPELINE_SPACING = 0.03  # between two panels, of the plot's width
PANEL_PX = NARROWEST_PLOT_PX * (1 - 2 * PIPELINE_SPACING) / 3  # a panel's narrowest width
# The panels' height on a slide: the 1280 x 720 export less a caption of three lines above, the
# key labels and the colour bars below
SLIDE_PANEL_PX = 340
PIPELINE_TOP_PX = 70  # above the panels: the figure's title line and the panel titles
PIPELINE_LEGEND_PX = 28  # the legend's row, between the panel titles and the panels
KEY_TITLE_STANDOFF_PX = 10
PIPELINE_KEY_TITLE_PX = 40  # "key" under the key labels, with its standoff
PIPELINE_RIGHT_PX = 16  # the weights' colour bar ends in a tick label
PIPELINE_BARS_PX = 60  # the colour bars at the foot: title, bar and tick labels
PIPELINE_ROW_PX = 28  # a query's row on screen
TICK_LABEL_PX = 12  # the chart theme's tick labels, shrunk to fit ...
TICK_LABEL_MIN_PX = 9  # ... never below this: where even that does not fit, every k-th shows
PROJECTED_TICK_PX = 16  # presentation mode's tick labels: the margins leave room for them
LABEL_LINE = 1.4  # a label's line, in font sizes: closer labels overlap
MASKED_TEXT_EM = 1.6  # "−∞", the wider text of a masked cell, and a gap, in font sizes
MASKED_TEXT_MIN_PX = 8  # smaller cells are left unwritten: grey and the legend say it


def score_pipeline(attention: LabelledAttention, layer: int, head: int) -> go.Figure:
    """One head (layer and head count from 0) on its way from scores to weights, with core's
    labels: the scores QKᵀ/√d_k, the masked scores (-inf where the mask forbids) and the softmax
    weights, three panels in a row that share the query rows, labelled once at the left. The two
    score panels share one diverging colour scale and one colour bar (masking changes no other
    value); the weights keep their 0..1 scale and bar. Masked cells are grey, written −∞
    (scores) or 0 (weights) where the cells are large enough, and named by a legend between the
    panel titles and the panels, clear of the caption on top (slides.add_caption). Labels shrink,
    and beyond that thin out, to fit a panel on screen and the rows of a 1280 x 720 slide."""
    scores = attention.scores[layer, head]  # (queries, keys)
    masked = attention.masked_scores[layer, head]
    weights = attention.weights[layer, head]
    is_masked = np.isneginf(masked)
    n_rows, n_cols = scores.shape
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=PIPELINE_TITLES,
        shared_yaxes=True,
        horizontal_spacing=PIPELINE_SPACING,
    )
    rows = _numbered(_labels(attention.query_labels), n_rows)
    columns = _numbered(_labels(attention.key_labels), n_cols)
    text_size = masked_text_size(n_rows, n_cols)
    panels = [
        (scores, "score", "coloraxis", ""),
        (masked, "masked score", "coloraxis", MINUS_INF),
        (weights, "weight", "coloraxis2", "0"),
    ]
    for col, (values, name, colour_axis, masked_text) in enumerate(panels, start=1):
        title = PIPELINE_TITLES[col - 1]
        hover = _hover(rows, columns, _value_text(values), ("query", "key", name))
        fig.add_trace(
            go.Heatmap(
                z=np.where(np.isneginf(values), np.nan, values),
                x=np.arange(n_cols),
                y=np.arange(n_rows),
                coloraxis=colour_axis,
                customdata=hover,
                hovertemplate="%{customdata}<extra></extra>",
                hoverongaps=False,
                name=title,
            ),
            row=1,
            col=col,
        )
        if masked_text and is_masked.any():  # the masked cells, grey, on top
            cells = _masked_cells(is_masked, masked_text, text_size, hover, title)
            fig.add_trace(cells, row=1, col=col)
    margins = _pipeline_axes(fig, attention.query_labels, attention.key_labels)
    if is_masked.any():
        _add_masked_legend(fig)
    top = PIPELINE_TOP_PX + (PIPELINE_LEGEND_PX if is_masked.any() else 0)
    plot_px = int(np.clip(PIPELINE_ROW_PX * n_rows, 200, 700))
    fig.update_layout(
        **_pipeline_colour_axes(float(np.abs(scores).max()) or 1.0),
        height=top + plot_px + margins["b"],
        plot_bgcolor="rgba(0,0,0,0)",
        showlegend=bool(is_masked.any()),  # the one entry: the grey cells
        margin={"t": top, **margins},
    )
    return fig


def fitted_labels(count: int, room_px: float) -> tuple[float, int]:
    """(font size, k) for ``count`` tick labels in a row of ``room_px``: TICK_LABEL_PX, smaller
    where labels would overlap, and where even TICK_LABEL_MIN_PX does, only every k-th label."""
    per_label = room_px / max(count, 1)
    size = min(TICK_LABEL_PX, per_label / LABEL_LINE)
    if size >= TICK_LABEL_MIN_PX:
        return size, 1
    return TICK_LABEL_MIN_PX, int(np.ceil(TICK_LABEL_MIN_PX * LABEL_LINE / per_label))


def masked_text_size(n_rows: int, n_cols: int) -> float:
    """The font size (px) of −∞ and 0 in masked cells: what fits a cell of a panel at its
    narrowest on screen and at its lowest on a slide, at most CELL_TEXT_MAX; 0 (no text) where
    that is below MASKED_TEXT_MIN_PX."""
    width = PANEL_PX / max(n_cols, 1) / MASKED_TEXT_EM
    height = SLIDE_PANEL_PX / max(n_rows, 1) / LABEL_LINE
    size = min(CELL_TEXT_MAX, width, height)
    return size if size >= MASKED_TEXT_MIN_PX else 0.0


def _pipeline_axes(
    fig: go.Figure, query_labels: Sequence[str], key_labels: Sequence[str]
) -> dict[str, int]:
    """Label :func:`score_pipeline`'s axes, the queries once at the left and the keys under each
    panel, upright, as :func:`fitted_labels` fits them (a panel's width on screen, the rows'
    height on a slide); returns the margins (px) that hold them, at presentation mode's size
    too, and the colour bars."""
    queries, keys = _labels(query_labels), _labels(key_labels)
    key_size, key_every = fitted_labels(len(keys), PANEL_PX)
    query_size, query_every = fitted_labels(len(queries), SLIDE_PANEL_PX)
    fig.update_xaxes(
        tickvals=list(range(0, len(keys), key_every)),
        ticktext=keys[::key_every],
        tickangle=-90,
        tickfont_size=key_size,
        title={"text": "key", "standoff": KEY_TITLE_STANDOFF_PX},
        automargin=True,
    )
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_yaxes(
        tickvals=list(range(0, len(queries), query_every)),
        ticktext=queries[::query_every],
        tickfont_size=query_size,
        row=1,
        col=1,
    )
    longest_key = max((len(label) for label in key_labels), default=1)
    longest_query = max((len(label) for label in query_labels), default=1)
    return {
        "l": int(PROJECTED_TICK_PX * CHARACTER_WIDTH * longest_query) + 20,
        "r": PIPELINE_RIGHT_PX,
        "b": int(PROJECTED_TICK_PX * CHARACTER_WIDTH * longest_key)
        + PIPELINE_KEY_TITLE_PX
        + PIPELINE_BARS_PX,
    }


def _add_masked_legend(fig: go.Figure) -> None:
    """A legend entry for the grey cells, in a row of its own right above the panels, under their
    titles: the caption that slides.add_caption draws at the top of the figure stays clear."""
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            marker={"color": MASKED_COLOUR, "size": 14, "symbol": "square"},
            name="masked: −∞ before the softmax, exactly 0 after",
        )
    )
    fig.update_layout(
        legend={
            "orientation": "h",
            "yref": "paper",
            "y": 1.0,
            "yanchor": "bottom",
            "x": 0.0,
            "xanchor": "left",
            # the whole row: an entry sized to the text as measured on screen was cut short
            # ("exactly 0 aft") in the exported slide, drawn at another scale
            "entrywidth": 1.0,
            "entrywidthmode": "fraction",
        }
    )
    fig.update_annotations(yshift=PIPELINE_LEGEND_PX)  # the panel titles, above the legend


def _masked_cells(
    is_masked: np.ndarray, text: str, size: float, hover: np.ndarray, panel: str
) -> go.Heatmap:
    """Grey cells where the mask forbids, written ``text`` (−∞ or 0) at ``size`` px (none at
    0), to lay over a panel."""
    return go.Heatmap(
        z=np.where(is_masked, 1.0, np.nan),
        x=np.arange(is_masked.shape[1]),
        y=np.arange(is_masked.shape[0]),
        colorscale=[[0.0, MASKED_COLOUR], [1.0, MASKED_COLOUR]],
        showscale=False,
        text=np.where(is_masked & (size > 0), text, ""),
        texttemplate="%{text}",
        textfont={"color": "white", "size": size or CELL_TEXT_MAX},  # plotly's minimum is 1
        customdata=np.char.add(hover, " (masked)"),
        hovertemplate="%{customdata}<extra></extra>",
        hoverongaps=False,
        name=f"masked cells of {panel}",
    )


def _pipeline_colour_axes(limit: float) -> dict:
    """:func:`score_pipeline`'s colour axes: the scores from -limit to limit, the weights from 0
    to 1, each with a horizontal colour bar at the foot of the figure, under its panels."""
    width = (1 - 2 * PIPELINE_SPACING) / 3  # of a panel, in paper units
    bar = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"}
    bar |= {"thickness": 12, "xanchor": "center"}
    return {
        "coloraxis": {
            "colorscale": DIVERGING_SCALE,
            "cmin": -limit,
            "cmax": limit,
            "colorbar": {
                **bar,
                "title": {"text": "score (1 and 2)"},
                "x": width + PIPELINE_SPACING / 2,
                "len": 2 * width,
            },
        },
        "coloraxis2": {
            "colorscale": ATTENTION_SCALE,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": {**bar, "title": {"text": "weight (3)"}, "x": 1 - width / 2, "len": width},
        },
    }


# --------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------


def training_curves(
    panels: dict[str, dict[str, tuple[Sequence[float], Sequence[float]]]],
    mark_step: int | None = None,
    log_steps: bool = False,
) -> go.Figure:
    """One subplot per panel title, one line per named (steps, values) series; a series named in
    several panels (one head's entropy and confidence) has one colour and one legend entry; a
    dotted line at ``mark_step``; a logarithmic step axis for log-spaced snapshots."""
    titles = list(panels)
    fig = make_subplots(
        rows=1, cols=len(titles), subplot_titles=_labels(titles), horizontal_spacing=0.07
    )
    names = list(dict.fromkeys(name for lines in panels.values() for name in lines))
    palette = plotly.colors.qualitative.Plotly
    shown: set[str] = set()
    for col, title in enumerate(titles, start=1):
        for name, (steps, values) in panels[title].items():
            fig.add_trace(
                go.Scatter(
                    x=steps,
                    y=values,
                    mode="lines+markers" if len(steps) < 30 else "lines",
                    name=plot_text(name),
                    legendgroup=name,
                    showlegend=name not in shown,
                    line={"color": palette[names.index(name) % len(palette)]},
                ),
                row=1,
                col=col,
            )
            shown.add(name)
        fig.update_xaxes(title="step", type="log" if log_steps else None, row=1, col=col)
    if mark_step is not None:
        fig.add_vline(x=mark_step, line_dash="dot", line_color="grey")
    fig.update_layout(height=380, legend={"orientation": "h", "y": -0.3})
    return fig


# --------------------------------------------------------------------------------------------------
# Explain
# --------------------------------------------------------------------------------------------------


def lens_map(values: dict[str, np.ndarray], source_labels: Sequence[str], title: str) -> go.Figure:
    """A row per lens over the source pieces, each row on its own scale: divided by its largest
    absolute value, so -1..1 (negative: evidence against the word). Hover gives the raw value."""
    raw = np.stack(list(values.values()))  # (M, S)
    scale = np.abs(raw).max(axis=1, keepdims=True)
    scaled = raw / np.where(scale > 0, scale, 1.0)
    fig = heatmap(
        scaled,
        list(values),
        source_labels,
        title=title,
        axis_names=("lens", "source piece"),
        value_name="share of the row's largest",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
        value_text=np.vectorize(lambda v: f"{v:.3g}")(raw),
    )
    fig.update_layout(height=_height(len(values), per_row=44), margin={"l": 260})
    return fig


def agreement_map(names: Sequence[str], agreement: np.ndarray) -> go.Figure:
    """Kendall's tau between every pair of lenses, -1..1, with the value in each cell."""
    return heatmap(
        agreement,
        names,
        names,
        title="Do the lenses rank the source pieces alike? (Kendall's tau)",
        axis_names=("lens", "lens"),
        value_name="tau",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
        value_text=np.vectorize(lambda v: f"{v:.2f}")(agreement),
        show_text=True,
    )


def difference_map(
    first: np.ndarray,
    second: np.ndarray,
    source_labels: Sequence[str],
    row_names: tuple[str, str],
    title: str,
) -> go.Figure:
    """One output word of two sentences over their aligned source words: above, where it looks in
    each (weights, 0..1); below, second minus first on a diverging scale from minus to plus the
    largest weight above, so that a change is as saturated as its share of the weights: a shift of
    0.02 between weights of 0.2 stays pale."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    difference = second - first
    bound = max(float(np.max([first, second], initial=0.0)), 1e-6)
    columns = np.arange(len(source_labels))
    words = np.array(_labels(source_labels), dtype=str)
    panels = [  # (rows, names, colour scale, zmin, zmax, value name on hover)
        (np.stack([first, second]), row_names, ATTENTION_SCALE, 0.0, 1.0, "weight"),
        (difference[None], ("second − first",), DIVERGING_SCALE, -bound, bound, "change"),
    ]
    scale_titles = ["weight", f"change<br>±{bound:.2f}: the<br>largest weight"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[2, 1])
    for row, (z, names, scale, low, high, name) in enumerate(panels, start=1):
        labels = np.array(_labels(names), dtype=str)
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=columns,
                y=np.arange(len(names)),
                colorscale=scale,
                zmin=low,
                zmax=high,
                colorbar={
                    "title": {"text": scale_titles[row - 1]},
                    "y": 0.72 if row == 1 else 0.15,
                    "len": 0.4,
                },
                customdata=np.char.add(np.char.add(labels[:, None], "<br>"), words[None, :]),
                hovertemplate=f"%{{customdata}}<br>{name} %{{z:.4f}}<extra></extra>",
                texttemplate="%{z:.2f}",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(
            tickvals=list(range(len(names))), ticktext=list(labels), autorange="reversed", row=row
        )
    fig.update_xaxes(tickvals=list(columns), ticktext=list(words), tickangle=-60, row=2)
    fig.update_layout(title=plot_text(title), height=380, margin={"l": 200, "t": 80})
    return fig


# --------------------------------------------------------------------------------------------------
# Heads lab
# --------------------------------------------------------------------------------------------------


DASHBOARD_TEXT_PX = 10
DASHBOARD_LINE_PX = 13  # a line of DASHBOARD_TEXT_PX text
DASHBOARD_ROW_PX = 3 * DASHBOARD_LINE_PX  # a cell's two lines, and half a line above and below
DASHBOARD_BOTTOM_PX = 20


def head_dashboard(values: np.ndarray, roles: Sequence[str], title: str, name: str) -> go.Figure:
    """A layers x heads grid coloured by one statistic (values (L, H)), each cell naming the
    head's role (roles: L * H labels, layer by layer)."""
    layers, heads = values.shape
    fig = heatmap(
        values,
        [f"L{layer}" for layer in range(1, layers + 1)],
        [f"H{head}" for head in range(1, heads + 1)],
        title=title,
        axis_names=("layer", "head"),
        value_name=name,
        colorscale="Viridis",
        zmin=None,
        zmax=None,
        value_text=np.array(
            [f"{role}\n{value:.2f}" for role, value in zip(roles, values.ravel())]
        ).reshape(values.shape),
        show_text=True,
    )
    fig.update_xaxes(tickangle=0)
    fig.update_traces(textfont={"size": DASHBOARD_TEXT_PX})
    # the column labels sit on top (heatmap's margin), nothing below the grid
    height = fig.layout.margin.t + DASHBOARD_BOTTOM_PX + DASHBOARD_ROW_PX * layers
    fig.update_layout(height=height, margin={"b": DASHBOARD_BOTTOM_PX})
    return fig


def ranked_bars(
    labels: Sequence[str], values: Sequence[float], title: str, xaxis: dict, hover: str
) -> go.Figure:
    """A horizontal bar per label, the first on top (the caller ranks them)."""
    fig = go.Figure(
        go.Bar(
            x=list(values),
            y=[plot_text(label) for label in labels],
            orientation="h",
            marker_color=STATUS_COLOURS["kept"],
            hovertemplate=f"%{{y}}{hover}<extra></extra>",
        )
    )
    fig.update_layout(
        title=plot_text(title),
        height=_height(len(labels), per_row=30, minimum=260),
        xaxis=xaxis,
        yaxis={"autorange": "reversed"},
        margin={"l": 260},
    )
    return fig


def focus_bars(
    labels: Sequence[str], weights: Sequence[float], title: str, weight_name: str
) -> go.Figure:
    """Attention weights as bars, the first on top (the heads ranked for one word, or one head's
    row over the keys); ``weight_name``, the x axis title, says what the weights are ("weight on
    “animal”")."""
    xaxis = {"title": plot_text(weight_name), "range": [0, 1]}
    return ranked_bars(labels, weights, title, xaxis, "<br>weight %{x:.3f}")


def vote_bars(votes: Sequence[tuple[str, int]], query_label: str) -> go.Figure:
    """How many heads look most at each word, for one query word: a bar per word, most on top."""
    title = f"Which word each head looks at most, for “{query_label}”"
    xaxis = {"title": "heads (all layers) whose largest weight is on this word", "dtick": 1}
    words, counts = [word for word, _ in votes], [count for _, count in votes]
    return ranked_bars(words, counts, title, xaxis, ": %{x} heads")


LINE_MAX_WIDTH = 8  # px, of a line carrying weight 1 in attention_lines


def attention_lines(
    attention: LabelledAttention, layer: int, head: int, query: int, title: str
) -> go.Figure:
    """BertViz's "head view" for one word: the queries in a column on the left, the keys on the
    right, and a line from query ``query`` to every key whose width (LINE_MAX_WIDTH x weight) and
    opacity are its weight in head (``layer``, ``head``), counted from 0. A line per key, each
    with customdata (key, weight), in key order after the two columns of labels."""
    queries, keys = attention.query_labels, attention.key_labels
    row = attention.weights[layer, head, query]  # (K,)
    colours = [STATUS_COLOURS["finished"] if i == query else "#444444" for i in range(len(queries))]
    columns = [
        go.Scatter(
            x=[0] * len(queries),
            y=list(range(len(queries))),
            text=_labels(queries),
            mode="text",
            textposition="middle left",
            textfont={"color": colours},
            hoverinfo="skip",
            name="queries",
        ),
        go.Scatter(
            x=[1] * len(keys),
            y=list(range(len(keys))),
            text=_labels(keys),
            mode="text",
            textposition="middle right",
            textfont={"color": "#444444"},
            hoverinfo="skip",
            name="keys",
        ),
    ]
    query_label = plot_text(queries[query])
    lines = [
        go.Scatter(
            x=[0, 1],
            y=[query, key],
            mode="lines",
            line={"width": LINE_MAX_WIDTH * float(weight), "color": "#08519c"},
            opacity=float(weight),
            customdata=[[key, float(weight)]] * 2,
            hovertemplate=f"{query_label} → {plot_text(keys[key])}<br>weight %{{customdata[1]:.4f}}"
            "<extra></extra>",
            name=f"key {key}",
        )
        for key, weight in enumerate(row)
    ]
    fig = go.Figure([*columns, *lines])
    fig.update_layout(
        title=plot_text(title),
        height=_height(max(len(queries), len(keys)), per_row=24),
        showlegend=False,
        plot_bgcolor="rgba(0,0,0,0)",
        xaxis={"visible": False, "range": [-1.2, 2.2]},
        yaxis={"visible": False, "autorange": "reversed"},
    )
    return fig


def token_score_changes(
    tokens: Sequence[str], normal: Sequence[float], changed: Sequence[float], title: str
) -> go.Figure:
    """For each output token of the normal translation, log P(token) with the change minus
    without it (teacher-forced): a bar per token, below 0 where the change hurts it."""
    change = np.asarray(changed) - np.asarray(normal)
    labels = _numbered(_labels(tokens), len(tokens))
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=change,
            marker_color=np.where(change < 0, "#d7301f", STATUS_COLOURS["kept"]),
            customdata=np.stack([normal, changed], axis=-1),
            hovertemplate="%{x}<br>log P %{customdata[0]:.3f} → %{customdata[1]:.3f}"
            "<br>change %{y:+.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=plot_text(title),
        height=360,
        yaxis={"title": "change in log P (nats)", "zeroline": True},
        xaxis={"tickangle": -45},
    )
    return fig


def pruning_curve(
    heads_off: Sequence[int], bleu: Sequence[float], chrf: Sequence[float], total: int, title: str
) -> go.Figure:
    """BLEU and chrF of the survey's sample as the least important heads are switched off, from
    none to all ``total`` (Michel et al. 2019)."""
    fig = go.Figure(
        [
            go.Scatter(x=list(heads_off), y=list(scores), mode="lines+markers", name=name)
            for name, scores in (("BLEU", bleu), ("chrF", chrf))
        ]
    )
    fig.update_traces(hovertemplate="%{x} heads off: %{y:.1f}")
    fig.update_layout(
        title=plot_text(title),
        height=380,
        xaxis={"title": f"heads switched off, least important first (of {total})"},
        yaxis={"title": "score", "rangemode": "tozero"},
    )
    return fig
