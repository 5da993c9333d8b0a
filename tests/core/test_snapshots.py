"""Watching attention being learned: snapshots load, sit on the training log's step axis, and the
last one is the shipped model exactly. That the Training dynamics page plays them back is tested
in tests/app/test_training_page.py."""

import numpy as np
import pytest
import torch

from core import DEFAULT_MODEL, Request, Translator
from core.files.checkpoint import safe_load
from core.files.model_dir import MODEL_FILE, ModelDir
from core.inspection.snapshots import (
    VocabularyChange,
    head_dynamics,
    load_snapshot,
    training_record,
    view_snapshot,
    vocabulary_change,
)
from tests.conftest import EARLY_STEPS, FINAL_STEP, TINY

SENTENCE = "The animal didn't cross the street because it was too tired."


def test_snapshots_are_listed_oldest_first_and_end_with_the_final_model(history_dir):
    found = ModelDir(history_dir).snapshots()
    assert [snapshot.step for snapshot in found] == [*EARLY_STEPS, FINAL_STEP]
    assert found[-1].weights == MODEL_FILE
    assert found[0].weights == "snapshots/step_0000005.pt"


def test_a_model_without_snapshots_lists_none(tiny_model_dir):
    assert ModelDir(tiny_model_dir).snapshots() == []


def test_the_training_record_is_the_last_log_line_at_or_before_the_step(history_dir):
    assert training_record(history_dir, 20).train_loss == pytest.approx(7.0)
    assert training_record(history_dir, 22).train_loss == pytest.approx(7.0)
    assert training_record(history_dir, 20).validation["val_loss"] == 3.5
    assert training_record(history_dir, 25).validation is None
    assert training_record(history_dir, 1).train_loss is None


def test_a_snapshot_reads_the_final_translation_on_the_same_rows_and_columns(history_dir):
    final = Translator.load(history_dir)
    reference = final.translate(SENTENCE, "de", beam_size=2, trace=True)
    early = load_snapshot(history_dir, ModelDir(history_dir).snapshots()[0])
    view = view_snapshot(early, EARLY_STEPS[0], Request(history_dir, SENTENCE, "de", 2), reference)
    for kind in ("encoder", "decoder", "cross"):
        forced, final_map = getattr(view.forced.attention, kind), getattr(reference.attention, kind)
        assert forced.query_labels == final_map.query_labels
        assert forced.key_labels == final_map.key_labels
        assert forced.weights.shape == final_map.weights.shape
        np.testing.assert_allclose(forced.weights.sum(-1), 1.0, atol=1e-5)
        assert not np.allclose(forced.weights, final_map.weights)  # another model's attention
    assert view.translation.attention is None and view.forced.steps == []


def test_the_final_snapshot_is_the_final_model_exactly(history_dir):
    final = Translator.load(history_dir)
    reference = final.translate(SENTENCE, "de", beam_size=2, trace=True)
    last = load_snapshot(history_dir, ModelDir(history_dir).snapshots()[-1])
    view = view_snapshot(last, FINAL_STEP, Request(history_dir, SENTENCE, "de", 2), reference)
    assert view.translation.output_ids == reference.output_ids
    for kind in ("encoder", "decoder", "cross"):
        assert np.array_equal(
            getattr(view.forced.attention, kind).weights, getattr(reference.attention, kind).weights
        )
    # teacher forcing gives the log-probability that the cached beam search computed step by step
    assert view.forced.log_prob == pytest.approx(reference.log_prob, abs=1e-3)


def test_head_dynamics_has_one_value_per_snapshot_layer_and_head(history_dir):
    final = Translator.load(history_dir)
    reference = final.translate(SENTENCE, "fr", beam_size=1, trace=True)
    request = Request(history_dir, SENTENCE, "fr", beam_size=1)
    views = [
        view_snapshot(load_snapshot(history_dir, s), s.step, request, reference)
        for s in ModelDir(history_dir).snapshots()
    ]
    cross, encoder = head_dynamics(views, "cross"), head_dynamics(views, "encoder")
    shape = (3, TINY.n_decoder_layers, TINY.n_heads)
    assert cross.steps == [*EARLY_STEPS, FINAL_STEP]
    assert cross.entropy.shape == cross.confidence.shape == cross.diagonality.shape == shape
    assert encoder.diagonality is None
    assert (cross.confidence > 0).all() and (cross.confidence <= 1).all()


SHIPPED = ModelDir(DEFAULT_MODEL)


@pytest.mark.skipif(not SHIPPED.snapshot_dir.is_dir(), reason="no shipped snapshots")
def test_every_shipped_snapshot_loads_safely_and_sits_on_the_training_log():
    logged = {record["step"] for record in SHIPPED.read_metrics()}
    found = SHIPPED.snapshots()
    assert len(found) >= 3
    for snapshot in found[:-1]:
        stored = safe_load(DEFAULT_MODEL / snapshot.weights)  # torch.load(weights_only=True)
        assert stored["metadata"]["step"] == snapshot.step
        assert snapshot.step in logged
        assert all(t.dtype == torch.float16 for t in stored["state_dict"].values())
    assert found[-1].step == max(logged)


def test_the_vocabulary_change_comes_from_the_card(history_dir, moved_history_dir):
    assert vocabulary_change(history_dir) is None
    assert vocabulary_change(moved_history_dir) == VocabularyChange(
        EARLY_STEPS[0], 300, TINY.vocab_size
    )


def test_a_vocabulary_change_missing_a_field_is_no_change(moved_history_dir):
    """A hand-edited card that lost part of the record: the page says nothing, it does not fail."""
    moved = ModelDir(moved_history_dir)
    card = moved.read_card()
    del card["training"]["vocabulary_transfer"]["old_vocab_size"]
    moved.write_card(card)
    assert vocabulary_change(moved_history_dir) is None
