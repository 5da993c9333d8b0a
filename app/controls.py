"""The widgets of the pages' settings, drawn from their one declaration (app/page_settings.py): a
page names its setting and gets its value; the label, the help, the options the model on screen
offers, the default, and what a value in the URL that is none of them falls back to (the
default) are the registry's. Only what a page's data decides (the rows of its sentence, the
steps of its search) is the page's to give."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from app import state, ui
from app.page_settings import PAGES, ModelShape, Setting, Whole


def setting(page: str, key: str) -> Setting:
    return PAGES[page].settings[key]


def model_shape() -> ModelShape:
    """The shape of the model on screen; without a usable model the page says why, and stops."""
    shape = state.model_shape()
    if shape is None:
        state.translator()  # stops with the message
    return shape


def options(page: str, key: str) -> list:
    """The values the setting ``key`` of ``page`` allows on the model on screen, with the page's
    other settings as they are (a layer of the kind of attention chosen)."""
    return list(setting(page, key).options(st.session_state, model_shape()))


def default(page: str, key: str) -> Any:
    """The value the page opens with."""
    return setting(page, key).default_of(options(page, key))


def value(page: str, key: str) -> Any:
    """The value of a picker (see :func:`pick`) read without drawing it: its state, else its
    code in the URL, else its default."""
    allowed = options(page, key)
    return ui.chosen(allowed, key, setting(page, key).default_of(allowed))


def pick(page: str, key: str, default: Any = None, among: Sequence | None = None) -> Any:
    """The setting ``key`` of ``page`` as a segmented control kept in the URL (ui.pick), its
    options the model's; ``default`` only where the page's data decides it (the logit lens opens
    at the layer where the chosen piece formed), and ``among`` where its data offers only some
    of them (the statistics a kind of attention has)."""
    declared = setting(page, key)
    allowed = options(page, key) if among is None else list(among)
    return ui.pick(
        declared.label,
        allowed,
        key,
        declared.default_of(allowed) if default is None else default,
        declared.format,
        help=declared.help,
        in_presentation=declared.in_presentation,
    )


def toggle(page: str, key: str) -> bool:
    """The setting ``key`` of ``page``, true or false, as a switch kept in the URL."""
    declared = setting(page, key)
    return st.toggle(
        declared.label, value=declared.default, key=key, bind="query-params", help=declared.help
    )


def slider(page: str, key: str, high: int | None = None) -> int:
    """A whole-number setting of ``page`` as a slider kept in the URL, from its lowest value to
    its highest on the model on screen, or to ``high`` where the page's data decides it (the
    last step of the search)."""
    declared = setting(page, key)
    assert isinstance(declared, Whole)
    allowed = options(page, key) if high is None else range(declared.low, high + 1)
    return st.slider(
        declared.label,
        declared.low,
        allowed[-1],
        value=declared.default_of(allowed),
        key=key,
        bind="query-params",
        help=declared.help,
    )


def selectbox(
    page: str,
    key: str,
    choices: Sequence,
    index: int | None = 0,
    format_func: Callable[[Any], str] = str,
) -> Any:
    """The setting ``key`` of ``page`` as a drop-down kept in the URL, among ``choices`` that
    the page's data decides (the words of the sentence), opening at ``index``."""
    declared = setting(page, key)
    return st.selectbox(
        declared.label,
        choices,
        index=index,
        format_func=format_func,
        key=key,
        bind="query-params",
        help=declared.help,
    )


def multiselect(page: str, key: str, placeholder: str | None = None) -> list:
    """The setting ``key`` of ``page``, a list of its options, as a multiselect kept in the
    URL."""
    declared = setting(page, key)
    allowed = options(page, key)
    return st.multiselect(
        declared.label,
        allowed,
        default=list(declared.default_of(allowed)) or None,
        key=key,
        bind="query-params",
        placeholder=placeholder,
        help=declared.help,
    )
