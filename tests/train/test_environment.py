"""A machine that only trains (requirements-train.txt): core, train, the GPU run and evaluation
import without the app's packages, and `pytest -m gpu` collects and runs there."""

import re
import subprocess
import sys

import pytest

from train.loop.environment import APP_PACKAGES, PAGE_PACKAGES, REPO, without_app

TRAINING_MODULES = (
    "core",
    "train",
    "train.gpu_run",
    "train.shipping.evaluate",
    "train.loop.trainer",
)


def requirement_names(file: str) -> dict[str, str]:
    """{package: its line} of a requirements file, comments and -r / -e lines aside."""
    lines = (line.split("#")[0].strip() for line in (REPO / file).read_text().splitlines())
    return {
        re.split(r"[<>=\[ ]", line)[0].lower(): line
        for line in lines
        if line and not line.startswith("-")
    }


def test_the_training_requirements_leave_the_app_out_and_pin_torch_alike():
    training, everything = (
        requirement_names("requirements-train.txt"),
        requirement_names("requirements.txt"),
    )
    assert not set(APP_PACKAGES) & set(training)
    assert set(training) - {"pytest", "numpy"} <= set(everything)
    assert training["torch"] == everything["torch"] == "torch==2.13.0"
    assert set(APP_PACKAGES) | set(PAGE_PACKAGES) <= set(everything)


@pytest.mark.slow
def test_training_imports_with_the_app_and_the_pages_text_packages_blocked(tmp_path):
    blocked = APP_PACKAGES + PAGE_PACKAGES
    imported = "; ".join(f"import {module}" for module in TRAINING_MODULES)
    check = f"import sys; {imported}; print(sorted(m for m in sys.modules if m in {blocked!r}))"
    completed = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True, text=True, cwd=tmp_path, env=without_app(blocked), timeout=300,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "[]"
    refused = subprocess.run(
        [sys.executable, "-c", "import streamlit"],
        capture_output=True, text=True, cwd=tmp_path, env=without_app(blocked), timeout=300,
    )  # fmt: skip
    assert refused.returncode == 1 and "No module named 'streamlit'" in refused.stderr


@pytest.mark.slow
def test_the_gpu_tests_collect_and_run_without_the_app_the_apps_tests_skip():
    command = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-rs", "-p", "no:cacheprovider"]
    completed = subprocess.run(
        command, capture_output=True, text=True, cwd=REPO, env=without_app(), timeout=600
    )
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert "error" not in completed.stdout.lower()
    assert "the app's packages (requirements.txt) are missing" in completed.stdout
