"""The beam search, step by step: the tree of hypotheses (laid out by
app/figures/beam_layout.py), each step's candidates as bars, and the finished hypotheses'
ranks as the length penalty varies."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.figures.beam_layout import TreeNode
from app.figures.style import STATUS_COLOURS, figure_height
from app.figures.text import plot_text

TREE_STEPS_SHOWN = 12  # steps of the beam tree in view at once; earlier ones by panning
# The shaded step: a translucent amber, so the grey edges stay visible on light and dark themes
STEP_SHADE = "rgba(245, 166, 35, 0.16)"
STEP_EDGE = "rgba(245, 166, 35, 0.7)"
# Inner nodes' labels sit on a chip above their edges, dark on light in either theme
LABEL_CHIP = {"bgcolor": "rgba(255, 255, 255, 0.88)", "font": {"color": "#222222", "size": 11}}
STATUS_MEANINGS = {
    "root": "start (<s>)",
    "kept": "kept: stays live",
    "finished": "finished: ended",
    "pruned": "pruned: dropped",
}
LEGEND_CHARS = 90  # a finished hypothesis's text in the re-rank legend: wrapped at this width
LEGEND_MAX_CHARS = 400  # and cut with … beyond this


def first_step_in_view(current_step: int, steps_shown: int = TREE_STEPS_SHOWN) -> int:
    """The earliest step column the beam tree shows (-1: the root, start), the current step
    being the last of ``steps_shown``."""
    return max(-1, current_step - steps_shown + 1)


def beam_tree(
    nodes: Sequence[TreeNode],
    chosen: Sequence[int],
    current_step: int,
    explanations: dict[str, str] | None = None,
    steps_shown: int = TREE_STEPS_SHOWN,
) -> go.Figure:
    """The search tree laid out by :func:`~app.figures.beam_layout.tree_layout`: a column per
    step, numbered as core and the step slider number them (the root, <s>, at -1 is 'start'), one
    colour per status, the chosen output's path drawn thick, the current step's column shaded.
    Inner nodes' labels sit on chips above their edges, leaves' to their right; hover adds the
    prefix as text and what the node's reason means (``explanations``: reason -> meaning). At most
    ``steps_shown`` steps are in view, ending at the current one."""
    inner = {n.parent for n in nodes if n.prefix}
    explanations = explanations or {}
    chosen = tuple(chosen)
    last = max(n.step for n in nodes)
    first = first_step_in_view(current_step, steps_shown)
    # the rows of the nodes in view (and their parents, whose edges enter the view)
    in_view = [n.y for n in nodes if n.step >= first - 1]
    top, bottom = min(in_view) - 0.8, max(in_view) + 0.8
    groups = {status: [n for n in nodes if n.status == status] for status in STATUS_COLOURS}
    return go.Figure(
        [
            *(_tree_edges(nodes, chosen, on_path) for on_path in (False, True)),
            *(
                _tree_nodes(group, status, inner, explanations)
                for status, group in groups.items()
                if group
            ),
        ],
        layout={
            "shapes": [_column_shade(current_step)],
            "annotations": [_label_chip(node) for node in nodes if node.prefix in inner],
            "xaxis": {
                "title": "step",
                "tickvals": list(range(-1, last + 1)),
                "ticktext": ["start", *map(str, range(last + 1))],
                "range": [first - 0.6, current_step + 1.3],
            },
            "yaxis": {"visible": False, "range": [bottom, top]},  # reversed: the best on top
            "height": figure_height(int(bottom - top), per_row=26, maximum=2000),
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
            "plot_bgcolor": "rgba(0,0,0,0)",
            "hoverlabel": {"align": "left"},
        },
    )


def _column_shade(step: int) -> dict:
    """The shaded column of ``step``, the height of the plot, behind the tree (what
    ``Figure.add_vrect`` draws, as the shape itself: the figure is built in one go, which takes
    a third of the time of adding to it piece by piece)."""
    return {
        "type": "rect",
        "xref": "x",
        "x0": step - 0.5,
        "x1": step + 0.5,
        "yref": "y domain",
        "y0": 0,
        "y1": 1,
        "fillcolor": STEP_SHADE,
        "line": {"color": STEP_EDGE, "width": 1, "dash": "dot"},
        "layer": "below",
    }


def _label_chip(node: TreeNode) -> dict:
    """An inner node's piece on a chip above its edges."""
    return {
        "x": node.step,
        "y": node.y,
        "text": plot_text(node.piece),
        "showarrow": False,
        "yshift": 14,
        "borderpad": 1,
        **LABEL_CHIP,
    }


def _tree_edges(nodes: Sequence[TreeNode], chosen: tuple[int, ...], on_path: bool) -> go.Scatter:
    """The edges from parent to child of the nodes on the chosen output's path (thick), or of
    all the others (thin), as one line trace broken by None."""
    by_prefix = {n.prefix: n for n in nodes}
    xs, ys = [], []
    for node in nodes:
        if node.prefix and (chosen[: len(node.prefix)] == node.prefix) == on_path:
            parent = by_prefix[node.parent]
            xs += [parent.step, node.step, None]
            ys += [parent.y, node.y, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line={"color": "#31a354" if on_path else "#999999", "width": 4 if on_path else 1.2},
        hoverinfo="skip",
        name="chosen output" if on_path else "search",
        showlegend=on_path,
    )


