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

A map (a heatmap: attention, masks, the Story's pieces) keeps at least MIN_COLUMN_PX a column on a
phone, and its written cells room for their text: where the screen is narrower than that, the map
is drawn at the width it needs and scrolls sideways in a window of the screen's width
(:func:`scrolled`), instead of squeezing its labels and cells into each other.

And a script: on a screen so narrow that the open sidebar lies over the page instead of beside it
(a phone), the sidebar closes after Translate or a classic example is clicked, so that the
translation is seen.
"""

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import presentation
from app.figures.style import (
    CHARACTER_WIDTH,
    LABEL_CHARACTER_WIDTH,
    TICK_FONT_PX,
    longest_line,
)

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


PHONE_MAX_WIDTH = "640px"  # a screen this narrow is a phone's: its maps scroll (see scrolled)
MIN_COLUMN_PX = 16  # a map's column on a phone: its label (at -60 degrees, 12 px) clear of the next
AXIS_TITLE_PX = 50  # a map's axis title beside its row labels, with the gaps
COLOUR_BAR_PX = 110  # the colour scale right of a map, its labels and title
CELL_PADDING_PX = 8  # around the text written into a cell
DEFAULT_MARGIN_PX = 80  # plotly's, at the top and foot of a figure that sets none
LINE_HEIGHT = 1.2  # a row label's line, of its font size


def map_width(fig: go.Figure) -> int | None:
    """The width (px) a map needs for MIN_COLUMN_PX a column, or for the text written into its
    cells where that is wider, with its row labels, axis title and colour scale; a figure's own
    ``meta`` ``min_width`` (a figure of panels whose titles need it); None for a figure that is
    neither."""
    meta = fig.layout.meta
    if isinstance(meta, dict) and meta.get("min_width"):
        return int(meta["min_width"])
    single = len(fig.data) > 0 and "xaxis2" not in fig.layout  # no panels
    if not single or fig.data[0].type != "heatmap" or fig.data[0].z is None:
        return None
    trace = fig.data[0]
    columns = np.asarray(trace.z, dtype=float).shape[-1]
    column = MIN_COLUMN_PX
    if trace.texttemplate and trace.text is not None:
        size = (trace.textfont.size if trace.textfont else None) or TICK_FONT_PX
        column = max(column, longest_line(trace.text) * size * CHARACTER_WIDTH + CELL_PADDING_PX)
    labels = fig.layout.yaxis.ticktext
    row_labels = longest_line(labels) * TICK_FONT_PX * LABEL_CHARACTER_WIDTH + AXIS_TITLE_PX
    scale = COLOUR_BAR_PX if trace.showscale is not False else 0
    return round(row_labels + columns * column + scale)


def row_step(fig: go.Figure) -> int:
    """Every how-many-th row label a map shows (1: all), so that none overlaps the next: its
    rows are as high as its plot (its height less its margins) shares out, never less than a
    label's line needs."""
    rows = len(fig.layout.yaxis.tickvals or ())
    if not rows or not fig.layout.height:
        return 1
    margin = fig.layout.margin
    plot = fig.layout.height - (margin.t or DEFAULT_MARGIN_PX) - (margin.b or DEFAULT_MARGIN_PX)
    return max(1, math.ceil(TICK_FONT_PX * LINE_HEIGHT * rows / max(plot, 1)))


def scrolled(fig: go.Figure, name: str) -> str | None:
    """The CSS that gives the map keyed ``chart-<name>`` (ui.chart) the width it needs on a
    phone (:func:`map_width`), in a window that scrolls sideways; None for a figure that is not
    a map. A wider screen draws it at the page's width, as before. (Streamlit draws a chart as
    wide as the frame around it, stFullScreenFrame: the width is set there.)"""
    width = map_width(fig)
    if width is None:
        return None
    chart = f".st-key-chart-{name}"
    rules = (
        f"@media (max-width: {PHONE_MAX_WIDTH}) {{ {chart} {{ overflow-x: auto; }} "
        # no toolbar across a phone's window, as on any narrow chart (the CSS above)
        f"{chart} .modebar-container {{ display: none; }} "
        f'{chart} [data-testid="stFullScreenFrame"] {{ min-width: {width}px; }} }}'
    )
    every = row_step(fig)
    if every > 1:  # on any screen: the map's height is its own
        rules += f" {chart} {presentation.every_kth_label_only(every)}"
    return f"<style>{rules}</style>"


def style() -> None:
    """The narrow-screen CSS and script, drawn on every page (by ui.sidebar)."""
    st.html(CSS)
    st.html(SCRIPT, unsafe_allow_javascript=True)
