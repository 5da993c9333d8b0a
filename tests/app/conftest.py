"""The fixture of the tests of the app's pages: a page opened by streamlit's AppTest on the tiny
model (tests/conftest.py builds it)."""

from __future__ import annotations

import pytest

from tests.conftest import skip_without_app

skip_without_app()

from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.app.apptest import MAIN  # noqa: E402


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    """Open a page of the app on the tiny model: app("attention", layer="1") runs it once, on the
    app's first example unless ``text=`` says otherwise."""
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))

    def open_page(page: str = "translate", **query: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=120)
        at.query_params.update(query)
        at.switch_page(f"views/{page}.py")
        return at.run()

    return open_page
