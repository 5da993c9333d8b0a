"""One query, step by step, on the Attention page: the figure of scaled dot-product attention draws
core's numbers (app/figures/scaled_dot_product.py), the line view every head of the layer with
opacities that are the weights (app/figures/heads.py, layer_lines), and the page draws both for
the query picked, on the model or on a snapshot."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import state
from app.figures.heads import OPACITY_STEP, layer_lines
from app.figures.masking import MASKED_COLOUR
from app.figures.scaled_dot_product import scaled_dot_product_steps
from app.figures.text import plot_labels
from core import Translator
from core.files.model_dir import ModelDir
from core.inspection.ablation import Head
from core.inspection.scaled_dot_product import scaled_dot_product_of
from core.inspection.snapshots import load_snapshot
from tests.app.apptest import MAIN, chart_specs, plotted
from tests.conftest import EARLY_STEPS

SENTENCE = state.DEFAULTS.text


@pytest.fixture(scope="module")
def translation(translator):
    return translator.translate(SENTENCE, "de", trace=True)


def bars(fig, name: str):
    (bar,) = [trace for trace in fig.data if trace.type == "bar" and trace.name == name]
    return bar


def test_the_steps_draw_cores_numbers_with_the_keys_labels(translator, translation):
    step = scaled_dot_product_of(translator.model, translation, Head("cross", 1, 2), 3)
    fig = scaled_dot_product_steps(step, "title")
    np.testing.assert_array_equal(bars(fig, "q · k").x, step.dot_products)
    np.testing.assert_array_equal(bars(fig, "score").x, step.scores)
    np.testing.assert_array_equal(bars(fig, "weight").x, step.weights)
    maps = {trace.name: trace.z for trace in fig.data if trace.type == "heatmap"}
    np.testing.assert_array_equal(maps["k"], step.keys)
    np.testing.assert_array_equal(maps["v"], step.values)
    np.testing.assert_array_equal(maps["q"], step.query[None])
    np.testing.assert_array_equal(maps["z"], step.output[None])
    shown = list(fig.layout.yaxis.tickvals)  # every k-th key where the keys are many
    assert shown == list(range(0, len(step.key_labels), shown[1] - shown[0]))
    labels = plot_labels(translation.source_tokens)
    assert list(fig.layout.yaxis.ticktext) == [labels[key] for key in shown]
    assert f"√d_k = {np.sqrt(step.d_k):.2f}" in " ".join(a.text for a in fig.layout.annotations)


def strings(value) -> list[str]:
    """Every string in a figure's JSON."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def test_masked_keys_are_grey_and_written_zero_and_labels_are_escaped(translator, translation):
    """Decoder self-attention from position 2: the later keys are masked. Its labels hold <s>
    and the rows' "→", which plotly would read as markup: they are escaped everywhere."""
    step = scaled_dot_product_of(translator.model, translation, Head("decoder", 0, 1), 2)
    fig = scaled_dot_product_steps(step, f"for “{step.key_labels[0]}”")
    weights, scores = bars(fig, "weight"), bars(fig, "score")
    later = np.arange(len(step.key_labels)) > 2
    assert list(np.asarray(weights.text)[later]) == ["0 (masked)"] * later.sum()
    assert not any("masked" in text for text in np.asarray(weights.text)[~later])
    assert all(text.endswith("→ −∞") for text in np.asarray(scores.text)[later])
    assert list(np.asarray(weights.marker.color)[later]) == [MASKED_COLOUR] * later.sum()
    assert (np.asarray(weights.x)[later] == 0).all()
    assert fig.layout.title.text == "for “&lt;s&gt;”"
    assert fig.layout.yaxis.ticktext[0] == "&lt;s&gt;"
    texts = strings(json.loads(fig.to_json()))
    assert any("&lt;s&gt;" in text for text in texts)
    assert not any("<s>" in text for text in texts)


