"""Coverage in the app through streamlit.testing: the Coverage page draws and names what core
computes for the sentence, follows a word to the rows that attended it, and the Beam search and
Compare pages show coverage growing and side by side."""

import shutil

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app.figures.coverage import coverage_rows, named_flags
from core.files.model_dir import ModelDir
from core.inspection.coverage import (
    EVERY_HEAD,
    STUDY_KEY,
    Aggregation,
    Thresholds,
    attention_coverage,
    flag,
    lens_coverage,
    measured_flags,
    occlusion_rows,
    step_coverage,
    word_coverage,
)
from core.translator import DEFAULT_MODEL, Translator
from tests.app.apptest import MAIN, chart_specs, plotted
from tests.app.test_app import assert_fine

SENTENCE = "The animal didn't cross the street because it was too tired."
# the tiny random model's output on it leaves some source words little attention, others much
BOTH_FLAGS = "The small dog runs in the garden."


def drawn(at) -> dict[str, dict]:
    """Each chart's spec by its title."""
    return {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}


def texts(at) -> list[str]:
    return [element.value for element in at.text]


@pytest.mark.slow
@pytest.mark.parametrize("layer", [None, 2])
def test_the_coverage_page_draws_and_names_what_core_computes(app, translator, layer):
    query = {} if layer is None else {"coverage_layer": str(layer)}
    at = app("coverage", text=BOTH_FLAGS, **query)
    assert_fine(at)
    result = translator.translate(BOTH_FLAGS, "de", 4, 0.6, trace=True)
    found = word_coverage(result)
    index = None if layer is None else layer - 1
    values, flags = found.values(index), found.flags(index)
    described = "every layer (mean)" if layer is None else f"layer {layer}"
    bars = drawn(at)[f"Coverage of the source words, {described}"]
    np.testing.assert_allclose(plotted(bars["data"][0]["y"]), values, rtol=1e-5)
    assert bars["layout"]["xaxis"]["ticktext"][2] == "small"
    assert flags.under and flags.over
    under, over = Thresholds().under, Thresholds().over
    labels = found.source_labels
    assert texts(at)[-2:] == [
        f"Likely dropped (coverage below {under:g}): {named_flags(labels, values, flags.under)}",
        f"Likely said twice (coverage above {over:g}): {named_flags(labels, values, flags.over)}",
    ]
    flagged = [*flags.under, *flags.over]
    followed = at.selectbox(key="coverage_word")
    assert followed.value == f"{flagged[0]}: {labels[flagged[0]]}"  # the first flagged word
    assert any("Not measured on this model" in m.value for m in at.markdown)  # no study


@pytest.mark.slow
def test_following_a_word_shows_the_rows_that_attended_it(app, translator):
    at = app("coverage", text=SENTENCE)
    at.selectbox(key="coverage_word").set_value("2: animal").run()
    assert_fine(at)
    result = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)
    received = word_coverage(result).received()
    charts = drawn(at)
    rows = next(spec for title, spec in charts.items() if title.startswith("What each output"))
    np.testing.assert_allclose(plotted(rows["data"][0]["x"]), received[:, 2], rtol=1e-5)
    assert f"{received[:, 2].sum():.2f} in all" in rows["layout"]["title"]["text"]
    mapped = next(spec for title, spec in charts.items() if title.startswith("Cross-attention"))
    (outline,) = mapped["layout"]["shapes"]
    assert (outline["x0"], outline["x1"]) == (1.5, 2.5)  # the column of "animal"
    growth = charts["Coverage after each output row, every layer (mean)"]
    np.testing.assert_allclose(plotted(growth["data"][0]["z"])[-1], received.sum(0), rtol=1e-5)
    link = app("coverage", text=SENTENCE, coverage_word="2: animal")  # the URL holds it
    assert link.selectbox(key="coverage_word").value == "2: animal"


@pytest.mark.slow
def test_pieces_instead_of_words(app, translator):
    at = app("coverage", text=SENTENCE, coverage_pieces="true")
    assert_fine(at)
    result = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)
    bars = drawn(at)["Coverage of the source pieces, every layer (mean)"]
    values = attention_coverage(result.attention.cross).values()
    np.testing.assert_allclose(plotted(bars["data"][0]["y"]), values, rtol=1e-5)


