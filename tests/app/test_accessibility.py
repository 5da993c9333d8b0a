"""Accessibility without a browser (docs/accessibility.md): the style module's contrast and sizes
(WCAG 2.1 AA), and every chart's name and summary in words, computed from its data, which names
its strongest cell. tests/browser/test_browser_accessibility.py measures the drawn pages."""

import numpy as np
import plotly.graph_objects as go
import pytest

from app import presentation
from app.figures import style
from app.figures.coverage import COVERAGE_COLOURS
from app.figures.heads import HEAD_COLOURS, layer_lines
from app.figures.heatmaps import attention_map
from app.figures.summary import describe, plain, table
from core.labelled_attention import LabelledAttention
from tests.app.apptest import chart_specs, plotted
from tests.app.test_app import PAGES

ANIMAL = ["▁The", "▁animal", "▁slept", "▁because", "▁it", "▁was", "▁tired"]


def test_wcag_contrast_matches_the_standards_examples():
    assert style.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert style.contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # just short
    assert style.contrast("rgb(128, 132, 149)", "#fff") == pytest.approx(3.72, abs=0.01)  # was
    assert style.contrast("rgba(0, 0, 0, 0.5)", "#ffffff") == pytest.approx(
        style.contrast("#808080", "#ffffff"), abs=0.05
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_is_the_themes_own_at_4_5_to_1_and_18px_on_a_projector(theme):
    text, background = style.TEXT_COLOURS[theme], style.BACKGROUNDS[theme]
    assert style.contrast(text, background) >= style.MIN_CONTRAST
    w = np.zeros((1, 1, len(ANIMAL), len(ANIMAL)), dtype=np.float32) + 1 / len(ANIMAL)
    fig = layer_lines(LabelledAttention(w, ANIMAL, ANIMAL), 0, 4, "Lines")
    fig.add_annotation(text="a note", x=0, y=0, font={"color": "#999999", "size": 11})
    style.legible(fig, theme, style.PRESENTATION_TEXT_PX)
    assert fig.layout.font.color == fig.layout.xaxis.tickfont.color == text
    assert fig.layout.annotations[0].font.color == text
    assert fig.layout.annotations[0].font.size == style.PRESENTATION_TEXT_PX
    labels = [trace for trace in fig.data if trace.mode == "text"]
    assert labels and all(trace.textfont.color == text for trace in labels)
    assert all(trace.textfont.size >= style.PRESENTATION_TEXT_PX for trace in labels)
    assert presentation.FONT_SIZE == presentation.ROW_LABEL_MIN_SIZE == style.PRESENTATION_TEXT_PX


def test_heads_and_coverage_take_okabe_ito_with_a_shape_each():
    assert set(HEAD_COLOURS) <= set(style.OKABE_ITO.values())
    assert len(set(HEAD_COLOURS)) == 8 == len(set(style.SYMBOLS))
    assert {COVERAGE_COLOURS["under"], COVERAGE_COLOURS["over"]} <= set(style.OKABE_ITO.values())
    w = np.random.default_rng(0).dirichlet(np.ones(len(ANIMAL)), size=(1, 4, len(ANIMAL)))
    fig = layer_lines(LabelledAttention(w.astype(np.float32), ANIMAL, ANIMAL), 0, 4, "Lines")
    legend = [trace for trace in fig.data if trace.showlegend is not False and trace.name]
    assert len({trace.line.dash for trace in legend}) == 4  # a dash per head besides its colour


def test_a_maps_summary_names_its_strongest_cells_in_words():
    w = np.full((1, 1, len(ANIMAL), len(ANIMAL)), 0.01, dtype=np.float32)
    w[0, 0, 4, 1], w[0, 0, 4, 4] = 0.13, 0.09  # it -> animal, it -> it
    fig = attention_map(LabelledAttention(w, ANIMAL, ANIMAL), 0, 0, "Encoder <self>-attention")
    name, summary = describe(fig)
    assert name == "Encoder <self>-attention"
    assert summary.startswith("strongest it → animal 13%, it → it 9%")
    rows = table(fig)
    assert len(rows) == len(ANIMAL) and rows[4]["row"] == "it" and rows[4]["animal"] == 0.13


def projected_map(keys: list[str]) -> go.Figure:
    w = np.full((1, 1, len(ANIMAL), len(keys)), 1 / len(keys), dtype=np.float32)
    fig = attention_map(LabelledAttention(w, ANIMAL, keys), 0, 0, "Cross-attention")
    presentation.fit(fig, "map")
    return fig


def test_a_projected_maps_top_margin_grows_with_its_turned_18px_column_labels():
    short, long = projected_map(["▁a", "▁b"]), projected_map(["▁a", "▁internationally"])
    assert short.layout.xaxis.tickfont.size == style.PRESENTATION_TEXT_PX
    # 14 characters more at -60 degrees, 6 px of font more each: Chromium drew the pieces'
    # characters 0.48-0.54 of their font wide
    grown = long.layout.margin.t - short.layout.margin.t
    per_character = 6 * 14 * np.sin(np.radians(60))
    assert 0.48 * per_character - 1 <= grown <= 0.54 * per_character + 1
    assert short.layout.margin.b == presentation.HEATMAP_BOTTOM_PX
    # the column axis's title joins the row axis's: on top it stood between caption and labels
    assert short.layout.xaxis.title.text is None
    assert short.layout.yaxis.title.text == "rows: query · columns: key"


def test_a_bar_chart_and_an_empty_figure_are_summed_up_too():
    bars = go.Figure(go.Bar(x=["a", "b", "c"], y=[2.0, 5.0, 1.0]), layout={"title": "Scores"})
    assert describe(bars) == ("Scores", "largest b 5, a 2, c 1")
    assert describe(go.Figure()) == ("Chart", "Chart")


def strongest_cell(spec: dict) -> tuple[str, str] | None:
    """The labels of the largest cell of a drawn figure's first map, read from its JSON."""
    for trace in spec["data"]:
        if trace.get("type") == "heatmap" and "z" in trace:
            z = np.asarray(plotted(trace["z"]), dtype=float)
            if z.ndim != 2 or not np.isfinite(z).any():
                return None
            r, c = np.unravel_index(np.nanargmax(np.where(np.isfinite(z), z, np.nan)), z.shape)
            labels = []
            for letter, index in (("y", r), ("x", c)):
                anchor = trace.get(f"{letter}axis", letter)[1:]
                axis = spec["layout"].get(f"{letter}axis{anchor}") or {}
                at = plotted(trace[letter])[index] if letter in trace else index
                ticks = dict(zip(axis.get("tickvals", ()), axis.get("ticktext", ())))
                labels.append(plain(ticks.get(at, at)))
            return labels[0], labels[1]
    return None


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_chart_of_every_page_is_named_and_summed_up(app, page):
    """Whatever builder drew it: each chart carries its name and summary (layout.meta, which the
    browser reads out), and a map's summary names its strongest cell."""
    at = app(page, text="The animal slept because it was tired.")
    assert not at.exception
    for spec in chart_specs(at):
        meta = spec["layout"].get("meta") or {}
        assert meta.get("name") and meta.get("summary"), spec["layout"].get("title")
        if (cell := strongest_cell(spec)) is not None:
            row, column = cell
            assert f"{row} → {column}" in meta["summary"], (cell, meta["summary"])


@pytest.mark.slow
def test_a_charts_name_joins_its_own_meta_and_keeps_the_width_it_asks_a_phone_for(app):
    """The scaled dot-product panels ask for their phone width in layout.meta (app/narrow.py);
    naming the chart must not take it away."""
    at = app("attention", query="2")
    assert not at.exception
    (meta,) = [
        spec["layout"]["meta"]
        for spec in chart_specs(at)
        if spec["layout"].get("meta", {}).get("min_width")
    ]
    assert meta["name"] and meta["summary"]
