"""Keys at the lectern: the keys a presentation clicker sends step the page's steps (the Story's,
the beam search's, the training snapshots'), whatever widget has focus.

→, PageDown and Space press the page's forward button, ←, PageUp and Shift+Space its back
button. Streamlit's own button shortcuts are not enough for a lecture: a radio clicked with the
mouse (the audience's guess) keeps the focus and turns → into a new answer, a focused button or
slider takes the key for itself, and a clicker's PageDown and Space do nothing. So one listener
on the window, in the capture phase, sees every key before the focused widget does, presses the
button and stops the key there. It leaves a key alone while someone types: in a text box, a
text area or a dropdown's search, except after Ctrl+Enter (or Enter in a one-line box) has sent
the text, until the next keystroke that types or click into it; Space then types a space as
ever. A radio reached with the keyboard (Tab) keeps its arrow keys. Keys with Ctrl, Alt or
Meta are the browser's (Alt+← goes back a page).

The listener is installed once per browser tab and reads which buttons to press from the page's
marker element (a page without one has no lectern keys), so that it follows page changes. An
open deck's marker (app/deck_controls.py, in the sidebar) comes first: with a deck, a click is
the deck's next view, whatever the page's own steps; except where a page asks for a forward key
first (:func:`forward_first`: the Story's open question, which the key reveals).

At the last step a forward key does nothing, and Play turns itself off (:func:`play_toggle`).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import state, ui

FORWARD_KEYS = ("ArrowRight", "PageDown", "Space")
BACK_KEYS = ("ArrowLeft", "PageUp", "Shift+Space")
HINT = "Lectern keys: → PageDown Space step forward, ← PageUp Shift+Space step back."
MARKER = "lectern-keys"
DECK_MARKER = "lectern-deck-keys"
FIRST_MARKER = "lectern-forward-first"

SCRIPT = f"""<script>
(() => {{
  if (window.attentionLabLectern) return;
  window.attentionLabLectern = true;
  const sent = new WeakSet();  // text boxes whose text was sent and not typed in since
  const notText = ["radio", "checkbox", "button", "range"];
  const isText = (element) => element.isContentEditable || element.tagName === "TEXTAREA" ||
    (element.tagName === "INPUT" && !notText.includes(element.type));
  const direction = (event) => {{
    if (event.ctrlKey || event.altKey || event.metaKey) return 0;
    if (event.key === "ArrowRight" || event.key === "PageDown") return 1;
    if (event.key === "ArrowLeft" || event.key === "PageUp") return -1;
    if (event.key === " ") return event.shiftKey ? -1 : 1;
    return 0;
  }};
  const typing = (element, event) =>
    isText(element) && (!sent.has(element) || event.key === " ");
  // a radio reached by the keyboard keeps its arrow keys (a radio group's, as WAI-ARIA has it);
  // one clicked leaves them to the clicker, whose PageDown and Space always step (Chromium's
  // :focus-visible cannot tell: a click on a radio's label matches it)
  let clicked = false;
  window.addEventListener("pointerdown", () => {{ clicked = true; }}, true);
  const radioKey = (element, event) =>
    element.type === "radio" && event.key.startsWith("Arrow") && !clicked;
  const stepButton = (step) => {{
    const marker = (step > 0 && document.querySelector(".{FIRST_MARKER}")) ||
      document.querySelector(".{DECK_MARKER}") || document.querySelector(".{MARKER}");
    const key = marker?.dataset[step > 0 ? "forward" : "back"];
    return key ? document.querySelector(`.st-key-${{key}} button`) : null;
  }};
  window.addEventListener("keydown", (event) => {{
    const element = event.composedPath()[0];
    if (event.key === "Tab") clicked = false;
    if (isText(element) && event.key === "Enter" &&
        (event.ctrlKey || event.metaKey || element.tagName === "INPUT")) {{
      sent.add(element);
      return;
    }}
    const step = direction(event);
    const button = step ? stepButton(step) : null;
    if (!button || typing(element, event) || radioKey(element, event)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!button.disabled && !event.repeat) button.click();
  }}, true);
  // Space pressed on a focused button clicks it when the key comes up: not at the lectern
  window.addEventListener("keyup", (event) => {{
    const element = event.composedPath()[0];
    if (event.key === " " && stepButton(1) && !typing(element, event)) {{
      event.preventDefault();
      event.stopImmediatePropagation();
    }}
  }}, true);
  for (const kind of ["input", "mousedown"]) {{
    window.addEventListener(kind, (event) => sent.delete(event.composedPath()[0]), true);
  }}
}})();
</script>"""

CSS = f"""<style>
.stElementContainer:has(.{MARKER}, .{DECK_MARKER}, .{FIRST_MARKER}) {{ display: none; }}
/* the keys' toast at the bottom right, over a colour scale, not over the translation at the top */
[data-testid="stToastContainer"] {{ top: auto !important; bottom: 1rem !important; }}
</style>"""


def keys(back: str, forward: str, marker: str = MARKER) -> None:
    """The lectern keys for this page: they press the buttons whose widget keys are ``back`` and
    ``forward`` (an open deck's, with ``marker`` DECK_MARKER, before the page's). In
    presentation mode the keys are told once per session (a toast)."""
    st.html(CSS)
    st.html(
        f'<span class="{marker}" data-back="{back}" data-forward="{forward}" hidden></span>'
        f"{SCRIPT}",
        unsafe_allow_javascript=True,
    )
    if state.settings().present and not st.session_state.get("lectern_told"):
        st.session_state.lectern_told = True
        st.toast(HINT, icon="⌨️")


def forward_first(forward: str) -> None:
    """Have the forward keys press the button keyed ``forward`` before an open deck's next view,
    for this run of the page (the Story's Reveal: a deck's clicker reveals the answer, then
    steps on)."""
    st.html(CSS)
    st.html(f'<span class="{FIRST_MARKER}" data-forward="{forward}" hidden></span>')


def play_toggle(label: str, key: str, step_key: str, steps: Sequence, **toggle_args) -> bool:
    """The page's Play toggle (widget key ``key``), which moves ``st.session_state[step_key]``
    through ``steps``; whether it plays. At the last step it is off: a widget's value can only
    be changed before the widget is drawn in a run, so this is where Play stops, whether it was
    pressed there or the play reached the end (:func:`play_on`)."""
    current = st.session_state.get(step_key, steps[0])
    if st.session_state.get(key) and current == steps[-1]:
        st.session_state[key] = False
    return st.toggle(label, key=key, **toggle_args)


def play_on(step_key: str, steps: Sequence) -> None:
    """One tick of a playing page's fragment: the next step, or at the last one a run of the whole
    page, whose :func:`play_toggle` turns Play off."""
    if st.session_state.get(step_key, steps[0]) == steps[-1]:
        st.rerun()
    ui.step_through(step_key, steps, 1)
