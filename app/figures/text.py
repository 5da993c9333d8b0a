"""Text as plotly shows it literally: plotly reads ``<b>``, ``<s>``, ``<br>``... in labels as
markup, and ``</s>`` would vanish, so every label that came from text goes through
:func:`plot_text`; pieces are shown as the rest of the app shows them (app/display.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.display import piece_text

MINUS_INF = "−∞"


def plot_text(text: str) -> str:
    """Text shown literally by plotly: & < > as entities, and pieces as :func:`piece_text`."""
    return piece_text(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def plot_lines(text: str) -> str:
    """Text shown literally by plotly, as :func:`plot_text`, with a line break at each newline."""
    return "<br>".join(plot_text(line) for line in text.split("\n"))


def plot_labels(tokens: Sequence[str]) -> list[str]:
    """Each of ``tokens`` as :func:`plot_text`."""
    return [plot_text(t) for t in tokens]


def numbered(labels: Sequence[str] | None, n: int) -> np.ndarray:
    """'3: the' for each position (plain '3' without labels)."""
    if labels is None:
        return np.arange(n).astype(str)
    return np.array([f"{i}: {label}" for i, label in enumerate(labels)], dtype=str)


def values_as_text(z: np.ndarray) -> np.ndarray:
    """Values as text, -inf as −∞."""
    return np.where(np.isneginf(z), MINUS_INF, np.char.mod("%.4f", np.nan_to_num(z, neginf=0.0)))


def hover_text(
    rows: np.ndarray, columns: np.ndarray, values: np.ndarray, names: Sequence[str]
) -> np.ndarray:
    """Hover text per cell, 'query 3: the<br>key 5: cat<br>weight 0.1250', as a 2-D str array
    (plotly takes it far faster than nested lists or object arrays)."""
    add = np.char.add
    text = add(add(f"{names[0]} ", rows)[:, None], add(f"<br>{names[1]} ", columns)[None, :])
    return add(text, add(f"<br>{names[2]} ", values))
