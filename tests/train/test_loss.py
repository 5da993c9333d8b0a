"""The fused projection + label-smoothed loss equals projection + F.cross_entropy, value and
gradients, across several chunks of rows; the GPU's path (the logits whole) and the CPU's give
one loss and one gradient."""

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from train.loop.hardware import CPU_LOSS_CHUNK_ROWS
from train.loop.loss import ProjectedLoss, TranslationLoss, label_smoothed_loss

PAD = 0


def reference(hidden, embedding, bias, target, smoothing):
    hidden = hidden.detach().requires_grad_()
    embedding = embedding.detach().requires_grad_()
    bias = bias.detach().requires_grad_()
    logits = hidden @ embedding.T + bias
    loss = label_smoothed_loss(logits[None], target[None], smoothing, PAD)
    loss.backward()
    return loss, hidden.grad, embedding.grad, bias.grad


@pytest.mark.parametrize("with_bias", [False, True], ids=["no bias", "output bias"])
def test_fused_loss_equals_cross_entropy_in_float32_to_rounding(with_bias):
    torch.manual_seed(0)
    rows = 2 * CPU_LOSS_CHUNK_ROWS + 37  # three chunks, the last one short
    hidden = torch.randn(rows, 16)
    embedding = torch.randn(50, 16)
    bias = torch.randn(50) if with_bias else torch.zeros(50)
    target = torch.randint(1, 50, (rows,))
    expected, *gradients = reference(hidden, embedding, bias, target, 0.1)
    hidden_in = hidden.clone().requires_grad_()
    embedding_in = embedding.clone().requires_grad_()
    bias_in = bias.clone().requires_grad_() if with_bias else None
    chunk = CPU_LOSS_CHUNK_ROWS
    loss = ProjectedLoss.apply(hidden_in, embedding_in, bias_in, target, 0.1, torch.float32, chunk)
    (2.0 * loss).backward()  # the upstream gradient scales every gradient
    torch.testing.assert_close(loss, expected.to(loss.dtype), rtol=1e-5, atol=1e-4)
    inputs = [hidden_in, embedding_in, bias_in] if with_bias else [hidden_in, embedding_in]
    for given, gradient in zip(inputs, gradients, strict=False):
        torch.testing.assert_close(given.grad, 2 * gradient, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("output_bias", [False, True], ids=["no bias", "output bias"])
@pytest.mark.parametrize("chunk_rows", [CPU_LOSS_CHUNK_ROWS, 2, 0])
def test_translation_loss_ignores_padding_and_matches_the_model_logits(chunk_rows, output_bias):
    """The loss is the model's own logits' (Transformer.unembed, its output bias included)."""
    torch.manual_seed(1)
    config = ModelConfig(
        vocab_size=40,
        d_model=16,
        n_heads=2,
        n_encoder_layers=1,
        n_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        output_bias=output_bias,
    )
    model = Transformer(config)
    if output_bias:
        torch.nn.init.normal_(model.output_bias)  # a bias of zeros could be left out unseen
    source = torch.randint(1, 40, (3, 7))
    target_in = torch.randint(1, 40, (3, 6))
    target_out = torch.randint(1, 40, (3, 6))
    target_out[0, 4:] = PAD
    logits, _ = model(source, target_in)
    expected = label_smoothed_loss(logits, target_out, 0.1, PAD)
    loss = TranslationLoss(model, 0.1, torch.float32, chunk_rows)(source, target_in, target_out)
    torch.testing.assert_close(loss, expected.to(loss.dtype), rtol=1e-5, atol=1e-4)
    loss.backward()
    expected_gradients = torch.autograd.grad(expected, list(model.parameters()))
    for parameter, gradient in zip(model.parameters(), expected_gradients):
        torch.testing.assert_close(parameter.grad, gradient, rtol=1e-4, atol=1e-5)
