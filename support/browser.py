"""Drive the app in a real browser: ``streamlit run`` on a free local port, and Debian's Chromium
through Playwright (its own browser download is not used). Shared by
tests/browser/test_browser.py, the README screenshots (tests/screenshots.py) and
benchmarks/app_timings.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CHART = ".js-plotly-plot .main-svg"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_command(port: int) -> list[str]:
    """``streamlit run app/main.py`` headless on 127.0.0.1:``port``, from the checkout's root."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app/main.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
    ]


@contextmanager
def app_server(
    model_dir: str | Path, log: Path | None = None, environment: dict[str, str] | None = None
) -> Iterator[str]:
    """``streamlit run app/main.py`` on the model in ``model_dir`` (and ``environment`` besides);
    yields its address once it answers its health check, and stops it afterwards."""
    port = free_port()
    env = {**os.environ, **(environment or {}), "ATTENTION_LAB_MODEL": str(model_dir)}
    with open(log or os.devnull, "w") as out:
        server = subprocess.Popen(
            streamlit_command(port), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, server)
            yield url
        finally:
            stop_server(server)


def stop_server(server: subprocess.Popen) -> None:
    """Terminate a server process; kill it if it has not gone within 10 s."""
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def wait_until_healthy(url: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not come up in {timeout} s")


@contextmanager
def chromium_page(width: int = 1440, height: int = 1000):
    """A Playwright page in the system Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(60_000)
            yield page
        finally:
            browser.close()


def script_state(page) -> str | None:
    return page.get_attribute("[data-testid='stApp']", "data-test-script-state")


def wait_for_app(page, started: float = 2.0) -> None:
    """Until the script run that an action started (if one starts within ``started`` seconds) has
    finished."""
    page.wait_for_selector("[data-testid='stApp']")
    deadline = time.monotonic() + started
    while script_state(page) != "running" and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    page.wait_for_function(
        "() => document.querySelector(\"[data-testid='stApp']\").dataset.testScriptState"
        " === 'notRunning'"
    )


def open_view(page, title: str) -> None:
    """Click a page in the sidebar navigation."""
    page.locator("[data-testid='stSidebarNav'] a", has_text=title).first.click()
    page.wait_for_selector(f"h1:has-text('{title.split()[0]}')")
    wait_for_app(page)


def set_sentence(page, text: str) -> None:
    box = page.get_by_role("textbox", name="English sentence")
    box.fill(text)
    box.press("Control+Enter")
    wait_for_app(page)
