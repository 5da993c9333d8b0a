"""The Logit lens page through streamlit.testing: its map is the lens core computes (the chosen
piece's probability per state, the state's first choice written in each cell), the URL holds the
picked layer, position and sub-layers, and the bars are the direct contributions; the figure
builders are pure."""

from __future__ import annotations

import numpy as np
import pytest

from app.display import piece_text
from app.figures.logit_lens import (
    HIGHLIGHT,
    NEGATIVE,
    POSITIVE,
    contribution_bars,
    lens_map,
    rank_curve,
)
from app.figures.text import plot_text
from core.inspection import direct_contributions, logit_lens
from tests.app.apptest import chart_specs, plotted
from tests.app.test_app import assert_fine

SENTENCE = "The small dog runs in the garden."


def drawn(at) -> dict[str, dict]:
    return {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}


@pytest.fixture(scope="module")
def computed(translator):
    result = translator.translate(SENTENCE, "de", 4, 0.6, trace=True)
    return result, logit_lens(translator, result), direct_contributions(translator.model, result)


@pytest.mark.slow
def test_the_page_draws_the_lens_and_the_parts_core_computes(app, computed):
    _, lens, parts = computed
    # the URL holds the position as the picker shows it
    picked = f"1: {piece_text(lens.positions[1])}"
    at = app("logit_lens", text=SENTENCE, lens_layer="2", lens_position=picked)
    assert_fine(at)
    charts = drawn(at)
    cells = charts["What each decoder layer would say"]["data"][0]
    states = [6, 3, 0]  # after layer 2, after layer 1, the embedding: the last on top
    np.testing.assert_allclose(plotted(cells["z"]), lens.chosen_prob[states], rtol=1e-5)
    assert np.asarray(cells["text"])[0, 1] == plot_text(lens.top_pieces[6][1][0])
    title = plot_text(f"What layer 2's parts added to the logit of “{lens.chosen[1]}”")
    bars = charts[title]["data"][0]
    heads = parts.self_heads.shape[1]
    np.testing.assert_allclose(
        plotted(bars["x"])[heads : 2 * heads], parts.cross_heads[1, :, 1], rtol=1e-4
    )
    best = int(np.argmax(parts.cross_heads[1, :, 1]))
    source = charts[f"Cross-attention L2 H{best + 1}: what each source piece passed"]["data"][0]
    np.testing.assert_allclose(plotted(source["x"]), parts.cross_sources[1, best, 1], rtol=1e-4)
    assert at.query_params["lens_layer"] == "2"
    assert at.query_params["lens_position"] == picked


@pytest.mark.slow
def test_every_sublayer(app, computed):
    _, lens, _ = computed
    at = app("logit_lens", text=SENTENCE, lens_sublayers="true")
    assert_fine(at)
    cells = drawn(at)["What each decoder layer would say"]["data"][0]
    assert plotted(cells["z"]).shape == (len(lens.states), len(lens.chosen))
    assert "Not measured on this model" in at.markdown[0].value  # the tiny model has no study


def test_the_figures_are_built_from_the_lens(computed):
    result, lens, _ = computed
    states = [0, 3, 6]
    fig = lens_map(lens, states, (6, 2), "map")
    assert fig.data[0].z.shape == (3, len(result.output_ids))
    assert fig.layout.shapes[0].x0 == 1.5 and fig.layout.shapes[0].y0 == -0.5  # top row
    curve = rank_curve(lens, 2, "rank")
    np.testing.assert_array_equal(curve.data[1].y, lens.chosen_rank[:, 2])
    bars = contribution_bars(["a", "b", "c"], [0.5, -1.0, 2.0], "t", "added", highlight=2)
    assert list(bars.data[0].marker.color) == [POSITIVE, NEGATIVE, HIGHLIGHT]
