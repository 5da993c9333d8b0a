"""The coverage of the source (core/inspection/coverage.py): a bar per source word against the
thresholds, two searches' bars side by side, and maps of coverage or of the rows that gave it, with
one source column outlined."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.figures.heatmaps import heatmap
from app.figures.style import ATTENTION_SCALE, OKABE_ITO, STATUS_COLOURS
from app.figures.text import numbered, plot_labels, plot_text
from core.inspection import (
    OVER_COVERED,
    UNDER_COVERED,
    Coverage,
    Flags,
    MeasuredFlags,
    Thresholds,
)
from core.text import is_special_piece

# colour-blind-safe (Okabe & Ito), and a hatching each that says the same without colour
COVERAGE_COLOURS = {
    "under": OKABE_ITO["vermillion"],  # under-covered: likely dropped
    "over": OKABE_ITO["reddish purple"],  # over-covered: likely said twice
    "covered": STATUS_COLOURS["kept"],
}
COVERAGE_PATTERNS = {"under": "x", "over": "/", "covered": ""}
THRESHOLD_LINE = {"color": "#555555", "dash": "dash", "width": 1}
SEARCH_COLOURS = ("#9ecae1", "#08519c")  # two searches side by side: greedy light, beam dark


def named_flags(labels: Sequence[str], values: np.ndarray, positions: Sequence[int]) -> str:
    """The flagged words with their coverage, "didn't (0.31), the (0.38)", or "none"."""
    return ", ".join(f"{labels[i]} ({values[i]:.2f})" for i in positions) or "none"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _words_of(study: MeasuredFlags) -> str:
    return (
        f"{study.words} words of the model's own translations labelled by hand "
        f"({study.problems} dropped or said twice; train/studies/coverage_labels.tsv)"
    )


def _held_out(precision: float | None, recall: float | None) -> str:
    return (
        f"Of the words these thresholds flag, {percent(precision)} were really dropped or said "
        f"twice; of the words that were, they flag {percent(recall)}. Thresholds chosen on half "
        "the sentences, scored on the other half, and the halves swapped (`python -m "
        "train.studies.coverage_study`)."
    )


def _best_overall(study: MeasuredFlags) -> str:
    """The measured best of all when it is a lens, in a sentence; "" when attention is best."""
    lens = study.best_lens
    if lens is None:
        return ""
    return (
        f" The measured best overall is not attention but the {lens.lens} lens: precision "
        f"{percent(lens.precision)}, recall {percent(lens.recall)}."
    )


def measured_note(study: MeasuredFlags | None, shown: str | None, pieces: bool) -> str:
    """What the flags on screen were measured to be worth (core.inspection.coverage
    .measured_flags): the best attention aggregation's held-out precision and recall when
    ``shown`` is None, else the a-priori thresholds' scores of the aggregation named ``shown``;
    either way the best of all when that is a lens (see :func:`occlusion_note`)."""
    if study is None:
        return (
            "**Not measured on this model**: its card has no coverage study (`python -m "
            "train.studies.coverage_study --card <model>`), or one made on another model.pt. "
            "The flags are candidates only."
        )
    on = _words_of(study)
    if pieces:
        return f"Precision and recall were measured in words ({on}): switch pieces off to see them."
    best = "best of attention" if study.best_lens else "measured best"
    if shown is None:
        return (
            f"**Measured on {on}: precision {percent(study.precision)}, recall "
            f"{percent(study.recall)}**, the {best}. {_held_out(study.precision, study.recall)}"
            f"{_best_overall(study)}"
        )
    precision, recall = study.a_priori.get(shown, (None, None))
    return (
        f"**Measured on {on}**, {shown} at {UNDER_COVERED:g} / {OVER_COVERED:g}: precision "
        f"{percent(precision)}, recall {percent(recall)}. The {best}, "
        f"{study.aggregation.name}: precision {percent(study.precision)}, recall "
        f"{percent(study.recall)}.{_best_overall(study)}"
    )


def occlusion_note(study: MeasuredFlags) -> str:
    """What the flags of the measured best, the occlusion lens read as coverage
    (``study.best_lens``), were measured to be worth, and how it differs from attention."""
    lens = study.best_lens
    return (
        f"**The measured best: the {lens.lens} lens, measured on {_words_of(study)}: precision "
        f"{percent(lens.precision)}, recall {percent(lens.recall)}.** "
        f"{_held_out(lens.precision, lens.recall)} Not attention: for each output piece, how "
        "much its log-probability drops when each source piece is hidden (replaced by `<unk>`), "
        "made a row of shares that sums to 1 like an attention row (the Explain page's lens, "
        "computed for every output piece). The best of attention, "
        f"{study.aggregation.name}: precision {percent(study.precision)}, recall "
        f"{percent(study.recall)}."
    )


def coverage_rows(searches: dict[str, Coverage]) -> list[dict]:
    """A table row per source word (special pieces left out) of outputs of the same source: each
    output's coverage of it, every layer and head's mean, and the output row that gave it most."""
    first = next(iter(searches.values()))
    received = {name: found.received() for name, found in searches.items()}  # (rows, source)
    rows = []
    for column, label in enumerate(first.source_labels):
        if is_special_piece(label):
            continue
        row: dict = {"source": label}
        for name, found in searches.items():
            given = received[name][:, column]
            row[name] = float(given.sum())
            row[f"{name}: attended most by"] = found.attention.query_labels[int(given.argmax())]
        rows.append(row)
    return rows


def coverage_status(position: int, flags: Flags) -> str:
    """'under', 'over' or 'covered': the key of COVERAGE_COLOURS for a source position."""
    if position in flags.under:
        return "under"
    return "over" if position in flags.over else "covered"


def _source_axis(fig: go.Figure, labels: Sequence[str], limit: float, thresholds: Thresholds):
    """Positions 0..n-1 with the words as tick labels (a word that occurs twice keeps two bars),
    the coverage axis up to ``limit``, and a dashed line at each threshold, named."""
    fig.update_xaxes(
        tickvals=list(range(len(labels))),
        ticktext=plot_labels(labels),
        tickangle=-60,
        title="source",
    )
    fig.update_yaxes(title="coverage", range=[0, limit])
    for name, value in (("under", thresholds.under), ("over", thresholds.over)):
        fig.add_hline(
            y=value,
            line=THRESHOLD_LINE,
            annotation_text=f"{name}-covered {value:g}",
            annotation_position="top left",
        )


def coverage_bars(
    values: np.ndarray,
    labels: Sequence[str],
    flags: Flags,
    thresholds: Thresholds,
    title: str,
) -> go.Figure:
    """A bar per source word (or piece), its coverage, coloured by its flag: under-covered,
    over-covered or neither; the thresholds as dashed lines."""
    statuses = [coverage_status(i, flags) for i in range(len(labels))]
    fig = go.Figure(
        go.Bar(
            x=list(range(len(labels))),
            y=np.asarray(values, dtype=float),
            marker_color=[COVERAGE_COLOURS[status] for status in statuses],
            marker_pattern_shape=[COVERAGE_PATTERNS[status] for status in statuses],
            customdata=[
                f"{label}<br>{status}"
                for label, status in zip(numbered(plot_labels(labels), len(labels)), statuses)
            ],
            hovertemplate="%{customdata}<br>coverage %{y:.3f}<extra></extra>",
        )
    )
    _source_axis(fig, labels, _limit(values, thresholds), thresholds)
    fig.update_layout(title=plot_text(title), height=420, showlegend=False)
    return fig


def compared_coverage(
    searches: dict[str, np.ndarray], labels: Sequence[str], thresholds: Thresholds, title: str
) -> go.Figure:
    """Two (or more) outputs' coverage of the same source words side by side, a colour each."""
    fig = go.Figure(
        [
            go.Bar(
                x=list(range(len(labels))),
                y=np.asarray(values, dtype=float),
                name=plot_text(name),
                marker_color=colour,
                customdata=numbered(plot_labels(labels), len(labels)),
                hovertemplate=f"{plot_text(name)}<br>%{{customdata}}<br>coverage %{{y:.3f}}"
                "<extra></extra>",
            )
            for (name, values), colour in zip(searches.items(), SEARCH_COLOURS)
        ]
    )
    limit = max(_limit(values, thresholds) for values in searches.values())
    _source_axis(fig, labels, limit, thresholds)
    fig.update_layout(
        title=plot_text(title),
        height=440,
        barmode="group",
        legend={"orientation": "h", "y": -0.35},
    )
    return fig


