"""The logit lens of a translation (core/inspection/logit_lens.py) and the direct contributions to
its chosen pieces (core/inspection/direct_contributions.py): a map of the decoder's states by
output positions, the top piece written in each cell; the chosen piece's rank falling through the
states; and bars of what the parts of one layer added to its logit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.figures.heatmaps import heatmap
from app.figures.style import ATTENTION_SCALE, STATUS_COLOURS, figure_height
from app.figures.text import hover_text, numbered, plot_labels, plot_text
from core.inspection import LogitLens

PICKED_OUTLINE = {"color": "#e6550d", "width": 3}
POSITIVE, NEGATIVE = STATUS_COLOURS["kept"], "#d6604d"  # a part that raised the logit, lowered it
HIGHLIGHT = STATUS_COLOURS["finished"]


def state_label(name: str, every_sublayer: bool) -> str:
    """A row's label: "L3" after a whole layer, "L3 cross-attention" with every sub-layer."""
    return name if every_sublayer or name == "embedding" else name.split()[0]


def lens_map(
    lens: LogitLens, states: Sequence[int], picked: tuple[int, int] | None, title: str
) -> go.Figure:
    """States (rows, the last on top) by output positions (columns, each headed by the piece the
    translation chose there), coloured by the chosen piece's probability in that state's lens,
    the state's own first choice written in the cell. ``picked`` (state, position) is outlined."""
    rows = list(states)[::-1]  # the last layer on top, the embedding at the bottom
    every_sublayer = len(rows) == len(lens.states)
    labels = [state_label(lens.states[k], every_sublayer) for k in rows]
    top = np.array([[lens.top_pieces[k][t][0] for t in range(len(lens.chosen))] for k in rows])
    fig = heatmap(
        lens.chosen_prob[rows],
        labels,
        lens.chosen,
        title=title,
        axis_names=("decoder state", "the piece chosen at each position"),
        value_name="P(chosen piece)",
        colorscale=ATTENTION_SCALE,
        value_text=top,
        show_text=True,
    )
    details = np.char.add(
        np.char.add("first choice ", np.vectorize(plot_text, otypes=[str])(top)),
        np.char.add(
            np.char.add("<br>chosen piece: rank ", lens.chosen_rank[rows].astype(str)),
            np.char.add(", P ", np.char.mod("%.3f", lens.chosen_prob[rows])),
        ),
    )
    fig.data[0].customdata = hover_text(
        np.array(plot_labels(labels)),
        numbered(plot_labels(lens.positions), len(lens.chosen)),
        details,
        ("state", "position", ""),
    )
    fig.layout.yaxis.title = None
    if picked is not None:
        state, position = picked
        y = rows.index(state) if state in rows else None
        if y is not None:
            fig.add_shape(
                type="rect",
                x0=position - 0.5,
                x1=position + 0.5,
                y0=y - 0.5,
                y1=y + 0.5,
                line=PICKED_OUTLINE,
            )
    return fig


def rank_curve(lens: LogitLens, position: int, title: str) -> go.Figure:
    """The rank of the piece chosen at ``position`` in every state's lens (log axis, 1 at the
    bottom), with the median over all positions for comparison."""
    states = plot_labels(lens.states)
    ranks = lens.chosen_rank[:, position]
    median = np.median(lens.chosen_rank, axis=1)
    return go.Figure(
        [
            go.Scatter(
                x=states,
                y=median,
                mode="lines",
                name="median of all positions",
                line={"color": "#999999", "dash": "dash"},
                hovertemplate="%{x}<br>median rank %{y}<extra></extra>",
            ),
            go.Scatter(
                x=states,
                y=ranks,
                mode="lines+markers",
                name=plot_text(f"“{lens.chosen[position]}”"),
                line={"color": POSITIVE, "width": 3},
                customdata=[plot_text(lens.top_pieces[k][position][0]) for k in range(len(ranks))],
                hovertemplate="%{x}<br>rank %{y}<br>first choice %{customdata}<extra></extra>",
            ),
        ],
        layout={
            "title": plot_text(title),
            "height": 420,
            "xaxis": {"title": "decoder state", "tickangle": -45},
            "yaxis": {
                "title": "rank of the chosen piece (1 = first choice)",
                "type": "log",
                "dtick": 1,  # powers of ten only: plotly draws the 2s and 5s between at 3/4 size
            },
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        },
    )


def contribution_bars(
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    value_name: str,
    highlight: int | None = None,
) -> go.Figure:
    """A horizontal bar per part, in the order given (the first on top; ``labels`` unique: bars
    of one label stack): blue where it raised the logit, red where it lowered it; ``highlight``
    drawn green."""
    values = np.asarray(values, dtype=float)
    colours = np.where(values >= 0, POSITIVE, NEGATIVE).astype(object)
    if highlight is not None:
        colours[highlight] = HIGHLIGHT
    return go.Figure(
        go.Bar(
            x=values,
            y=plot_labels(labels),
            orientation="h",
            marker_color=list(colours),
            hovertemplate=f"%{{y}}<br>{plot_text(value_name)} %{{x:+.3f}}<extra></extra>",
        ),
        layout={
            "title": plot_text(title),
            "height": figure_height(len(labels), per_row=26, minimum=300),
            "xaxis": {"title": plot_text(value_name), "zeroline": True},
            "yaxis": {"autorange": "reversed", "automargin": True},
        },
    )