def _tree_nodes(
    group: Sequence[TreeNode], status: str, inner: set, explanations: dict[str, str]
) -> go.Scatter:
    """The nodes of one status, leaves labelled to their right (inner nodes get chips), with
    the node's numbers, reason and text on hover."""
    return go.Scatter(
        x=[n.step for n in group],
        y=[n.y for n in group],
        mode="markers+text",
        text=["" if n.prefix in inner else plot_text(n.piece) for n in group],
        textposition="middle right",
        marker={
            "color": STATUS_COLOURS[status],
            "size": 11,
            "line": {"color": "white", "width": 1},
        },
        name=plot_text(STATUS_MEANINGS[status]),
        customdata=[
            [
                plot_text(n.piece),
                n.token_log_prob,
                np.exp(n.token_log_prob),
                n.log_prob,
                n.normalized,
                plot_text(n.reason),
                plot_text(explanations.get(n.reason, "")),
                plot_text(n.text),
            ]
            for n in group
        ],
        hovertemplate=(
            "<b>%{customdata[0]}</b>: %{customdata[7]}<br>log P(token) %{customdata[1]:.3f}"
            " (P %{customdata[2]:.3f})<br>cumulative %{customdata[3]:.3f}"
            "<br>normalised %{customdata[4]:.3f}<br><b>%{customdata[5]}</b>"
            "<br>%{customdata[6]}<extra></extra>"
        ),
    )


def candidate_bars(rows: Sequence[dict], explanations: dict[str, str] | None = None) -> go.Figure:
    """Each candidate's probability given its beam, coloured by what the search decided; hover
    says what the reason means (``explanations``: reason -> meaning)."""
    explanations = explanations or {}
    labels = [plot_text(f"beam {r['beam']}: {r['next piece']}") for r in rows]
    by_status = {
        status: [i for i, row in enumerate(rows) if row["status"] == status]
        for status in STATUS_COLOURS
    }
    return go.Figure(
        [
            go.Bar(
                x=[rows[i]["probability"] for i in index],
                y=index,
                orientation="h",
                marker_color=STATUS_COLOURS[status],
                name=plot_text(STATUS_MEANINGS[status]),
                customdata=[
                    [
                        labels[i],
                        plot_text(rows[i]["why"]),
                        plot_text(explanations.get(rows[i]["why"], "")),
                        plot_text(rows[i]["prefix"]),
                    ]
                    for i in index
                ],
                hovertemplate=(
                    "%{customdata[0]} after “%{customdata[3]}”<br>P %{x:.3f}"
                    "<br><b>%{customdata[1]}</b><br>%{customdata[2]}<extra></extra>"
                ),
            )
            for status, index in by_status.items()
            if index
        ],
        layout={
            "yaxis": {
                "tickvals": list(range(len(rows))),
                "ticktext": labels,
                "autorange": "reversed",
            },
            "xaxis": {"title": "probability given the beam's prefix", "range": [0, 1]},
            "height": figure_height(len(rows), per_row=22, maximum=1200),
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
            "hoverlabel": {"align": "left"},
        },
    )


def legend_text(text: str, length: int, limit: int = LEGEND_MAX_CHARS) -> str:
    """A hypothesis in a legend: its whole text (cut with … only after ``limit`` characters)
    and its length in pieces, which tells apart two that read alike."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"{cut} ({length} pieces)"


def _wrapped(text: str, width: int = LEGEND_CHARS) -> str:
    """Plot text broken into lines of at most ``width`` characters (at spaces)."""
    return "<br>".join(plot_text(line) for line in textwrap.wrap(text, width)) or plot_text(text)


def rerank_lines(
    labels: Sequence[str],
    ranks: np.ndarray,
    gaps: np.ndarray,
    alphas: np.ndarray,
    alpha: float,
) -> go.Figure:
    """Each finished hypothesis's rank by log P / lp(alpha) as alpha varies (ranks and gaps to
    the best, (hypotheses, alphas), from :func:`~app.figures.beam_layout.rerank_ranks`): rank 1,
    on top, is the output; ranks never share a point, so no line hides another. The legend, below,
    lists the hypotheses (``labels``) in full, wrapped, in their order at the current alpha
    (dashed line); hover gives the gap to the best."""
    at = int(np.argmin(np.abs(alphas - alpha)))  # the grid point nearest the current alpha
    names = [_wrapped(label) for label in labels]
    lines = sum(name.count("<br>") + 1 for name in names)  # of the legend
    count = len(labels)
    return go.Figure(
        [
            go.Scatter(
                x=alphas,
                y=rank,
                mode="lines+markers",
                marker={"size": [10 if i == at else 0 for i in range(len(alphas))]},
                name=name,
                legendrank=int(rank[at]),
                customdata=gap,
                hovertemplate=(
                    "%{fullData.name}<br>α %{x:.2f}: rank %{y}, "
                    "%{customdata:.3f} below the best log P / lp<extra></extra>"
                ),
            )
            for name, rank, gap in zip(names, ranks, gaps)
        ],
        layout={
            # the current alpha, the height of the plot (what Figure.add_vline draws)
            "shapes": [
                {
                    "type": "line",
                    "xref": "x",
                    "x0": alpha,
                    "x1": alpha,
                    "yref": "y domain",
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#888888", "dash": "dash"},
                }
            ],
            "xaxis": {"title": "length penalty α"},
            "yaxis": {
                "title": "rank (1 = the output)",
                "range": [count + 0.5, 0.5],
                "tickvals": list(range(1, count + 1)),
            },
            "height": 330 + 20 * lines + 6 * count,
            "legend": {  # below the axis title, in the figure's own margin: the start of each text
                "orientation": "v",
                "yref": "container",
                "y": 0,
                "yanchor": "bottom",
                "x": 0,
                "xanchor": "left",
                "title": {"text": f"rank at α = {alpha:.1f}, best first"},
            },
            "margin": {"t": 30, "b": 90 + 20 * lines + 6 * count},
        },
    )
