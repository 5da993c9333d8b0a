"""Colours and sizes the figures share."""

# Colour scales: attention weights 0..1, values around 0 (scores, PE, changes), a mask's two values
ATTENTION_SCALE = "Blues"
DIVERGING_SCALE = "RdBu_r"
MASK_SCALE = [[0.0, "#d0d0d0"], [0.5, "#d0d0d0"], [0.5, "#2c7fb8"], [1.0, "#2c7fb8"]]
MASKED_COLOUR = "#7a7a7a"  # cells the causal mask forbids, laid over a map of weights
# The beam search's statuses; the Heads lab's bars and lines take "kept" and "finished" from it
STATUS_COLOURS = {"root": "#444444", "kept": "#2c7fb8", "finished": "#31a354", "pruned": "#bbbbbb"}
CELL_TEXT_MAX = 13  # px, text written into heatmap cells
NARROWEST_PLOT_PX = 760  # a heatmap's plot area on the narrowest desktop page (presentation: 960)
CHARACTER_WIDTH = 0.5  # of the font size, the mean width of a character in the app's font
# A phone (390 px wide): a chart is 358 px, and a map with labelled rows keeps about this much of
# it for its cells once its row labels (wrapped at LABEL_CHARS) stand beside them
PHONE_PLOT_PX = 150
LABEL_CHARS = 22  # a long row label's lines, so that it leaves a phone's map PHONE_PLOT_PX


def figure_height(rows: int, per_row: int = 28, minimum: int = 320, maximum: int = 900) -> int:
    """A figure's height (px) for ``rows`` rows of ``per_row`` px, within minimum..maximum."""
    return int(min(max(minimum, 140 + per_row * rows), maximum))
