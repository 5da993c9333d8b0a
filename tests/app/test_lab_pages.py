"""The Heads lab, Explain and Compare pages as a reader sees them: captions name the sentence a
chart is about, axes say what the bars are, the chosen word survives a change of kind, steps count
from 0, and scales do not exaggerate."""

import html
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import slides
from app.display import SENTENCEPIECE_WORD_START, piece_text
from app.figures.explain import difference_map
from app.figures.heads import focus_bars, head_dashboard
from core.decoding.search import first_divergence
from core.inspection.ablation import all_heads
from core.inspection.attribution import contrast, lenses
from core.inspection.head_focus import rank_heads
from core.inspection.head_statistics import statistics_per_head
from tests.app.apptest import MAIN, chart_specs
from tests.app.test_app import assert_fine, texts
from tests.app.test_head_lab import surveyed_model_dir  # noqa: F401 (a fixture)

TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
PLOTLY_DEFAULT_MARGIN_PX = 80  # a margin the figure leaves unset
LINE_HEIGHT = 1.3  # of the font size: a line of plotly text


def by_key(at) -> dict[str, dict]:
    """The page's charts by their name (ui.chart's ``name``)."""
    return {key.removeprefix("chart-"): spec for key, spec in zip(keys(at), chart_specs(at))}


def keys(at) -> list[str]:
    return [chart.key for chart in at.get("plotly_chart")]


def caption_text(spec: dict) -> str:
    """A chart's caption as plain text, its wrapped lines joined again (runs of spaces as one)."""
    return squeezed(html.unescape(spec["layout"]["title"]["subtitle"]["text"].replace("<br>", " ")))


def squeezed(text: str) -> str:
    return " ".join(text.split())


def selected(at, key: str) -> str:
    """What a selectbox shows."""
    box = at.selectbox(key=key)
    return box.format_func(box.value)


# Explain


@pytest.fixture(scope="module")
def pair(translator):
    return [translator.translate(text, "de", 4, 0.6, trace=True) for text in (TIRED, WIDE)]


@pytest.mark.slow
def test_each_chart_of_a_minimal_pair_is_captioned_with_its_own_sentence(app, pair):
    at = app("explain", text=TIRED, pair=WIDE)
    assert_fine(at)
    charts = by_key(at)
    first, second = (caption_text(charts[f"pair-{name}"]) for name in ("first", "second"))
    tired, wide = (squeezed(translation.text) for translation in pair)
    assert f"English: {TIRED} German: {tired}" in first
    assert f"English: {WIDE} German: {wide}" in second and TIRED not in second
    both = caption_text(charts["pair-difference"])
    assert f"English: first: {TIRED} / second: {WIDE}" in both
    assert squeezed(f"German: first: {tired} / second: {wide}") in both


@pytest.mark.slow
def test_the_bars_of_the_word_to_follow_are_named_attention_weights(app):
    at = app("explain", text=TIRED, pair=WIDE)
    assert_fine(at)
    for name in ("first", "second"):
        assert by_key(at)[f"pair-{name}"]["layout"]["xaxis"]["title"]["text"] == "attention weight"


def test_the_difference_is_drawn_on_the_scale_of_the_weights():
    first, second = np.array([0.23, 0.5, 0.27]), np.array([0.21, 0.5, 0.29])
    fig = difference_map(first, second, ["a", "b", "c"], ("one", "two"), "title")
    difference = fig.data[1]
    np.testing.assert_allclose(difference.z[0], second - first)
    assert (difference.zmin, difference.zmax) == (-0.5, 0.5)  # not ±0.02: a small change
    assert "±0.50" in difference.colorbar.title.text


