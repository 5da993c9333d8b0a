"""The app's figures and data shaping, without Streamlit: what is drawn is what the model
computed."""

import html
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from app.analysis import MAX_CHARS, analyse
from app.figures.beam_layout import (
    REASON_EXPLANATIONS,
    candidate_rows,
    candidates_per_beam,
    reason_explanations,
    rerank,
    rerank_curves,
    rerank_ranks,
    shown_candidates,
    traced_per_beam,
    tree_layout,
)
from app.figures.beam_search import (
    LABEL_CHIP,
    LEGEND_CHARS,
    STEP_EDGE,
    STEP_SHADE,
    beam_tree,
    candidate_bars,
    first_step_in_view,
    legend_text,
    rerank_lines,
)
from app.figures.heatmaps import attention_grid, attention_map, cell_text_size, heatmap
from app.figures.masking import masked_text_size, score_pipeline
from app.figures.positional import (
    PE_ORDERS,
    embedding_sum,
    pe_dimension_order,
    positional_curves,
    positional_heatmap,
    positional_similarity,
)
from app.figures.style import CELL_TEXT_MAX, CHARACTER_WIDTH, NARROWEST_PLOT_PX
from app.figures.text import MINUS_INF, plot_text
from app.figures.tokens import token_chips
from app.figures.training import training_curves
from app.figures.training_log import card_facts, series, training_log
from core import Request
from core.decoding.search import REASONS, Hypothesis, best_hypothesis
from core.labelled_attention import LabelledAttention
from core.model.config import POSITIONAL_LAYOUTS, ModelConfig
from core.model.transformer import Transformer, positional_encoding
from core.text.words import merge_attention, word_groups, word_label


@pytest.fixture(scope="module")
def analysis(translator, tiny_model_dir):
    return analyse(
        translator, Request(tiny_model_dir, "The dog sees the dog in the garden.", "de", 3)
    )


def ticks(axis):
    return list(axis.tickvals), list(axis.ticktext)


def test_attention_heatmap_is_the_traced_head_on_position_axes(analysis):
    r = analysis.result
    weights = r.attention.encoder.weights[1, 2]
    fig = attention_map(r.attention.encoder, 1, 2)
    np.testing.assert_array_equal(fig.data[0].z, weights)
    assert list(fig.data[0].x) == list(range(len(r.source_tokens)))
    tickvals, ticktext = ticks(fig.layout.xaxis)
    assert tickvals == list(range(len(r.source_tokens)))
    assert ticktext == [plot_text(t) for t in r.source_tokens]
    assert ticktext.count("·dog") == 2  # repeated words keep their own columns
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_word_starts_are_drawn_with_a_light_dot_not_the_heavy_sentencepiece_bar(analysis):
    r = analysis.result
    assert "▁dog" in r.source_tokens  # core's labels keep SentencePiece's mark: the data
    fig = attention_map(r.attention.encoder, 0, 0, "Encoder, ▁dog & <s>")
    _, ticktext = ticks(fig.layout.xaxis)
    assert "·dog" in ticktext and not any("▁" in label for label in ticktext)
    assert not any("▁" in cell for cell in np.ravel(fig.data[0].customdata))  # hover alike
    assert fig.layout.title.text == "Encoder, ·dog &amp; &lt;s&gt;"
    assert plot_text("▁un believ able") == "·un believ able"


def test_hover_names_query_key_and_value(analysis):
    r = analysis.result
    weights = r.attention.cross.weights[0, 1]
    fig = attention_map(r.attention.cross, 0, 1)
    hover = fig.data[0].customdata[1][2]
    position = f"{r.decoder_input_tokens[1]} → {r.output_tokens[1]}"
    assert f"query 1: {plot_text(position)}" in hover
    assert f"key 2: {plot_text(r.source_tokens[2])}" in hover
    assert f"weight {weights[1, 2]:.4f}" in hover
    assert fig.data[0].hovertemplate == "%{customdata}<extra></extra>"


def test_causal_cells_are_exactly_zero_in_the_figure(analysis):
    r = analysis.result
    fig = attention_map(r.attention.decoder, 0, 0)
    z = np.asarray(fig.data[0].z)
    above = np.triu_indices(len(r.decoder_input_tokens), 1)
    assert (z[above] == 0).all()
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-5)


def test_masked_scores_are_drawn_as_minus_infinity(analysis):
    r = analysis.result
    decoder = r.attention.decoder
    masked = decoder.masked_scores[1, 3]
    fig = heatmap(masked, decoder.query_labels, decoder.key_labels, zmin=None, zmax=None)
    z = np.asarray(fig.data[0].z, dtype=float)
    inf = np.isneginf(masked)
    assert inf.any() and np.isnan(z[inf]).all()
    np.testing.assert_array_equal(z[~inf], masked[~inf])
    assert (np.asarray(fig.data[0].text)[inf] == MINUS_INF).all()
    assert MINUS_INF in fig.data[0].customdata[0][1]
    json.loads(fig.to_json())  # -inf never reaches the JSON


