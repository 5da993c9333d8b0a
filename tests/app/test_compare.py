"""The Compare page through streamlit.testing: what it draws side by side is what the model
computes, and every pick lives in the URL."""

import numpy as np
import pytest

from app.display import piece_text
from core.decoding.search import first_divergence, length_penalty
from tests.app.apptest import chart_specs, plotted
from tests.app.test_app import assert_fine

SENTENCE = "The small dog runs in the garden."


def drawn(at) -> dict[str, np.ndarray]:
    """Each heatmap's z by its title."""
    return {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}


def z(spec: dict) -> np.ndarray:
    return plotted(spec["data"][0]["z"])


def test_first_divergence():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 3], [1, 5, 3]) == 1
    assert first_divergence([1, 2], [1, 2, 3]) == 2  # one ends early
    assert first_divergence([], []) is None


@pytest.mark.slow
def test_two_heads_side_by_side_on_one_scale(app, translator):
    at = app(
        "compare",
        text=SENTENCE,
        compare_kind="encoder",
        a_layer="1",
        a_head="2",
        b_layer="2",
        b_head="avg",
    )
    assert_fine(at)
    weights = translator.translate(SENTENCE, "de", 4, 0.6, trace=True).attention.encoder.weights
    charts = drawn(at)
    left = charts["Left: Encoder self-attention, layer 1, head 2"]
    right = charts["Right: Encoder self-attention, layer 2, average of the heads"]
    np.testing.assert_allclose(z(left), weights[0, 1], atol=1e-6)
    np.testing.assert_allclose(z(right), weights[1].mean(axis=0), atol=1e-6)
    scales = [(spec["data"][0]["zmin"], spec["data"][0]["zmax"]) for spec in (left, right)]
    assert scales == [(0.0, 1.0), (0.0, 1.0)]

    at.segmented_control(key="b_head").set_value(3).run()  # a pick lands in the URL
    assert_fine(at)
    assert at.query_params["b_head"] == "3"
    right = drawn(at)["Right: Encoder self-attention, layer 2, head 3"]
    np.testing.assert_allclose(z(right), weights[1, 2], atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("layer, head", [("1", "avg"), ("2", "4")])
def test_german_and_french_side_by_side(app, translator, layer, head):
    at = app("compare", text=SENTENCE, language_layer=layer, language_head=head)
    assert_fine(at)
    codes = [code.value for code in at.code]
    charts = drawn(at)
    for target, name in (("de", "German"), ("fr", "French")):
        expected = translator.translate(SENTENCE, target, 4, 0.6, trace=True)
        assert expected.text in codes
        weights = expected.attention.cross.weights[int(layer) - 1]
        shown = next(spec for title, spec in charts.items() if title.startswith(f"{name}: cross"))
        np.testing.assert_allclose(
            z(shown), weights.mean(axis=0) if head == "avg" else weights[int(head) - 1], atol=1e-6
        )


@pytest.mark.slow
def test_greedy_and_beam_search_and_where_they_part(app, translator):
    for text in (SENTENCE, "A man is riding a bicycle.", "I am very hungry."):
        at = app("compare", text=text, beam="3", alpha="1.0")
        assert_fine(at)
        greedy = translator.translate(text, "de", 1, 1.0)
        beam = translator.translate(text, "de", 3, 1.0)
        codes = [code.value for code in at.code]
        assert greedy.text in codes and beam.text in codes
        scores = at.dataframe[0].value
        assert list(scores["search"]) == ["greedy (beam 1)", "beam 3"]
        # float32 sums of about a hundred nats: equal to a few units in the last place
        assert list(scores["log P"]) == pytest.approx([greedy.log_prob, beam.log_prob], rel=1e-6)
        ranked = [h.log_prob / length_penalty(len(h.output_ids), 1.0) for h in (greedy, beam)]
        assert list(scores["log P / lp"]) == pytest.approx(ranked, rel=1e-6)
        apart = first_divergence(greedy.output_tokens, beam.output_tokens)
        assert apart is not None  # the tiny model's two searches part on these sentences
        assert f"They agree on the first {apart} pieces" in " ".join(t.value for t in at.text)
        pieces = at.dataframe[1].value
        for column, output in (("greedy", greedy), ("beam 3", beam)):
            shown = [piece_text(piece) for piece in output.output_tokens]  # · for ▁
            assert [piece for piece in pieces[column] if piece] == shown
        assert list(pieces["same"][:apart]) == [True] * apart and not pieces["same"][apart]


@pytest.mark.slow
def test_beam_one_says_it_is_greedy(app):
    at = app("compare", text=SENTENCE, beam="1")
    assert_fine(at)
    assert any("which is greedy search" in info.value for info in at.info)


@pytest.mark.slow
def test_each_languages_figure_for_slides_is_captioned_with_its_own_language(app, translator):
    at = app("compare", text=SENTENCE, to="de", language_layer="2", language_head="3")
    assert_fine(at)
    charts = drawn(at)
    for name, other, target in (("German", "French", "de"), ("French", "German", "fr")):
        shown = next(spec for title, spec in charts.items() if title.startswith(f"{name}: cross"))
        caption = shown["layout"]["title"]["subtitle"]["text"].replace("<br>", " ")
        translation = " ".join(translator.translate(SENTENCE, target, 4, 0.6).text.split())
        assert f"{name}: {translation}" in caption and f"{other}:" not in caption, caption
        assert "Cross-attention · layer 2 · head 3" in caption


@pytest.mark.slow
def test_the_compare_pages_coverage_has_the_coverage_pages_words(app):
    compare, page = app("compare", text=SENTENCE), app("coverage", text=SENTENCE)
    assert_fine(compare)
    assert_fine(page)
    both = next(s for t, s in drawn(compare).items() if t.startswith("Coverage of the source"))
    alone = drawn(page)["Coverage of the source words, every layer (mean)"]
    words = alone["layout"]["xaxis"]["ticktext"]
    assert both["layout"]["xaxis"]["ticktext"] == words
    assert words[-3:-1] == ["garden", "."]  # the full stop has a column of its own
    beam = both["data"][-1]  # the sidebar's beam search, as on the Coverage page
    np.testing.assert_allclose(plotted(beam["y"]), plotted(alone["data"][0]["y"]), rtol=1e-5)
