"""The model's dropout: nn.Dropout's contract with cheaper masks."""

import torch

from core.model.dropout import Dropout


def test_dropout_zeroes_about_p_and_keeps_the_expected_value():
    torch.manual_seed(0)
    dropout = Dropout(0.25).train()
    x = torch.ones(400, 500)
    y = dropout(x)
    dropped = (y == 0).float().mean().item()
    assert abs(dropped - 0.25) < 0.01
    assert torch.allclose(y[y != 0], torch.tensor(1 / 0.75))
    assert abs(y.mean().item() - 1.0) < 0.02


def test_dropout_is_the_identity_in_eval_mode_and_at_p_zero():
    x = torch.randn(3, 5)
    assert Dropout(0.5).eval()(x) is x
    assert Dropout(0.0).train()(x) is x


def test_dropout_masks_follow_the_torch_seed():
    x = torch.randn(7, 9)
    torch.manual_seed(3)
    first = Dropout(0.5).train()(x)
    torch.manual_seed(3)
    assert torch.equal(first, Dropout(0.5).train()(x))
