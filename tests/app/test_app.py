"""The Streamlit app through streamlit.testing: every page opens, follows the sidebar and its own
controls, keeps its state in the URL, and answers bad input with a message, never a traceback."""

import base64
import gc
import itertools
import json
import re
import shutil
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from app import page_settings, presentation, state
from app.analysis import MAX_CHARS
from app.display import SENTENCEPIECE_WORD_START, WORD_START, piece_text
from app.figures.text import plot_text
from core.errors import InputError
from core.files.model_dir import ModelDir
from core.inspection.head_focus import rank_heads
from core.text.truecase import Truecaser
from core.translator import DEFAULT_MODEL
from tests.app.apptest import MAIN
from tests.app.apptest import chart_specs as charts

PAGES = list(page_settings.PAGES)  # every page, by its file under app/views/


def test_the_sidebar_lists_every_page_once_in_sections():
    """app/page_settings.py lists the pages in sections of the sidebar: every view is in one of
    them, once, and these tests open every one."""
    sections = page_settings.SECTIONS.values()
    assert all(len(pages) > 1 for pages in sections)
    listed = sorted(f"{name}.py" for pages in sections for name in pages)
    views = sorted(path.name for path in (Path(MAIN).parent / "views").glob("*.py"))
    assert listed == views and sorted(f"{page}.py" for page in PAGES) == views


def titles(at: AppTest) -> list[str]:
    return [(c["layout"].get("title") or {}).get("text", "") for c in charts(at)]


def texts(at: AppTest) -> str:
    """Everything the page says in messages, markdown, captions, code and text."""
    kinds = ("markdown", "caption", "code", "text", "info", "warning", "error", "title")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def assert_fine(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_with_charts(app, page):
    at = app(page)
    assert_fine(at)
    assert at.title[0].value
    # the tiny model has no training log and no snapshots (tests/core/test_snapshots.py has them)
    assert charts(at) or page in ("model", "training")
    assert not [cell for cell in text_cells(at) if SENTENCEPIECE_WORD_START in cell]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_an_open_tab_keeps_none_of_its_page_alive(history_dir, monkeypatch, page):
    """After a run, nothing of the page may stay reachable from the session (a widget's
    callback, format function or fragment defined by the page would keep its analysis, views
    and figures alive, outside every cache's bound, while the tab is open: app/ui.py's
    step_through). The model with snapshots, so that the Training dynamics page runs in full."""
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.switch_page(f"views/{page}.py")
    assert_fine(at.run())
    gc.collect()
    page_file = f"views/{page}.py"
    alive = [
        namespace
        for namespace in gc.get_objects()
        if isinstance(namespace, dict) and str(namespace.get("__file__", "")).endswith(page_file)
    ]
    assert not alive, f"{page_file} stays alive with its session"


@pytest.mark.slow
def test_typing_a_sentence_translates_it(app, translator):
    text = "The happy child reads a book."
    at = app()
    at.text_area(key="text").set_value(text).run()
    assert_fine(at)
    assert at.code[0].value == translator.translate(text, "de", 4, 0.6).text
    ids = translator.tokenizer.encode_source(text, "de")
    pieces = f"{sum(not translator.tokenizer.is_special(i) for i in ids)} source pieces"
    assert any(pieces in caption.value for caption in at.caption)  # below the banner's
    assert text in [element.value for element in at.text]  # the banner: English on this page too


@pytest.mark.slow
def test_a_text_of_several_sentences_is_translated_one_sentence_at_a_time(app, translator):
    text = "The child reads a book. The dog sleeps.\n\nIt is late."
    at = app(text=text)
    assert_fine(at)
    subheaders = [header.value for header in at.subheader]
    assert subheaders[:2] == [
        "German, sentence by sentence",
        "German, the whole text as one sequence",
    ]
    first, second, third = (
        translator.translate(sentence, "de", 4, 0.6).text
        for sentence in ("The child reads a book.", "The dog sleeps.", "It is late.")
    )
    assert at.code[0].value == f"{first} {second}\n\n{third}"
    assert at.code[1].value == translator.translate(text, "de", 4, 0.6).text  # what pages show
    assert "all 3 as one sequence" in " ".join(caption.value for caption in at.caption)


@pytest.mark.slow
def test_a_sentence_longer_than_the_model_reads_is_named(app, translator):
    long = " ".join(["The dog"] + ["and the cat"] * translator.max_source_tokens) + "."
    at = app(text=f"A short one. {long} Another short one.")
    assert_fine(at)
    assert any(warning.value.startswith("Sentence 2 is longer than") for warning in at.warning), [
        warning.value for warning in at.warning
    ]


@pytest.mark.slow
def test_one_sentence_is_not_cut(app):
    at = app(text="Dr. Smith reads a book.")
    assert_fine(at)
    assert [header.value for header in at.subheader][:1] == ["German"]


@pytest.mark.slow
def test_examples_are_one_click_away(app):
    at = app()
    at.button_group(key="example").set_value("I am very hungry.").run()
    assert_fine(at)
    assert at.text_area(key="text").value == "I am very hungry."


@pytest.mark.slow
def test_target_language_reaches_the_model(app):
    at = app("tokenization")
    assert at.dataframe[0].value["piece"][0] == "<2de>"
    at.button_group(key="to").set_value("fr").run()
    assert_fine(at)
    assert at.dataframe[0].value["piece"][0] == "<2fr>"


@pytest.mark.slow
def test_tokenization_says_when_the_english_is_truecased(
    app, tiny_model_dir, tmp_path, monkeypatch
):
    assert "truecased" not in texts(app("tokenization"))
    truecasing = tmp_path / "truecasing"
    shutil.copytree(tiny_model_dir, truecasing)
    Truecaser.learn(["I see the dog."], ModelDir(truecasing).truecase_file)
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(truecasing))
    at = app("tokenization", text="The dog.")
    assert_fine(at)
    assert "truecased" in texts(at)
    source = "".join(at.dataframe[0].value["piece"][1:-1])  # between <2de> and </s>
    assert source.replace(WORD_START, " ").strip() == "the dog."


