"""Scaled dot-product attention for one query of one head, step by step, left to right: the keys K
with the query q under them, the dot products q · k_j, the scores q · k_j / sqrt(d_k), the softmax
weights, and the values V with the output z = sum_j w_j v_j under them; every panel a row per key
(core.inspection.scaled_dot_product.ScaledDotProduct), sized for a 1280 x 720 screen or slide."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from app.figures.masking import MASKED_COLOUR, fitted_labels
from app.figures.style import DIVERGING_SCALE, STATUS_COLOURS
from app.figures.text import MINUS_INF, hover_text, numbered, plot_labels, plot_text
from core.inspection import ScaledDotProduct

# The panels, left to right: K (d_k columns), three columns of bars, V; the vectors q and z in a
# short second row, under K and V
COLUMN_WIDTHS = (0.25, 0.14, 0.14, 0.14, 0.25)
SPACING = 0.03  # between two panels, of the plot's width
VECTOR_PX = 26  # the second row: one row of cells
ROW_GAP_PX = 44  # between the rows: the vectors' titles
TOP_PX = 80  # the title and the panels' titles
MIN_WIDTH_PX = 1000  # below, the three middle panels' titles run into each other
BOTTOM_PX = 20
ROW_PX = 20  # a key's row on screen, less when the keys are many ...
KEYS_PX = 440  # ... so that the keys fit this (a 1280 x 720 slide with its caption)
BAR_TEXT_PX = 11
BAR_ROOM = 0.45  # beyond the longest bar, of the bars' span: room for its number


def panel_axes(panel: int) -> dict:
    """The axes of panel ``panel`` (from 1), as a trace names them: x, y for the first."""
    suffix = "" if panel == 1 else str(panel)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def column_domains() -> list[list[float]]:
    """Each panel column's [left, right], of the plot's width."""
    scale = (1 - SPACING * (len(COLUMN_WIDTHS) - 1)) / sum(COLUMN_WIDTHS)
    left, domains = 0.0, []
    for width in COLUMN_WIDTHS:
        domains.append([left, left + width * scale])
        left += width * scale + SPACING
    return domains


def vectors_heatmap(
    values: np.ndarray, rows: np.ndarray, row_name: str, name: str, panel: int, colour_axis: str
) -> dict:
    """Vectors as a heatmap on panel ``panel`` (:func:`panel_axes`), a row per vector
    (``rows``: their labels, each a ``row_name``), a column per dimension."""
    dimensions = np.arange(values.shape[1])
    return {
        "type": "heatmap",
        "z": values,
        "x": dimensions,
        "y": np.arange(values.shape[0]),
        **panel_axes(panel),
        "coloraxis": colour_axis,
        "customdata": hover_text(
            rows, dimensions.astype(str), np.char.mod("%.4f", values), (row_name, "dimension", name)
        ),
        "hovertemplate": "%{customdata}<extra></extra>",
        "name": name,
    }


def key_bars(
    values: np.ndarray, text: list[str], keys: np.ndarray, name: str, panel: int, colours
) -> dict:
    """A horizontal bar per key on panel ``panel``, written with its number (``text``)."""
    return {
        "type": "bar",
        "x": values,
        "y": np.arange(len(values)),
        **panel_axes(panel),
        "orientation": "h",
        "marker": {"color": colours},
        "text": text,
        "textposition": "outside",
        "textfont": {"size": BAR_TEXT_PX},
        "cliponaxis": False,
        "customdata": keys,
        "hovertemplate": f"key %{{customdata}}<br>{name} %{{x:.4f}}<extra></extra>",
        "name": name,
    }


def bar_range(values: np.ndarray) -> list[float]:
    """An axis range that holds every bar, 0 and room for the numbers beyond the bars' ends."""
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    room = BAR_ROOM * ((high - low) or 1.0)
    return [low - room if low < 0 else 0.0, high + room]


def around_zero(values: np.ndarray) -> dict:
    """A colour axis symmetric around 0 for ``values``, diverging, with no colour bar (hover
    says each number)."""
    limit = float(np.abs(values).max()) or 1.0
    return {"colorscale": DIVERGING_SCALE, "cmin": -limit, "cmax": limit, "showscale": False}


def panel_title(text: str, x: list[float], y: float) -> dict:
    """A panel's title, centred above the panel whose x domain is ``x`` and top ``y``."""
    return {
        "text": text,
        "x": sum(x) / 2,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 14},
    }