def test_labels_are_shown_literally_never_as_markup():
    fig = heatmap(np.eye(3), ["<s>", "<b>x</b>", "a&b"], ["</s>", "<br>", "<2de>"])
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]
    assert "<br>" not in fig.layout.xaxis.ticktext[1]
    assert all("<b>x" not in cell for row in fig.data[0].customdata for cell in row)


def test_model_view_tiles_are_every_layer_and_head(analysis):
    r = analysis.result
    weights = r.attention.cross.weights
    layers, heads, q, k = weights.shape
    fig = attention_grid(r.attention.cross)
    z = np.asarray(fig.data[0].z, dtype=float)
    for layer in range(layers):
        for head in range(heads):
            tile = z[layer * (q + 1) : layer * (q + 1) + q, head * (k + 1) : head * (k + 1) + k]
            np.testing.assert_array_equal(tile, weights[layer, head])
    assert np.isnan(z[q]).all()  # a blank row between layers
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)
    first_query, first_key = (
        plot_text(t) for t in (r.attention.cross.query_labels[0], r.source_tokens[0])
    )
    assert fig.data[0].customdata[q + 1][0] == f"L2 H1 · 0: {first_query} → 0: {first_key}"
    long = attention_grid(LabelledAttention(np.zeros((6, 8, 40, 40)), ["a"] * 40, ["b"] * 40))
    assert long.data[0].customdata is None  # long sentences: weight only, a lighter page


def test_model_view_markers_name_the_tile_under_them(analysis):
    """A click reports the marker's customdata: it must be the layer and head (from 1) of the
    tile the marker sits in, and the cell under it must hold that head's weight."""
    attention = analysis.result.attention.decoder
    weights = attention.weights
    layers, heads, rows, columns = weights.shape
    fig = attention_grid(attention)
    mosaic, markers = fig.data
    assert markers.type == "scatter" and markers.mode == "markers"
    z = np.asarray(mosaic.z, dtype=float)
    named = []
    for x, y, (layer, head) in zip(markers.x, markers.y, markers.customdata):
        top, left = (layer - 1) * (rows + 1), (head - 1) * (columns + 1)
        assert top <= y <= top + rows - 1 and left <= x <= left + columns - 1
        row, column = round(y) - top, round(x) - left
        assert z[round(y), round(x)] == weights[layer - 1, head - 1, row, column]
        named.append((layer, head))
    assert sorted(named) == [
        (layer, head) for layer in range(1, layers + 1) for head in range(1, heads + 1)
    ]
    assert not fig.layout.shapes  # nothing zoomed, nothing outlined


def test_model_view_outlines_the_zoomed_tile(analysis):
    attention = analysis.result.attention.cross
    heads, rows, columns = attention.weights.shape[1:]
    (outline,) = attention_grid(attention, selected=(1, 2)).layout.shapes
    assert (outline.x0, outline.x1) == (2 * (columns + 1) - 0.5, 2 * (columns + 1) + columns - 0.5)
    assert (outline.y0, outline.y1) == (rows + 1 - 0.5, 2 * (rows + 1) - 1.5)
    (layer_row,) = attention_grid(attention, selected=(0, None)).layout.shapes
    assert (layer_row.x0, layer_row.x1) == (-0.5, heads * (columns + 1) - 1.5)
    assert (layer_row.y0, layer_row.y1) == (-0.5, rows - 0.5)


def test_merging_pieces_into_words_keeps_rows_summing_to_one():
    pieces = ["<2de>", "▁The", "▁un", "believ", "able", "▁dog", "</s>"]
    groups = word_groups(pieces)
    assert groups == [[0], [1], [2, 3, 4], [5], [6]]
    assert [word_label([pieces[i] for i in g]) for g in groups] == [
        "<2de>",
        "The",
        "unbelievable",
        "dog",
        "</s>",
    ]
    rng = np.random.default_rng(0)
    weights = np.tril(rng.random((7, 7)))  # causal: upper cells 0
    weights /= weights.sum(axis=1, keepdims=True)
    merged = merge_attention(weights, groups, groups)
    np.testing.assert_allclose(merged.sum(axis=1), 1.0)
    assert merged[1, 2] == 0 and merged[0, 4] == 0  # masked for every piece: still exactly 0
    np.testing.assert_allclose(merged[2, 1], weights[2:5, 1].mean())
    np.testing.assert_allclose(merged[4, 2], weights[6, 2:5].sum())


def test_byte_pieces_merge_into_their_character():
    pieces = ["▁I", "▁", "<0xF0>", "<0x9F>", "<0x99>", "<0x82>", "</s>"]
    assert word_groups(pieces) == [[0], [1, 2, 3, 4, 5], [6]]
    assert word_label(pieces[1:6]) == "🙂"


