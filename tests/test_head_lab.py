"""Heads lab: the ranking of heads for a word, the dashboard, and switching heads off live."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import figures
from core import DEFAULT_MODEL, Translator
from core.ablation import Head, head_importance, intervened_translator
from core.head_focus import rank_heads
from core.head_statistics import head_roles, head_statistics
from tests.conftest import chart_specs, plotted

MAIN = str(Path(__file__).resolve().parent.parent / "app" / "main.py")
ANIMAL = "The animal didn't cross the street because it was too tired."


def test_the_ranking_puts_the_strongest_top_key_first(translator):
    encoder = translator.translate(ANIMAL, "de", 2, trace=True).word_attention.encoder
    query = encoder.query_labels.index("it")
    ranking = rank_heads(encoder, query, skip_self=True)
    layers, heads = encoder.weights.shape[:2]
    assert len(ranking) == layers * heads
    weights = [found.weight for found in ranking]
    assert weights == sorted(weights, reverse=True)
    best = ranking[0]
    row = encoder.weights[best.layer, best.head, query].copy()
    row[query] = -1
    others = encoder.weights[:, :, query].copy()
    others[:, :, query] = -1
    assert best.weight == pytest.approx(others.max()) and best.key == int(row.argmax())
    assert best.key_label == encoder.key_labels[best.key] and best.key != query


@pytest.mark.skipif(not DEFAULT_MODEL.is_dir(), reason="no shipped model")
def test_the_shipped_model_has_a_head_that_links_it_to_the_animal():
    encoder = Translator.load().translate(ANIMAL, "de", 4, trace=True).word_attention.encoder
    it, animal = encoder.query_labels.index("it"), encoder.key_labels.index("animal")
    linked = rank_heads(encoder, it, key=animal)
    assert linked[0].weight == pytest.approx(encoder.weights[:, :, it, animal].max())
    assert linked[0].weight > 0.3, linked[0].describe("it")  # a coreference-like head exists


def test_the_dashboard_draws_the_statistic_with_each_heads_role(translator):
    cross = translator.translate(ANIMAL, "fr", 2, trace=True).attention.cross
    statistics = head_statistics(cross.weights, cross.key_labels, self_attention=False)
    roles = [role.role for role in head_roles(statistics)]
    fig = figures.head_dashboard(statistics["diagonality"], roles, "title", "diagonality")
    np.testing.assert_array_equal(np.array(fig.data[0].z), statistics["diagonality"])
    assert fig.data[0].text[0][0].startswith(roles[0])


@pytest.fixture
def page(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["text"] = ANIMAL
    at.switch_page("views/head_lab.py")
    return at.run()


def test_the_page_ranks_heads_for_a_word_and_switches_heads_off(page, translator):
    assert not page.exception
    page.selectbox(key="focus").set_value(3).run()
    assert chart_specs(page)[0]["layout"]["title"]["text"].startswith("Where “")
    page.multiselect(key="off").set_value(["enc L1 H1", "cross L2 H4"]).run()
    assert not page.exception
    assert "2 head(s) switched off (output 0)" in [caption.value for caption in page.caption]
    normal = translator.translate(ANIMAL, "de", 4, 0.6)
    assert page.code[0].value == normal.text
    heads = [Head.parse("enc L1 H1"), Head.parse("cross L2 H4")]
    changed = intervened_translator(translator, heads)
    assert page.code[1].value == changed.translate(ANIMAL, "de", 4, 0.6).text
    bars = chart_specs(page)[-1]["data"][0]
    changed_scores = changed.inspect(normal).token_scores
    expected = np.subtract(changed_scores, translator.inspect(normal).token_scores)
    np.testing.assert_allclose(plotted(bars["y"]), expected, atol=1e-6)


def test_the_importance_map_is_what_core_computes_and_uniform_heads_reach_the_model(
    page, translator
):
    normal = translator.translate(ANIMAL, "de", 4, 0.6)
    importance = [
        spec
        for spec in chart_specs(page)
        if spec["layout"]["title"]["text"].startswith("Encoder self-attention: importance")
    ]
    np.testing.assert_allclose(
        plotted(importance[0]["data"][0]["z"]),
        head_importance(translator, normal, "encoder"),
        atol=1e-6,
    )
    page.segmented_control(key="how").set_value("uniform").run()
    page.multiselect(key="off").set_value(["dec L2 H1"]).run()
    assert not page.exception
    uniform = intervened_translator(translator, [Head("decoder", 1, 0)], "uniform")
    assert page.code[1].value == uniform.translate(ANIMAL, "de", 4, 0.6).text
    assert "1 head(s) uniform weights (1/n)" in [caption.value for caption in page.caption]
