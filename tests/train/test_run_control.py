"""What keeps a run under control: a JSON report without NaN, written whole; SIGTERM as an
exception; a child's whole process group stopped at a timeout."""

import json
import math
import os
import signal
import sys
import time

import pytest

from train.loop.run_control import Stopped, finite, run_group, stopped_by_signals, write_json


def test_the_report_is_json_with_null_for_nan_and_infinity(tmp_path):
    report = {"minutes": math.nan, "rates": [1.5, math.inf, -math.inf], "nested": {"x": math.nan}}
    write_json(tmp_path / "report.json", report)
    text = (tmp_path / "report.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"minutes": None, "rates": [1.5, None, None], "nested": {"x": None}}
    assert finite((1, "a", None)) == [1, "a", None]
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left


def test_sigterm_inside_becomes_stopped_and_the_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped, match="SIGTERM"), stopped_by_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the signal arrives first
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.slow
def test_a_timeout_stops_the_child_and_the_grandchild_it_started(tmp_path):
    grandchild = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(grandchild)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    code = run_group(
        [sys.executable, "-c", script], 1.0, tmp_path / "log", dict(os.environ), tmp_path
    )
    assert code is None and time.monotonic() - started < 15
    pid = int(grandchild.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone (a zombie would still answer; its parent reaped it or died)


def test_a_finished_child_gives_its_exit_code_and_its_output(tmp_path):
    command = [sys.executable, "-c", "print('hello'); raise SystemExit(3)"]
    assert run_group(command, 30, tmp_path / "log", dict(os.environ), tmp_path) == 3
    assert (tmp_path / "log").read_text() == "hello\n"
