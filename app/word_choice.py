"""A word picked in a selector whose labels change (another kind of attention, another sentence):
where it starts, and how it stays on the same word."""

from __future__ import annotations

import streamlit as st

from core.text import is_special_piece


def first_word(labels: list[str]) -> int:
    """The word to start from: "it" when the sentence has it (the coreference example, as in
    the Story), else the first that is not a special piece such as the language tag."""
    if "it" in labels:
        return labels.index("it")
    return next((i for i, label in enumerate(labels) if not is_special_piece(label)), 0)


def follow(key: str, labels: list[str], default: int | None) -> str | None:
    """Keep ``st.session_state[key]``, a position in ``labels`` (or None), on the same word when
    the labels change (another kind of attention, another sentence): a word picked before moves
    to where it is now; one that is not there goes back to ``default`` and is returned, to say
    so. The widget drawn after this writes the position to the URL; give it ``index=0`` once the
    key is set (an index of its own beside a value set here makes Streamlit warn)."""
    seen = f"{key}_labels"
    before, st.session_state[seen] = st.session_state.get(seen), labels
    picked = st.session_state.get(key)
    if picked is None or before == labels:
        return None
    if before is None or picked not in range(len(before)):  # no record of the word it was
        if picked not in range(len(labels)):
            del st.session_state[key]
        return None
    word = before[picked]
    # set, not deleted, even to the default: a deleted key leaves the browser's box on the old word
    st.session_state[key] = labels.index(word) if word in labels else default
    return None if word in labels else word
