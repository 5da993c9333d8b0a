"""The Explain page: the lenses over the source pieces, how alike they rank them, and one
output word's attention in two sentences with the difference."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.heatmaps import heatmap
from app.figures.style import ATTENTION_SCALE, DIVERGING_SCALE, figure_height
from app.figures.text import plot_labels, plot_text


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
    fig.update_layout(height=figure_height(len(values), per_row=44), margin={"l": 260})
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
            tickvals=list(range(len(names))), ticktext=list(labels), autorange="reversed", row=row
        )
    fig.update_xaxes(tickvals=list(columns), ticktext=list(words), tickangle=-60, row=2)
    fig.update_layout(title=plot_text(title), height=380, margin={"l": 200, "t": 80})
    return fig