def coverage_map(
    values: np.ndarray, rows: Sequence[str], columns: Sequence[str], title: str
) -> go.Figure:
    """Coverage (rows x source) as a heatmap from 0 to its largest value (at least 1, a row's
    worth): the beam's live hypotheses so far, or the coverage after each output position."""
    return heatmap(
        values,
        rows,
        columns,
        title=title,
        axis_names=("output so far", "source"),
        value_name="coverage",
        colorscale=ATTENTION_SCALE,
        zmax=max(1.0, float(np.max(values, initial=0.0))),
    )


def attended_map(
    received: np.ndarray, rows: Sequence[str], columns: Sequence[str], column: int, title: str
) -> go.Figure:
    """Cross-attention (rows x source, weights 0..1) with source ``column`` outlined: the rows
    whose weights there add up to its coverage."""
    fig = heatmap(received, rows, columns, title=title)
    fig.add_shape(
        type="rect",
        x0=column - 0.5,
        x1=column + 0.5,
        y0=-0.5,
        y1=len(rows) - 0.5,
        line={"color": COVERAGE_COLOURS["under"], "width": 3},
        name="followed",
    )
    return fig


def _limit(values: np.ndarray, thresholds: Thresholds) -> float:
    """The coverage axis: room for the largest bar and the over-covered line."""
    return 1.1 * max(float(np.max(values, initial=0.0)), thresholds.over)
