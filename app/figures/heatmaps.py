"""The heatmaps every attention page draws: one map of values on position axes
(:func:`heatmap`), one head or the heads' average of a layer (:func:`attention_map`), and
every head of every layer at once (:func:`attention_grid`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.figures.style import (
    ATTENTION_SCALE,
    CELL_TEXT_MAX,
    CHARACTER_WIDTH,
    MASK_SCALE,
    MASKED_COLOUR,
    NARROWEST_PLOT_PX,
    figure_height,
)
from app.figures.text import (
    MINUS_INF,
    hover_text,
    numbered,
    plot_labels,
    plot_lines,
    plot_text,
    values_as_text,
)
from app.numbering import shown_of
from core import LabelledAttention

GRID_HOVER_CELLS = 40_000  # model view cells that get token names on hover


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
    trace = {
        "z": np.where(np.isneginf(z), np.nan, z),
        "x": np.arange(n_cols),
        "y": np.arange(n_rows),
        "colorscale": colorscale,
        "zmin": zmin,
        "zmax": zmax,
        "colorbar": {"title": {"text": value_name}},
        "showscale": colorscale is not MASK_SCALE,  # two colours need no scale
    }
    row_labels = plot_labels(rows) if rows is not None else None
    col_labels = plot_labels(columns) if columns is not None else None
    shown_text = value_text
    if value_text is not None:
        value_text = np.vectorize(plot_lines, otypes=[str])(np.asarray(value_text, dtype=str))
    if row_labels is None and col_labels is None and value_text is None:
        trace["hovertemplate"] = (
            f"{axis_names[0]} %{{y}}<br>{axis_names[1]} %{{x}}<br>{value_name} %{{z:.4f}}"
            "<extra></extra>"
        )
    else:
        trace["customdata"] = hover_text(
            numbered(row_labels, n_rows),
            numbered(col_labels, n_cols),
            values_as_text(z) if value_text is None else value_text,
            (*axis_names, value_name),
        )
        trace["hovertemplate"] = "%{customdata}<extra></extra>"
    if show_text and value_text is not None:
        size = cell_text_size(np.asarray(shown_text, dtype=str))
        trace.update(text=value_text, texttemplate="%{text}", textfont={"size": size})
    elif np.isneginf(z).any():
        trace.update(text=np.where(np.isneginf(z), MINUS_INF, ""), texttemplate="%{text}")
    xaxis = {"title": axis_names[1], "side": "top"}
    # the margin grows with the row labels: a long one (a decoder row "<s> → ▁Das") would run
    # into the axis title
    yaxis = {"title": axis_names[0], "autorange": "reversed", "automargin": True}
    if col_labels is not None:
        xaxis.update(tickvals=list(range(n_cols)), ticktext=col_labels, tickangle=-60)
    if row_labels is not None:
        yaxis.update(tickvals=list(range(n_rows)), ticktext=row_labels)
    # built in one go: a third of the time of updating a figure property by property, on every
    # page that draws a map
    return go.Figure(
        go.Heatmap(trace),
        layout={
            # "container" with automargin: the title keeps clear of the tick labels on top
            "title": {"text": plot_text(title), "yref": "container", "automargin": True},
            "height": figure_height(n_rows),
            "plot_bgcolor": "#f3f3f3",
            "xaxis": xaxis,
            "yaxis": yaxis,
            "margin": {"t": 110},
        },
    )


def attention_map(
    attention: LabelledAttention, layer: int, head: int | None = None, title: str = ""
) -> go.Figure:
    """One layer of a LabelledAttention (layer and head count from 0): one head, or with
    head=None the average of the heads; rows and columns carry core's labels."""
    weights = attention.weights[layer]  # (H, Q, K)
    z = weights.mean(axis=0) if head is None else weights[head]
    return heatmap(z, attention.query_labels, attention.key_labels, title=title)


def with_masked_cells(fig: go.Figure, allowed: np.ndarray) -> go.Figure:
    """``fig``, a map of (queries, keys), with the cells the mask forbids (``allowed`` False)
    drawn solid MASKED_COLOUR over it: a masked weight is exactly 0, and a pale cell of a small
    weight would look the same."""
    masked = np.where(allowed, np.nan, 1.0)
    fig.add_trace(
        go.Heatmap(
            z=masked,
            x=np.arange(masked.shape[1]),
            y=np.arange(masked.shape[0]),
            colorscale=[[0.0, MASKED_COLOUR], [1.0, MASKED_COLOUR]],
            showscale=False,
            hoverongaps=False,
            hovertemplate="masked: weight exactly 0<extra></extra>",
            name="masked",
        )
    )
    return fig


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
            np.char.add(numbered(plot_labels(queries), q)[:, None], " → "),
            numbered(plot_labels(keys), k)[None, :],
        )
        hover = np.full(z.shape, "", dtype=object)
        for layer, head, tile in tiles:
            hover[tile] = np.char.add(f"L{shown_of(layer)} H{shown_of(head)} · ", pairs)
        trace.update(
            customdata=hover.astype(str),
            hovertemplate="%{customdata}<br>weight %{z:.4f}<extra></extra>",
        )
    fig = go.Figure([trace, _tile_markers(layers, heads, q, k)])
    if selected is not None:
        fig.add_shape(_tile_outline(selected, heads, q, k))
    fig.update_xaxes(
        tickvals=[h * (k + 1) + (k - 1) / 2 for h in range(heads)],
        ticktext=[f"head {shown_of(h)}" for h in range(heads)],
        side="top",
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickvals=[layer * (q + 1) + (q - 1) / 2 for layer in range(layers)],
        ticktext=[f"layer {shown_of(layer)}" for layer in range(layers)],
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
        customdata=[[shown_of(layer), shown_of(head)] for layer, head in tiles],
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
