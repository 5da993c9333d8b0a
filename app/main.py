"""Attention Lab's Streamlit app: ``streamlit run app/main.py``.

The sidebar (sentence, target language, beam settings) is shared by every page; every setting
lives in the URL. The model comes from $ATTENTION_LAB_MODEL, else from pretrained/en-de-fr.
"""

import streamlit as st

from app import admission, deck_controls, garbage, state, ui

ABOUT = (
    "Attention Lab: a Transformer translating English into German and French, and what its "
    "attention does. This menu also switches the theme: light, dark, or the system's."
)

# The sidebar's sections: from the start, through the model's parts and its decoding, to what
# the heads do and how training shaped them
PAGES = {
    "Start here": [
        st.Page(
            "views/story.py",
            title="Story: start here",
            icon=":material/auto_stories:",
            default=True,
        ),
        st.Page("views/translate.py", title="Translate", icon=":material/translate:"),
    ],
    "The model's anatomy": [
        st.Page("views/tokenization.py", title="Tokenization", icon=":material/token:"),
        st.Page(
            "views/embeddings.py",
            title="Embeddings & positional encoding",
            icon=":material/waves:",
        ),
        st.Page("views/attention.py", title="Attention", icon=":material/grid_on:"),
        st.Page("views/masking.py", title="Masking", icon=":material/visibility_off:"),
    ],
    "Decoding": [
        st.Page("views/beam_search.py", title="Beam search", icon=":material/account_tree:"),
        st.Page("views/compare.py", title="Compare", icon=":material/compare:"),
    ],
    "Analysis": [
        st.Page("views/head_lab.py", title="Heads lab", icon=":material/hub:"),
        st.Page("views/explain.py", title="Explain", icon=":material/psychology:"),
        st.Page("views/coverage.py", title="Coverage", icon=":material/rule:"),
        st.Page("views/logit_lens.py", title="Logit lens", icon=":material/layers:"),
    ],
    "Training": [
        st.Page("views/training.py", title="Training dynamics", icon=":material/timeline:"),
        st.Page("views/model.py", title="Model", icon=":material/info:"),
    ],
}

# An About entry makes Streamlit show its menu (toolbarMode "minimal" hides an empty one), and
# with it the theme switch: light, dark, or the system's setting.
st.set_page_config(
    page_title="Attention Lab",
    page_icon="🔍",
    layout="wide",
    menu_items={"About": ABOUT},
)
with admission.TURN:  # at most admission.SLOTS runs compute at once: app/admission.py
    state.use_one_thread()
    page = st.navigation(PAGES, expanded=True)  # all fourteen links: Streamlit folds a long list
    deck_controls.follow()  # a deck's step asked for: its page, before any widget is drawn
    ui.sidebar()
    deck_controls.sidebar(page)
    ui.sentence_banner()  # on every page: with the sidebar collapsed it is the only English
    try:
        page.run()
    finally:
        garbage.release_freed_memory()  # or the server grows with every long sentence
