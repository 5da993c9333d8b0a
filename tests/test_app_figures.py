"""The app's figures and data shaping, without Streamlit: what is drawn is what the model
computed."""

import json

import numpy as np
import pytest

from app import figures
from app.analysis import (
    MAX_CHARS,
    analyse,
    beam_tree,
    candidate_rows,
    rerank,
    rerank_curves,
    series,
    training_log,
)
from core.decoding import Hypothesis, best_hypothesis
from core.labelled_attention import LabelledAttention
from core.model import positional_encoding
from core.words import merge_attention, word_groups, word_label


@pytest.fixture(scope="module")
def analysis(translator):
    return analyse(translator, "The dog sees the dog in the garden.", "de", 3, 0.6)


def ticks(axis):
    return list(axis.tickvals), list(axis.ticktext)


def test_attention_heatmap_is_the_traced_head_on_position_axes(analysis):
    r = analysis.result
    weights = r.attention.encoder.weights[1, 2]
    fig = figures.attention_map(r.attention.encoder, 1, 2)
    np.testing.assert_array_equal(fig.data[0].z, weights)
    assert list(fig.data[0].x) == list(range(len(r.source_tokens)))
    tickvals, ticktext = ticks(fig.layout.xaxis)
    assert tickvals == list(range(len(r.source_tokens)))
    assert ticktext == [figures.plot_text(t) for t in r.source_tokens]
    assert ticktext.count("▁dog") == 2  # repeated words keep their own columns
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_hover_names_query_key_and_value(analysis):
    r = analysis.result
    weights = r.attention.cross.weights[0, 1]
    fig = figures.attention_map(r.attention.cross, 0, 1)
    hover = fig.data[0].customdata[1][2]
    position = f"{r.decoder_input_tokens[1]} → {r.output_tokens[1]}"
    assert f"query 1: {figures.plot_text(position)}" in hover
    assert f"key 2: {figures.plot_text(r.source_tokens[2])}" in hover
    assert f"weight {weights[1, 2]:.4f}" in hover
    assert fig.data[0].hovertemplate == "%{customdata}<extra></extra>"


def test_causal_cells_are_exactly_zero_in_the_figure(analysis):
    r = analysis.result
    fig = figures.attention_map(r.attention.decoder, 0, 0)
    z = np.asarray(fig.data[0].z)
    above = np.triu_indices(len(r.decoder_input_tokens), 1)
    assert (z[above] == 0).all()
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-5)


def test_masked_scores_are_drawn_as_minus_infinity(analysis):
    r = analysis.result
    decoder = r.attention.decoder
    masked = decoder.masked_scores[1, 3]
    fig = figures.heatmap(masked, decoder.query_labels, decoder.key_labels, zmin=None, zmax=None)
    z = np.asarray(fig.data[0].z, dtype=float)
    inf = np.isneginf(masked)
    assert inf.any() and np.isnan(z[inf]).all()
    np.testing.assert_array_equal(z[~inf], masked[~inf])
    assert (np.asarray(fig.data[0].text)[inf] == figures.MINUS_INF).all()
    assert figures.MINUS_INF in fig.data[0].customdata[0][1]
    json.loads(fig.to_json())  # -inf never reaches the JSON


def test_labels_are_shown_literally_never_as_markup():
    fig = figures.heatmap(np.eye(3), ["<s>", "<b>x</b>", "a&b"], ["</s>", "<br>", "<2de>"])
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]
    assert "<br>" not in fig.layout.xaxis.ticktext[1]
    assert all("<b>x" not in cell for row in fig.data[0].customdata for cell in row)


def test_model_view_tiles_are_every_layer_and_head(analysis):
    r = analysis.result
    weights = r.attention.cross.weights
    layers, heads, q, k = weights.shape
    fig = figures.attention_grid(r.attention.cross)
    z = np.asarray(fig.data[0].z, dtype=float)
    for layer in range(layers):
        for head in range(heads):
            tile = z[layer * (q + 1) : layer * (q + 1) + q, head * (k + 1) : head * (k + 1) + k]
            np.testing.assert_array_equal(tile, weights[layer, head])
    assert np.isnan(z[q]).all()  # a blank row between layers
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)
    first_query, first_key = (
        figures.plot_text(t) for t in (r.attention.cross.query_labels[0], r.source_tokens[0])
    )
    assert fig.data[0].customdata[q + 1][0] == f"L2 H1 · 0: {first_query} → 0: {first_key}"
    long = figures.attention_grid(
        LabelledAttention(np.zeros((6, 8, 40, 40)), ["a"] * 40, ["b"] * 40)
    )
    assert long.data[0].customdata is None  # long sentences: weight only, a lighter page


def test_model_view_markers_name_the_tile_under_them(analysis):
    """A click reports the marker's customdata: it must be the layer and head (from 1) of the
    tile the marker sits in, and the cell under it must hold that head's weight."""
    attention = analysis.result.attention.decoder
    weights = attention.weights
    layers, heads, rows, columns = weights.shape
    fig = figures.attention_grid(attention)
    heatmap, markers = fig.data
    assert markers.type == "scatter" and markers.mode == "markers"
    z = np.asarray(heatmap.z, dtype=float)
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
    (outline,) = figures.attention_grid(attention, selected=(1, 2)).layout.shapes
    assert (outline.x0, outline.x1) == (2 * (columns + 1) - 0.5, 2 * (columns + 1) + columns - 0.5)
    assert (outline.y0, outline.y1) == (rows + 1 - 0.5, 2 * (rows + 1) - 1.5)
    (layer_row,) = figures.attention_grid(attention, selected=(0, None)).layout.shapes
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
    nodes = beam_tree(r.steps, analysis.pieces, last)
    prefixes = {n.prefix: n for n in nodes}
    for step in r.steps:
        for c in step.candidates:
            prefix = (*step.hypotheses[c.parent].tokens, c.token)
            if c.status in ("kept", "finished") or step.step == last:
                node = prefixes[prefix]
                assert (node.status, node.score, node.log_prob) == (c.status, c.score, c.log_prob)
            elif c.status == "pruned":
                assert prefix not in prefixes or prefixes[prefix].status != "pruned"
    output = tuple(analysis.result.output_ids)
    assert prefixes[output].status == "finished"
    for i in range(len(output)):  # the whole path of the output is in the tree
        assert output[: i + 1] in prefixes
    for node in nodes:  # parents come before their children
        assert node.prefix == () or prefixes[node.parent].step < node.step
    fig = figures.beam_tree(nodes, analysis.result.output_ids, last)
    drawn = sum(len(t.x) for t in fig.data if t.mode == "markers+text")
    assert drawn == len(nodes)