def test_the_line_view_has_each_heads_weights_as_opacities(translation):
    attention, layer, query = translation.attention.cross, 1, 2
    fig = layer_lines(attention, layer, query, "lines")
    heads = attention.weights.shape[1]
    assert [trace.name for trace in fig.data if trace.showlegend is not False] == [
        f"head {head}" for head in range(1, heads + 1)
    ]
    for head in range(heads):
        row = attention.weights[layer, head, query]  # (K,)
        group = f"head {head + 1}"
        (ends,) = [trace for trace in fig.data if trace.name == f"{group} weights"]
        np.testing.assert_array_equal(ends.marker.opacity, row)
        lines = [trace for trace in fig.data if trace.name == f"{group} lines"]
        reached = []
        for trace in lines:
            keys = np.rint(np.asarray(trace.y, dtype=float)[1::3]).astype(int)  # each line's end
            assert (np.abs(row[keys] - trace.opacity) <= OPACITY_STEP / 2 + 1e-9).all()
            assert (np.asarray(trace.y, dtype=float)[0::3] == query).all()  # from the query
            reached += keys.tolist()
        assert sorted(reached) == np.flatnonzero(row >= OPACITY_STEP / 2).tolist()


def charts_by_key(at: AppTest) -> dict:
    return dict(zip((chart.key for chart in at.get("plotly_chart")), chart_specs(at)))


def weight_bars(spec: dict) -> np.ndarray:
    (bar,) = [trace for trace in spec["data"] if trace.get("name") == "weight"]
    return plotted(bar["x"])


@pytest.mark.slow
def test_the_page_draws_both_figures_for_the_query_picked(app, translator, translation):
    at = app("attention")
    assert not at.exception
    assert set(charts_by_key(at)) == {"chart-attention-head"}  # nothing until a query is picked
    at.selectbox(key="query").set_value(3).run()
    assert not at.exception, [error.message for error in at.exception]
    drawn = charts_by_key(at)
    expected = scaled_dot_product_of(translator.model, translation, Head("encoder", 1, 0), 3)
    np.testing.assert_allclose(
        weight_bars(drawn["chart-scaled-dot-product"]), expected.weights, atol=1e-6
    )
    assert "chart-layer-lines" in drawn
    assert at.query_params["query"] == "3"  # the row's number
    at.button_group(key="head").set_value("avg").run()  # the average has no query: lines only
    assert not at.exception
    assert set(charts_by_key(at)) == {"chart-attention-head", "chart-layer-lines"}
    assert "pick a head" in at.info[0].value


@pytest.mark.slow
@pytest.mark.parametrize("query", ["999", "it", "-1"])
def test_a_query_the_map_lacks_in_a_link_is_no_query(app, query):
    at = app("attention", query=query)
    assert not at.exception
    assert at.selectbox(key="query").value is None
    assert set(charts_by_key(at)) == {"chart-attention-head"}
    assert "query" not in at.query_params


@pytest.mark.slow
def test_the_query_stays_on_its_piece_when_the_sentence_changes(app, translator, translation):
    piece = translation.source_tokens[2]
    at = app("attention", query="2", layer="1", head="2")
    assert {"chart-scaled-dot-product", "chart-layer-lines"} <= set(charts_by_key(at))
    assert at.selectbox(key="query").value == 2
    longer = f"Yes, {SENTENCE}"
    at.text_area(key="text").set_value(longer).run()
    assert not at.exception, [error.message for error in at.exception]
    moved = translator.translate(longer, "de", trace=True).source_tokens.index(piece)
    assert moved != 2 and at.selectbox(key="query").value == moved
    assert at.query_params["query"] == str(moved)


@pytest.mark.slow
def test_on_a_snapshot_the_snapshot_computes(history_dir, monkeypatch):
    final = Translator.load(history_dir)
    reference = final.translate(SENTENCE, "de", trace=True)
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({"snapshot": str(EARLY_STEPS[0]), "kind": "cross", "query": "1"})
    at.switch_page("views/attention.py")
    at.run()
    assert not at.exception, [error.message for error in at.exception]
    early = load_snapshot(history_dir, ModelDir(history_dir).snapshots()[0])
    head = Head("cross", 1, 0)  # the page's default layer (the last) and head
    expected = scaled_dot_product_of(early.model, early.trace(reference), head, 1)
    drawn = weight_bars(charts_by_key(at)["chart-scaled-dot-product"])
    np.testing.assert_allclose(drawn, expected.weights, atol=1e-6)
    other = scaled_dot_product_of(final.model, reference, head, 1).weights
    assert not np.allclose(drawn, other, atol=1e-3)