def test_merge_words_on_the_trace(analysis):
    r = analysis.result
    merged = r.word_attention.encoder
    queries, keys = merged.query_labels, merged.key_labels
    assert merged.weights.shape[:2] == r.attention.encoder.weights.shape[:2]
    assert queries == keys and "dog" in queries and queries.count("dog") == 2
    np.testing.assert_allclose(merged.weights.sum(axis=-1), 1.0, atol=1e-5)


def test_beam_tree_holds_what_the_search_kept_and_the_chosen_output(analysis):
    r = analysis.result
    last = len(r.steps) - 1
    nodes = tree_layout(r.steps, analysis.pieces, last)
    prefixes = {n.prefix: n for n in nodes}
    for step in r.steps:
        for c in step.candidates:
            prefix = (*step.hypotheses[c.parent].ids, c.token)
            if c.status in ("kept", "finished") or step.step == last:
                node = prefixes[prefix]
                numbers = (node.status, node.log_prob, node.token_log_prob)
                assert numbers == (c.status, c.log_prob, c.token_log_prob)
            elif c.status == "pruned":
                assert prefix not in prefixes or prefixes[prefix].status != "pruned"
    output = tuple(analysis.result.output_ids)
    assert prefixes[output].status == "finished"
    for i in range(len(output)):  # the whole path of the output is in the tree
        assert output[: i + 1] in prefixes
    for node in nodes:  # parents come before their children
        assert node.prefix == () or prefixes[node.parent].step < node.step
    fig = beam_tree(nodes, analysis.result.output_ids, last)
    drawn = sum(len(t.x) for t in fig.data if t.mode == "markers+text")
    assert drawn == len(nodes)


def test_beam_tree_grows_step_by_step(analysis):
    r = analysis.result
    first = tree_layout(r.steps, analysis.pieces, 0, show_pruned=False)
    assert {n.step for n in first} == {-1, 0}
    assert len(first) == 1 + sum(c.status != "pruned" for c in r.steps[0].candidates)


def test_greedy_search_is_a_chain(translator, tiny_model_dir):
    a = analyse(translator, Request(tiny_model_dir, "The cat sleeps.", "fr", 1))
    nodes = tree_layout(a.result.steps, a.pieces, len(a.result.steps) - 1, show_pruned=False)
    assert all(len([n for n in nodes if n.step == s]) == 1 for s in range(len(a.result.steps)))


def test_candidate_rows_and_bars_follow_the_step(analysis, translator):
    step = analysis.result.steps[1]
    decode = translator.tokenizer.decode
    rows = candidate_rows(step, analysis.pieces, decode)
    assert len(rows) == len(step.candidates)
    assert [r["status"] for r in rows] == [c.status for c in step.candidates]
    np.testing.assert_allclose(
        [r["probability"] for r in rows], np.exp([c.token_log_prob for c in step.candidates])
    )
    # the prefix is the beam's hypothesis as text, not its pieces
    assert [r["prefix"] for r in rows] == [
        decode(step.hypotheses[c.parent].ids) for c in step.candidates
    ]
    fig = candidate_bars(rows)
    assert sum(len(t.x) for t in fig.data) == len(rows)


def test_rerank_follows_the_length_penalty():
    short = Hypothesis([5, 3], -2.0, True)
    long = Hypothesis([5, 6, 7, 8, 9, 10, 3], -2.6, True)
    assert rerank([short, long], 0.0, str)[0]["length"] == 2
    top = rerank([short, long], 2.0, str)[0]
    assert top["length"] == 7 and top["chosen"]
    assert best_hypothesis([short, long], 2.0) is long
    curves = rerank_curves([short, long], np.array([0.0, 2.0]))
    assert curves[0][0] > curves[1][0] and curves[0][1] < curves[1][1]
    ranks, gaps = rerank_ranks([short, long], np.array([0.0, 2.0]))
    np.testing.assert_array_equal(ranks, [[1, 2], [2, 1]])  # the length penalty swaps them
    np.testing.assert_allclose(gaps[1, 0], curves[0][0] - curves[1][0])
    fig = rerank_lines(["short", "long"], ranks, gaps, np.array([0.0, 2.0]), 1.0)
    np.testing.assert_array_equal(fig.data[1].y, ranks[1])
    np.testing.assert_array_equal(fig.data[1].customdata, gaps[1])


def test_rerank_marks_what_core_chose_and_shows_text(analysis, translator):
    r = analysis.result
    decode = translator.tokenizer.decode
    rows = rerank(r.finished, 0.6, decode)
    assert rows[0]["chosen"] and sum(row["chosen"] for row in rows) == 1
    assert rows[0]["log P"] == pytest.approx(r.log_prob)
    assert rows[0]["hypothesis"] == decode(r.output_ids) == r.text  # text, not pieces