def test_beam_tree_grows_step_by_step(analysis):
    r = analysis.result
    first = beam_tree(r.steps, analysis.pieces, 0, show_pruned=False)
    assert {n.step for n in first} == {-1, 0}
    assert len(first) == 1 + sum(c.status != "pruned" for c in r.steps[0].candidates)


def test_greedy_search_is_a_chain(translator):
    a = analyse(translator, "The cat sleeps.", "fr", 1, 0.6)
    nodes = beam_tree(a.result.steps, a.pieces, len(a.result.steps) - 1, show_pruned=False)
    assert all(len([n for n in nodes if n.step == s]) == 1 for s in range(len(a.result.steps)))


def test_candidate_rows_and_bars_follow_the_step(analysis):
    step = analysis.result.steps[1]
    rows = candidate_rows(step, analysis.pieces)
    assert len(rows) == len(step.candidates)
    assert [r["status"] for r in rows] == [c.status for c in step.candidates]
    np.testing.assert_allclose(
        [r["probability"] for r in rows], np.exp([c.log_prob for c in step.candidates])
    )
    fig = figures.candidate_bars(rows)
    assert sum(len(t.x) for t in fig.data) == len(rows)


def test_rerank_follows_the_length_penalty():
    short = Hypothesis([5, 3], -2.0, True)
    long = Hypothesis([5, 6, 7, 8, 9, 10, 3], -2.6, True)
    assert rerank([short, long], 0.0, {})[0]["length"] == 2
    top = rerank([short, long], 2.0, {})[0]
    assert top["length"] == 7 and top["chosen"]
    assert best_hypothesis([short, long], 2.0) is long
    curves = rerank_curves([short, long], np.array([0.0, 2.0]))
    assert curves[0][0] > curves[1][0] and curves[0][1] < curves[1][1]
    fig = figures.rerank_lines(["short", "long"], curves, np.array([0.0, 2.0]), 1.0)
    np.testing.assert_array_equal(fig.data[1].y, curves[1])


def test_rerank_marks_what_core_chose(analysis):
    r = analysis.result
    rows = rerank(r.finished, 0.6, analysis.pieces)
    assert rows[0]["chosen"] and sum(row["chosen"] for row in rows) == 1
    assert rows[0]["log P"] == pytest.approx(r.score)


def test_positional_encoding_figures_match_core(analysis):
    r = analysis.result
    s, d = r.embeddings.source_position.shape
    np.testing.assert_allclose(r.embeddings.source_position, positional_encoding(s, d).numpy())
    fig = figures.positional_heatmap(r.embeddings.source_position, r.source_tokens)
    np.testing.assert_array_equal(fig.data[0].z, r.embeddings.source_position)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    pe = positional_encoding(50, d).numpy()
    np.testing.assert_allclose(figures.positional_similarity(pe).data[0].z, pe @ pe.T)
    curves = figures.positional_curves(pe, [0, 3])
    np.testing.assert_array_equal(curves.data[1].y, pe[:, 3])
    assert "cos" in curves.data[1].name and "sin" in curves.data[0].name


def test_embedding_sum_is_token_plus_position(analysis):
    e = analysis.result.embeddings
    fig = figures.embedding_sum(e.source_token, e.source_position, analysis.result.source_tokens)
    np.testing.assert_allclose(fig.data[2].z, e.source_token + e.source_position)


def test_token_chips_show_every_piece_with_its_id(analysis):
    r = analysis.result
    fig = figures.token_chips(r.source_tokens, r.source_ids, analysis.source_kinds, per_row=5)
    text = [cell for row in fig.data[0].text for cell in row if cell]
    assert len(text) == len(r.source_tokens)
    assert text[0] == f"&lt;2de&gt;<br><sub>{r.source_ids[0]}</sub>"
    assert analysis.source_kinds[0] == analysis.source_kinds[-1] == "special"


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("the dog runs " * 40, "cut after piece"),
        ("I like 🙂 and Привет.", "byte fallback"),
        ("The dog\x00 runs\u200b.", "control or zero-width"),
        ("a" * (MAX_CHARS + 5), f"longer than {MAX_CHARS}"),
    ],
)
def test_analyse_explains_what_happened_to_the_input(translator, text, note):
    a = analyse(translator, text, "de", 1, 0.6)
    assert any(note in n for n in a.notes)
    assert not any(text in n for n in a.notes)  # messages never repeat user text


def test_analyse_refuses_empty_text(translator):
    with pytest.raises(ValueError, match="nothing to translate"):
        analyse(translator, " \n\t ", "de", 2, 0.6)


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
    fig = figures.training_curves({"loss": {"train": series(train, "train_loss")}})
    assert list(fig.data[0].y) == [5.0, 4.5]
