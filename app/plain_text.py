"""Text that Streamlit would read as markdown, shown as it is: what a person typed (a sentence's
words, a deck's values, a link's parameters) is never formatting, never an image or a link."""

from __future__ import annotations

import re

# every character with a meaning in Streamlit's markdown: CommonMark's, HTML's <>, LaTeX's $,
# and the : of :emoji: shortcodes, :red[coloured text] and :material/icons:
MARKDOWN_SIGNS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
# GitHub's autolinks need no sign at all: https://..., www.... and name@host become links even
# when every sign is escaped. An invisible word joiner (U+2060) inside each breaks them.
AUTOLINK_STARTS = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def escaped(text: str) -> str:
    """``text`` backslash-escaped, and its would-be autolinks broken, so that st.markdown,
    st.info, st.radio's options and every other markdown-reading widget show it literally."""
    return MARKDOWN_SIGNS.sub(r"\\\1", AUTOLINK_STARTS.sub(WORD_JOINER, text))