def test_rerank_chart_is_the_rank_core_gives_at_every_alpha(translator, tiny_model_dir):
    analysis = analyse(
        translator, Request(tiny_model_dir, "The dog sees the cat in the big garden.", "de", 6)
    )
    finished = analysis.result.finished
    alphas = np.linspace(0.0, 2.0, 41)
    ranks, gaps = rerank_ranks(finished, alphas)
    for column, alpha in enumerate(alphas):  # rank 1 is what core would output at that alpha
        best = best_hypothesis(list(finished), float(alpha))
        assert ranks[finished.index(best), column] == 1
        assert sorted(ranks[:, column]) == list(range(1, len(finished) + 1))
        assert gaps[finished.index(best), column] == 0 and (gaps[:, column] >= 0).all()
    labels = [legend_text(f"hypothesis <{i}> " * 9, 12) for i in range(len(finished))]
    fig = rerank_lines(labels, ranks, gaps, alphas, 0.6)
    points = {(x, y) for trace in fig.data for x, y in zip(trace.x, trace.y)}
    assert len(points) == len(finished) * len(alphas)  # no line lies on top of another
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # rank 1 on top
    at = int(np.argmin(np.abs(alphas - 0.6)))
    assert [trace.legendrank for trace in fig.data] == list(ranks[:, at])
    for label, trace in zip(labels, fig.data):  # the legend keeps each whole text, wrapped
        assert trace.name.replace("<br>", " ") == plot_text(label)
        lines = html.unescape(trace.name).split("<br>")
        assert max(map(len, lines)) <= LEGEND_CHARS
    assert legend_text("x" * 500, 3).endswith("… (3 pieces)")  # only beyond 400


def test_every_reason_of_the_search_is_explained(translator, tiny_model_dir, analysis):
    assert set(REASON_EXPLANATIONS) == set(REASONS)  # a new reason in core needs its meaning
    for beam in (3, 8):
        result = analyse(
            translator, Request(tiny_model_dir, "A man is riding a bicycle.", "de", beam)
        ).result
        explanations = reason_explanations(beam)
        reasons = {c.reason for step in result.steps for c in step.candidates}
        assert reasons <= set(explanations), reasons - set(explanations)
        assert f"not among the {beam} best" in explanations
        assert "below the best overall" in explanations
        assert all(meaning and "{" not in meaning for meaning in explanations.values())
    explanations = reason_explanations(3)
    step = analysis.result.steps[1]
    rows = candidate_rows(step, analysis.pieces, translator.tokenizer.decode)
    fig = candidate_bars(rows, explanations)
    hovers = {tuple(cell) for trace in fig.data for cell in trace.customdata}
    for row in rows:  # each bar's tooltip says what its reason means
        assert any(plot_text(explanations[row["why"]]) in cell for cell in hovers)
    last = len(analysis.result.steps) - 1
    nodes = tree_layout(analysis.result.steps, analysis.pieces, last)
    tree = beam_tree(nodes, analysis.result.output_ids, last, explanations)
    shown = {plot_text(why): plot_text(say) for why, say in explanations.items()}
    explained = [cell for trace in tree.data for cell in trace.customdata or () if cell[5]]
    assert explained and all(cell[6] == shown[cell[5]] for cell in explained)


def test_beam_tree_shades_the_column_of_the_step_the_slider_names(analysis):
    r = analysis.result
    for step in range(len(r.steps)):
        nodes = tree_layout(r.steps, analysis.pieces, step)
        fig = beam_tree(nodes, r.output_ids, step)
        shade = fig.layout.shapes[0]
        assert (shade.x0 + shade.x1) / 2 == step  # the shaded column is the slider's number
        drawn = {
            (x, y)
            for trace in fig.data
            if trace.mode == "markers+text"
            for x, y in zip(trace.x, trace.y)
        }
        newest = [n for n in nodes if n.step == step]  # what this step proposed
        assert newest and all((step, n.y) in drawn for n in newest)
        axis = fig.layout.xaxis
        assert axis.ticktext[list(axis.tickvals).index(step)] == str(step)
        assert axis.ticktext[0] == "start" and axis.tickvals[0] == -1  # the root, <s>


def test_beam_tree_labels_clear_of_edges_and_shade_clear_of_them_too(analysis):
    r = analysis.result
    last = len(r.steps) - 1
    nodes = tree_layout(r.steps, analysis.pieces, last)
    fig = beam_tree(nodes, r.output_ids, last)
    parents = {n.parent for n in nodes if n.prefix}
    inner = [n for n in nodes if n.prefix in parents]
    # an inner node's label is a chip above it (edges leave it to the right), drawn over the lines
    chips = {(a.x, a.y): a for a in fig.layout.annotations}
    assert len(chips) == len(inner)
    for node in inner:
        chip = chips[(node.step, node.y)]
        assert chip.text == plot_text(node.piece) and chip.yshift > 0 and chip.bgcolor
    texts = {
        (x, y): text
        for trace in fig.data
        if trace.mode == "markers+text"
        for x, y, text in zip(trace.x, trace.y, trace.text)
    }
    for node in nodes:  # leaves keep their label to the right, inner nodes none there
        expected = "" if node.prefix in parents else plot_text(node.piece)
        assert texts[(node.step, node.y)] == expected
    # the shaded column is translucent and below the traces: edges show through on a dark theme
    shade = fig.layout.shapes[0]
    alpha = float(shade.fillcolor.rsplit(",", 1)[1].rstrip(")"))
    assert shade.layer == "below" and alpha <= 0.25 and shade.opacity in (None, 1)