@pytest.mark.slow
def test_tokenization_explains_a_split_french_elision_where_the_output_has_one(app, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL))
    french = app("tokenization", text="The animal is tired.", to="fr")
    assert_fine(french)
    output = [piece_text(piece) for piece in french.dataframe[1].value["piece"]]
    assert output[1:3] == ["'", f"{WORD_START}animal"]  # ▁L ' ▁animal: the word's usual piece
    assert "French elision" in texts(french)
    german = app("tokenization", text="The animal is tired.", to="de")
    assert_fine(german)
    assert "French elision" not in texts(german)


def text_cells(at: AppTest) -> list[str]:
    """Every text cell of every table on the page."""
    return [
        cell
        for frame in at.dataframe
        for column in frame.value.columns
        for cell in frame.value[column]
        if isinstance(cell, str)
    ]


@pytest.mark.slow
def test_tables_show_word_starts_as_the_figures_do(app, translator):
    at = app("tokenization")
    source = translator.translate(state.DEFAULTS.text).source_tokens
    assert any(piece.startswith(SENTENCEPIECE_WORD_START) for piece in source)
    assert list(at.dataframe[0].value["piece"]) == [piece_text(piece) for piece in source]
    assert piece_text("▁The") == f"{WORD_START}The" == plot_text("▁The")  # one rule for both


@pytest.mark.slow
def test_reference_translation_is_scored(app):
    at = app()
    at.text_area(key="ref").set_value("Der Hund läuft weg.").run()
    assert_fine(at)
    assert [m.label for m in at.metric] == ["BLEU", "chrF"]


