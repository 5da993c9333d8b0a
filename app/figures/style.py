"""Colours and sizes the figures share, and the one place that decides their text's colour and
size (:func:`legible`): WCAG 2.1 AA asks 4.5:1 of text against what is behind it, and a lecture
hall asks for labels that read from the back row."""

from __future__ import annotations

import html
import re

import numpy as np
import plotly.graph_objects as go

# Colour scales: attention weights 0..1, values around 0 (scores, PE, changes), a mask's two values
# (Blues, RdBu_r and Viridis stay apart for colour-blind readers)
ATTENTION_SCALE = "Blues"
DIVERGING_SCALE = "RdBu_r"
MASK_SCALE = [[0.0, "#d0d0d0"], [0.5, "#d0d0d0"], [0.5, "#2c7fb8"], [1.0, "#2c7fb8"]]
MASKED_COLOUR = "#7a7a7a"  # cells the causal mask forbids, laid over a map of weights
# Okabe & Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/), in the order the
# heads take it: any two stay apart for protan, deutan and tritan readers. Black, its ninth
# colour, is left out: it vanishes on the dark theme.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "sky blue": "#56B4E9",
    "yellow": "#F0E442",
    "grey": "#999999",
}
CATEGORICAL = tuple(OKABE_ITO.values())
# Shapes that carry a category besides its colour (a head's markers and dashes)
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "solid", "dash")
# The beam search's statuses; the Heads lab's bars and lines take "kept" and "finished" from it
STATUS_COLOURS = {
    "root": "#444444",
    "kept": OKABE_ITO["blue"],
    "finished": OKABE_ITO["bluish green"],
    "pruned": "#bbbbbb",
}
CELL_TEXT_MAX = 13  # px, text written into heatmap cells
NARROWEST_PLOT_PX = 760  # a heatmap's plot area on the narrowest desktop page (presentation: 960)
CHARACTER_WIDTH = 0.5  # of the font size, the mean width of a character in the app's font
TICK_FONT_PX = 12  # the chart theme's tick labels
# of the font size, a tick label's mean character: wider than CHARACTER_WIDTH, as labels hold
# signs and capitals ("<s> → Das"), and a margin estimated short squeezes the columns
LABEL_CHARACTER_WIDTH = 0.62
MARKUP = re.compile(r"<[^>]+>")
# A phone (390 px wide): a chart is 358 px, and a map with labelled rows keeps about this much of
# it for its cells once its row labels (wrapped at LABEL_CHARS) stand beside them
PHONE_PLOT_PX = 150
LABEL_CHARS = 22  # a long row label's lines, so that it leaves a phone's map PHONE_PLOT_PX

# Text. A chart is drawn on the page's own background (Streamlit's light or dark theme), and its
# text in the theme's body colour: Streamlit's chart theme draws it in a grey of 3.7:1 on white.
BACKGROUNDS = {"light": "#ffffff", "dark": "#171614"}  # Streamlit's two themes
TEXT_COLOURS = {"light": "#2f2d2b", "dark": "#edebe8"}  # their body text: 13.7:1 and 15.2:1
MIN_CONTRAST = 4.5  # WCAG 2.1 AA, 1.4.3, for text under 18 pt
# On screen the page's own text colour wins (CSS's currentColor, the theme Streamlit draws): the
# server learns the theme late (st.context.theme is unknown on a session's first run, and stale
# right after the menu switches it), so :func:`legible`'s colour holds where CSS cannot reach
# (an export, annotations) and this rule for every label on the page's background. Text in map
# cells and bars stands on its own colour and keeps it.
CHART_TEXT_CSS = """<style>
.js-plotly-plot :is(.xtick, .ytick, .g-gtitle, .g-xtitle, .g-ytitle, .g-x2title, .g-y2title,
    .cbaxis, .cbtitle, .textpoint) text, .js-plotly-plot :is(.legendtext, .gtitle-subtitle) {
    fill: currentColor !important;
}
</style>"""
PRESENTATION_TEXT_PX = 18  # every label of a projected chart, at least (1280x720 and up)


def longest_line(texts) -> int:
    """The characters of the longest line of ``texts`` (plotly's text, its markup left out)."""
    lines = (
        html.unescape(line)
        for text in np.asarray(texts, dtype=object).ravel()
        for line in MARKUP.sub("\n", str(text)).split("\n")
    )
    return max((len(line) for line in lines), default=0)


def figure_height(rows: int, per_row: int = 28, minimum: int = 320, maximum: int = 900) -> int:
    """A figure's height (px) for ``rows`` rows of ``per_row`` px, within minimum..maximum."""
    return int(min(max(minimum, 140 + per_row * rows), maximum))


