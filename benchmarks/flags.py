"""The benchmarks' flag types: a value no run can use (0 threads, 0 steps, a --baseline that is no
checkout) is a usage error naming it, exit status 2, before any work. Nothing of core/ is imported
here: a worker imports the core/ of its own checkout after the flags are read."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def checkout_folder(text: str) -> Path:
    """An argparse type: a folder holding a checkout's core/ (what --baseline runs)."""
    path = Path(text)
    if not (path / "core").is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a checkout (no folder core/ in it)")
    return path
