"""The Explain page: the lenses over the source pieces, how alike they rank them, and one
output word's attention in two sentences with the difference."""

from __future__ import annotations

import html
import textwrap
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.heatmaps import heatmap
from app.figures.style import (
    ATTENTION_SCALE,
    CELL_TEXT_MAX,
    CHARACTER_WIDTH,
    DIVERGING_SCALE,
    LABEL_CHARS,
    PHONE_PLOT_PX,
    TICK_FONT_PX,
    figure_height,
)
from app.figures.text import plot_labels, plot_lines, plot_text

SCALE_BELOW_PX = 70  # a colour bar under a map, with its title: the figure grows by that much
TICK_ANGLE = 60  # degrees: heatmap() tilts column labels up to the right
AXIS_TITLE_PX = 50  # an axis title, and the gaps around it
GAP_PX = 10


def wrapped_labels(names: Sequence[str]) -> list[str]:
    """Each name as plotly shows it literally, on lines of at most LABEL_CHARS characters
    (broken between words): a lens's name on one line took a phone's map from it."""
    return [
        plot_lines("\n".join(textwrap.wrap(name, LABEL_CHARS, break_on_hyphens=False)))
        for name in names
    ]


def tau_text(tau: float) -> str:
    """Kendall's tau as a cell shows it: two decimals, without the leading zero as correlations
    are written (it lies in -1..1): "-.12", ".77", "1.00"."""
    return f"{tau:.2f}".replace("0.", ".", 1)


def scale_below(fig: go.Figure, title: str) -> None:
    """Lay the colour bar of ``fig``'s map under it, across, instead of beside it (where it
    took a third of a phone's width), and make the figure that much taller; the right margin
    it leaves holds the last column's label, tilted up to the right."""
    fig.update_traces(
        colorbar={
            "title": {"text": title, "side": "top"},
            "orientation": "h",
            "y": -0.02,
            "yanchor": "top",
            "thickness": 12,
        }
    )
    last = len(html.unescape(fig.layout.xaxis.ticktext[-1])) * TICK_FONT_PX * CHARACTER_WIDTH
    fig.update_layout(
        height=fig.layout.height + SCALE_BELOW_PX,
        margin_r=round(last * np.cos(np.radians(TICK_ANGLE))) + GAP_PX,
    )


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
    fig.update_yaxes(ticktext=wrapped_labels(values), automargin=True)
    fig.update_layout(height=figure_height(len(values), per_row=44))
    scale_below(fig, "share of the row's largest")
    return fig


def agreement_map(names: Sequence[str], agreement: np.ndarray) -> go.Figure:
    """Kendall's tau between every pair of lenses, -1..1, with the value in each cell, written
    small enough to fit its cell on a phone (PHONE_PLOT_PX across the lenses)."""
    texts = np.vectorize(tau_text)(agreement)
    fig = heatmap(
        agreement,
        names,
        names,
        title="Do the lenses rank the source pieces alike? (Kendall's tau)",
        axis_names=("lens", "lens"),
        value_name="tau",
        colorscale=DIVERGING_SCALE,
        zmin=-1.0,
        zmax=1.0,
        value_text=texts,
        show_text=True,
    )
    widest = max(map(len, texts.ravel()))
    size = min(CELL_TEXT_MAX, PHONE_PLOT_PX / len(names) / (CHARACTER_WIDTH * widest))
    fig.update_traces(textfont_size=size)
    fig.update_yaxes(ticktext=wrapped_labels(names), automargin=True)
    # the column labels, tilted on top, and the axis's title above them: the caption goes above
    longest = max(map(len, names)) * TICK_FONT_PX * CHARACTER_WIDTH
    tilted = longest * np.sin(np.radians(TICK_ANGLE))
    top = round(tilted) + AXIS_TITLE_PX
    fig.update_layout(height=fig.layout.height - fig.layout.margin.t + top, margin_t=top)
    scale_below(fig, "tau")
    return fig


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
    words = np.array(plot_labels(source_labels), dtype=str)
    panels = [  # (rows, names, colour scale, zmin, zmax, value name on hover)
        (np.stack([first, second]), row_names, ATTENTION_SCALE, 0.0, 1.0, "weight"),
        (difference[None], ("second − first",), DIVERGING_SCALE, -bound, bound, "change"),
    ]
    scale_titles = ["weight", f"change<br>±{bound:.2f}: the<br>largest weight"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[2, 1])
    for row, (z, names, scale, low, high, name) in enumerate(panels, start=1):
        labels = np.array(plot_labels(names), dtype=str)
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
            tickvals=list(range(len(names))),
            ticktext=list(labels),
            autorange="reversed",
            automargin=True,
            row=row,
        )
    fig.update_xaxes(tickvals=list(columns), ticktext=list(words), tickangle=-60, row=2)
    fig.update_layout(title=plot_text(title), height=380, margin={"t": 80})
    return fig
