"""What a keyboard and a screen reader need on every page, beyond what Streamlit gives
(docs/accessibility.md): captions in a colour of at least 4.5:1, a visible 2 px focus on every
control, a skip link and a key (/) to the sentence box, chart toolbars out of the tab order, and
each chart named for a screen reader by its summary (app/figures/summary.py).

A script, installed once per browser tab, does what CSS cannot: it puts the skip link first in
the page (before Streamlit's header, sidebar and main content), opens a collapsed sidebar to
reach the sentence box, and, as charts are drawn, takes their toolbar buttons out of the tab
order and gives each chart's picture a role and a name, read from the figure itself
(layout.meta, which app/ui.py's chart fills): no text of the sentence passes through HTML.
It gives an answered radio group its focus back once the run it started has drawn it anew, and
on a phone it closes the sidebar once a page link in it is chosen.
"""

from __future__ import annotations

import streamlit as st

from app.figures.style import CHART_TEXT_CSS

SENTENCE_BOX = 'textarea[aria-label="English sentence"]'
SHORTCUT = "/"  # as on GitHub and YouTube: the search box
SKIP_TEXT = f"Skip to the English sentence (or press {SHORTCUT})"
MARKER = "access-keys"  # the script's element, which takes no room on the page

CSS = f"""<style>
/* Streamlit's captions and widget help are a grey of 3.9:1 on white: the text's own colour,
   faded, stays above 4.5:1 in the light theme (about 6:1) and the dark (about 8:1) */
[data-testid="stCaptionContainer"], [data-testid="stWidgetLabel"] small {{
    color: inherit !important; opacity: 0.75;
}}
/* code inside a caption in the caption's own colour (Streamlit's code colour, faded, fell
   below 4.5:1 on its grey background) */
[data-testid="stCaptionContainer"] code {{ color: inherit !important; }}
/* a visible focus (2 px) on every control a key reaches, in the text's colour (either theme) */
:is(button, a, [role="slider"], [role="tab"], [tabindex="0"], summary):focus-visible,
label:has(input[type="radio"]:focus-visible, input[type="checkbox"]:focus-visible),
[data-baseweb="textarea"]:focus-within, [data-baseweb="input"]:focus-within,
[data-baseweb="select"]:focus-within {{
    outline: 2px solid currentColor !important; outline-offset: 2px;
}}
.attention-lab-skip {{
    position: fixed; left: 0.5rem; top: -4rem; z-index: 1000100; padding: 0.5rem 1rem;
    background: #ffffff; color: #1a1c24; border: 2px solid #1a1c24; border-radius: 0.4rem;
}}
.attention-lab-skip:focus {{ top: 0.5rem; }}
[data-testid="stMain"] .stElementContainer:has(.{MARKER}),
[data-testid="stSidebar"] .stElementContainer:has(.{MARKER}) {{ display: none; }}
</style>"""

