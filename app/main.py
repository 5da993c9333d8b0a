"""Attention Lab's Streamlit app: ``streamlit run app/main.py``.

The sidebar (sentence, target language, beam settings) is shared by every page; every setting
lives in the URL. The model comes from $ATTENTION_LAB_MODEL, else from pretrained/en-de-fr.
"""

import streamlit as st

from app import ui

PAGES = [
    st.Page(
        "views/story.py", title="Story: start here", icon=":material/auto_stories:", default=True
    ),
    st.Page("views/translate.py", title="Translate", icon=":material/translate:"),
    st.Page("views/tokenization.py", title="Tokenization", icon=":material/token:"),
    st.Page(
        "views/embeddings.py",
        title="Embeddings & positional encoding",
        icon=":material/waves:",
    ),
    st.Page("views/attention.py", title="Attention", icon=":material/grid_on:"),
    st.Page("views/masking.py", title="Masking", icon=":material/visibility_off:"),
    st.Page("views/beam_search.py", title="Beam search", icon=":material/account_tree:"),
    st.Page("views/head_lab.py", title="Heads lab", icon=":material/hub:"),
    st.Page("views/explain.py", title="Explain", icon=":material/psychology:"),
    st.Page("views/training.py", title="Training dynamics", icon=":material/timeline:"),
    st.Page("views/model.py", title="Model", icon=":material/info:"),
]

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")
page = st.navigation(PAGES)
ui.sidebar()
if page.title != "Translate":  # the Translate page shows both itself
    ui.sentence_banner()
page.run()
