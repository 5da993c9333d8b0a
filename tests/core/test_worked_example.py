"""The lecture's worked example of self-attention reproduces, number for number."""

import math

import pytest
import torch

from core.inspection.worked_example import walk_through


def test_projections_scores_weights_and_outputs_match_the_slides():
    w = walk_through(scaled=False)
    assert w.keys.tolist() == [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
    assert w.queries.tolist() == [[1, 0, 2], [2, 2, 2], [2, 1, 3]]
    assert w.values.tolist() == [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
    assert w.scores[0].tolist() == pytest.approx([2, 4, 4], abs=1e-5)
    assert w.weights[0].tolist() == pytest.approx([0.063, 0.468, 0.468], abs=1e-3)
    assert w.outputs[0].tolist() == pytest.approx([1.94, 6.68, 1.60], abs=5e-3)
    # the slides round the weights to [0, 0.5, 0.5]
    assert (torch.tensor([0, 0.5, 0.5]) @ w.values).tolist() == [2.0, 7.0, 1.5]


def test_dividing_by_sqrt_dk_softens_the_weights_as_predicted():
    raw, scaled = walk_through(scaled=False), walk_through(scaled=True)
    assert scaled.scale == pytest.approx(math.sqrt(3))
    assert torch.allclose(scaled.scores, raw.scores / math.sqrt(3), atol=1e-6)
    expected = torch.softmax(torch.tensor([2.0, 4.0, 4.0]) / math.sqrt(3), dim=0)
    assert torch.allclose(scaled.weights[0], expected, atol=1e-6)
    # a smaller spread of scores gives a flatter distribution: more weight on the least similar key
    assert scaled.weights[0, 0] > raw.weights[0, 0]
    assert scaled.weights[0].max() < raw.weights[0].max()
    assert torch.allclose(scaled.weights.sum(-1), torch.ones(3))
