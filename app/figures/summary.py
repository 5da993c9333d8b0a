"""A figure in words, for a screen reader and an export's alt text, and its numbers as a table:
computed from the figure's own data (what its builder drew), so that every builder has them.

:func:`describe` gives a name (the figure's title) and a short summary naming its strongest cells,
"it → animal 13%, the → animal 9%, ..."; :func:`table` gives the rows of its main map or bars."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.display import WORD_START

STRONGEST = 3  # cells or bars named in a summary
TAG = re.compile(r"<br\s*/?>|<[^>]+>")


def plain(text: object) -> str:
    """Plotly's label markup as plain text, as read aloud: line breaks as spaces, tags dropped,
    entities read, no word-start dots (app/display.py)."""
    return " ".join(html.unescape(TAG.sub(" ", str(text))).replace(WORD_START, "").split())


def numbers(values) -> np.ndarray:
    """``values`` as floats, None as NaN; what is not a number (a category axis's text) as
    NaN throughout, so that it ranks nothing."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        return values.astype(float)  # a map's cells: no loop over them
    try:
        return np.asarray(
            [[np.nan if v is None else v for v in row] if np.ndim(row) else row for row in values]
            if np.ndim(values) > 1
            else [np.nan if v is None else v for v in values],
            dtype=float,
        )
    except (TypeError, ValueError):
        return np.full(np.shape(values), np.nan)


def describe(fig: go.Figure) -> tuple[str, str]:
    """(name, summary) of ``fig``: its title, and its strongest cells (a map), bars or points in
    words. A figure with nothing to rank is summed up by its name."""
    name = plain(fig.layout.title.text or "") or "Chart"
    parts = [_strongest(fig, trace) for trace in fig.data]
    parts = [part for part in parts if part][:STRONGEST]
    summary = "; ".join(parts) if parts else name
    return name, summary


def table(fig: go.Figure) -> list[dict]:
    """The numbers of ``fig``'s first map (a row per map row, a column per map column) or, with no
    map, of its first bars (a label and a value each): [] when it has neither."""
    for trace in fig.data:
        if trace.type == "heatmap" and trace.z is not None:
            z = numbers(trace.z)
            if z.ndim != 2:
                continue
            rows = _labels(fig, trace, "y", z.shape[0])
            columns = _distinct(_labels(fig, trace, "x", z.shape[1]))
            return [
                {"row": row, **{c: _round(v) for c, v in zip(columns, values)}}
                for row, values in zip(rows, z)
            ]
    for trace in fig.data:
        if trace.type == "bar":
            labels, values = _bar(fig, trace)
            return [{"label": label, "value": _round(v)} for label, v in zip(labels, values)]
    return []


def _strongest(fig: go.Figure, trace) -> str:
    """A trace's strongest cells, bars or points, in words: "" for a trace with none, and for a
    decoration (no hover: a line view's lines, its labels), a map of one value (cells laid over
    another map: the masked ones) or markers alone (rings that invite a click)."""
    if getattr(trace, "hoverinfo", None) == "skip":
        return ""
    if trace.type == "heatmap" and trace.z is not None:
        z = numbers(trace.z)
        if z.ndim != 2 or not np.isfinite(z).any() or np.nanmax(z) == np.nanmin(z):
            return ""
        rows = _labels(fig, trace, "y", z.shape[0])
        columns = _labels(fig, trace, "x", z.shape[1])
        order = _top(z.ravel())
        as_share = _is_share(z)
        cells = [divmod(int(i), z.shape[1]) for i in order]
        words = [f"{rows[r]} → {columns[c]} {_value(z[r, c], as_share)}" for r, c in cells]
        return _named(trace, "strongest " + ", ".join(words))
    if trace.type == "bar":
        labels, values = _bar(fig, trace)
        if not len(values) or not np.isfinite(values).any():
            return ""
        as_share = _is_share(values)
        words = [f"{labels[i]} {_value(values[i], as_share)}" for i in _top(values)]
        return _named(trace, "largest " + ", ".join(words))
    if trace.type == "scatter" and trace.y is not None:
        opacities = trace.marker.opacity is not None and not np.isscalar(trace.marker.opacity)
        if "lines" not in (trace.mode or "lines") and not opacities:
            return ""
        values = _weights(trace)
        if not len(values) or not np.isfinite(values).any():
            return ""
        labels = _point_labels(trace, len(values))
        i = int(np.nanargmax(np.where(np.isfinite(values), values, np.nan)))
        return _named(trace, f"highest {labels[i]} {_value(values[i], _is_share(values))}")
    return ""


def _weights(trace) -> np.ndarray:
    """A scatter trace's values: its markers' opacities where they carry the weights (the line
    views), else its y."""
    opacity = trace.marker.opacity if trace.marker is not None else None
    if opacity is not None and not np.isscalar(opacity):
        return numbers(opacity)
    return numbers(trace.y)


def _point_labels(trace, n: int) -> list[str]:
    if trace.text is not None and not isinstance(trace.text, str) and len(trace.text) == n:
        return [plain(t) for t in trace.text]
    x = trace.x if trace.x is not None else range(n)
    return [f"at {plain(v)}" for v in x]


def _bar(fig: go.Figure, trace) -> tuple[list[str], np.ndarray]:
    """A bar trace's labels (its category axis's tick labels) and values."""
    horizontal = trace.orientation == "h"
    values = trace.x if horizontal else trace.y
    values = numbers(() if values is None else values)
    labels = _labels(fig, trace, "y" if horizontal else "x", len(values))
    return labels, values


def _labels(fig: go.Figure, trace, letter: str, n: int) -> list[str]:
    """The labels along a trace's x or y axis, n of them: the axis's tick labels at the trace's
    coordinates where it has them, else the coordinates themselves, else 0..n-1."""
    coordinates = getattr(trace, letter)
    coordinates = list(coordinates) if coordinates is not None else list(range(n))
    anchor = getattr(trace, f"{letter}axis") or letter
    axis = fig.layout[f"{letter}axis{anchor[1:]}"]
    ticks = {}
    if axis.tickvals is not None and axis.ticktext is not None:
        ticks = {v: plain(t) for v, t in zip(axis.tickvals, axis.ticktext)}
    labels = [ticks.get(c, plain(c)) for c in coordinates[:n]]
    return labels + [str(i) for i in range(len(labels), n)]


def _named(trace, words: str) -> str:
    name = plain(trace.name) if trace.name else ""
    return f"{name}: {words}" if name else words


def _top(values: np.ndarray) -> np.ndarray:
    """The indices of the STRONGEST largest finite values, largest first."""
    finite = np.where(np.isfinite(values), values, -np.inf)
    return np.argsort(-finite, kind="stable")[: min(STRONGEST, int(np.isfinite(values).sum()))]


def _is_share(values: np.ndarray) -> bool:
    """Whether ``values`` are shares (weights, probabilities): all within 0..1."""
    finite = values[np.isfinite(values)]
    return bool(len(finite)) and finite.min() >= 0 and finite.max() <= 1


def _value(value: float, as_share: bool) -> str:
    return f"{value:.0%}" if as_share else f"{value:.3g}"


def _round(value: float) -> float | None:
    return None if not np.isfinite(value) else round(float(value), 4)


def _distinct(labels: Sequence[str]) -> list[str]:
    """Column names for a table: a label that occurs twice gets its position ("the (5)")."""
    seen = {label: labels.count(label) for label in labels}
    return [f"{label} ({i})" if seen[label] > 1 else label for i, label in enumerate(labels)]
