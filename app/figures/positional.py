"""The positional encoding and the encoder's input: PE as a heatmap and as curves, how alike
two positions' encodings are, and token embedding + PE side by side."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.heatmaps import heatmap
from app.figures.style import DIVERGING_SCALE, figure_height
from app.figures.text import hover_text, numbered, plot_labels

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
        positions = numbered(plot_labels(rows) if rows is not None else None, len(pe))
        fig.data[0].update(
            customdata=hover_text(
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
    labels = plot_labels(tokens)
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
        height=figure_height(len(tokens)) + (0 if shared_scale else 60),
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
