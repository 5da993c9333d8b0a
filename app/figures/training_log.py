"""The training log and the model card's training record as the Model page shows them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.files import read_metrics


def training_log(path: Path) -> tuple[list[dict], list[dict]]:
    """The training and the validation records of a run's metrics.jsonl (read by
    core.files.metrics_log, which skips unreadable lines; a missing file is empty)."""
    records = read_metrics(path)
    train = [r for r in records if "train_loss" in r]
    val = [r for r in records if "train_loss" not in r and ("val_loss" in r or "val_bleu" in r)]
    return train, val


def series(records: Sequence[dict], key: str) -> tuple[list[float], list[float]]:
    """(steps, values) of the records that hold a number under ``key``."""
    points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), int | float)]
    return [p[0] for p in points], [p[1] for p in points]


CARD_NAMES = {  # the card's keys that do not say what they are by themselves
    "seconds": "training time",
    "run_tokens_per_second": "target tokens/s of the last run alone",
    "peak_tflops": "measured matmul peak in the last run's compute type (TFLOP/s)",
    "mfu": "model FLOPs utilisation of the last run (share of that peak)",
}


def card_value(key: str, value: object) -> str | None:
    """One value of the model card's training record as a person reads it; None for what the page
    shows better elsewhere (a list of records, such as the validation curve, is a chart)."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if key == "seconds" and isinstance(value, int | float):
        hours, minutes = divmod(round(value / 60), 60)
        return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    if key == "mfu" and isinstance(value, float):
        return f"{value:.1%}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        if any(isinstance(item, dict | list) for item in value):
            return None
        return ", ".join(str(item) for item in value)
    return str(value)


def card_facts(training: dict) -> list[dict]:
    """The card's training record as table rows {"": name, "value": text}: a nested record (the
    recipe, the final validation) one row per entry, named "recipe: warmup"."""
    rows = []
    for key, value in training.items():
        entries = value.items() if isinstance(value, dict) else [(None, value)]
        for inner, item in entries:
            text = card_value(inner or key, item)
            if text is not None:
                name = CARD_NAMES.get(key, key) if inner is None else f"{key}: {inner}"
                rows.append({"": name.replace("_", " "), "value": text})
    return rows
