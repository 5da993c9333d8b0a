"""Masking: one head on its way from scores to weights, the mask's −∞ cells drawn grey."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.style import (
    ATTENTION_SCALE,
    CELL_TEXT_MAX,
    CHARACTER_WIDTH,
    DIVERGING_SCALE,
    NARROWEST_PLOT_PX,
)
from app.figures.text import MINUS_INF, hover_text, numbered, plot_labels, values_as_text
from core import LabelledAttention

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
    rows = numbered(plot_labels(attention.query_labels), n_rows)
    columns = numbered(plot_labels(attention.key_labels), n_cols)
    text_size = masked_text_size(n_rows, n_cols)
    panels = [
        (scores, "score", "coloraxis", ""),
        (masked, "masked score", "coloraxis", MINUS_INF),
        (weights, "weight", "coloraxis2", "0"),
    ]
    for col, (values, name, colour_axis, masked_text) in enumerate(panels, start=1):
        title = PIPELINE_TITLES[col - 1]
        hover = hover_text(rows, columns, values_as_text(values), ("query", "key", name))
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
    queries, keys = plot_labels(query_labels), plot_labels(key_labels)
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
