"""The Heads lab: every head of a kind at a glance, heads ranked as bars, one head's lines for
one word, and what switching heads off does."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.figures.heatmaps import heatmap
from app.figures.style import CATEGORICAL, DASHES, STATUS_COLOURS, SYMBOLS, figure_height
from app.figures.text import numbered, plot_labels, plot_text
from app.numbering import shown_of
from core import LabelledAttention

DASHBOARD_TEXT_PX = 10
DASHBOARD_LINE_PX = 13  # a line of DASHBOARD_TEXT_PX text
DASHBOARD_ROW_PX = 3 * DASHBOARD_LINE_PX  # a cell's two lines, and half a line above and below
DASHBOARD_BOTTOM_PX = 20


def head_dashboard(values: np.ndarray, roles: Sequence[str], title: str, name: str) -> go.Figure:
    """A layers x heads grid coloured by one statistic (values (L, H)), each cell naming the
    head's role (roles: L * H labels, layer by layer)."""
    layers, heads = values.shape
    fig = heatmap(
        values,
        [f"L{layer}" for layer in range(1, layers + 1)],
        [f"H{head}" for head in range(1, heads + 1)],
        title=title,
        axis_names=("layer", "head"),
        value_name=name,
        colorscale="Viridis",
        zmin=None,
        zmax=None,
        value_text=np.array(
            [f"{role}\n{value:.2f}" for role, value in zip(roles, values.ravel())]
        ).reshape(values.shape),
        show_text=True,
    )
    # property by property: a fifth of the time of update_layout's merging
    fig.layout.xaxis.tickangle = 0
    fig.data[0].textfont.size = DASHBOARD_TEXT_PX
    # the column labels sit on top (heatmap's margin), nothing below the grid
    fig.layout.height = fig.layout.margin.t + DASHBOARD_BOTTOM_PX + DASHBOARD_ROW_PX * layers
    fig.layout.margin.b = DASHBOARD_BOTTOM_PX
    return fig


def ranked_bars(
    labels: Sequence[str], values: Sequence[float], title: str, xaxis: dict, hover: str
) -> go.Figure:
    """A horizontal bar per label, the first on top (the caller ranks them)."""
    return go.Figure(
        go.Bar(
            x=list(values),
            y=[plot_text(label) for label in labels],
            orientation="h",
            marker_color=STATUS_COLOURS["kept"],
            hovertemplate=f"%{{y}}{hover}<extra></extra>",
        ),
        layout={
            "title": plot_text(title),
            "height": figure_height(len(labels), per_row=30, minimum=260),
            "xaxis": xaxis,
            "yaxis": {"autorange": "reversed"},
            "margin": {"l": 260},
        },
    )


def focus_bars(
    labels: Sequence[str], weights: Sequence[float], title: str, weight_name: str
) -> go.Figure:
    """Attention weights as bars, the first on top (the heads ranked for one word, or one head's
    row over the keys); ``weight_name``, the x axis title, says what the weights are ("weight on
    “animal”")."""
    xaxis = {"title": plot_text(weight_name), "range": [0, 1]}
    return ranked_bars(labels, weights, title, xaxis, "<br>weight %{x:.3f}")


def vote_bars(votes: Sequence[tuple[str, int]], query_label: str) -> go.Figure:
    """How many heads look most at each word, for one query word: a bar per word, most on top."""
    title = f"Which word each head looks at most, for “{query_label}”"
    xaxis = {"title": "heads (all layers) whose largest weight is on this word", "dtick": 1}
    words, counts = [word for word, _ in votes], [count for _, count in votes]
    return ranked_bars(words, counts, title, xaxis, ": %{x} heads")


LINE_MAX_WIDTH = 8  # px, of a line carrying weight 1 in attention_lines
LINE_PX = 3  # px, every line of layer_lines
OPACITY_STEP = 0.05  # layer_lines draws a line's opacity, its weight, to the nearest step
FAN = 0.6  # of a row: layer_lines' lines from the heads to one key end this far apart in all
# a colour per head, in turn, colour-blind-safe; its dash and marker tell the heads apart too
HEAD_COLOURS = CATEGORICAL


