"""The pieces of a sentence as chips, coloured by kind (the Tokenization page, the story)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.display import PIECE_KINDS
from app.figures.text import plot_text

KIND_COLOURS = dict(zip(PIECE_KINDS, ("#9ecae1", "#deebf7", "#fdae6b", "#fc9272")))


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
        hover[r, c] = f"{i}: {plot_text(piece)}<br>id {token_id}, {PIECE_KINDS[kind]}"
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
                name=PIECE_KINDS[kind],
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
