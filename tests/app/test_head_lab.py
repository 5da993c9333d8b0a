"""Heads lab: the ranking of heads for a word, the dashboard, and switching heads off live."""

import shutil

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import heads_cache
from app.figures.heads import head_dashboard
from core.files.model_dir import ModelDir
from core.inspection.ablation import Head, head_importance, intervened_translator
from core.inspection.head_focus import rank_heads
from core.inspection.head_statistics import head_roles, statistics_per_head
from core.inspection.head_survey import SamplePair, load_survey, save_survey, survey
from support.tiny_corpus import tiny_corpus
from tests.app.apptest import MAIN, chart_specs, plotted

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


def test_the_ranking_by_a_word_puts_the_most_weight_on_it_first(translator):
    """The Heads lab's "which head links it to animal?": every head, by its weight on the word."""
    encoder = translator.translate(ANIMAL, "de", 2, trace=True).word_attention.encoder
    it, animal = encoder.query_labels.index("it"), encoder.key_labels.index("animal")
    linked = rank_heads(encoder, it, key=animal)
    layers, heads = encoder.weights.shape[:2]
    assert len(linked) == layers * heads and all(found.key == animal for found in linked)
    weights = [found.weight for found in linked]
    assert weights == sorted(weights, reverse=True)
    assert weights[0] == pytest.approx(encoder.weights[:, :, it, animal].max())


def test_the_dashboard_draws_the_statistic_with_each_heads_role(translator):
    cross = translator.translate(ANIMAL, "fr", 2, trace=True).attention.cross
    statistics = statistics_per_head(cross.weights, cross.key_labels, self_attention=False)
    roles = [role.role for role in head_roles(statistics)]
    fig = head_dashboard(statistics["diagonality"], roles, "title", "diagonality")
    np.testing.assert_array_equal(np.array(fig.data[0].z), statistics["diagonality"])
    first = statistics["diagonality"][0, 0]
    assert fig.data[0].text[0][0] == f"{roles[0]}<br>{first:.2f}"  # two lines in the cell


