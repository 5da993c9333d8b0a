"""The tables the studies' sections share: Markdown tables, shares, and runs side by side at
equal training minutes."""

from __future__ import annotations

import itertools
import math


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a cell's "|" escaped, so a translation cannot split its row."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


STUDY_MARK_MINUTES = 3  # a study's table compares the runs every this many minutes, or more

STUDY_MARKS = 5  # ... so that at most this many marks (columns) make the table


def value_at_minutes(curve: list[dict], key: str, minutes: float) -> float | None:
    """``key`` of a run's validation curve at ``minutes`` of training, interpolated linearly
    between the validations around it; None outside the curve."""
    for before, after in itertools.pairwise(curve):
        if before["minutes"] <= minutes <= after["minutes"]:
            span = after["minutes"] - before["minutes"]
            share = (minutes - before["minutes"]) / span if span else 1.0
            return before[key] + share * (after[key] - before[key])
    return None


def equal_minutes_table(study: list[dict], key: str, header: str) -> list[str]:
    """A study's runs side by side at equal training minutes: each run (named by its ``key``,
    the column ``header``) with its throughput and its validation BLEU / loss at each mark,
    interpolated between the validations around it."""
    # the last mark is a whole minute the longest run reached (70.02 minutes: 70, not 71)
    longest = max(1, math.floor(max(point["minutes"] for run in study for point in run["curve"])))
    spacing = max(STUDY_MARK_MINUTES, math.ceil(longest / STUDY_MARKS))
    marks = sorted({*range(spacing, longest, spacing), longest})
    lines = [
        f"| {header} | parameters | tokens/s | steps | "
        + " | ".join(f"{mark} min" for mark in marks)
        + " |",
        "|---" * (4 + len(marks)) + "|",
    ]
    for run in study:
        cells = []
        for mark in marks:
            bleu, loss = (
                value_at_minutes(run["curve"], name, mark) for name in ("val_bleu", "val_loss")
            )
            cells.append("-" if bleu is None else f"{bleu:.1f} / {loss:.2f}")
        # A run too short for its log's clock to tick has no throughput.
        throughput = run["tokens_per_second"]
        lines.append(
            f"| {run[key]:,} | {run['parameters']:,} | "
            f"{'-' if throughput is None else format(throughput, ',')} | "
            f"{run['curve'][-1]['step']:,} | " + " | ".join(cells) + " |"
        )
    return lines
