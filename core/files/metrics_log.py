"""metrics.jsonl, a training run's log: one JSON object per line, each with the ``step`` it was
recorded at. The trainer appends to it, the model card summarises it, the app plots it.

A run killed while appending leaves a truncated last line; reading skips any line that is not a
JSON object, so such a log stays readable and a resumed run can go on from it. Replacing the whole
log is atomic (core.files.checkpoint.atomic_write). Where the log lives: core/files/model_dir.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.files.checkpoint import write_text_atomically


@dataclass(frozen=True)
class DamagedLine:
    """A line of the log that is no record: what was logged between two steps is lost."""

    number: int  # counted from 1
    after_step: int | None  # the step of the readable record before it (None: none before)
    before_step: int | None  # the step of the readable record after it (None: none after)

    def __str__(self) -> str:
        after = f"after step {self.after_step}" if self.after_step is not None else "at the start"
        before = f" and before step {self.before_step}" if self.before_step is not None else ""
        return f"line {self.number} is damaged: what was logged {after}{before} is lost"


def parsed_lines(path: Path) -> list[tuple[str, dict | None]]:
    """Each line of the log with its record, None where it is not one."""
    parsed = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        ok = isinstance(record, dict) and isinstance(record.get("step"), int)
        parsed.append((line, record if ok else None))
    return parsed


def read_metrics(path: str | Path) -> list[dict]:
    """Every readable record of the log, in order; [] when there is no log."""
    path = Path(path)
    if not path.is_file():
        return []
    return [record for _, record in parsed_lines(path) if record is not None]


def damaged_lines(path: str | Path) -> list[DamagedLine]:
    """The lines of the log that are no record (a failing disk, a kill mid-append), each with the
    steps between which its records were lost; [] when there is no log or it is whole."""
    path = Path(path)
    if not path.is_file():
        return []
    lines = parsed_lines(path)
    steps = [record["step"] if record else None for _, record in lines]
    damaged = []
    for i, (text, record) in enumerate(lines):
        if record is None and text.strip():
            after = next((s for s in reversed(steps[:i]) if s is not None), None)
            before = next((s for s in steps[i + 1 :] if s is not None), None)
            damaged.append(DamagedLine(i + 1, after, before))
    return damaged


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
