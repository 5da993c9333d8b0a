"""Training curves: the Model page's loss and BLEU, and the Training dynamics page's head
statistics over the snapshots (the records they draw from: app/figures/training_log.py)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.text import plot_labels, plot_text


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
        rows=1, cols=len(titles), subplot_titles=plot_labels(titles), horizontal_spacing=0.07
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
