"""Presentation mode (``?present=true``): the app as slides on a projector.

The sidebar starts collapsed (open it to leave the mode); the page's title, prose and pickers are
hidden (the lecturer says them; a view is chosen before, or in the URL), except the layer and
head pickers, drawn small on one line; its buttons and sliders stay (the beam search's and the
story's steps); the sentence and its translation stand in large type above the figures
(ui.sentence_banner), and every chart is as tall as the screen allows, so that the page's first
figure is seen whole without scrolling, at 1280x720 as at 1920x1080 (the banner shows two lines
of a longer sentence, the rest under the pointer). Streamlit does not tell the server the size of
the window, so the height is CSS (vh) on the chart's element, which the chart fills when drawn
with height="stretch".
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from app.figures.style import (
    CHARACTER_WIDTH,
    PRESENTATION_TEXT_PX,
    TICK_FONT_PX,
    longest_line,
)

# The key prefix of the containers that hold the pickers presentation mode keeps (a layer, a
# head: ui.pick(..., in_presentation=True)); Streamlit gives them the class st-key-<key>.
KEPT = "in-presentation-"
FONT_SIZE = PRESENTATION_TEXT_PX  # tick labels, legends and titles: read from the back row
HOVER_FONT_SIZE = 20
# What stands above a page's first chart: Streamlit's header, the banner, a heading and a row of
# buttons or pickers (the beam search's steps, a layer and a head), with the gaps between them.
ABOVE_FIRST_CHART = "16rem"
# A row of pickers or buttons with its gaps, taken off a first chart's height for each row more
# than that above it (controls_above): Compare's second picker, Training dynamics' steps.
CONTROL_ROW = "3.5rem"
# below a map whose column labels sit on top (plotly's default is 80): the colour scale's lowest
# label reaches 2 px below the map
HEATMAP_BOTTOM_PX = 4
# Plotly leaves 23 px between a map and its turned 18 px column labels on top (measured in
# Chromium): this many of them go to the map's rows
LABEL_STANDOFF_PX = 12
# A figure drawn taller than its own layout height by at most this factor: a map of a few rows
# stays a small map instead of a few giant cells.
MAX_GROWTH = 1.6
# Row labels sized to the rows they label: of a map's height, its title, its compact caption, the
# key labels on top and the lower margin take up to this many px (measured in Chromium at
# 1280x720 with 18 px labels: 160 px for a 38-word sentence's cross-attention, 192 px for the
# Training page's map, whose column labels are turned) ...
CHART_FRAME = 200
LINE_HEIGHT = 4 / 3  # ... a label's box is this many times its font size (Chromium's) ...
# ... which is never smaller than this (px): the labels a lecture hall reads; below, every k-th
# label shows
ROW_LABEL_MIN_SIZE = FONT_SIZE
MAX_THINNING = 8

CSS = f"""<style>
/* text scales with the screen: 16 px at 720 px high, 24 px at 1080 (rem: the banner, headings, the
   story's question and tables, buttons and alerts) */
html {{ font-size: clamp(16px, calc(100vh / 45), 24px); }}
/* no export from a projected view: its captions are compact (the banner holds the sentence) */
[data-testid="stMain"] .modebar-container {{ display: none; }}
/* the room the page gives to figures */
[data-testid="stMainBlockContainer"] {{ padding-top: 3.5rem; padding-bottom: 2rem; }}
/* the page's title: the banner and the figures' titles say what is on screen */
[data-testid="stMain"] .stElementContainer:has(h1) {{ display: none; }}
[data-testid="stMain"] h2, [data-testid="stMain"] h3 {{ font-size: 1.3rem; padding: 0.25rem 0; }}
/* the sentence and its translation, large (ui.sentence_banner), two lines at most so that the
   figure stays in view: a longer sentence ends in an ellipsis, and shows whole under the pointer */
