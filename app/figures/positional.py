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
from core.model import wave

# How the PE heatmaps order their dimensions (the URL holds the key), in either layout
PE_ORDERS = {
    "interleaved": "The paper's order: sin, cos, sin, cos, …",
    "blocks": "All sines, then all cosines",
}


def pe_dimension_order(d_model: int, order: str, layout: str) -> np.ndarray:
    """The dimensions in drawing order, by the wave each holds in ``layout``: interleaved, the
    sine and cosine of each wavelength in turn, fast to slow (the paper's layout as computed);
    blocks, every sine, then every cosine (Marian's layout as computed)."""
    waves = [wave(d, d_model, layout) for d in range(d_model)]

    def drawn_at(d: int) -> tuple[int, int]:
        is_cosine, two_i = waves[d].function == "cos", waves[d].two_i
        return (is_cosine, two_i) if order == "blocks" else (two_i, is_cosine)

    return np.array(sorted(range(d_model), key=drawn_at))


def positional_heatmap(
    pe: np.ndarray,
    rows: Sequence[str] | None = None,
    title: str = "",
    order: str = "interleaved",
    *,
    layout: str,
) -> go.Figure:
    """PE (positions x dimensions) on a diverging scale from -1 to 1; rows labelled with tokens
    when given, else with position numbers. ``order`` (a key of PE_ORDERS) draws the dimensions
    interleaved, or as a block of sines and a block of cosines, which turns the barcode of
    alternating columns into two smooth sweeps from fast to slow waves; hover and ticks give each
    column's own dimension and the wave it holds in ``layout``."""
    d_model = pe.shape[1]
    dims = pe_dimension_order(d_model, order, layout)
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
    names = np.array([f"{d}: {wave(d, d_model, layout).formula}" for d in dims])
    positions = numbered(plot_labels(rows) if rows is not None else None, len(pe))
    fig.data[0].update(
        customdata=hover_text(
            positions, names, np.char.mod("%.4f", z), ("position", "dimension", "PE")
        ),
        hovertemplate="%{customdata}<extra></extra>",
    )
    ticks = list(range(0, d_model, max(1, d_model // 12)))
    fig.update_xaxes(tickvals=ticks, ticktext=[str(dims[column]) for column in ticks], tickangle=0)
    if order == "blocks":
        half = d_model // 2  # the sines, in either layout
        fig.update_xaxes(title="dimension: the sines, then the cosines")
        fig.add_vline(x=half - 0.5, line_color="#222222", line_width=2)
        for x, text in ((half / 2, "sin block"), (half + (d_model - half) / 2, "cos block")):
            fig.add_annotation(
                x=x, y=0, yref="paper", yanchor="top", text=text, showarrow=False, yshift=-4
            )
    return fig


def positional_curves(pe: np.ndarray, dims: Sequence[int], *, layout: str) -> go.Figure:
    """Chosen dimensions of PE against position, each named by the wave it holds in ``layout``."""
    fig = go.Figure()
    d_model = pe.shape[1]
    for d in dims:
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(pe)),
                y=pe[:, d],
                mode="lines",
                name=f"dim {d}: {wave(d, d_model, layout).formula}",
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
    *,
    layout: str,
) -> go.Figure:
    """The encoder input, side by side: token embedding x sqrt(d_model), PE, and their sum
    (tokens x dimensions). With ``shared_scale`` one diverging scale (true proportions: PE, within
    ±1, looks pale next to the scaled embedding); else each panel its own scale, symmetric around
    0 at its largest absolute value, each with its own colour bar below it. ``order`` (a key of
    PE_ORDERS) orders the dimensions of every panel alike, by the wave PE holds there in
    ``layout``; hover names each column's dimension."""
    dims = pe_dimension_order(token.shape[1], order, layout)
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
        _mark_dimension_blocks(fig, dims)
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


def _mark_dimension_blocks(fig: go.Figure, dims: np.ndarray) -> None:
    """Name the two blocks of each of :func:`embedding_sum`'s panels in blocks order under their
    middles, by their first dimensions (and, in the positional encoding's panel, by their wave:
    the embedding and the sum hold no sines), and draw the line between them."""
    half = len(dims) // 2  # the sines, in either layout
    blocks = [dims[:half], dims[half:]]
    middles = [(half - 1) / 2, (half + len(dims) - 1) / 2]
    first_dims = [
        ", ".join(map(str, block[:2])) + (", …" if len(block) > 2 else "") for block in blocks
    ]
    for col in (1, 2, 3):
        if col == 2:
            title = "dimension: the sines, then the cosines"
            names = [f"{function}: {first}" for function, first in zip(("sin", "cos"), first_dims)]
        else:
            title, names = "dimension: in the positional encoding's order", first_dims
        fig.update_xaxes(title=title, tickvals=middles, ticktext=names, tickangle=0, row=1, col=col)
        fig.add_vline(x=half - 0.5, line_color="#222222", line_width=2, row=1, col=col)
