"""A machine that only trains: what it installs (requirements-train.txt) and what it lacks.

requirements-train.txt holds what training and evaluation need; the app's own packages
(APP_PACKAGES) are left out, and ``import core``, ``train``, ``train.gpu_run`` and
``train.shipping.evaluate`` work without them (a page imports them where it needs them).
PAGE_PACKAGES are installed there too (truecasing and ``--split-sentences`` use them) but imported
only where used.

:func:`without_app` gives the environment of a Python process that is such a machine: importing
one of the named packages fails in it and in every Python process it starts, by the
``sitecustomize`` in train/loop/without_app/ (Python imports it at start-up from the path).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_PACKAGES = ("streamlit", "plotly", "captum", "cachetools", "py3langid")
PAGE_PACKAGES = ("sentencex", "sacremoses")
BLOCKED_VARIABLE = "ATTENTION_LAB_BLOCKED_IMPORTS"
SITE = Path(__file__).resolve().parent / "without_app"
REPO = Path(__file__).resolve().parents[2]


def without_app(blocked: tuple[str, ...] = APP_PACKAGES, env: dict | None = None) -> dict:
    """``env`` (default: this process's) with ``blocked`` unimportable in the processes started
    with it, the repository first on their path."""
    env = dict(os.environ if env is None else env)
    path = [str(SITE), str(REPO), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return env | {"PYTHONPATH": os.pathsep.join(path), BLOCKED_VARIABLE: ",".join(blocked)}


def app_packages_imported() -> list[str]:
    """The app's packages this process has imported (none, in a run that only trains)."""
    import sys

    return sorted(name for name in APP_PACKAGES if name in sys.modules)