@pytest.mark.slow
def test_integrated_gradients_are_shown_beside_the_change_they_should_sum_to(app, translator, pair):
    at = app("explain", text=TIRED)
    assert_fine(at)
    position = at.selectbox(key="word").value
    found = lenses(translator.model, pair[0], position)
    attributed = found.values["integrated gradients"].sum()
    change = f"log p changes by {attributed - found.ig_delta:+.4f} from that baseline"
    assert change in texts(at)
    assert f"attributions sum to {attributed:+.4f}" in texts(at)
    foil = at.selectbox(key="foil").value
    contrasted = contrast(translator.model, pair[0], position, foil)
    total = contrasted.values.sum()
    assert f"It changes by {total - contrasted.delta:+.4f} from the zero embedding" in texts(at)


# Heads lab


@pytest.mark.slow
def test_the_focus_bars_say_what_their_weight_is_and_name_the_key_once(app, translator):
    at = app("head_lab", text=TIRED, kind="cross", at_word="animal")
    assert_fine(at)
    focus = by_key(at)["focus"]
    assert focus["layout"]["xaxis"]["title"]["text"] == "weight on “animal”"
    cross = translator.translate(TIRED, "de", 4, 0.6, trace=True).word_attention.cross
    query = at.selectbox(key="focus").value
    top = rank_heads(cross, query, cross.key_labels.index("animal"))[:10]
    expected = [f"L{f.layer + 1} H{f.head + 1} on “animal”" for f in top]
    assert list(focus["data"][0]["y"]) == expected
    at.selectbox(key="at_word").set_value(None).run()
    assert by_key(at)["focus"]["layout"]["xaxis"]["title"]["text"] == "weight on the top key"


def test_the_focus_bars_axis_title_is_shown_literally():
    fig = focus_bars(["L1 H1"], [0.5], "title", "weight on “</s>”")
    assert fig.layout.xaxis.title.text == "weight on “&lt;/s&gt;”"


@pytest.mark.slow
@pytest.mark.parametrize("text, word", [(TIRED, "it"), ("A man is riding a bicycle.", "A")])
def test_the_word_that_attends_starts_on_it_or_the_first_real_word(app, text, word):
    at = app("head_lab", text=text)
    assert_fine(at)
    assert selected(at, "focus") == word  # not the language tag


@pytest.mark.slow
def test_a_word_picked_follows_a_change_of_kind_and_the_url_says_what_is_shown(app):
    at = app("head_lab", text=TIRED, focus="didn't", at_word="animal")
    assert_fine(at)

    def shown_as_in_the_url(default: str) -> str:
        shown = selected(at, "focus")
        assert at.query_params.get("focus", default) == shown
        return shown

    assert shown_as_in_the_url("it") == "didn't"
    at.segmented_control(key="kind").set_value("cross").run()  # no "didn't" among its rows
    rows = at.selectbox(key="focus").options
    assert shown_as_in_the_url(rows[0]) == rows[0]
    assert "No “didn't” attends in cross-attention" in texts(at)
    assert selected(at, "at_word") == "animal"  # the same source words
    at.segmented_control(key="kind").set_value("decoder").run()  # the same rows
    assert selected(at, "focus") == rows[0]
    assert selected(at, "at_word") == "its top word, whichever it is"  # German words only
    assert "No “animal” to look at in decoder masked self-attention" in texts(at)

    start = app("head_lab", text=TIRED)  # on "it", the word the page starts from
    start.segmented_control(key="kind").set_value("cross").run()
    assert "No “it” attends in cross-attention" in texts(start)

    link = app("head_lab", text=TIRED, kind="cross", focus=rows[2])  # a row the user picked
    link.segmented_control(key="kind").set_value("decoder").run()
    assert selected(link, "focus") == rows[2]
    link.segmented_control(key="kind").set_value("encoder").run()
    assert selected(link, "focus") == "it" and link.query_params.get("focus", "it") == "it"
    assert f"No “{rows[2]}” attends in encoder self-attention" in texts(link)