@pytest.mark.slow
def test_the_beam_search_page_shows_coverage_growing(app, translator):
    at = app("beam_search", text=SENTENCE, step="3", xlayer="1", xhead="2")
    assert_fine(at)
    result = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)
    grown = step_coverage(result, 3, translator.tokenizer.pieces)
    shown = drawn(at)["Coverage so far, layer 1, head 2"]
    expected = np.stack([found.values(0, 1) for found in grown])  # (hypotheses, source)
    np.testing.assert_allclose(plotted(shown["data"][0]["z"]), expected, rtol=1e-5)
    assert expected.sum(axis=1) == pytest.approx(4, rel=1e-4)  # steps 0-3: four rows each


@pytest.mark.slow
def test_the_compare_page_shows_both_searches_coverage(app, translator):
    at = app("compare", text=SENTENCE, beam="3")
    assert_fine(at)
    greedy, beam = (translator.translate(SENTENCE, "de", b, 0.6, trace=True) for b in (1, 3))
    searches = {
        "greedy (beam 1)": word_coverage(greedy),
        "beam 3": word_coverage(beam),
    }
    bars = drawn(at)["Coverage of the source words: greedy (beam 1) and beam 3"]
    for trace, found in zip(bars["data"], searches.values()):
        np.testing.assert_allclose(plotted(trace["y"]), found.values(), rtol=1e-5)
    table = at.dataframe[-1].value
    expected = coverage_rows(searches)
    assert list(table["source"]) == [row["source"] for row in expected]
    assert list(table["beam 3"]) == pytest.approx([row["beam 3"] for row in expected], rel=1e-5)
    assert "didn't" in list(table["source"])


def entry(
    name: str, f1: float, precision: float, recall: float, under=0.5, over=1.5, a_priori=(0.1, 0.6)
) -> dict:
    """One aggregation's scores as train.studies.coverage_study records them (the counts left out):
    ``a_priori`` (precision, recall), cross-validated ``f1``, ``precision`` and ``recall``, and
    the thresholds tuned on every word."""
    return {
        "name": name,
        "a_priori": {"under": 0.5, "over": 1.5, "precision": a_priori[0], "recall": a_priori[1]},
        "cross_validated": {"f1": f1, "precision": precision, "recall": recall},
        "tuned_on_all": {"under": under, "over": over},
    }


def studied_copy(tiny_model_dir, tmp_path, best: dict, lens: dict | None = None) -> ModelDir:
    """The tiny model with a coverage study in its card, as train.studies.coverage_study writes it,
    with the ``lens`` entry among its aggregations when given."""
    model_dir = ModelDir(tmp_path / "studied")
    shutil.copytree(tiny_model_dir, model_dir.path)
    aggregations = [
        entry("mean of all heads", 0.1, 0.05, 0.3),
        entry(best["name"], 0.2, best["precision"], best["recall"], best["under"], best["over"]),
    ]
    record = {
        "words": 70,
        "problems": 14,
        "model_sha256": model_dir.model_sha256(),
        "command": "python -m train.studies.coverage_study",
        "aggregations": [*aggregations, *([lens] if lens else [])],
        "best": best,
    }
    model_dir.write_card({**model_dir.read_card(), STUDY_KEY: record})
    return model_dir


def studied_page(model_dir: ModelDir, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(model_dir.path))

    def page(text: str = BOTH_FLAGS, **query: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=120)
        at.query_params.update({"text": text, **query})
        at.switch_page("views/coverage.py")
        return at.run()

    return page