def test_a_long_search_shows_its_latest_steps(analysis):
    r = analysis.result
    last = len(r.steps) - 1
    nodes = tree_layout(r.steps, analysis.pieces, last)
    fig = beam_tree(nodes, r.output_ids, last, steps_shown=3)
    low, high = fig.layout.xaxis.range
    assert low < last - 2 < last < high and low > last - 3  # steps last-2..last in view
    assert first_step_in_view(last, 3) == last - 2  # as the page's caption says
    assert first_step_in_view(1) == -1  # a short search: all of it, root included
    bottom, top = fig.layout.yaxis.range  # the rows of the nodes in view, best on top
    rows = [n.y for n in nodes if n.step >= last - 3]
    assert top < min(rows) <= max(rows) < bottom


def test_large_beams_cap_the_candidates_drawn(translator, tiny_model_dir):
    analysis = analyse(
        translator, Request(tiny_model_dir, "The happy child reads a big red book today.", "de", 8)
    )
    r = analysis.result
    per_beam = candidates_per_beam(8)
    step = r.steps[2]
    traced = traced_per_beam(step)
    assert traced == 16 and per_beam < traced
    shown = shown_candidates(step, per_beam)
    kept_or_finished = [c for c in step.candidates if c.status != "pruned"]
    assert all(c in shown for c in kept_or_finished)  # every decision is still drawn
    for beam in range(len(step.hypotheses)):
        mine = [c for c in step.candidates if c.parent == beam]
        drawn = [c for c in shown if c.parent == beam]
        assert drawn[: min(per_beam, len(mine))] == mine[:per_beam]  # the most probable first
        assert all(c.status != "pruned" for c in drawn[per_beam:])
    assert len(shown) <= 40 < len(step.candidates)
    rows = candidate_rows(step, analysis.pieces, translator.tokenizer.decode, shown)
    assert sum(len(t.x) for t in candidate_bars(rows).data) == len(shown)
    nodes = tree_layout(r.steps, analysis.pieces, 2, per_beam=per_beam)
    pruned = {n.prefix for n in nodes if n.status == "pruned"}
    assert pruned == {
        (*step.hypotheses[c.parent].ids, c.token) for c in shown if c.status == "pruned"
    }
    assert candidates_per_beam(4) == 8 and candidates_per_beam(1) >= 2  # small beams: all


def test_positional_encoding_figures_match_core(analysis):
    r = analysis.result
    s, d = r.embeddings.source_position.shape
    np.testing.assert_allclose(r.embeddings.source_position, positional_encoding(s, d).numpy())
    fig = positional_heatmap(r.embeddings.source_position, r.source_tokens, layout="interleaved")
    np.testing.assert_array_equal(fig.data[0].z, r.embeddings.source_position)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    pe = positional_encoding(50, d).numpy()
    np.testing.assert_allclose(positional_similarity(pe).data[0].z, pe @ pe.T)
    curves = positional_curves(pe, [0, 3], layout="interleaved")
    np.testing.assert_array_equal(curves.data[1].y, pe[:, 3])


# a wave as the figures name it: "sin(pos / 10000^(2/32))"
NAMED_WAVE = re.compile(r"(sin|cos)\(pos / 10000\^\((\d+)/(\d+)\)\)")


def named_wave_values(text: str, positions: np.ndarray) -> np.ndarray:
    """The wave ``text`` names (the one NAMED_WAVE finds in it), evaluated at ``positions``."""
    function, two_i, d_model = NAMED_WAVE.search(text).groups()
    return getattr(np, function)(positions / 10000 ** (int(two_i) / int(d_model)))


def tiny_positional_encoding(layout: str) -> np.ndarray:
    """The positional encoding a d_model 32 model of ``layout`` adds, (max_len, 32)."""
    config = ModelConfig(
        vocab_size=40, d_model=32, n_heads=4, d_ff=64, max_len=70, positional_layout=layout
    )
    return Transformer(config).pe.numpy()


@pytest.mark.parametrize("layout", POSITIONAL_LAYOUTS)
def test_curve_legends_name_the_wave_each_curve_draws(layout):
    pe = tiny_positional_encoding(layout)
    positions = np.arange(len(pe), dtype=np.float64)
    fig = positional_curves(pe, range(pe.shape[1]), layout=layout)
    assert len(fig.data) == pe.shape[1]
    for trace in fig.data:
        np.testing.assert_allclose(
            trace.y, named_wave_values(trace.name, positions), atol=1e-6, err_msg=trace.name
        )


