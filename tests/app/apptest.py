"""What the tests of the app's pages share: the app's main script, which streamlit's AppTest runs,
and the Plotly figures a run drew, as the browser receives them. Only tests under tests/app import
this module, so a test of core or train never imports streamlit."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

MAIN = str(Path(__file__).resolve().parents[2] / "app" / "main.py")


def plotted(values) -> np.ndarray:
    """An array as the browser receives it: plotly sends numeric arrays as typed base64 data."""
    if isinstance(values, dict):
        shape = [int(size) for size in str(values.get("shape", "-1")).split(",")]
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        return flat.reshape(shape)
    return np.asarray(values)


def chart_specs(at) -> list[dict]:
    """The Plotly figures an AppTest run drew, as the JSON the browser receives."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def chart_titles(at: AppTest) -> list[str]:
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return [(spec["layout"].get("title") or {}).get("text", "") for spec in specs]
