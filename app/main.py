"""Attention Lab's Streamlit app: ``streamlit run app/main.py``.

The sidebar (sentence, target language, beam settings) is shared by every page; every setting
lives in the URL. The model comes from $ATTENTION_LAB_MODEL, else from pretrained/en-de-fr.
"""

import streamlit as st

from app import admission, deck_controls, garbage, state, ui
from app.page_settings import SECTIONS, START

ABOUT = (
    "Attention Lab: a Transformer translating English into German and French, and what its "
    "attention does. This menu also switches the theme: light, dark, or the system's."
)

# The sidebar's sections of pages, as app/page_settings.py lists them
PAGES = {
    section: [
        st.Page(f"views/{name}.py", title=page.title, icon=page.icon, default=name == START)
        for name, page in pages.items()
    ]
    for section, pages in SECTIONS.items()
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
