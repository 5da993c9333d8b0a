"""The Masking page's figures (the score pipeline, the padding demo) and the Embeddings page's
encoder input in blocks order: legible on screen and on a 1920 x 1080 slide, and saying only what
they show."""

import re
from itertools import pairwise

import numpy as np
import pytest

from app import slides
from app.figures.masking import (
    LABEL_LINE,
    MASKED_TEXT_EM,
    PANEL_PX,
    PIPELINE_LEGEND_PX,
    PROJECTED_TICK_PX,
    SLIDE_PANEL_PX,
    TICK_LABEL_MIN_PX,
    score_pipeline,
)
from app.figures.positional import embedding_sum, pe_dimension_order
from app.figures.style import CHARACTER_WIDTH
from app.figures.text import MINUS_INF, plot_text
from core.labelled_attention import LabelledAttention, prediction_labels
from core.model.config import POSITIONAL_LAYOUTS
from core.model.sinusoids import wave
from tests.app.apptest import chart_specs

# The decoder pieces of the reviewer's sentence: "Das Tier überquerte nicht die Straße, ..."
PIECES = [
    "<s>", "▁Das", "▁T", "ier", "▁überquert", "e", "▁nicht", "▁die",
    "▁Straße", ",", "▁weil", "▁es", "▁zu", "▁müde", "▁war", ".",
]  # fmt: skip
CAPTION = slides.Caption(
    "The animal didn't cross the street because it was too tired.",
    "Das Tier überquerte nicht die Straße, weil es zu müde war.",
    "de",
    "en-de-fr",
    kind="decoder",
    layer=1,
    head=1,
)
PANEL_TITLE_PX = 22  # a panel title's line: plotly's 16 px subplot titles