@pytest.mark.parametrize("order", PE_ORDERS)
@pytest.mark.parametrize("layout", POSITIONAL_LAYOUTS)
def test_heatmap_hover_names_the_wave_of_each_column(layout, order):
    pe = tiny_positional_encoding(layout)
    positions = np.arange(len(pe), dtype=np.float64)
    fig = positional_heatmap(pe, order=order, layout=layout)
    z, hover = np.asarray(fig.data[0].z), np.asarray(fig.data[0].customdata)
    for column in range(pe.shape[1]):
        np.testing.assert_allclose(
            z[:, column], named_wave_values(hover[0, column], positions), atol=1e-6
        )
    ticks = fig.layout.xaxis  # each tick names its column's own dimension, which hover names
    for column, text in zip(ticks.tickvals, ticks.ticktext):
        assert f"dimension {text}: " in hover[0, column]
    functions = [NAMED_WAVE.search(text).group(1) for text in hover[0]]
    if order == "blocks":  # one block of sines, then one of cosines
        assert functions == ["sin"] * 16 + ["cos"] * 16
    else:
        assert functions == ["sin", "cos"] * 16


def test_positional_heatmap_in_sine_and_cosine_blocks(analysis):
    r = analysis.result
    pe = r.embeddings.source_position  # (positions, d_model), as the model added it
    d_model = pe.shape[1]
    interleaved = positional_heatmap(pe, r.source_tokens, layout="interleaved")
    np.testing.assert_array_equal(interleaved.data[0].z, pe)
    fig = positional_heatmap(pe, r.source_tokens, order="blocks", layout="interleaved")
    z = np.asarray(fig.data[0].z)
    half = d_model // 2
    np.testing.assert_array_equal(z[:, :half], pe[:, 0::2])  # the sines
    np.testing.assert_array_equal(z[:, half:], pe[:, 1::2])  # the cosines
    np.testing.assert_allclose(z[0, :half], 0.0, atol=1e-6)  # sin(0) at position 0
    np.testing.assert_allclose(z[0, half:], 1.0, atol=1e-6)  # cos(0)
    # hover and ticks name each column's own dimension, not its place in the drawing
    assert f"dimension 1: cos(pos / 10000^(0/{d_model}))" in fig.data[0].customdata[2][half]
    assert f"{pe[2, 1]:.4f}" in fig.data[0].customdata[2][half]
    axis = fig.layout.xaxis
    assert [int(text) for text in axis.ticktext] == [
        int(pe_dimension_order(d_model, "blocks", "interleaved")[tick]) for tick in axis.tickvals
    ]


def test_a_halves_model_draws_as_stored_in_blocks_and_interleaves_like_the_paper():
    halves, interleaved = (tiny_positional_encoding(layout) for layout in POSITIONAL_LAYOUTS[::-1])
    as_stored = positional_heatmap(halves, order="blocks", layout="halves")
    np.testing.assert_array_equal(as_stored.data[0].z, halves)
    papers = positional_heatmap(halves, order="interleaved", layout="halves")
    np.testing.assert_allclose(papers.data[0].z, interleaved, atol=1e-6)


def test_embedding_sum_is_token_plus_position(analysis):
    e = analysis.result.embeddings
    tokens = analysis.result.source_tokens
    fig = embedding_sum(e.source_token, e.source_position, tokens, layout="interleaved")
    np.testing.assert_allclose(fig.data[2].z, e.source_token + e.source_position)
    # one scale: the largest value of the three panels, shared
    assert {trace.coloraxis for trace in fig.data} == {"coloraxis"}
    largest = max(np.abs(e.source_token).max(), np.abs(e.source_token + e.source_position).max())
    assert fig.layout.coloraxis.cmax == pytest.approx(largest)
    own = embedding_sum(
        e.source_token, e.source_position, tokens, shared_scale=False, layout="interleaved"
    )
    parts = [e.source_token, e.source_position, e.source_token + e.source_position]
    for name, trace, values in zip(("coloraxis", "coloraxis2", "coloraxis3"), own.data, parts):
        np.testing.assert_allclose(trace.z, values)
        axis = own.layout[name]
        assert trace.coloraxis == name
        assert axis.cmax == pytest.approx(np.abs(values).max()) and axis.cmin == -axis.cmax
    blocks = embedding_sum(
        e.source_token, e.source_position, tokens, order="blocks", layout="interleaved"
    )
    dims = pe_dimension_order(e.source_token.shape[1], "blocks", "interleaved")
    for trace, values in zip(blocks.data, parts):  # the same columns in every panel
        np.testing.assert_allclose(trace.z, values[:, dims])
        np.testing.assert_array_equal(np.asarray(trace.customdata)[0], dims)  # hover: own dim