@pytest.mark.slow
def test_the_page_shows_the_measured_best_with_its_precision_and_recall(
    tiny_model_dir, tmp_path, monkeypatch
):
    best = {"name": "layer 2", "layer": 1, "heads": [], "under": 0.3, "over": 1.2,
            "precision": 0.4, "recall": 0.25}  # fmt: skip
    model_dir = studied_copy(tiny_model_dir, tmp_path, best)
    page = studied_page(model_dir, monkeypatch)
    at = page()
    assert_fine(at)
    result = Translator.load(model_dir.path).translate(BOTH_FLAGS, "de", 4, 0.6, trace=True)
    found = word_coverage(result)
    values = Aggregation("layer 2", layer=1).values(found)
    bars = drawn(at)["Coverage of the source words, measured best: layer 2"]  # by default
    np.testing.assert_allclose(plotted(bars["data"][0]["y"]), values, rtol=1e-5)
    flags = flag(values, found.source_labels, Thresholds(0.3, 1.2))
    labels = found.source_labels
    assert texts(at)[-2:] == [
        f"Likely dropped (coverage below 0.3): {named_flags(labels, values, flags.under)}",
        f"Likely said twice (coverage above 1.2): {named_flags(labels, values, flags.over)}",
    ]
    notes = [m.value for m in at.markdown]
    assert any("70 words" in n and "precision 40%, recall 25%" in n for n in notes), notes
    # another view: the a-priori thresholds, with what the study measured for them
    at = page(coverage_layer="all")
    assert "Likely dropped (coverage below 0.5)" in texts(at)[-2]
    notes = [m.value for m in at.markdown]
    assert any("precision 10%, recall 60%" in n for n in notes), notes
    # the study counted words: in pieces there is no measured best
    options = page().segmented_control(key="coverage_layer").options
    assert options[0] == "measured best: layer 2"
    options = page(coverage_pieces="true").segmented_control(key="coverage_layer").options
    assert options[0] == "every layer (mean)" and not any("best" in o for o in options)


ATTENTION_BEST = {"name": "layer 2", "layer": 1, "heads": [], "under": 0.3, "over": 1.2,
                  "precision": 0.4, "recall": 0.25}  # fmt: skip
OCCLUSION_ENTRY = entry("lens: occlusion", 0.4, 0.46, 0.36, under=0.7, over=1.3)


def occlusion_values(model_dir: ModelDir, text: str):
    """The occlusion lens as coverage of ``text``'s source words (into German, beam 4)."""
    translator = Translator.load(model_dir.path)
    result = translator.translate(text, "de", 4, 0.6, trace=True)
    found = lens_coverage(result, occlusion_rows(translator.model, result))
    return EVERY_HEAD.values(found), found.source_labels


def occlusion_takes(monkeypatch, times_the_translation: float) -> None:
    """Make the page expect occlusion to take this many times as long as the translation (the
    page reads core.inspection.occlusion_per_translation on each run): 0 for a quick text, a
    thousand for a long one, whatever the machine's speed."""
    import core.inspection

    monkeypatch.setattr(
        core.inspection, "occlusion_per_translation", lambda result: times_the_translation
    )


@pytest.mark.slow
def test_the_page_opens_on_occlusion_when_the_study_measured_it_best(
    tiny_model_dir, tmp_path, monkeypatch
):
    model_dir = studied_copy(tiny_model_dir, tmp_path, ATTENTION_BEST, OCCLUSION_ENTRY)
    page = studied_page(model_dir, monkeypatch)
    occlusion_takes(monkeypatch, 0.0)
    at = page()
    assert_fine(at)
    options = at.segmented_control(key="coverage_layer").options
    assert options[:3] == [
        "measured best: occlusion",
        "best of attention: layer 2",
        "every layer (mean)",
    ]
    values, labels = occlusion_values(model_dir, BOTH_FLAGS)
    bars = drawn(at)["Coverage of the source words, measured best: occlusion"]  # by default
    np.testing.assert_allclose(plotted(bars["data"][0]["y"]), values, rtol=1e-5)
    flags = flag(values, labels, Thresholds(0.7, 1.3))  # the record's, tuned on every word
    assert flags.under and flags.over
    assert texts(at)[-2:] == [
        f"Likely dropped (coverage below 0.7): {named_flags(labels, values, flags.under)}",
        f"Likely said twice (coverage above 1.3): {named_flags(labels, values, flags.over)}",
    ]
    notes = [m.value for m in at.markdown]
    assert any(
        "70 words" in n and "precision 46%, recall 36%" in n and "layer 2: precision 40%" in n
        for n in notes
    ), notes
    assert not [b for b in at.button if b.label.startswith("Compute the measured best")]
    # the best of attention, a click away, names the better lens
    at = page(coverage_layer="best")
    assert "Coverage of the source words, best of attention: layer 2" in drawn(at)
    assert "Likely dropped (coverage below 0.3)" in texts(at)[-2]
    notes = [m.value for m in at.markdown]
    assert any(
        "precision 40%, recall 25%" in n and "occlusion lens: precision 46%, recall 36%" in n
        for n in notes
    ), notes
    # the study counted words: in pieces there is neither best
    options = page(coverage_pieces="true").segmented_control(key="coverage_layer").options
    assert options[0] == "every layer (mean)" and not any("best" in o for o in options)


