"""Figures for slides: the caption every chart carries into its export, the export's size, the
attention as JSON, and the Heads lab's focus word and lines (issues #10 and #12)."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from app import slides
from app.figures.heads import LINE_MAX_WIDTH, attention_lines
from app.figures.heatmaps import heatmap
from app.figures.text import plot_text
from core.inspection.head_focus import rank_heads
from tests.app.apptest import chart_specs, plotted

ANIMAL = "The animal didn't cross the street because it was too tired."
CAPTION = slides.Caption(
    sentence="The <b>cat</b> sat.",
    translation="Die Katze saß.",
    target="de",
    model="en-de-fr",
    kind="cross",
    layer=5,
    head=3,
    training_step=12000,
)


def test_the_caption_names_the_sentence_translation_model_kind_layer_and_head():
    text = "\n".join(slides.caption_lines(CAPTION))
    for part in (
        "English: The <b>cat</b> sat.",
        "German: Die Katze saß.",
        "model en-de-fr",
        "Cross-attention",
        "layer 5",
        "head 3",
        "training step 12,000",
    ):
        assert part in text


def test_a_projectors_compact_caption_keeps_only_what_the_chart_shows():
    # the banner above every projected figure holds the sentence and its translation
    compact = slides.caption_lines(CAPTION, compact=True)
    assert compact == ["model en-de-fr · Cross-attention · layer 5 · head 3 · training step 12,000"]
    assert slides.caption_lines(CAPTION)[-len(compact) :] == compact
    average = slides.caption_lines(slides.Caption("a", "b", "fr", "m", head="avg"))
    assert average == ["English: a", "French: b", "model m · average of the heads"]


def test_the_caption_names_the_heads_changed_and_a_sample_instead_of_the_sentence():
    caption = slides.Caption(
        "a",
        "b",
        "de",
        "m",
        heads_changed=("enc L1 H1", "cross L2 H4"),
        change="switched off (output 0)",
        computed_on="200 validation sentences",
    )
    assert " ".join(slides.caption_lines(caption)[2:]) == (
        "model m · heads switched off (output 0): enc L1 H1, cross L2 H4 · "
        "computed on 200 validation sentences"
    )


def test_a_long_caption_wraps_and_keeps_every_word():
    sentence = " ".join(["antidisestablishmentarianism"] * 12)
    lines = slides.caption_lines(slides.Caption(sentence, "x", "de", "m"))
    assert len(lines) > 3 and all(len(line) <= slides.CAPTION_CHARS for line in lines)
    assert " ".join(lines).count("antidisestablishmentarianism") == 12


def test_the_caption_is_drawn_in_the_figure_escaped_and_the_plot_keeps_its_size():
    fig = heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title="Map")
    height, top = fig.layout.height, fig.layout.margin.t
    slides.add_caption(fig, CAPTION)
    lines = slides.caption_lines(CAPTION)
    extra = len(lines) * slides.CAPTION_LINE_PX + slides.CAPTION_GAP_PX
    assert fig.layout.title.text == "Map"
    assert fig.layout.title.subtitle.text == "<br>".join(plot_text(x) for x in lines)
    assert "&lt;b&gt;cat&lt;/b&gt;" in fig.layout.title.subtitle.text  # shown literally
    assert (fig.layout.height, fig.layout.margin.t) == (height + extra, top + extra)


def test_the_caption_keeps_what_else_the_figures_title_has():
    """add_caption sets the title whole (a tenth of the time of update_layout's merge): the
    figure's own title font and place stay; a figure of plotly's default height grows from it."""
    fig = go.Figure(layout={"title": {"text": "Map", "font": {"size": 20}, "x": 0.1}})
    slides.add_caption(fig, CAPTION)
    title = fig.layout.title
    assert (title.text, title.font.size, title.x) == ("Map", 20, 0.1)
    assert title.subtitle.text and title.yanchor == "top"
    extra = len(slides.caption_lines(CAPTION)) * slides.CAPTION_LINE_PX + slides.CAPTION_GAP_PX
    assert fig.layout.height == slides.DEFAULT_HEIGHT + extra and fig.layout.margin.t is None


def test_a_long_title_wraps_between_words_below_the_top_and_the_plot_keeps_its_size():
    title = "Encoder self-attention: Confidence: mean top weight, </s> excluded (Voita et al. 2019)"
    fig = heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title=title)
    height, top = fig.layout.height, fig.layout.margin.t
    slides.add_caption(fig, CAPTION)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) == 2 and all(len(line) <= slides.TITLE_CHARS for line in lines)
    assert " ".join(lines) == plot_text(title)  # every word, the markup whole
    shift = 38  # (1.3 + 1.05) em of 16 px: plotly draws a two-line title that much higher
    assert fig.layout.title.pad.t == slides.TITLE_PAD_PX + shift
    caption = len(slides.caption_lines(CAPTION)) * slides.CAPTION_LINE_PX + slides.CAPTION_GAP_PX
    extra = caption + slides.TITLE_LINE_PX + shift
    assert (fig.layout.height, fig.layout.margin.t) == (height + extra, top + extra)


def test_the_export_is_a_projector_sized_image():
    options = slides.export_options("attention-head", "png")
    width = options["width"] * options["scale"]
    height = options["height"] * options["scale"]
    assert (width, height) == (1920, 1080)
    assert options["filename"] == "attention-lab-attention-head"
    button = slides.export_button("pair first", "svg")
    assert 'data-chart="chart-pair-first"' in button and "Figure for slides (SVG)" in button


@pytest.mark.parametrize("unit", ["attention", "word_attention"])
def test_the_attention_json_round_trips_to_the_same_matrix_labels_and_caption(translator, unit):
    result = translator.translate(ANIMAL, "de", 2, trace=True)
    attention = getattr(result, unit).cross
    caption = slides.Caption(
        ANIMAL, result.text, "de", "tiny", "cross", 2, 1, heads_changed=("enc L1 H2",)
    )
    text = slides.attention_json(attention, caption)
    document = json.loads(text)
    assert document["weights"][1][0] == attention.weights[1, 0].tolist()  # nested lists
    back, back_caption = slides.read_attention_json(text)
    assert back.weights.dtype == attention.weights.dtype
    np.testing.assert_array_equal(back.weights, attention.weights)
    assert back.query_labels == attention.query_labels
    assert back.key_labels == attention.key_labels
    assert back_caption == caption


def test_reading_another_json_file_says_what_it_is_not():
    with pytest.raises(ValueError, match="not an Attention Lab attention file"):
        slides.read_attention_json('{"weights": []}')


def test_the_lines_of_the_focus_view_carry_the_heads_attention_row(translator):
    encoder = translator.translate(ANIMAL, "de", 2, trace=True).word_attention.encoder
    query, layer, head = encoder.query_labels.index("it"), 1, 2
    fig = attention_lines(encoder, layer, head, query, "title")
    lines = [trace for trace in fig.data if trace.mode == "lines"]
    row = encoder.weights[layer, head, query]
    assert len(lines) == len(encoder.key_labels)
    widths = np.array([line.line.width for line in lines]) / LINE_MAX_WIDTH
    np.testing.assert_allclose(widths, row, rtol=1e-6)
    np.testing.assert_allclose([line.opacity for line in lines], row, rtol=1e-6)
    np.testing.assert_allclose([line.customdata[0][1] for line in lines], row, rtol=1e-6)
    assert [tuple(line.y) for line in lines] == [(query, key) for key in range(len(row))]
    assert list(fig.data[1].text) == [plot_text(k) for k in encoder.key_labels]


@pytest.mark.slow
def test_the_attention_page_captions_its_charts_and_offers_the_json(app, translator):
    at = app("attention", kind="cross", layer="2", head="1")
    assert not at.exception, [e.message for e in at.exception]
    translation = translator.translate(ANIMAL, "de", 4, 0.6).text.strip()  # wrapping strips
    spec = chart_specs(at)[0]
    subtitle = spec["layout"]["title"]["subtitle"]["text"]
    for part in (ANIMAL, translation, "model tiny-random", "Cross-attention", "layer 2", "head 1"):
        assert plot_text(part) in subtitle.replace("<br>", " ")
    chart = at.get("plotly_chart")[0].proto
    assert json.loads(chart.config)["toImageButtonOptions"] == slides.export_options(
        "attention-head", "png"
    )
    assert any("Figure for slides" in html.proto.body for html in at.get("html"))
    assert any("JSON" in button.proto.label for button in at.get("download_button"))


@pytest.mark.slow
def test_the_heads_lab_keeps_the_word_looked_at_in_the_url(app, translator):
    """Bound widgets are written to the URL by the browser (the Chromium tests); here a link with
    both words opens the page on them, and the word looked at is bound to ``at_word``."""
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    it, animal = words.query_labels.index("it"), words.key_labels.index("animal")
    shared = app("head_lab", focus="it", at_word="animal")
    assert not shared.exception, [e.message for e in shared.exception]
    assert shared.selectbox(key="at_word").value == animal
    assert shared.selectbox(key="focus").value == it
    assert shared.selectbox(key="at_word").proto.query_param_key == "at_word"
    best = rank_heads(words, it, animal)[0]
    lines = [t for t in chart_specs(shared)[1]["data"] if t["mode"] == "lines"]
    drawn = [plotted(line["customdata"])[0][1] for line in lines]
    np.testing.assert_allclose(drawn, words.weights[best.layer, best.head, it], rtol=1e-6)
    subtitle = chart_specs(shared)[1]["layout"]["title"]["subtitle"]["text"]
    assert f"layer {best.layer + 1} · head {best.head + 1} · word “it”" in subtitle


@pytest.mark.slow
def test_a_word_of_another_sentence_in_the_link_falls_back_to_the_top_word(app):
    at = app("head_lab", at_word="zebra")
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="at_word").value is None


def test_the_captions_details_wrap_between_details_not_inside_one():
    # wrapped by words, this line ended in "search step" with "5" alone on the next
    caption = slides.Caption("a", "b", "de", "mmmm", "cross", 2, "avg", search_step=5)
    details = slides.caption_lines(caption)[2:]
    assert details == [
        "model mmmm · Cross-attention · layer 2 · average of the heads ·",
        "search step 5",
    ]


def test_wide_characters_take_two_columns_of_a_caption_line():
    chinese = "动物没有过马路因为它太累了" * 4  # 52 characters, 156 columns
    lines = slides.caption_lines(slides.Caption(chinese, "Das Tier \ufffd\ufffd\ufffd", "de", "m"))
    assert all(slides.columns(line) <= slides.CAPTION_CHARS for line in lines)
    assert lines[0] == "English:" and "".join(lines[1:4]) == chinese  # broken inside, all kept
    assert slides.columns("\ufffd\ufffd a") == 2 * slides.WIDE_COLUMNS + 2