def rgb(colour: str) -> tuple[float, float, float, float]:
    """A CSS colour as plotly writes them ("#rgb", "#rrggbb", "rgb(...)", "rgba(...)") as red,
    green, blue in 0..255 and alpha in 0..1."""
    colour = colour.strip()
    if colour.startswith("#"):
        digits = colour[1:]
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        return (*(float(int(digits[i : i + 2], 16)) for i in (0, 2, 4)), 1.0)
    numbers = [float(n) for n in re.findall(r"[\d.]+", colour)]
    if not colour.startswith("rgb") or len(numbers) < 3:
        raise ValueError(f"not a colour plotly writes: {colour!r}")
    return numbers[0], numbers[1], numbers[2], numbers[3] if len(numbers) > 3 else 1.0


def luminance(colour: str) -> float:
    """WCAG's relative luminance of an opaque colour."""

    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b, _ = rgb(colour)
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(text: str, background: str) -> float:
    """WCAG's contrast ratio of ``text`` over an opaque ``background``, a translucent text
    blended onto it first."""
    r, g, b, alpha = rgb(text)
    br, bg, bb, _ = rgb(background)
    blended = f"rgb({r * alpha + br * (1 - alpha)}, {g * alpha + bg * (1 - alpha)}, "
    blended += f"{b * alpha + bb * (1 - alpha)})"
    light, dark = sorted((luminance(blended), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def legible(fig: go.Figure, theme: str | None = None, min_px: float | None = None) -> go.Figure:
    """``fig`` with every text in the theme's text colour (``theme``: "light", "dark", or None
    for light) wherever it stands on the page's background, and at least ``min_px`` px where
    given (presentation mode): the layout's font, its titles, subtitle and legend, every axis's
    tick labels and title, every colour bar's, the annotations without a box of their own, and
    the text of text-only traces whose colour falls short of MIN_CONTRAST. Text in heatmap
    cells and in boxed labels stands on its own colour, which plotly and the builder choose."""
    theme = theme if theme in TEXT_COLOURS else "light"
    colour, background = TEXT_COLOURS[theme], BACKGROUNDS[theme]
    font = {"color": colour}
    fig.update_layout(font=font, title_font=font, legend_font=font)
    fig.layout.title.subtitle.font.color = colour
    fig.update_xaxes(tickfont=font, title_font=font)
    fig.update_yaxes(tickfont=font, title_font=font)
    for axis in fig.select_coloraxes():
        axis.colorbar.update(tickfont=font, title_font=font)
    for annotation in fig.layout.annotations:
        if annotation.bgcolor is None:
            annotation.font.color = colour
    for trace in fig.data:
        bar = getattr(trace, "colorbar", None)
        if bar is not None:
            bar.update(tickfont=font, title_font=font)
        if trace.type == "scatter" and "text" in (trace.mode or ""):
            trace.textfont.color = _readable(trace.textfont.color, colour, background)
    if min_px:
        _at_least(fig, min_px)
    return fig


def _readable(colours, text: str, background: str):
    """``colours`` (one or a list), each that falls short of MIN_CONTRAST on ``background``
    replaced by ``text``."""
    if colours is None:
        return text
    if isinstance(colours, str):
        return colours if contrast(colours, background) >= MIN_CONTRAST else text
    return [_readable(c, text, background) for c in colours]


def _at_least(fig: go.Figure, min_px: float) -> None:
    """Every label of ``fig`` (titles, ticks, legend, annotations, text traces) at least
    ``min_px`` px."""

    def size(current):
        if isinstance(current, (list, tuple)):
            return [max(c or 0, min_px) for c in current]
        return max(current or 0, min_px)

    fig.layout.font.size = size(fig.layout.font.size)
    fig.layout.title.font.size = size(fig.layout.title.font.size)
    fig.layout.title.subtitle.font.size = size(fig.layout.title.subtitle.font.size)
    fig.layout.legend.font.size = size(fig.layout.legend.font.size)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        axis.tickfont.size = size(axis.tickfont.size)
        axis.title.font.size = size(axis.title.font.size)
    for annotation in fig.layout.annotations:
        annotation.font.size = size(annotation.font.size)
    bars = [axis.colorbar for axis in fig.select_coloraxes()]
    for trace in fig.data:
        if trace.type == "scatter" and trace.mode and "text" in trace.mode:
            trace.textfont.size = size(trace.textfont.size)
        if getattr(trace, "colorbar", None) is not None:
            bars.append(trace.colorbar)
    for bar in bars:
        bar.tickfont.size = size(bar.tickfont.size)
        bar.title.font.size = size(bar.title.font.size)
