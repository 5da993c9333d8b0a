"""Training curves: the Model page's loss and BLEU, and the Training dynamics page's head
statistics over the snapshots (the records they draw from: app/figures/training_log.py)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.text import plot_labels, plot_text

PANEL_PX = 180  # a panel's plot
PANEL_GAP_PX = 60  # between two panels: the lower one's title
TOP_PX = 60  # above the first panel: its title
BOTTOM_PX = 110  # under the last: the step axis's labels and title, and the legend (a line or two)


def training_curves(
    panels: dict[str, dict[str, tuple[Sequence[float], Sequence[float]]]],
    mark_step: int | None = None,
    log_steps: bool = False,
) -> go.Figure:
    """One subplot per panel title, stacked on one step axis (side by side, a phone's panels
    were 150 px wide and their titles ran into each other), one line per named (steps, values)
    series; a series named in several panels (one head's entropy and confidence) has one colour
    and one legend entry; a dotted line at ``mark_step``; a logarithmic step axis for log-spaced
    snapshots."""
    titles = list(panels)
    fig = make_subplots(
        rows=len(titles),
        cols=1,
        subplot_titles=plot_labels(titles),
        shared_xaxes=True,
        vertical_spacing=PANEL_GAP_PX / panels_height(len(titles)),
    )
    names = list(dict.fromkeys(name for lines in panels.values() for name in lines))
    palette = plotly.colors.qualitative.Plotly
    shown: set[str] = set()
    for row, title in enumerate(titles, start=1):
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
                row=row,
                col=1,
            )
            shown.add(name)
    fig.update_xaxes(type="log" if log_steps else None)
    fig.update_xaxes(title="step", row=len(titles))  # the shared axis's labels: under the last
    if mark_step is not None:
        fig.add_vline(x=mark_step, line_dash="dot", line_color="grey")
    fig.update_layout(
        height=TOP_PX + panels_height(len(titles)) + BOTTOM_PX,
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        margin={"t": TOP_PX, "b": BOTTOM_PX},
    )
    return fig


def panels_height(count: int) -> int:
    """The height (px) of ``count`` stacked panels and the gaps between them."""
    return count * PANEL_PX + (count - 1) * PANEL_GAP_PX