@pytest.fixture
def page(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["text"] = ANIMAL
    at.switch_page("views/head_lab.py")
    return at.run()


def names_the_change(at: AppTest, change: str) -> None:
    """The changed translation's box is labelled with the change, and says so when the
    translation is the normal one (presentation mode hides the table of changed words)."""
    (label,) = [caption.value for caption in at.caption if caption.value.startswith(change)]
    unchanged = at.code[0].value == at.code[1].value
    assert label == change + (": the translation did not change" if unchanged else "")


@pytest.mark.slow
def test_the_page_ranks_heads_for_a_word_and_switches_heads_off(page, translator):
    assert not page.exception
    page.selectbox(key="focus").set_value(3).run()
    assert chart_specs(page)[0]["layout"]["title"]["text"].startswith("Where “")
    page.multiselect(key="off").set_value(["enc L1 H1", "cross L2 H4"]).run()
    assert not page.exception
    names_the_change(page, "2 head(s) switched off (output 0)")
    normal = translator.translate(ANIMAL, "de", 4, 0.6)
    assert page.code[0].value == normal.text
    heads = [Head.parse("enc L1 H1"), Head.parse("cross L2 H4")]
    changed = intervened_translator(translator, heads)
    assert page.code[1].value == changed.translate(ANIMAL, "de", 4, 0.6).text
    bars = chart_specs(page)[-1]["data"][0]
    changed_log_probs = changed.trace(normal).token_log_probs
    expected = np.subtract(changed_log_probs, translator.trace(normal).token_log_probs)
    np.testing.assert_allclose(plotted(bars["y"]), expected, atol=1e-6)


def importance_maps(at: AppTest) -> list[np.ndarray]:
    """The importance maps the page drew, as the browser receives them."""
    return [
        plotted(spec["data"][0]["z"])
        for spec in chart_specs(at)
        if ": importance, " in spec["layout"]["title"]["text"]
    ]


def ask_for_importance(at: AppTest) -> AppTest:
    (button,) = [b for b in at.button if b.label.startswith("Compute head importance")]
    return button.click().run()


@pytest.mark.slow
def test_the_importance_map_is_what_core_computes_and_uniform_heads_reach_the_model(
    page, translator
):
    normal = translator.translate(ANIMAL, "de", 4, 0.6)
    ask_for_importance(page)
    np.testing.assert_allclose(
        importance_maps(page)[0], head_importance(translator, normal, "encoder"), atol=1e-6
    )
    page.segmented_control(key="how").set_value("uniform").run()
    page.multiselect(key="off").set_value(["dec L2 H1"]).run()
    assert not page.exception
    uniform = intervened_translator(translator, [Head("decoder", 1, 0)], "uniform")
    assert page.code[1].value == uniform.translate(ANIMAL, "de", 4, 0.6).text
    names_the_change(page, "1 head(s) uniform weights (1/n)")


@pytest.fixture
def importance_passes(monkeypatch) -> list[str]:
    """The kinds of every head-importance pass the app makes
    (core.inspection.ablation.head_importance)."""
    passes, compute = [], heads_cache.head_importance
    monkeypatch.setattr(
        heads_cache, "head_importance", lambda *args: passes.append(args[2]) or compute(*args)
    )
    return passes


@pytest.mark.slow
def test_head_importance_waits_for_its_button_then_is_kept_for_everyone(
    app, importance_passes, translator
):
    text = "The importance of this sentence waits for its button."
    at = app("head_lab", text=text, kind="cross")
    assert not at.exception
    assert importance_passes == [] and importance_maps(at) == []
    assert "importance" not in at.query_params
    assert len(chart_specs(at)) >= 4  # the focus, the head, the dashboard: useful before
    ask_for_importance(at)
    assert not at.exception and importance_passes == ["cross"]
    normal = translator.translate(text, "de", 4, 0.6)
    (drawn,) = importance_maps(at)
    np.testing.assert_allclose(drawn, head_importance(translator, normal, "cross"), atol=1e-6)
    assert at.query_params["importance"] == "true"  # a copied link shows it too
    assert not [b for b in at.button if b.label.startswith("Compute head importance")]

    # the same sentence: kept, shown at once
    another_student = app("head_lab", text=text, kind="cross")
    np.testing.assert_array_equal(importance_maps(another_student)[0], drawn)
    assert importance_passes == ["cross"]

    at.segmented_control(key="kind").set_value("encoder").run()  # another kind: asked again
    assert importance_maps(at) == [] and "importance" not in at.query_params
    at.text_area(key="text").set_value("A new sentence asks again.").run()
    assert importance_maps(at) == [] and importance_passes == ["cross"]

    link = app("head_lab", text="A link that asks for the importance.", importance="true")
    assert len(importance_maps(link)) == 1 and importance_passes == ["cross", "encoder"]


@pytest.fixture(scope="module")
def surveyed_model_dir(tiny_model_dir, translator, tmp_path_factory):
    """The tiny model with a head survey (heads.json) of two sentences beside it."""
    model_dir = ModelDir(tmp_path_factory.mktemp("surveyed") / "model")
    shutil.copytree(tiny_model_dir, model_dir.path)
    pairs = [SamplePair("de", text, text) for text in tiny_corpus(2, seed=5)]
    found = survey(translator, pairs, model_dir.model_sha256(), "two", heads_off=[24])
    save_survey(model_dir.heads_file, found)
    return model_dir.path


@pytest.mark.slow
def test_until_asked_the_importance_map_is_the_surveys_mean(
    surveyed_model_dir, monkeypatch, importance_passes
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(surveyed_model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({"text": "Until asked, the survey's mean.", "kind": "decoder"})
    at.switch_page("views/head_lab.py").run()
    assert not at.exception and importance_passes == []
    survey_of_model = load_survey(surveyed_model_dir)
    np.testing.assert_allclose(importance_maps(at)[0], survey_of_model.importance["decoder"])
    assert any("the mean over 2 validation sentences" in c.value for c in at.caption)
    ask_for_importance(at)
    assert importance_passes == ["decoder"]
    assert not any("the mean over 2 validation sentences" in c.value for c in at.caption)


@pytest.mark.slow
def test_no_colour_bar_or_cell_shows_an_internal_name(app):
    at = app("head_lab", text=ANIMAL)
    statistics = ["confidence", "entropy", "sink_share", "mean_distance"]
    for statistic in [*statistics, "same_share", "previous_share", "next_share"]:
        at.segmented_control(key="stat").set_value(statistic).run()
        assert not at.exception
        heatmaps = [
            trace
            for spec in chart_specs(at)
            for trace in spec["data"]
            if trace.get("type") == "heatmap" and "colorbar" in trace
        ]
        titles = [trace["colorbar"]["title"]["text"] for trace in heatmaps]
        assert titles and not [title for title in titles if "_" in title], titles
        cells = [cell for trace in heatmaps for row in trace.get("text", []) for cell in row]
        assert not [cell for cell in cells if "_" in cell or "positional (" in cell]