def decoder_attention(n_pieces: int, seed: int = 0) -> LabelledAttention:
    """One layer and head of decoder self-attention over ``n_pieces`` pieces (PIECES, repeated
    for longer ones): random scores, the causal mask, and their softmax."""
    pieces = [PIECES[i % len(PIECES)] for i in range(n_pieces)]
    scores = np.random.default_rng(seed).normal(size=(1, 1, n_pieces, n_pieces)).astype("float32")
    allowed = np.tril(np.ones((n_pieces, n_pieces), dtype=bool))
    masked = np.where(allowed, scores, -np.inf)
    weights = np.exp(masked - masked.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    queries = prediction_labels(pieces, [*pieces[1:], "</s>"])
    return LabelledAttention(weights, queries, pieces, scores, allowed)


def caption_bottom_px(caption: slides.Caption) -> int:
    """How far below the figure's top the caption that slides.add_caption draws ends: the pad,
    the (empty) title line, the gap and the caption's lines."""
    lines = len(slides.caption_lines(caption))
    return (
        slides.TITLE_PAD_PX
        + slides.TITLE_LINE_PX
        + slides.CAPTION_GAP_PX
        + lines * slides.CAPTION_LINE_PX
    )


@pytest.mark.parametrize("sentence", [CAPTION.sentence, "A very long sentence, " * 12])
def test_masked_legend_stays_clear_of_the_caption_on_screen_and_on_slides(sentence):
    caption = slides.Caption(**{**CAPTION.__dict__, "sentence": sentence})
    fig = score_pipeline(decoder_attention(len(PIECES)), 0, 0)
    slides.add_caption(fig, caption)
    legend = fig.layout.legend
    # anchored to the panels' top edge, not the figure's (where the caption is): as many px
    # below the top at any height, the screen's and the export's 720
    assert (legend.yref, legend.y, legend.yanchor) == ("paper", 1.0, "bottom")
    legend_top = fig.layout.margin.t - PIPELINE_LEGEND_PX
    assert caption_bottom_px(caption) + PANEL_TITLE_PX <= legend_top
    # the panel titles stand above the legend's row, not on it
    assert [a.yshift for a in fig.layout.annotations] == [PIPELINE_LEGEND_PX] * 3
    # its one entry has the whole row: sized to the text, it was cut ("exactly 0 aft") in the
    # exported PNG (seen in Chromium; a layout property is what can be checked without one)
    assert (legend.entrywidthmode, legend.entrywidth) == ("fraction", 1.0)


def test_pipeline_panels_stand_in_a_row_with_every_row_labelled_once_at_the_left():
    attention = decoder_attention(len(PIECES))
    fig = score_pipeline(attention, 0, 0)
    slides.add_caption(fig, CAPTION)
    panels = [t for t in fig.data if t.type == "heatmap" and t.coloraxis]
    assert [(t.xaxis, t.yaxis) for t in panels] == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    domains = [fig.layout[axis].domain for axis in ("xaxis", "xaxis2", "xaxis3")]
    assert all(left[1] < right[0] for left, right in pairwise(domains))  # side by side
    assert all(fig.layout[axis].domain == (0.0, 1.0) for axis in ("yaxis", "yaxis2", "yaxis3"))
    assert not fig.layout.yaxis2.showticklabels and not fig.layout.yaxis3.showticklabels
    queries = [plot_text(label) for label in attention.query_labels]
    assert list(fig.layout.yaxis.ticktext) == queries
    # room at the left for the longest row label, at presentation mode's size too
    longest = max(len(label) for label in attention.query_labels)
    assert fig.layout.margin.l >= PROJECTED_TICK_PX * CHARACTER_WIDTH * longest
    assert all(fig.layout[f"{letter}axis{n}"].automargin for letter in "xy" for n in ("", 2, 3))
    # on a 1280 x 720 slide the rows' labels fit their rows, one line each
    panel_height = slides.EXPORT_HEIGHT - fig.layout.margin.t - fig.layout.margin.b
    size = fig.layout.yaxis.tickfont.size
    assert panel_height / len(queries) >= size * LABEL_LINE
    assert size >= TICK_LABEL_MIN_PX
    # the key labels fit a panel at its narrowest on screen, upright, one line each
    key_axis = fig.layout.xaxis
    assert len(key_axis.tickvals) * key_axis.tickfont.size * LABEL_LINE <= PANEL_PX
    assert key_axis.tickangle == -90


def test_long_sentences_keep_every_kth_label_and_leave_small_cells_unwritten():
    short, long = decoder_attention(6), decoder_attention(48)
    fig = score_pipeline(long, 0, 0)
    overlays = [t for t in fig.data if t.type == "heatmap" and not t.coloraxis]
    assert all((np.asarray(t.text) == "").all() for t in overlays)  # grey alone, and the legend
    written = score_pipeline(short, 0, 0)
    short_overlays = [t for t in written.data if t.type == "heatmap" and not t.coloraxis]
    forbidden = np.isneginf(short.masked_scores[0, 0])
    texts = [set(np.asarray(t.text)[forbidden]) for t in short_overlays]
    assert texts == [{MINUS_INF}, {"0"}]
    cell_width = PANEL_PX / len(short.key_labels)
    assert all(t.textfont.size * MASKED_TEXT_EM <= cell_width for t in short_overlays)
    for axis, labels, room in (
        (fig.layout.xaxis, long.key_labels, PANEL_PX),
        (fig.layout.yaxis, long.query_labels, SLIDE_PANEL_PX),
    ):
        every = axis.tickvals[1] - axis.tickvals[0]
        assert every > 1 and list(axis.tickvals) == list(range(0, len(labels), every))
        assert list(axis.ticktext) == [plot_text(labels[i]) for i in axis.tickvals]
        assert len(axis.tickvals) * axis.tickfont.size * LABEL_LINE <= room


@pytest.mark.parametrize("layout", POSITIONAL_LAYOUTS)
@pytest.mark.parametrize("shared_scale", [True, False])
def test_embedding_sum_in_blocks_names_each_block_and_marks_the_boundary(shared_scale, layout):
    d_model, n_tokens = 16, 5
    rng = np.random.default_rng(0)
    token, position = rng.normal(size=(2, n_tokens, d_model))
    fig = embedding_sum(
        token, position, ["a"] * n_tokens, shared_scale=shared_scale, order="blocks", layout=layout
    )
    half = d_model // 2
    axes = [fig.layout[axis] for axis in ("xaxis", "xaxis2", "xaxis3")]
    for axis in axes:  # under the middle of each block, the block's name: no bare "0" and "1"
        assert list(axis.tickvals) == [(half - 1) / 2, half + (half - 1) / 2]
        assert not any(text.strip().isdigit() for text in axis.ticktext)
    token_axis, pe_axis, sum_axis = axes
    assert "sine" in pe_axis.title.text and "cosine" in pe_axis.title.text
    # each block named by its first two dimensions, which hold a sine, then a cosine
    for block, (name, function) in enumerate(zip(pe_axis.ticktext, ("sin", "cos"))):
        first, second = (int(d) for d in re.findall(r"\d+", name))
        assert name.startswith(f"{function}: ")
        assert {wave(d, d_model, layout).function for d in (first, second)} == {function}
        assert (first, second) == tuple(
            pe_dimension_order(d_model, "blocks", layout)[block * half : block * half + 2]
        )
    for axis in (token_axis, sum_axis):  # no sines or cosines in the embedding, nor in the sum
        named = " ".join([axis.title.text, *axis.ticktext])
        assert "sin" not in named and "cos" not in named
        assert list(axis.ticktext) == [name.split(": ")[1] for name in pe_axis.ticktext]
    lines = [(s.xref, s.x0, s.x1) for s in fig.layout.shapes]
    assert lines == [(x, half - 0.5, half - 0.5) for x in ("x", "x2", "x3")]


def chart_titles(at) -> list[str]:
    """The charts' titles as one line each (add_caption wraps them)."""
    return [spec["layout"]["title"]["text"].replace("<br>", " ") for spec in chart_specs(at)]


@pytest.mark.slow
def test_two_sentences_of_one_length_claim_no_padding(app):
    sentence = "The dog runs in the garden."
    same = app("masking", text=sentence, other=sentence)
    assert not same.exception
    padding = chart_titles(same)[1]
    assert "nothing is padded" in padding and "pad" not in padding.replace("padded", "")
    assert "nothing is padded" in same.info[0].value
    assert "<pad> queries" not in " ".join(caption.value for caption in same.caption)
    other = app("masking", text=sentence, other="A dog.")
    assert "&lt;pad&gt; columns are 0" in chart_titles(other)[1]
    assert not [info for info in other.info if "nothing is padded" in info.value]


@pytest.mark.slow
def test_a_named_head_brings_the_scores_to_weights_first_on_a_projector(app):
    """A deck's step (or a link) that names the head of "From scores to weights" shows that
    section first in presentation mode, so that a clicker's projector shows its figure; without a
    name, or off the projector, the page keeps its order."""
    sentence = "The dog runs in the garden."
    named = app("masking", text=sentence, present="true", mlayer="2", mhead="1")
    assert not named.exception
    assert "xaxis2" in chart_specs(named)[0]["layout"]  # the pipeline's panels, not one map
    assert named.header[0].value == "From scores to weights, for one head"
    for at in (
        app("masking", text=sentence, present="true"),
        app("masking", text=sentence, mlayer="2"),
    ):
        assert at.header[0].value == "Padding mask"
