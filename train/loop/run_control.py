"""What keeps a long run under control when it is stopped or runs long: SIGTERM and SIGINT as an
exception (so the run can say what it did on the way out), children in a process group of their
own that is stopped whole, and a JSON report that is written whole and has no NaN in it."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

STOP_GRACE_SECONDS = 10  # a stopped child's time to leave after SIGTERM, before SIGKILL


class Stopped(Exception):
    """SIGTERM or SIGINT reached the run (a job scheduler's time limit, Ctrl-C)."""


@contextmanager
def stopped_by_signals():
    """Within: SIGTERM and SIGINT raise :class:`Stopped`, so that the run writes its report and
    stops its children on the way out; a second signal meanwhile is ignored. The handlers before
    are restored after."""
    numbers = (signal.SIGTERM, signal.SIGINT)
    before = {number: signal.getsignal(number) for number in numbers}

    def stop(number, frame):
        for each in numbers:
            signal.signal(each, signal.SIG_IGN)
        raise Stopped(signal.Signals(number).name)

    for number in numbers:
        signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def run_group(command: list[str], timeout: float, log: Path, env: dict, cwd: Path) -> int | None:
    """Run ``command`` in a process group of its own, its output into ``log``; its exit code, or
    None when it outlived ``timeout`` seconds. Whatever ends the wait (the timeout, a signal, an
    error), the whole group is stopped: a child's own children (pytest's `python -m train`)
    with it."""
    with open(log, "w") as output:
        child = subprocess.Popen(
            command, cwd=cwd, stdout=output, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip
        try:
            return child.wait(timeout=max(timeout, 0))
        except subprocess.TimeoutExpired:
            return None
        finally:
            stop_group(child)


def stop_group(child: subprocess.Popen) -> None:
    """SIGTERM to ``child``'s process group, SIGKILL to what is left of it after a grace."""
    for number in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, number)
        except ProcessLookupError:
            return  # the group is gone
        waited = time.monotonic() + STOP_GRACE_SECONDS
        while time.monotonic() < waited:
            child.poll()  # reaped, the child leaves the group
            try:
                os.killpg(child.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def finite(value):
    """``value`` with every nan or infinite float replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def write_json(path: Path, report: dict) -> None:
    """``report`` as JSON at ``path``, replaced whole (a reader never sees half of it), every
    nan or infinite number written as null."""
    text = json.dumps(finite(report), indent=2, allow_nan=False) + "\n"
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