.st-key-sentence-banner [data-testid="stText"] {{ font-size: 1.9rem; line-height: 1.25; }}
.st-key-sentence-banner [data-testid="stText"] > span {{
    display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden;
}}
.st-key-sentence-banner [data-testid="stText"] > span:hover {{ -webkit-line-clamp: unset; }}
/* the page's prose and pickers; not its buttons and sliders (the beam search's steps), nor the
   story's question to the audience, nor the pickers it keeps (below) */
[data-testid="stMain"] .stElementContainer:has(> :is(
    [data-testid="stMarkdown"], [data-testid="stButtonGroup"], [data-testid="stCheckbox"],
    [data-testid="stSelectbox"], [data-testid="stMultiSelect"], [data-testid="stTextInput"],
    [data-testid="stTextArea"], [data-testid="stNumberInput"]
)):not(.st-key-sentence-banner *):not([class*="st-key-{KEPT}"] *),
[data-testid="stMain"] :is(.st-key-snapshot, [data-testid="stExpander"], [role="tablist"]) {{
    display: none;
}}
/* a warning (byte pieces, a sentence past the model's reach) folds into one line at the foot of
   the screen, whole under the pointer or the keyboard's focus: the audience's own sentence never
   pushes the figure off the slide */
[data-testid="stMain"] .stElementContainer:has([data-testid="stAlertContentWarning"]) {{
    position: fixed; left: 1rem; bottom: 0.5rem; z-index: 100; width: min(40rem, 45vw) !important;
    max-height: 3rem; overflow: hidden; margin: 0;
}}
[data-testid="stMain"] .stElementContainer:has([data-testid="stAlertContentWarning"]):is(
    :hover, :focus-within) {{ max-height: 60vh; overflow: auto; }}