def label_columns(queries: Sequence[str], keys: Sequence[str], query: int) -> list[go.Scatter]:
    """BertViz's two columns of text: the queries on the left (x = 0), ``query`` highlighted,
    and the keys on the right (x = 1), a row each from the top (y = position), in the text's
    colour (app/figures/style.legible)."""
    labels = plot_labels(queries)
    labels[query] = f"<b>▶ {labels[query]}</b>"  # not by colour alone
    return [
        go.Scatter(
            x=[0] * len(queries),
            y=list(range(len(queries))),
            text=labels,
            mode="text",
            textposition="middle left",
            hoverinfo="skip",
            name="queries",
            showlegend=False,
        ),
        go.Scatter(
            x=[1] * len(keys),
            y=list(range(len(keys))),
            text=plot_labels(keys),
            mode="text",
            textposition="middle right",
            hoverinfo="skip",
            name="keys",
            showlegend=False,
        ),
    ]


LINE_ROW_MIN_PX = 18  # a row of a line view's labels, its 12 px text and the gap to the next
LINES_FRAME_PX = 140  # a line view's title, caption and margins (figure_height's)


def lines_layout(title: str, rows: int, maximum: int = 900) -> dict:
    """The layout of a line view of ``rows`` rows: two columns of labels, no axes."""
    return {
        "title": plot_text(title),
        "height": figure_height(rows, per_row=24, maximum=maximum),
        "plot_bgcolor": "rgba(0,0,0,0)",
        "xaxis": {"visible": False, "range": [-1.2, 2.2]},
        "yaxis": {"visible": False, "autorange": "reversed"},
    }


def attention_lines(
    attention: LabelledAttention, layer: int, head: int, query: int, title: str
) -> go.Figure:
    """BertViz's "head view" for one word: the queries in a column on the left, the keys on the
    right, and a line from query ``query`` to every key whose width (LINE_MAX_WIDTH x weight) and
    opacity are its weight in head (``layer``, ``head``), counted from 0. A line per key, each
    with customdata (key, weight), in key order after the two columns of labels."""
    queries, keys = attention.query_labels, attention.key_labels
    row = attention.weights[layer, head, query]  # (K,)
    query_label = plot_text(queries[query])
    lines = [
        go.Scatter(
            x=[0, 1],
            y=[query, key],
            mode="lines",
            line={"width": LINE_MAX_WIDTH * float(weight), "color": "#08519c"},
            opacity=float(weight),
            customdata=[[key, float(weight)]] * 2,
            hovertemplate=f"{query_label} → {plot_text(keys[key])}<br>weight %{{customdata[1]:.4f}}"
            "<extra></extra>",
            name=f"key {key}",
        )
        for key, weight in enumerate(row)
    ]
    layout = {**lines_layout(title, max(len(queries), len(keys))), "showlegend": False}
    return go.Figure([*label_columns(queries, keys, query), *lines], layout=layout)


