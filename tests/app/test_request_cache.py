"""The app's caches, st.cache_data and app/shared_cache.py, keyed on a core.Request, answer an
equal request from the cache. Moved from tests/core/test_request.py, which tests the request."""

from pathlib import Path

import streamlit as st

from app.shared_cache import shared
from core import Request
from tests.core.test_request import SENTENCE


def test_st_cache_data_keyed_on_a_request_answers_an_equal_request_from_the_cache(tiny_model_dir):
    calls = []

    @st.cache_data(show_spinner=False)
    def compute(request: Request) -> str:
        calls.append(request)
        return request.text.upper()

    first = compute(Request(str(tiny_model_dir), SENTENCE, alpha=1))
    assert compute(Request(Path(tiny_model_dir), SENTENCE, alpha=1.0)) == first
    assert len(calls) == 1
    compute(Request(tiny_model_dir, SENTENCE, beam_size=2, alpha=1))
    compute(Request(tiny_model_dir, SENTENCE, target="fr", alpha=1))
    assert len(calls) == 3
    compute.clear()


def test_the_shared_cache_keyed_on_a_request_returns_the_value_it_kept(tiny_model_dir):
    calls = []

    @shared(max_bytes=10**6)
    def compute(request: Request, position: int) -> list[str]:
        calls.append(request)
        return [request.text] * position

    first = compute(Request(tiny_model_dir, SENTENCE), 2)
    assert compute(Request(str(tiny_model_dir), SENTENCE), 2) is first
    assert compute.stored(Request(Path(tiny_model_dir), SENTENCE), 2) is first
    assert compute(Request(tiny_model_dir, SENTENCE, beam_size=1), 2) is not first
    assert len(calls) == 2