@pytest.mark.slow
def test_attention_layer_head_and_kind(app):
    at = app("attention")
    assert "Encoder self-attention, layer 2, head 1" in titles(at)
    at.button_group(key="layer").set_value("1").run()
    at.button_group(key="head").set_value("3").run()
    assert "Encoder self-attention, layer 1, head 3" in titles(at)
    at.button_group(key="kind").set_value("cross").run()
    at.button_group(key="head").set_value("avg").run()
    assert_fine(at)
    assert "Cross-attention, layer 1, average of the heads" in titles(at)
    at.toggle(key="words").set_value(True).run()
    assert_fine(at)


@pytest.mark.slow
def test_attention_view_comes_from_the_url(app):
    # the URL holds option codes (?to=fr&kind=decoder), not the labels shown
    at = app("attention", kind="decoder", layer="1", head="4", to="fr")
    assert_fine(at)
    assert "Decoder masked self-attention, layer 1, head 4" in titles(at)
    assert at.button_group(key="to").value == "fr"
    at.button_group(key="kind").set_value("cross").run()
    assert at.query_params["kind"] == "cross" and at.query_params["to"] == "fr"
    at.button_group(key="to").set_value("de").run()  # the default leaves the URL
    assert "to" not in at.query_params


@pytest.mark.slow
def test_a_mistyped_link_falls_back_to_the_defaults(app):
    at = app("attention", kind="Cross-attention", to="French", layer="99")
    assert_fine(at)
    assert at.button_group(key="to").value == "de"
    assert "Encoder self-attention, layer 2, head 1" in titles(at)


@pytest.mark.slow
def test_translate_and_attention_pages_draw_the_same_alignment(app):
    """The same sentence shows the same matrix with the same labels on both pages."""
    alignment = charts(app())[0]
    attention = charts(app("attention", kind="cross", head="avg", words="true"))[0]
    assert alignment["data"][0]["z"] == attention["data"][0]["z"]
    for axis in ("xaxis", "yaxis"):
        assert alignment["layout"][axis]["ticktext"] == attention["layout"][axis]["ticktext"]
    rows = alignment["layout"]["yaxis"]["ticktext"]
    assert rows[0].startswith("&lt;s&gt; → ") and all(" → " in row for row in rows)
    caption = "the last row predicts `</s>`"
    assert caption in texts(app()) and caption in texts(app("attention", kind="cross"))