def layer_lines(attention: LabelledAttention, layer: int, query: int, title: str) -> go.Figure:
    """BertViz's head view with every head of ``layer`` (counted from 0) at once, for one word:
    the queries on the left, the keys on the right, and from query ``query`` a line to every key
    in each head, in the head's colour (HEAD_COLOURS), as opaque as its weight; the heads' lines
    to one key fan out over FAN of its row. The legend names the heads (a click hides one).

    Each head has a legend entry, a marker at each key's end whose opacity is the weight (hover:
    the weight), and its lines, a trace per opacity (the weight to the nearest OPACITY_STEP;
    a line below half a step is not drawn): hundreds of lines in a few traces, built as dicts
    (a fifth of the time of plotly's objects)."""
    queries, keys = attention.query_labels, attention.key_labels
    rows = attention.weights[layer, :, query]  # (H, K)
    heads = rows.shape[0]
    key_labels = numbered(plot_labels(keys), len(keys))
    hover = f"{plot_text(queries[query])} → %{{text}}<br>weight %{{customdata[1]:.4f}}"
    traces: list = label_columns(queries, keys, query)
    for head, row in enumerate(rows):
        colour, group = HEAD_COLOURS[head % len(HEAD_COLOURS)], f"head {shown_of(head)}"
        dash, symbol = DASHES[head % len(DASHES)], SYMBOLS[head % len(SYMBOLS)]
        ends = np.arange(len(keys)) + FAN * ((head + 0.5) / heads - 0.5)  # (K,)
        same = {"legendgroup": group, "showlegend": False}
        traces.append(
            {"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": group}
            | {"line": {"width": LINE_PX + 1, "color": colour, "dash": dash}, "legendgroup": group}
        )
        traces.append(
            {
                "type": "scatter",
                "x": np.ones(len(keys)),
                "y": ends,
                "mode": "markers",
                "marker": {"color": colour, "size": 8, "opacity": row, "symbol": symbol},
                "customdata": np.stack([np.arange(len(keys)), row], axis=-1),
                "text": key_labels,
                "hovertemplate": f"{group}: {hover}<extra></extra>",
                "name": f"{group} weights",
                **same,
            }
        )
        traces += [
            {**lines, "line": {"width": LINE_PX, "color": colour, "dash": dash}}
            | {"name": f"{group} lines", **same}
            for lines in lines_by_opacity(row, query, ends)
        ]
    labels = max(len(queries), len(keys))
    # 640 px fits a projector; many pieces get LINE_ROW_MIN_PX each, their labels apart
    layout = {
        **lines_layout(title, labels, maximum=max(640, LINES_FRAME_PX + LINE_ROW_MIN_PX * labels)),
        "showlegend": True,
    }
    return go.Figure(traces, layout=layout)


def lines_by_opacity(row: np.ndarray, query: int, ends: np.ndarray) -> list[dict]:
    """Lines from (0, ``query``) to (1, ``ends[j]``), one trace (x, y, opacity) per opacity: the
    weight ``row[j]`` to the nearest OPACITY_STEP, a line below half a step left out."""
    levels = np.round(row / OPACITY_STEP).astype(int)  # (K,)
    traces = []
    for level in np.unique(levels[levels > 0]):
        drawn = ends[levels == level]  # (lines,)
        gaps = np.full(len(drawn), np.nan)
        traces.append(
            {
                "type": "scatter",
                "x": np.tile([0.0, 1.0, np.nan], len(drawn)),
                "y": np.stack([np.full(len(drawn), query), drawn, gaps], axis=-1).ravel(),
                "mode": "lines",
                "opacity": float(level * OPACITY_STEP),
                "hoverinfo": "skip",
            }
        )
    return traces


def token_log_prob_changes(
    tokens: Sequence[str], normal: Sequence[float], changed: Sequence[float], title: str
) -> go.Figure:
    """For each output token of the normal translation, log P(token) with the change minus
    without it (teacher-forced): a bar per token, below 0 where the change hurts it."""
    change = np.asarray(changed) - np.asarray(normal)
    labels = numbered(plot_labels(tokens), len(tokens))
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=change,
            marker_color=np.where(change < 0, "#d7301f", STATUS_COLOURS["kept"]),
            customdata=np.stack([normal, changed], axis=-1),
            hovertemplate="%{x}<br>log P %{customdata[0]:.3f} → %{customdata[1]:.3f}"
            "<br>change %{y:+.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=plot_text(title),
        height=360,
        yaxis={"title": "change in log P (nats)", "zeroline": True},
        xaxis={"tickangle": -45},
    )
    return fig


def pruning_curve(
    heads_off: Sequence[int], bleu: Sequence[float], chrf: Sequence[float], total: int, title: str
) -> go.Figure:
    """BLEU and chrF of the survey's sample as the least important heads are switched off, from
    none to all ``total`` (Michel et al. 2019)."""
    return go.Figure(
        [
            go.Scatter(
                x=list(heads_off),
                y=list(scores),
                mode="lines+markers",
                name=name,
                hovertemplate="%{x} heads off: %{y:.1f}",
            )
            for name, scores in (("BLEU", bleu), ("chrF", chrf))
        ],
        layout={
            "title": plot_text(title),
            "height": 380,
            "xaxis": {"title": f"heads switched off, least important first (of {total})"},
            "yaxis": {"title": "score", "rangemode": "tozero"},
        },
    )
