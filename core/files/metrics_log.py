"""metrics.jsonl, a training run's log: one JSON object per line, each with the ``step`` it was
recorded at. The trainer appends to it, the model card summarises it, the app plots it.

A run killed while appending leaves a truncated last line; reading skips any line that is not a
JSON object, so such a log stays readable and a resumed run can go on from it. Replacing the whole
log is atomic (core.files.checkpoint.atomic_write). Where the log lives: core/files/model_dir.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.files.checkpoint import write_text_atomically


def read_metrics(path: str | Path) -> list[dict]:
    """Every readable record of the log, in order; [] when there is no log."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            records.append(record)
    return records


def append_metrics(path: str | Path, record: dict) -> None:
    """Add one record (it must hold its ``step``) as one line."""
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


def truncate_metrics(path: str | Path, last_step: int) -> None:
    """Keep only the readable records up to ``last_step``: a resumed run redoes what a killed run
    logged after its last checkpoint."""
    write_metrics(path, [record for record in read_metrics(path) if record["step"] <= last_step])


def write_metrics(path: str | Path, records: list[dict]) -> None:
    """Replace the log by ``records``, one per line, atomically."""
    write_text_atomically(path, "".join(json.dumps(record) + "\n" for record in records))
