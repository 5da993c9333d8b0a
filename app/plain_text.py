"""Text that Streamlit would read as markdown, shown as it is: what a person typed (a sentence's
words, a deck's values, a link's parameters) is never formatting, never an image or a link."""

from __future__ import annotations

import re

# every character with a meaning in Streamlit's markdown: CommonMark's, HTML's <>, LaTeX's $,
# and the : of :emoji: shortcodes, :red[coloured text] and :material/icons:
MARKDOWN_SIGNS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def escaped(text: str) -> str:
    """``text`` backslash-escaped, so that st.markdown, st.info, st.radio's options and every
    other markdown-reading widget show it literally."""
    return MARKDOWN_SIGNS.sub(r"\\\1", text)