def scaled_dot_product_steps(step: ScaledDotProduct, title: str) -> go.Figure:
    """One query through one head: K (rows: the keys, labelled with core's labels) with q under
    it; the dot products q · k_j, the scores q · k_j / sqrt(d_k) and the softmax weights as a bar
    per key; V with z = sum_j w_j v_j under it. Keys the mask forbids are grey: their score
    becomes −∞ and their weight exactly 0, written so on their bars. q and K share one diverging
    colour scale around 0, V and z another (hover: each number). Panels 1-5 are plotly's axes
    x..x5 / y..y5 (their rows one y axis), q and z x6 / y6 and x7 / y7. Built in one go, without
    make_subplots: a third of the time."""
    n = len(step.key_labels)
    keys_px = min(ROW_PX * n, KEYS_PX)
    plot_px = keys_px + ROW_GAP_PX + VECTOR_PX
    keys_bottom, vectors_top = (VECTOR_PX + ROW_GAP_PX) / plot_px, VECTOR_PX / plot_px
    keys = numbered(plot_labels(step.key_labels), n)
    query = np.array([plot_text(step.query_label)])
    masked = ~step.allowed
    colours = np.where(masked, MASKED_COLOUR, STATUS_COLOURS["kept"])
    scores_text = [
        f"{score:.2f} → {MINUS_INF}" if off else f"{score:.2f}"
        for score, off in zip(step.scores, masked)
    ]
    weights_text = ["0 (masked)" if off else f"{w:.2f}" for w, off in zip(step.weights, masked)]
    products_text = [f"{product:.2f}" for product in step.dot_products]
    data = [
        vectors_heatmap(step.keys, keys, "key", "k", 1, "coloraxis"),
        key_bars(step.dot_products, products_text, keys, "q · k", 2, colours),
        key_bars(step.scores, scores_text, keys, "score", 3, colours),
        key_bars(step.weights, weights_text, keys, "weight", 4, colours),
        vectors_heatmap(step.values, keys, "key", "v", 5, "coloraxis2"),
        vectors_heatmap(step.query[None], query, "query", "q", 6, "coloraxis"),
        vectors_heatmap(step.output[None], query, "query", "z", 7, "coloraxis2"),
    ]
    columns = column_domains()
    label_size, every = fitted_labels(n, keys_px)
    hidden = {"showticklabels": False, "showgrid": False, "ticks": ""}
    layout = {
        "xaxis": {"domain": columns[0], "anchor": "y", **hidden},
        "yaxis": {
            "domain": [keys_bottom, 1.0],
            "anchor": "x",
            "autorange": "reversed",
            "showgrid": False,
            "tickvals": list(range(0, n, every)),
            "ticktext": plot_labels(step.key_labels)[::every],
            "tickfont": {"size": label_size},
        },
        "xaxis6": {"domain": columns[0], "anchor": "y6", "matches": "x", **hidden},
        "yaxis6": {"domain": [0.0, vectors_top], "anchor": "x6", **hidden},
        "xaxis7": {"domain": columns[4], "anchor": "y7", "matches": "x5", **hidden},
        "yaxis7": {"domain": [0.0, vectors_top], "anchor": "x7", **hidden},
    }
    for panel, values in ((2, step.dot_products), (3, step.scores), (4, step.weights), (5, None)):
        layout[f"xaxis{panel}"] = {"domain": columns[panel - 1], "anchor": f"y{panel}", **hidden}
        if values is not None:
            layout[f"xaxis{panel}"] |= {"range": bar_range(values), "zeroline": True}
        layout[f"yaxis{panel}"] = {"domain": [keys_bottom, 1.0], "anchor": f"x{panel}"}
        layout[f"yaxis{panel}"] |= {"matches": "y", **hidden}
    titles = [
        ("K: a key per piece", columns[0], 1.0),
        ("q · kⱼ", columns[1], 1.0),
        (f"÷ √d_k = {math.sqrt(step.d_k):.2f}: scores", columns[2], 1.0),
        ("softmax: weights", columns[3], 1.0),
        ("V: a value per piece", columns[4], 1.0),
        (f"q: the query of “{plot_text(step.query_label)}”", columns[0], vectors_top),
        ("z = Σⱼ wⱼ vⱼ: the output", columns[4], vectors_top),
    ]
    return go.Figure(
        data,
        layout={
            **layout,
            "title": {"text": plot_text(title)},
            "annotations": [panel_title(*panel) for panel in titles],
            "height": TOP_PX + plot_px + BOTTOM_PX,
            "margin": {"t": TOP_PX, "b": BOTTOM_PX},
            "showlegend": False,
            "plot_bgcolor": "rgba(0,0,0,0)",
            "coloraxis": around_zero(np.concatenate([step.keys.ravel(), step.query])),
            "coloraxis2": around_zero(np.concatenate([step.values.ravel(), step.output])),
            # the narrowest it is read at, its panels' titles apart (a phone scrolls sideways)
            "meta": {"min_width": MIN_WIDTH_PX},
        },
    )