def test_score_pipeline_is_the_heads_scores_masked_scores_and_weights(analysis):
    decoder = analysis.result.attention.decoder
    fig = score_pipeline(decoder, 1, 2)
    panels = [t for t in fig.data if t.type == "heatmap" and t.coloraxis]
    scores, masked, weights = (np.asarray(t.z, dtype=float) for t in panels)
    np.testing.assert_array_equal(scores, decoder.scores[1, 2])
    forbidden = np.isneginf(decoder.masked_scores[1, 2])
    assert forbidden.any() and np.isnan(masked[forbidden]).all()
    np.testing.assert_array_equal(masked[~forbidden], decoder.masked_scores[1, 2][~forbidden])
    np.testing.assert_array_equal(weights, decoder.weights[1, 2])
    assert (weights[forbidden] == 0).all()
    # the two score panels share one scale and one colour bar; the weights have theirs
    assert [t.coloraxis for t in panels] == ["coloraxis", "coloraxis", "coloraxis2"]
    limit = np.abs(decoder.scores[1, 2]).max()
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (-limit, limit)
    assert (fig.layout.coloraxis2.cmin, fig.layout.coloraxis2.cmax) == (0.0, 1.0)
    overlays = [t for t in fig.data if t.type == "heatmap" and not t.coloraxis]
    assert len(overlays) == 2 and not any(t.showscale for t in overlays)  # no third colour bar
    # masked cells: grey, written −∞ before the softmax and 0 after where cells are large enough,
    # named in the legend
    written = [MINUS_INF, "0"] if masked_text_size(*forbidden.shape) else ["", ""]
    assert [np.asarray(t.text)[forbidden][0] for t in overlays] == written
    for overlay in overlays:
        assert (np.asarray(overlay.text)[~forbidden] == "").all()
        assert not np.isnan(np.asarray(overlay.z, dtype=float)[forbidden]).any()
    assert any(t.type == "scatter" and "−∞" in t.name for t in fig.data)
    # core's labels on every panel's axes (a long sentence's every k-th: tick values say which)
    keys = [plot_text(k) for k in decoder.key_labels]
    for axis in ("xaxis", "xaxis2", "xaxis3"):
        tickvals, ticktext = ticks(fig.layout[axis])
        assert tickvals[0] == 0 and ticktext == [keys[tick] for tick in tickvals]
    tickvals, ticktext = ticks(fig.layout.yaxis)
    assert ticktext == [plot_text(decoder.query_labels[tick]) for tick in tickvals]
    json.loads(fig.to_json())  # -inf never reaches the JSON


def test_score_pipeline_skips_masks_it_lacks(translator, tiny_model_dir):
    long = analyse(
        translator,
        Request(tiny_model_dir, "the happy dog runs in the big green garden " * 3, "de", 1),
    )
    fig = score_pipeline(long.result.attention.encoder, 0, 0)
    panels = [t for t in fig.data if t.type == "heatmap"]
    assert len(panels) == 3  # no mask in a single sentence: no grey cells, no legend entry
    assert not fig.layout.showlegend


def test_token_chips_show_every_piece_with_its_id(analysis):
    r = analysis.result
    fig = token_chips(r.source_tokens, r.source_ids, analysis.result.source_kinds, per_row=5)
    text = [cell for row in fig.data[0].text for cell in row if cell]
    assert len(text) == len(r.source_tokens)
    assert text[0] == f"&lt;2de&gt;<br><sub>{r.source_ids[0]}</sub>"
    assert analysis.result.source_kinds[0] == analysis.result.source_kinds[-1] == "special"


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("the dog runs " * 40, "cut after piece"),
        ("I like 🙂 and Привет.", "byte fallback"),
        ("The dog\x00 runs\u200b.", "control or zero-width"),
        ("a" * (MAX_CHARS + 5), f"longer than {MAX_CHARS}"),
    ],
)
def test_analyse_explains_what_happened_to_the_input(translator, tiny_model_dir, text, note):
    a = analyse(translator, Request(tiny_model_dir, text, "de", 1))
    assert any(note in n for n in a.notes)
    assert not any(text in n for n in a.notes)  # messages never repeat user text


def test_analyse_refuses_empty_text(translator, tiny_model_dir):
    with pytest.raises(ValueError, match="nothing to translate"):
        analyse(translator, Request(tiny_model_dir, " \n\t ", "de", 2))