def test_the_dashboard_gives_every_cell_its_two_lines():
    values = np.random.default_rng(0).random((6, 8))
    fig = head_dashboard(values, ["alignment-like"] * 48, "title", "diagonality")
    margins = [fig.layout.margin[side] for side in ("t", "b")]
    plot = fig.layout.height - sum(PLOTLY_DEFAULT_MARGIN_PX if m is None else m for m in margins)
    assert plot / 6 >= 2 * LINE_HEIGHT * fig.data[0].textfont.size


@pytest.mark.slow
def test_the_dashboard_titles_fit_one_line(app, translator):
    at = app("head_lab", text=TIRED, kind="decoder")  # the longest kind's name
    decoder = translator.translate(TIRED, "de", 4, 0.6, trace=True).attention.decoder
    statistics = statistics_per_head(decoder.weights, decoder.key_labels, self_attention=True)
    picker = at.segmented_control(key="stat")
    offered = [name for name in statistics if picker.format_func(name) in picker.options]
    assert len(offered) == len(picker.options)
    for statistic in offered:
        at.segmented_control(key="stat").set_value(statistic).run()
        assert_fine(at)
        (dashboard,) = [s for k, s in by_key(at).items() if k.startswith("heads-")]
        assert "<br>" not in dashboard["layout"]["title"]["text"], statistic
    (button,) = [b for b in at.button if b.label.startswith("Compute head importance")]
    button.click().run()
    importance = by_key(at)["importance-decoder-sentence"]["layout"]["title"]["text"]
    assert "<br>" not in importance and len(importance) <= slides.TITLE_CHARS


@pytest.mark.slow
def test_the_pruning_heading_is_about_this_model(
    surveyed_model_dir,  # noqa: F811 (the fixture imported above)
    monkeypatch,
    translator,
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(surveyed_model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["text"] = TIRED
    at.switch_page("views/head_lab.py").run()
    assert_fine(at)
    heads = len(all_heads(translator))
    heading = f"Does this model need all its {heads} heads? The pruning curve"
    assert heading in [header.value for header in at.header]
    assert "Are Sixteen Heads Really Better than One?" in texts(at)  # the citation stays


@pytest.mark.slow
def test_the_intervention_chart_says_its_rows_are_pieces(app):
    at = app("head_lab", text=TIRED)
    at.multiselect(key="off").set_value(["enc L1 H1"]).run()
    assert_fine(at)
    title = by_key(at)["intervention-tokens"]["layout"]["title"]["text"]
    assert title.startswith("What each piece of the normal translation loses")


# Compare


@pytest.mark.slow
def test_greedy_and_beam_search_count_steps_from_0_and_draw_word_starts_as_dots(app, translator):
    text = "A man is riding a bicycle."
    at = app("compare", text=text, beam="3", alpha="1.0")
    assert_fine(at)
    greedy, beam = (translator.translate(text, "de", size, 1.0) for size in (1, 3))
    apart = first_divergence(greedy.output_tokens, beam.output_tokens)
    written = [piece_text(output.output_tokens[apart]) for output in (greedy, beam)]
    assert (
        f"at step {apart} (steps count from 0) greedy search writes “{written[0]}” and beam "
        f"search “{written[1]}”"
    ) in texts(at)
    assert SENTENCEPIECE_WORD_START not in texts(at)
    steps = at.dataframe[1].value["step"]
    assert list(steps) == list(range(max(len(greedy.output_tokens), len(beam.output_tokens))))
    assert not at.dataframe[1].value["same"][apart]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "choice", "other"),
    [("de", "German must choose between *es*", "French"), ("fr", "French must choose", "German")],
)
def test_explain_speaks_of_the_target_language_and_gives_log_p_in_nats(app, target, choice, other):
    at = app("explain", text=TIRED, to=target)
    assert_fine(at)
    said = texts(at)
    assert choice in said
    assert f"{other} must choose" not in said
    assert re.search(r"log p\(“[^”]+”\) = -?\d+\.\d{3} nats \(natural log\)", said)
