"""Narrow screens and narrow charts: a phone (390 px wide), a chart in one of two columns.

Streamlit does not tell the server the size of the window, so what adapts is CSS, on every page:
the options of a page's picker wrap onto more lines instead of scrolling sideways out of view
(and a long option onto two lines instead of ending in "…"), and a chart narrower than
NARROW_CHART draws its title and caption smaller, so that their lines (app/slides.py wraps them
at TITLE_CHARS and CAPTION_CHARS) are not cut at its right edge, and hides the chart's toolbar
(plotly's modebar, which sits over the figure's top right corner and there, across half a phone,
over its title and caption): the "Figure for slides" button under the chart still exports it, and
Streamlit's own button shows it full screen. (A strip of its own above the figure cannot be had:
Streamlit gives the chart's element the figure's height, and what grew the figure was cut off at
its foot.) An exported figure is drawn outside the page, at its own sizes.

And a script: on a screen so narrow that the open sidebar lies over the page instead of beside it
(a phone), the sidebar closes after Translate or a classic example is clicked, so that the
translation is seen.
"""

import streamlit as st

NARROW_CHART = "480px"
MARKER = "narrow-screen"  # the script's element, which takes no room on the page
CSS = f"""<style>
[data-testid="stMain"] [role="radiogroup"] {{ flex-wrap: wrap; }}
[data-testid="stMain"] [role="radiogroup"] button :is(div, span, p) {{
    white-space: normal; height: auto;
}}
[data-testid="stMain"] [role="radiogroup"] button {{ height: auto; }}
[data-testid="stPlotlyChart"] {{ container-type: inline-size; }}
@container (max-width: {NARROW_CHART}) {{
    .js-plotly-plot .gtitle {{ font-size: 12px !important; }}
    .js-plotly-plot .gtitle-subtitle {{ font-size: 10px !important; }}
    .js-plotly-plot .modebar-container {{ display: none; }}
}}
[data-testid="stMain"] .stElementContainer:has(.{MARKER}) {{ display: none; }}
</style>"""

# What translates from the sidebar: the Translate button (the sidebar's one primary button) and
# the classic examples (ui.sidebar's pills, key "example")
TRANSLATES = (
    '[data-testid="stSidebar"] :is([data-testid="stBaseButton-primary"], .st-key-example button)'
)
SCRIPT = f"""<span class="{MARKER}" hidden></span><script>
(() => {{
  if (window.attentionLabNarrow) return;
  window.attentionLabNarrow = true;
  // the open sidebar lies over the page (a phone) rather than beside it
  const overPage = (sidebar) => {{
    const main = document.querySelector('[data-testid="stMain"]');
    return main && sidebar.getBoundingClientRect().right > main.getBoundingClientRect().left + 1;
  }};
  // in the bubbling phase: after Streamlit has taken the click and started the translation
  window.addEventListener("click", (event) => {{
    if (!event.target.closest?.('{TRANSLATES}')) return;
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    if (sidebar && overPage(sidebar)) {{
      sidebar.querySelector('[data-testid="stSidebarCollapseButton"] button')?.click();
    }}
  }});
}})();
</script>"""


def style() -> None:
    """The narrow-screen CSS and script, drawn on every page (by ui.sidebar)."""
    st.html(CSS)
    st.html(SCRIPT, unsafe_allow_javascript=True)