def test_metrics_log_is_read_leniently(tmp_path):
    assert training_log(tmp_path / "missing.jsonl") == ([], [])
    log = tmp_path / "metrics.jsonl"
    log.write_text(
        '{"step": 1, "elapsed_s": 1, "train_loss": 5.0, "lr": 0.001, "tokens_per_s": 900}\n'
        "not json\n[1, 2]\n"
        '{"step": 2, "val_loss": 4.0, "val_bleu": 3.5, "val_chrf": 20.0}\n'
        '{"step": 3, "train_loss": 4.5}\n'
        '{"step": 4, "train_lo'  # a run killed while writing
    )
    train, val = training_log(log)
    assert [r["step"] for r in train] == [1, 3] and [r["step"] for r in val] == [2]
    assert series(train, "lr") == ([1], [0.001])
    fig = training_curves({"loss": {"train": series(train, "train_loss")}})
    assert list(fig.data[0].y) == [5.0, 4.5]


def test_a_series_in_two_panels_has_one_colour_and_one_legend_entry():
    panels = {
        "entropy": {"L6 H1": ([1, 2], [2.0, 1.0])},
        "confidence": {"L6 H1": ([1, 2], [0.2, 0.6]), "L1 H1": ([1, 2], [0.1, 0.1])},
    }
    fig = training_curves(panels)
    head, again, other = fig.data
    assert head.line.color == again.line.color != other.line.color
    assert [trace.showlegend for trace in fig.data] == [True, False, True]


def test_the_cards_training_record_reads_as_a_person_writes_it():
    training = {
        "steps": 57719,
        "seconds": 37729,
        "averaged_checkpoints": ["step_0008000.pt", "step_0008500.pt"],
        "recipe": {"warmup": 1000, "bf16": True, "subword_alpha": 0.3},
        "validation_curve": [{"step": 2000, "val_loss": 2.4}],
        "mfu": 0.0676784,
    }
    rows = {row[""]: row["value"] for row in card_facts(training)}
    assert rows == {
        "steps": "57,719",
        "training time": "10 h 29 min",
        "averaged checkpoints": "step_0008000.pt, step_0008500.pt",
        "recipe: warmup": "1,000",
        "recipe: bf16": "true",
        "recipe: subword alpha": "0.3",
        "model FLOPs utilisation of the last run (share of that peak)": "6.8%",
    }  # the validation curve is the page's chart, not a cell of text


def test_training_curve_titles_and_series_are_shown_literally():
    # plotly reads subplot titles and legend names as HTML: "</s>" would vanish
    fig = training_curves({"Confidence (top weight, not </s>)": {"<2de> & co": ([1], [0])}})
    assert fig.layout.annotations[0].text == "Confidence (top weight, not &lt;/s&gt;)"
    assert fig.data[0].name == "&lt;2de&gt; &amp; co"
    assert html.unescape(fig.layout.annotations[0].text).endswith("not </s>)")


def test_cell_text_shrinks_with_the_sentence_and_never_passes_its_cap():
    short = np.array([["<2de>", "·animal", "</s>"], ["<2de>", "·dog", "<pad>"]])
    assert cell_text_size(short) == CELL_TEXT_MAX
    eighteen, forty = (np.array([["·animal"] * n] * 2) for n in (18, 40))
    assert cell_text_size(forty) < cell_text_size(eighteen) < CELL_TEXT_MAX
    # the longest piece fits its cell across the narrowest plot
    cell = NARROWEST_PLOT_PX / 40
    assert cell_text_size(forty) * CHARACTER_WIDTH * len("·animal") <= cell


def test_beam_figures_built_in_one_go_draw_what_plotly_s_helpers_draw(analysis):
    """The Beam search page's figures are built in one go (a seventh of the time of adding
    traces, a shaded column and chips one by one): the shaded column, the chips and the current
    alpha's line are what Figure.add_vrect, add_annotation and add_vline would draw."""
    r = analysis.result
    step = len(r.steps) - 1
    nodes = tree_layout(r.steps, analysis.pieces, step)
    tree = beam_tree(nodes, r.output_ids, step)
    inner = {n.parent for n in nodes if n.prefix}
    drawn = go.Figure()
    drawn.add_vrect(
        x0=step - 0.5,
        x1=step + 0.5,
        fillcolor=STEP_SHADE,
        line={"color": STEP_EDGE, "width": 1, "dash": "dot"},
        layer="below",
    )
    for node in nodes:
        if node.prefix in inner:
            drawn.add_annotation(
                x=node.step,
                y=node.y,
                text=plot_text(node.piece),
                showarrow=False,
                yshift=14,
                borderpad=1,
                **LABEL_CHIP,
            )
    assert tree.layout.shapes == drawn.layout.shapes
    assert tree.layout.annotations == drawn.layout.annotations

    alphas = np.linspace(0.0, 2.0, 41)
    ranks, gaps = rerank_ranks(r.finished, alphas)
    lines = rerank_lines([str(n) for n in range(len(r.finished))], ranks, gaps, alphas, 0.6)
    drawn = go.Figure(go.Scatter(x=alphas, y=ranks[0]))
    drawn.add_vline(x=0.6, line_dash="dash", line_color="#888888")
    assert lines.layout.shapes == drawn.layout.shapes
