"""Notices before the fact: what the model will not read well in the text typed (not English, a
sentence longer than about 40 words: core/text/readable.py), shown under the box it is typed in and
beside the translation on the Translate page. Notices only: the text is translated all the same.
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.analysis import MAX_CHARS
from core import CheckpointError, InputError
from core.text import excerpt, readable

WHAT_IT_READS = (
    f"The model reads English, in sentences of up to about {readable.WELL_READ_WORDS} words."
)


@st.cache_data(max_entries=256, show_spinner=False)
def input_notices(path: str, text: str, target: str) -> list[str]:
    """core.text.readable's notices on the part of ``text`` the app reads (app.analysis.MAX_CHARS),
    sentences measured in the pieces the model at ``path`` reads; [] without a usable model or
    text."""
    try:
        translator = state.load_translator(path)
        read = excerpt(text, MAX_CHARS).text
        return readable.notices(
            read,
            lambda sentence: len(translator.tokenizer.encode_source(sentence, target)),
            translator.max_source_tokens,
        )
    except (InputError, CheckpointError):
        return []


def show() -> None:
    """The notices on the sidebar's text, as warnings where this is called."""
    s = state.settings()
    for notice in input_notices(str(state.model_dir()), s.text, s.to):
        st.warning(notice, icon="⚠️")
