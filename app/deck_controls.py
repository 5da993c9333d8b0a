"""A deck at the lectern (app/deck.py holds what a deck is): the sidebar's deck picker, its
◀ ▶ buttons, which the clicker's keys press on every page (app/lectern.py), and the button
that saves the view on screen as a step.

A step's settings go into the session's widget state, which every page reads before the URL,
and before any widget of the run is drawn (setting a drawn widget's value is an error): a button
only asks for a step (``deck_go``), and :func:`follow`, called by app/main.py right after the
navigation, opens it with st.switch_page. The page's settings the step leaves out are removed,
so that the page opens at its defaults, whichever step came before. The URL holds the deck and
the step (?deck=paper&slide=5), which a link or a reload opens again: Streamlit writes a widget's
value set in code back to the URL only once the widget has been drawn, so the page's own
parameters in the URL may lag behind the step.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from app import deck, lectern, state
from app.page_settings import PAGES, START
from app.plain_text import escaped

DECK, SLIDE, GO = "deck", "slide", "deck_go"  # the open deck, its step (from 1), the one asked
BACK, FORWARD = "deck-back", "deck-next"  # the buttons' widget keys, which the clicker presses
NEW_DECK = 'title = "My lecture"\n'


def chosen() -> str | None:
    """The name of the open deck: the sidebar's choice, else the URL's (a link's first run)."""
    if DECK in st.session_state:
        return st.session_state[DECK]
    return st.query_params.get(DECK) or None


def opened(name: str) -> tuple[deck.Deck | None, list[str]]:
    """The deck ``name`` (None if it cannot be shown on this model, or while there is no model)
    and what is wrong with it."""
    shape = state.model_shape()
    try:
        text = deck.read(name)
        return (None if shape is None else deck.parse(text, shape)), []
    except deck.DeckError as error:
        return None, error.problems


def linked_number() -> int:
    """The step the URL names (?slide=, from 1), the first if it names none."""
    number = st.query_params.get(SLIDE, "1")
    return int(number) if number.isdigit() else 1


def within(lecture: deck.Deck, number: int) -> int:
    return min(max(number, 1), len(lecture.steps))


def follow() -> None:
    """Open the step asked for (a ◀ ▶ button, the step picker, a deck just chosen) on its
    page, or on a session's first run (a link, a reload) the step the URL names, whose settings
    the URL may not all hold (see above). Called before the sidebar draws any widget, as setting
    a drawn widget's value is an error. Does nothing for a deck that cannot be shown: the
    sidebar says why."""
    name = chosen()
    number = st.session_state.pop(GO, None)
    if number is None and SLIDE not in st.session_state:
        number = linked_number()
    if not name or number is None:
        return
    lecture, _ = opened(name)
    if lecture is not None:
        show(lecture, name, within(lecture, number))


def show(lecture: deck.Deck, name: str, number: int) -> None:
    """Switch to step ``number`` of ``lecture``: its page, with its settings in the session and
    the page's others back to their defaults, and the deck and the step in the URL."""
    step = lecture.steps[number - 1]
    for key in PAGES[step.page].settings:
        st.session_state.pop(key, None)
        # and the labels a picked row was kept on (app/word_choice.follow): a step's query row
        # is a row of its own sentence, not the same word moved from the view before
        st.session_state.pop(f"{key}_labels", None)
    st.session_state.update(step.settings)
    st.session_state[SLIDE] = number
    st.switch_page(f"views/{step.page}.py", query_params={DECK: name, SLIDE: str(number)})


def ask_for(number: int) -> None:
    """The callback of the ◀ ▶ buttons: :func:`follow` opens step ``number`` in the run."""
    st.session_state[GO] = number


def ask_for_picked() -> None:
    """The callback of the step picker."""
    st.session_state[GO] = st.session_state[SLIDE]


def ask_for_first() -> None:
    """The callback of the deck picker: a deck opens at its first step; no deck closes it."""
    if st.session_state.get(DECK):
        st.session_state[GO] = 1
    else:
        st.session_state.pop(SLIDE, None)
        st.query_params.pop(SLIDE, None)


def deck_label(name: str | None) -> str:
    return "(none)" if name is None else name


def in_url(key: str, value: object) -> None:
    """``value`` under ``key`` in the URL, or no ``key`` for None."""
    if value is None:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = str(value)


def sidebar(page: StreamlitPage) -> None:
    """The deck's part of the sidebar: the deck picker, and with a deck open its step picker,
    its ◀ ▶ buttons and the clicker's keys; the button that saves the view on screen."""
    with st.sidebar:
        st.divider()
        name = chosen()
        found = deck.names()
        options = [None, *found, *([name] if name and name not in found else [])]
        st.session_state[DECK] = name  # the URL's, on a link's first run
        name = st.selectbox(
            "Deck",
            options,
            key=DECK,
            format_func=deck_label,
            on_change=ask_for_first,
            help="A lecture as a list of prepared views (a TOML file in decks/, or ?deck= "
            "with its name): → PageDown Space open the next view, ← PageUp "
            "Shift+Space the one before.",
        )
        in_url(DECK, name)
        lecture, problems = opened(name) if name else (None, [])
        for problem in problems:
            st.error(escaped(problem))
        if lecture is not None:
            steps(lecture)
        else:
            in_url(SLIDE, None)
        save_button(page, name)


def steps(lecture: deck.Deck) -> None:
    """The open deck's step picker and ◀ ▶ buttons, which the clicker's keys press."""
    number = within(lecture, st.session_state.get(SLIDE) or linked_number())
    st.session_state[SLIDE] = number
    labels = {
        n: f"{n} · {step.title or step.page}" for n, step in enumerate(lecture.steps, start=1)
    }
    st.selectbox("View", list(labels), key=SLIDE, format_func=labels.get, on_change=ask_for_picked)
    in_url(SLIDE, number)
    back, forward = st.columns(2)
    back.button(
        "◀ Previous view",
        key=BACK,
        on_click=ask_for,
        args=(number - 1,),
        disabled=number == 1,
        width="stretch",
    )
    forward.button(
        "Next view ▶",
        key=FORWARD,
        on_click=ask_for,
        args=(number + 1,),
        disabled=number == len(lecture.steps),
        width="stretch",
    )
    lectern.keys(BACK, FORWARD, marker=lectern.DECK_MARKER)


def save_button(page: StreamlitPage, name: str | None) -> None:
    """Download the deck ``name`` (a new one without a deck) with the view on screen appended as
    its last step: the page and the settings the session holds for it, which a page's widgets
    have put there by the time it can be clicked (a view opened from a link, before any click,
    is saved with the page's defaults: drawn after the page, the button would be lost with every
    page that stops early)."""
    try:
        text = deck.read(name) if name else NEW_DECK
    except deck.DeckError:
        text = NEW_DECK
    step = deck.current_step(page.url_path or START, st.session_state, page.title)
    st.download_button(
        "Save this view as a step",
        deck.with_step(text, step),
        file_name=f"{Path(name or 'lecture').stem}{deck.SUFFIX}",
        mime="application/toml",
        key="deck-save",
        on_click="ignore",
        help="Downloads the deck with this page and its settings as its new last step: put the "
        "file in decks/ (and give the step a title of your own).",
    )