@pytest.mark.slow
def test_a_long_texts_occlusion_waits_for_its_button_the_attention_best_shown_meanwhile(
    tiny_model_dir, tmp_path, monkeypatch
):
    model_dir = studied_copy(tiny_model_dir, tmp_path, ATTENTION_BEST, OCCLUSION_ENTRY)
    page = studied_page(model_dir, monkeypatch)
    occlusion_takes(monkeypatch, 1000.0)
    at = page()
    assert_fine(at)
    assert "Coverage of the source words, best of attention: layer 2" in drawn(at)
    assert any("Shown until then: the best of attention, layer 2" in i.value for i in at.info)
    (button,) = [b for b in at.button if b.label.startswith("Compute the measured best")]
    assert button.label.startswith(
        "Compute the measured best: occlusion, precision 46%, recall 36% (about "
    )
    at = button.click().run()
    assert_fine(at)
    values, _ = occlusion_values(model_dir, BOTH_FLAGS)
    bars = drawn(at)["Coverage of the source words, measured best: occlusion"]
    np.testing.assert_allclose(plotted(bars["data"][0]["y"]), values, rtol=1e-5)
    assert not at.info


@pytest.mark.slow
@pytest.mark.skipif(not DEFAULT_MODEL.is_dir(), reason="no shipped model")
def test_the_shipped_pages_occlusion_flags_are_the_studys_for_a_labelled_sentence(monkeypatch):
    """The shipped card's measured best is occlusion; on a labelled sentence the page's bars and
    flags are what train.studies.coverage_study computes for its labelled words: the second "very"
    of "The very, very old dog barely moved." flagged dropped into French, as labelled."""
    from train.studies.coverage_study import (
        DRY_RUN_IG_STEPS,
        LABELS,
        by_sentence,
        measure,
        predict,
        read_labels,
        word_columns,
    )

    sentence, target = "The very, very old dog barely moved.", "fr"
    study = measured_flags(ModelDir(DEFAULT_MODEL).read_card())
    assert study.best_lens.lens == "occlusion"
    held_out = (study.best_lens.precision, study.best_lens.recall)
    assert held_out == pytest.approx((0.46, 0.36), abs=0.005)
    translator = Translator.load(DEFAULT_MODEL)
    labelled = {(sentence, target): by_sentence(read_labels(LABELS))[(sentence, target)]}
    measured = measure(translator, labelled, [], DRY_RUN_IG_STEPS)
    assert not measured.changed and len(measured.words) == 7
    occlusion = measured.values["occlusion"]  # the study's coverage of the labelled words
    predicted = predict(occlusion, study.best_lens.thresholds)
    flagged = [(w.index, w.label, p) for w, p in zip(measured.words, predicted) if p != "once"]
    assert flagged == [(2, "dropped", "dropped")]

    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL))
    at = AppTest.from_file(MAIN, default_timeout=300)
    # asked for in the URL, as a link can: computed whatever this machine's speed
    at.query_params.update({"text": sentence, "to": target, "coverage_occlusion": "true"})
    at.switch_page("views/coverage.py")
    at = at.run()
    assert_fine(at)
    found = word_coverage(translator.translate(sentence, target, 4, 0.6, trace=True))
    columns = word_columns(found, sentence)
    bars = drawn(at)["Coverage of the source words, measured best: occlusion"]  # by default
    np.testing.assert_allclose(plotted(bars["data"][0]["y"])[columns], occlusion, rtol=1e-5)
    under = study.best_lens.thresholds.under
    assert texts(at)[-2:] == [
        f"Likely dropped (coverage below {under:g}): very ({occlusion[2]:.2f})",
        f"Likely said twice (coverage above {study.best_lens.thresholds.over:g}): none",
    ]