def array(value) -> np.ndarray:
    """A plotly JSON array: a list, or plotly's typed array {dtype, bdata, shape}."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return flat.reshape([int(size) for size in str(value.get("shape", len(flat))).split(",")])
    return np.asarray(value)


def click_point(at: AppTest, key: str, trace: int, index: int) -> AppTest:
    """Click point ``index`` of trace ``trace`` of the plotly chart drawn with ``key``, as the
    browser reports it: AppTest has no plotly widget, so this sends the selection event (the
    JSON Streamlit's frontend sends, with the point's x, y and customdata) as that chart's widget
    state next to every other widget's, then reruns, which calls the chart's on_select."""
    (chart,) = [chart for chart in at.get("plotly_chart") if chart.key == key]
    data = json.loads(chart.proto.spec)["data"][trace]
    point = {"curve_number": trace, "point_number": index, "point_index": index}
    point |= {name: array(data[name])[index].tolist() for name in ("x", "y", "customdata")}
    event = {"selection": {"points": [point], "point_indices": [index], "box": [], "lasso": []}}
    states = at._tree.get_widget_states()  # what at.run() sends, plus the click
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    return at._run(states)


@pytest.mark.slow
def test_model_view_draws_every_head_in_one_chart(app):
    at = app("attention", view="All layers and heads")
    assert_fine(at)
    grid = charts(at)[0]
    assert grid["data"][0]["type"] == "heatmap" and grid["data"][1]["type"] == "scatter"
    assert titles(at)[1] == "Encoder self-attention, layer 2, head 1"  # the page's head, large


@pytest.mark.slow
def test_clicking_a_grid_tile_opens_that_head_large(app, translator):
    at = app("attention", view="All layers and heads", kind="cross")
    markers = charts(at)[0]["data"][1]
    index = [tuple(tile) for tile in array(markers["customdata"]).tolist()].index((1, 3))
    click_point(at, "chart-attention-grid", 1, index)
    assert_fine(at)
    expected = translator.translate(state.DEFAULTS.text, trace=True).attention.cross
    for _ in range(2):  # the zoomed head survives a rerun
        grid, zoom = charts(at)
        assert titles(at)[1] == "Cross-attention, layer 1, head 3"
        np.testing.assert_array_equal(array(zoom["data"][0]["z"]), expected.weights[0, 2])
        for axis, labels in (("yaxis", expected.query_labels), ("xaxis", expected.key_labels)):
            assert zoom["layout"][axis]["ticktext"] == [plot_text(label) for label in labels]
        assert [shape["name"] for shape in grid["layout"]["shapes"]] == ["zoomed"]
        assert (at.query_params["layer"], at.query_params["head"]) == ("1", "3")  # in the URL
        at.run()
    link = {name: value for name, value in at.query_params.items() if name != "view"}
    assert titles(app("attention", **link)) == ["Cross-attention, layer 1, head 3"]  # One head


@pytest.mark.slow
def test_the_word_to_follow_names_its_position_and_round_trips_through_the_url(app, translator):
    first, second = "The dog saw the cat near the tree.", "The dog saw the cat near the trees."
    at = app("explain", text=first, pair=second)
    assert_fine(at)
    options = at.selectbox(key="follow").options
    assert len(options) == len(set(options))  # "the" twice, told apart
    encoder = [
        translator.translate(text, trace=True).word_attention.encoder for text in (first, second)
    ]
    the = [i for i, word in enumerate(encoder[0].query_labels) if word == "the"]
    assert len(the) == 2 and {f"{i}: the" for i in the} <= set(options)
    second_the = options.index(f"{the[1]}: the")
    at.selectbox(key="follow").set_value(second_the).run()
    assert_fine(at)
    best = rank_heads(encoder[0], the[1], skip_self=True)[0]
    drawn = {chart.key: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}
    for name, attention in zip(("first", "second"), encoder):
        row = attention.query_labels.index("the", the[0] + 1)  # the second "the" of each
        expected = attention.weights[best.layer, best.head, row]
        np.testing.assert_allclose(array(drawn[f"chart-pair-{name}"]["data"][0]["x"]), expected)
    link = app("explain", text=first, pair=second, follow=f"{the[1]}: the")  # the URL holds it
    assert link.selectbox(key="follow").value == second_the  # (Chromium: test_browser_explain)


@pytest.mark.slow
def test_beam_search_steps(app):
    at = app("beam_search", beam="3")
    assert at.slider(key="step").value == 0
    at.button(key="next").click().run()
    at.button(key="next").click().run()
    assert at.slider(key="step").value == 2
    at.button(key="previous").click().run()
    assert at.slider(key="step").value == 1
    at.slider(key="step").set_value(4).run()
    assert_fine(at)
    assert "Step 4: the candidates" in [s.value for s in at.subheader]
    shade = charts(at)[0]["layout"]["shapes"][0]  # the tree's shaded column: the same number
    assert (shade["x0"] + shade["x1"]) / 2 == at.slider(key="step").value == 4
    assert "The shaded column is step 4." in texts(at)
    at.button_group(key="xhead").set_value("2").run()
    at.button_group(key="xlayer").set_value("1").run()
    assert_fine(at)


@pytest.mark.slow
def test_beam_search_explains_itself_in_text(app, translator):
    at = app("beam_search", beam="8", step="2")
    assert_fine(at)
    # a large beam: the bars are capped per beam, and the page says so
    assert "the 4 most probable candidates of each beam (of the 16 the search traced)" in texts(at)
    bars = charts(at)[1]
    assert sum(len(trace["x"]) for trace in bars["data"]) <= 40
    assert len(at.dataframe[0].value) > 40  # the table keeps them all
    # every reason is explained in a legend
    meanings = at.table[0].value
    assert "not among the 8 best" in meanings.index and "below the best overall" in meanings.index
    # hypotheses as text: the re-rank table's first row is the translation itself
    ranking = at.dataframe[-1].value
    text = state.DEFAULTS.text
    assert ranking["hypothesis"][0] == translator.translate(text, "de", 8, 0.6).text
    legend = [trace["name"] for trace in charts(at)[-1]["data"]]
    assert any(name.startswith(ranking["hypothesis"][0][:20]) for name in legend)


@pytest.mark.slow
def test_switching_layer_head_step_and_page_never_reruns_the_model(app, monkeypatch):
    calls = []
    analyse = state.analyse
    monkeypatch.setattr(state, "analyse", lambda *args: calls.append(args) or analyse(*args))
    at = app("attention", text="A sentence of its own, for counting.")
    at.button_group(key="layer").set_value("1").run()
    at.button_group(key="head").set_value("avg").run()
    at.button_group(key="kind").set_value("decoder").run()
    at.switch_page("views/beam_search.py").run()
    at.button(key="next").click().run()
    at.switch_page("views/masking.py").run()
    assert_fine(at)
    assert len(calls) == 1
    at.slider(key="beam").set_value(2).run()  # new beam settings: a new analysis
    assert len(calls) == 2


@pytest.mark.slow
def test_beam_size_one_is_greedy_and_length_penalty_reranks(app):
    at = app("beam_search", beam="1")
    assert "greedy" in at.info[0].value
    at.slider(key="alpha").set_value(1.5).run()
    assert_fine(at)
    ranking = at.dataframe[-1].value
    assert ranking["chosen"][0] and ranking["rank"][0] == 1


@pytest.mark.slow
def test_step_beyond_a_shorter_search_is_clamped(app):
    at = app("beam_search", beam="2")
    last = at.slider(key="step").max
    at.slider(key="step").set_value(last).run()
    at.button_group(key="example").set_value("I am very hungry.").run()
    assert_fine(at)
    assert at.slider(key="step").value <= at.slider(key="step").max


@pytest.mark.slow
def test_masking_page_controls(app):
    at = app("masking")
    assert "Padding mask: blue = a real token, grey = &lt;pad&gt;" in titles(at)
    at.button_group(key="mkind").set_value("encoder").run()
    at.button_group(key="mlayer").set_value("2").run()
    at.text_input(key="other").set_value("The happy child reads a big red book today.").run()
    assert_fine(at)
    assert "√d_k = 1.732" in texts(at)  # the worked example is scaled, as in the paper
    pipeline = charts(at)[-1]["layout"]  # scores -> masked -> weights: one figure, two scales
    assert {"coloraxis", "coloraxis2"} <= set(pipeline) and "coloraxis3" not in pipeline
    at.toggle(key="scaled").set_value(False).run()
    assert_fine(at)
    assert "Scores Q Kᵀ / 1 (unscaled)" in texts(at)


@pytest.mark.slow
def test_embeddings_page_orders_dimensions_and_explains_the_scale(app):
    at = app("embeddings", peorder="blocks", escale="own")
    assert_fine(at)
    assert any(title.endswith("(sines, then cosines)") for title in titles(at))
    assert "√d_model = √" in texts(at)
    layout = charts(at)[-1]["layout"]  # embedding + PE, each panel on its own scale
    assert {"coloraxis", "coloraxis2", "coloraxis3"} <= set(layout)
    at.multiselect(key="dims").set_value([]).run()
    assert_fine(at)
    assert "No dimension chosen" in at.info[0].value
    at.button_group(key="peorder").set_value("interleaved").run()
    assert "peorder" not in at.query_params  # the default leaves the URL


@pytest.mark.slow
def test_presentation_mode_and_svg_export(app):
    at = app("attention", present="true", img="svg")
    assert_fine(at)
    chart = at.get("plotly_chart")[0].proto
    assert json.loads(chart.config)["toImageButtonOptions"]["format"] == "svg"
    layout = charts(at)[0]["layout"]
    assert layout["font"]["size"] == layout["xaxis"]["tickfont"]["size"] == presentation.FONT_SIZE
    assert "height" not in layout  # the screen's, set by CSS
    styles = "\n".join(str(element.proto) for element in at.get("html"))
    assert ".st-key-chart-attention-head { height: min(calc(100vh - " in styles


def test_presentation_height_is_the_screen_at_most_a_bit_more_than_the_figure():
    fig = go.Figure(layout={"height": 500})
    css = presentation.fit(fig, "some-chart")
    assert fig.layout.height is None
    growth = round(500 * presentation.MAX_GROWTH)
    expected = f"min(calc(100vh - {presentation.ABOVE_FIRST_CHART}), {growth}px)"
    rule = f".st-key-chart-some-chart {{ height: {expected}; container-type: size; }}"
    assert css == f"<style>{rule}</style>"  # no rows labelled, no rules for their labels


def test_presentation_row_labels_shrink_then_thin_out_as_the_chart_gets_shorter():
    fig = go.Figure(go.Heatmap(z=np.zeros((27, 3))))
    fig.update_yaxes(tickvals=list(range(27)))
    css = presentation.fit(fig, "map")
    frame = presentation.CHART_FRAME
    line = presentation.ROW_LABEL_MIN_SIZE * presentation.LINE_HEIGHT  # the smallest label's
    smallest, ratio = presentation.ROW_LABEL_MIN_SIZE, presentation.LINE_HEIGHT
    largest = presentation.FONT_SIZE
    assert (
        f"font-size: clamp({smallest}px, calc((100cqh - {frame}px) / 27 / {ratio}), {largest}px)"
        in css
    )
    # from the height where 27 rows hold a 9 px label down: every 2nd, 3rd, ... label, no gaps
    bounds = [
        (int(low or 0), int(high), int(every))
        for low, high, every in re.findall(
            r"@container (?:\((\d+)px < height\) and )?\(height <= (\d+)px\) \{ "
            r"\.st-key-chart-map g\.ytick:not\(:nth-child\((\d+)n \+ 1 of g\.ytick\)\)",
            css,
        )
    ]
    assert [every for *_, every in bounds] == list(range(2, presentation.MAX_THINNING + 1))
    assert bounds[0][1] == round(frame + line * 27)
    pairs = itertools.pairwise(bounds)
    assert all(low == next_high for (low, _, _), (_, next_high, _) in pairs)
    assert bounds[-1][0] == 0  # the last rule holds however short the chart


BAD_INPUT = {
    "empty": ("", "nothing to translate"),
    "whitespace": (" \n\t  ", "nothing to translate"),
    "over-long": ("the dog runs " * 100, "the rest is ignored"),
    "longer than the app reads": ("a" * (MAX_CHARS + 10), "only the start is used"),
    "emoji": ("I love 🐶 and 🍕!", "byte fallback"),
    "unknown script": ("Привет мир, 你好世界", "byte fallback"),
    "control characters": ("The dog\x07 runs\u200b away\x1b[31m.", "control or zero-width"),
    "html": ("<script>alert(1)</script><b>bold</b> <img src=x onerror=alert(2)>", None),
    "markdown": ("# Title **bold** [link](http://x) :red[red] $x^2$", None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", BAD_INPUT)
@pytest.mark.parametrize("page", PAGES)
def test_bad_input_gets_a_message_never_a_traceback(app, page, name):
    text, message = BAD_INPUT[name]
    at = app(page)
    at.text_area(key="text").set_value(text).run()
    assert_fine(at)
    if message and page not in ("model", "training"):  # neither reads the sentence here
        assert message in texts(at)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["html", "markdown"])
def test_user_text_is_never_rendered_as_markup(app, name):
    text = BAD_INPUT[name][0]
    at = app("translate")
    at.text_area(key="text").set_value(text).run()
    assert_fine(at)
    for element in (*at.markdown, *at.caption, *at.info, *at.warning):
        assert "<script" not in element.value and "**bold**" not in element.value
    for html in at.get("html"):  # the app's own markup (styles, Figure for slides), never the text
        assert "alert(" not in html.proto.body and "bold" not in html.proto.body


@pytest.mark.slow
def test_a_bug_is_not_mistaken_for_bad_input(app, monkeypatch):
    def broken(*args):
        raise ValueError("a bug, not something the user typed")

    monkeypatch.setattr(state, "analyse", broken)
    at = app(text="A sentence of its own, for the bug.")
    assert at.exception and not at.info  # a traceback, not a friendly message


@pytest.mark.slow
def test_missing_model_is_a_clear_message(app, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tmp_path / "nowhere"))
    for page in ("story", "translate", "model"):
        at = AppTest.from_file(MAIN, default_timeout=60)
        at.switch_page(f"views/{page}.py")
        at.run()
        assert_fine(at)
        assert "No usable model" in at.error[0].value and "ATTENTION_LAB_MODEL" in at.error[0].value


def test_the_apps_device_is_the_cpu_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv("ATTENTION_LAB_DEVICE", raising=False)
    assert state.device() == torch.device("cpu")  # where the app's numbers are measured
    monkeypatch.setenv("ATTENTION_LAB_DEVICE", "auto")
    assert state.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("ATTENTION_LAB_DEVICE", "gpu")
    with pytest.raises(InputError, match=r"\$ATTENTION_LAB_DEVICE='gpu' cannot be used: Unknown"):
        state.device()


@pytest.mark.slow
def test_an_unusable_device_is_a_clear_message(app, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DEVICE", "gpu")
    for page in ("story", "translate", "model"):
        at = AppTest.from_file(MAIN, default_timeout=60)
        at.switch_page(f"views/{page}.py")
        at.run()
        assert_fine(at)
        message = at.error[0].value
        assert "ATTENTION_LAB_DEVICE='gpu' cannot be used" in message
        assert "auto, cpu, cuda" in message


@pytest.mark.slow
def test_model_page_shows_the_card_and_training_curves(app, tiny_model_dir, tmp_path, monkeypatch):
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    card = {
        "name": "tiny-with-card",
        "description": "A test card.",
        "config": {},
        "parameters": 1,
        "languages": {"source": "en", "targets": ["de", "fr"]},
        "data": [{"name": "toy", "pairs": 600, "license": "CC0", "attribution": "us"}],
        "training": {"preset": "tiny", "steps": 3, "seconds": 1.5, "hardware": "2 CPU cores"},
        "scores": [{"set": "toy", "pair": "en-de", "bleu": 1.0, "chrf": 10.0, "beam_size": 4}],
    }
    (model / "card.json").write_text(json.dumps(card))
    (model / "card.md").write_text("# Tiny\n\nA card for people.")
    (model / "metrics.jsonl").write_text(
        '{"step": 1, "elapsed_s": 1, "train_loss": 6.0, "lr": 0.001, "tokens_per_s": 900}\n'
        '{"step": 2, "val_loss": 5.0, "val_bleu": 1.0, "val_chrf": 10.0}\n'
    )
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(model))
    at = AppTest.from_file(MAIN, default_timeout=60).switch_page("views/model.py").run()
    assert_fine(at)
    assert at.subheader[0].value == "tiny-with-card"
    assert {"parameters", "encoder layers", "heads", "d_model"} <= {m.label for m in at.metric}
    assert len(at.dataframe) == 3  # data, training, scores
    assert len(charts(at)[0]["data"]) == 6  # losses, BLEU, chrF, lr, tokens/s