/* a slider's label (the beam search's step, the training step): its value shows on its thumb */
[data-testid="stMain"] [data-testid="stSlider"] [data-testid="stWidgetLabel"] {{ display: none; }}
/* the pickers it keeps (a layer, a head): the label beside small options, one line */
[class*="st-key-{KEPT}"] [data-testid="stButtonGroup"] {{
    display: flex; align-items: center; gap: 0.5rem;
}}
[class*="st-key-{KEPT}"] [data-testid="stWidgetLabel"] {{ margin: 0; min-height: 0; }}
[class*="st-key-{KEPT}"] [role="radiogroup"] button {{
    min-height: 1.8rem; padding: 0 0.6rem; font-size: 0.9rem;
}}
</style>"""


def fit(fig: go.Figure, name: str) -> str:
    """Make ``fig`` ready for the projector (larger text, no height of its own) and return the
    CSS that sizes the element of the chart keyed ``chart-<name>`` (see ui.chart) to the screen:
    the viewport less what stands above a first chart, and at most MAX_GROWTH times the figure's
    own height."""
    own_height = fig.layout.height or 450  # plotly's default
    fig.update_layout(
        font={"size": FONT_SIZE},
        title_font_size=FONT_SIZE + 2,  # 20 px: under slides.TITLE_FONT_PX * its scale, 24
        legend_font_size=FONT_SIZE,
        hoverlabel={"font": {"size": HOVER_FONT_SIZE}},
        height=None,
        autosize=True,
    )
    # set on every axis: Streamlit's chart theme gives axes their own font sizes, which
    # layout.font does not reach
    fig.update_xaxes(tickfont_size=FONT_SIZE, title_font_size=FONT_SIZE)
    fig.update_yaxes(tickfont_size=FONT_SIZE, title_font_size=FONT_SIZE)
    if fig.layout.xaxis.side == "top":
        labels_on_top(fig)
    height = f"min(calc(100vh - {ABOVE_FIRST_CHART}), {round(own_height * MAX_GROWTH)}px)"
    chart = f".st-key-chart-{name}"
    rules = [f"{chart} {{ height: {height}; container-type: size; }}"]
    rows = len(fig.layout.yaxis.tickvals or ())
    if rows:
        rules += row_label_rules(chart, rows)
    return f"<style>{' '.join(rules)}</style>"


def labels_on_top(fig: go.Figure) -> None:
    """Fit a map whose column labels sit on top to the projector: the room below it goes to its
    rows; a top margin fixed for labels at TICK_FONT_PX grows by what its turned labels grow to
    FONT_SIZE, less what they move closer to the map (LABEL_STANDOFF_PX); the column axis's title
    joins the row axis's, which has room beside the rows (on top it stood between the caption and
    the labels)."""
    layout = fig.layout
    if layout.margin.b is None:
        layout.margin.b = HEATMAP_BOTTOM_PX
    if layout.margin.t is not None and layout.xaxis.ticktext:
        angle = math.radians(abs(layout.xaxis.tickangle or 0))
        # a turned label's height, per px of font: its line across, its line's height along
        # (pieces in Chromium: 0.48-0.54 of the font a character)
        height = longest_line(layout.xaxis.ticktext) * CHARACTER_WIDTH * math.sin(angle)
        height += math.cos(angle)
        layout.margin.t += round((FONT_SIZE - TICK_FONT_PX) * height) - LABEL_STANDOFF_PX
        layout.xaxis.ticklabelstandoff = -LABEL_STANDOFF_PX
    if layout.xaxis.title.text and layout.yaxis.title.text:
        rows, columns = layout.yaxis.title.text, layout.xaxis.title.text
        layout.yaxis.title.text = f"rows: {rows} · columns: {columns}"
        layout.xaxis.title.text = None


def controls_above(name: str, rows: int) -> str:
    """The CSS that makes room for ``rows`` more rows of controls above the first chart (keyed
    ``chart-<name>``) than ABOVE_FIRST_CHART holds: at most the height fit gives it, less as many
    CONTROL_ROWs."""
    room = f"calc(100vh - {ABOVE_FIRST_CHART} - {rows} * {CONTROL_ROW})"
    return f"<style>.st-key-chart-{name} {{ max-height: {room}; }}</style>"


def row_label_rules(chart: str, rows: int) -> list[str]:
    """CSS that keeps a map's ``rows`` row labels from overlapping on any screen: a font size that
    fits a row (FONT_SIZE at most), and where even the smallest does not, every k-th label only.
    Plotly sizes its labels for the height it was given, which presentation mode takes away, and
    the height the chart gets is only known in the browser: the chart's element is a CSS
    container, and the rules ask for its height (cqh, @container)."""
    per_row = f"(100cqh - {CHART_FRAME}px) / {rows}"
    size = f"clamp({ROW_LABEL_MIN_SIZE}px, calc({per_row} / {LINE_HEIGHT}), {FONT_SIZE}px)"
    rules = [f"{chart} .ytick text {{ font-size: {size} !important; }}"]
    smallest_line = ROW_LABEL_MIN_SIZE * LINE_HEIGHT
    for every in range(2, MAX_THINNING + 1):
        # every k-th label shows where k rows are as high as the smallest label's line
        below = CHART_FRAME + smallest_line * rows / (every - 1)
        above = CHART_FRAME + smallest_line * rows / every
        # ranges that do not meet: at a shared bound two rules would leave every k*(k+1)-th only
        query = f"(height <= {below:.0f}px)"
        if every < MAX_THINNING:
            query = f"({above:.0f}px < height) and {query}"
        rules.append(f"@container {query} {{ {chart} {every_kth_label_only(every)} }}")
    return rules


def every_kth_label_only(every: int) -> str:
    """The CSS rule that hides all but every ``every``-th row label of a map, from the first. A
    label is a g.ytick; plotly puts the tick marks, path.ytick, before them in the same layer."""
    return f"g.ytick:not(:nth-child({every}n + 1 of g.ytick)) text {{ display: none; }}"