SCRIPT = f"""<span class="{MARKER}" hidden></span><script>
(() => {{
  if (window.attentionLabAccess) return;
  window.attentionLabAccess = true;
  const box = () => document.querySelector('{SENTENCE_BOX}');
  const toSentence = () => {{
    // a collapsed sidebar keeps its width, off the screen's left edge; an opening one slides in
    const inView = (element) => element && element.getBoundingClientRect().left >= 0;
    const shown = box();
    if (inView(shown)) {{ shown.focus(); return; }}
    document.querySelector('[data-testid="stExpandSidebarButton"]')?.click();
    let tries = 0;
    const wait = setInterval(() => {{
      const opened = box();
      if (inView(opened) || ++tries > 40) {{
        clearInterval(wait);
        opened?.focus();
      }}
    }}, 50);
  }};
  const skip = document.createElement("button");
  skip.className = "attention-lab-skip";
  skip.textContent = {SKIP_TEXT!r};
  skip.addEventListener("click", toSentence);
  const landmark = document.createElement("nav");  // every content in a landmark
  landmark.setAttribute("aria-label", "Skip link");
  landmark.append(skip);
  document.body.prepend(landmark);
  const notText = ["radio", "checkbox", "button", "range"];
  const typing = (element) => element.isContentEditable || element.tagName === "TEXTAREA" ||
    (element.tagName === "INPUT" && !notText.includes(element.type));
  window.addEventListener("keydown", (event) => {{
    if (event.key !== {SHORTCUT!r} || event.ctrlKey || event.altKey || event.metaKey) return;
    if (typing(event.composedPath()[0])) return;
    event.preventDefault();
    toSentence();
  }}, true);
  // on a phone the open sidebar covers the page (300 of 390 px): a page link closes it, as a
  // phone's menu closes once an entry is chosen
  const phone = window.matchMedia("(max-width: 767px)");
  window.addEventListener("click", (event) => {{
    if (!phone.matches || !event.target.closest?.('[data-testid="stSidebarNavLink"]')) return;
    const close = '[data-testid="stSidebarCollapseButton"] button';
    setTimeout(() => document.querySelector(close)?.click(), 0);
  }});
  const label = () => {{
    // Streamlit's page list: a list whose entries are sections (a header and its links), which
    // screen readers and axe-core read as a broken list (docs/accessibility.md): each section
    // becomes the list of its links, named by its header
    const pageLists = '[data-testid="stSidebarNavItems"]:not([role])';
    for (const list of document.querySelectorAll(pageLists)) {{
      list.setAttribute("role", "none");
      for (const section of list.querySelectorAll(":scope > div")) {{
        section.setAttribute("role", "list");
        const header = section.querySelector('[data-testid="stNavSectionHeader"]');
        if (header) section.setAttribute("aria-label", header.textContent.trim());
      }}
    }}
    // Streamlit's toast is a dialog without a name
    for (const toast of document.querySelectorAll(".stToast:not([aria-label])")) {{
      toast.setAttribute("aria-label", "Notice");
    }}
    for (const button of document.querySelectorAll(".modebar-btn:not([tabindex])")) {{
      button.setAttribute("tabindex", "-1");
    }}
    for (const chart of document.querySelectorAll(".js-plotly-plot")) {{
      const meta = chart.layout?.meta;
      const [picture, ...layers] = chart.querySelectorAll(".main-svg");
      if (!meta?.summary || !picture) continue;
      const name = `${{meta.name}}. ${{meta.summary}}`;
      if (picture.getAttribute("aria-label") === name) continue;
      picture.setAttribute("role", "img");
      picture.setAttribute("aria-label", name);
      for (const layer of layers) layer.setAttribute("aria-hidden", "true");
    }}
  }};
  // an answer given on a radio (the Story's guess) starts a run that draws its group anew, and
  // the focus falls to the page's body: it goes back to the answer once drawn, for the next key
  let answered = null;  // the class (st-key-...) of the answered radio group's element
  let forget = 0;  // the timer that lets it go, should no run draw it anew
  const remember = (event) => {{  // Streamlit's radio answers keys itself: no change event
    const radio = event.composedPath()[0];
    if (radio.type !== "radio") return;
    const keyed = radio.closest('[class*="st-key-"]');
    answered = [...(keyed?.classList ?? [])].find((name) => name.startsWith("st-key-"));
    clearTimeout(forget);
    forget = setTimeout(() => {{ answered = null; }}, 10000);
  }};
  for (const kind of ["keydown", "click"]) window.addEventListener(kind, remember, true);
  const refocus = () => {{
    if (!answered || document.activeElement !== document.body) return;
    const radio = document.querySelector(`.${{answered}} input:checked`);
    if (radio) {{ radio.focus(); answered = null; }}
  }};
  let queued = false;
  new MutationObserver(() => {{
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {{ queued = false; label(); refocus(); }});
  }}).observe(document.body, {{ childList: true, subtree: true }});
}})();
</script>"""


def install() -> None:
    """The page's accessibility CSS and script (every page: app/ui.py's sidebar)."""
    st.html(CSS + CHART_TEXT_CSS)
    st.html(SCRIPT, unsafe_allow_javascript=True)
