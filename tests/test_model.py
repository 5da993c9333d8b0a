"""Model invariants: attention is a distribution, masks hold exactly, paths and caches agree."""

import math

import pytest
import torch

from core.model import (
    ModelConfig,
    MultiHeadAttention,
    Transformer,
    attention,
    padding_mask,
    positional_encoding,
    subsequent_mask,
)
from tests.conftest import TINY


def batch(pad_tail: int = 3):
    """Two source sentences, the second padded, and two target prefixes."""
    torch.manual_seed(1)
    source = torch.randint(5, TINY.vocab_size, (2, 9))
    source[1, -pad_tail:] = TINY.pad_id
    target = torch.randint(5, TINY.vocab_size, (2, 7))
    return source, target


def test_positional_encoding_is_the_formula():
    pe = positional_encoding(50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_masks_are_what_the_paper_says():
    tokens = torch.tensor([[5, 6, 0, 0]])
    assert padding_mask(tokens, 0).tolist() == [[[[True, True, False, False]]]]
    causal = subsequent_mask(3)[0, 0]
    assert causal.tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_attention_rows_sum_to_one_and_masked_cells_are_exactly_zero(model):
    source, target = batch()
    _, trace = model(source, target, inspect=True)
    for maps in [*trace.encoder_self, *trace.decoder_self, *trace.cross]:
        assert torch.allclose(maps.weights.sum(-1), torch.ones(maps.weights.shape[:-1]), atol=1e-5)
    pad = source[1] == TINY.pad_id
    for maps in [*trace.encoder_self, *trace.cross]:
        assert (maps.weights[1, :, :, pad] == 0).all()  # no query looks at padding
        assert torch.isinf(maps.masked_scores[1, :, :, pad]).all()
        assert (maps.weights[0] > 0).all()  # nothing is hidden in the unpadded sentence
    future = ~subsequent_mask(target.size(1))[0, 0]
    for maps in trace.decoder_self:
        assert (maps.weights[:, :, future] == 0).all()  # no query looks ahead
        assert (maps.masked_scores[:, :, future] == float("-inf")).all()
        assert (maps.scores[:, :, future] != float("-inf")).all()  # raw scores are unmasked


def test_fast_and_explicit_attention_paths_agree(model):
    source, target = batch()
    fast, none = model(source, target, inspect=False)
    explicit, trace = model(source, target, inspect=True)
    assert none is None and trace is not None
    assert torch.allclose(fast, explicit, atol=1e-5)


def test_explicit_attention_is_softmax_of_scaled_scores():
    torch.manual_seed(2)
    q, k, v = torch.randn(2, 5, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    out, maps = attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8), dim=-1)
    assert torch.allclose(maps.weights, expected, atol=1e-6)
    assert torch.allclose(out, expected @ v, atol=1e-6)


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_full_recomputation(norm_first):
    config = ModelConfig(**{**TINY.__dict__, "norm_first": norm_first})
    torch.manual_seed(0)
    model = Transformer(config).eval()
    source, target = batch()
    full, _ = model(source, target)
    memory, memory_mask = model.encode(source)
    cache = model.new_cache()
    steps = [
        model.decode(target[:, t : t + 1], memory, memory_mask, cache)
        for t in range(target.size(1))
    ]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    # a cache fed two positions at a time gives the same too
    cache = model.new_cache()
    pairs = [model.decode(target[:, t : t + 2], memory, memory_mask, cache) for t in range(0, 7, 2)]
    assert torch.allclose(torch.cat(pairs, dim=1), full, atol=1e-5)


def test_embeddings_are_tied_and_scaled(model):
    source, target = batch()
    logits, trace = model(source, target, inspect=True)
    expected = model.embedding.weight[source] * math.sqrt(TINY.d_model)
    assert torch.equal(trace.source_embedding, expected)
    assert torch.equal(trace.source_positional, positional_encoding(TINY.max_len, TINY.d_model)[:9])
    vocab_matrices = [p for p in model.parameters() if p.shape == (TINY.vocab_size, TINY.d_model)]
    assert len(vocab_matrices) == 1  # encoder, decoder and output projection share one matrix
    with torch.no_grad():
        model.embedding.weight[7] += 1.0  # moving one embedding moves that token's logit
    logits_after, _ = model(source, target)
    assert not torch.allclose(logits_after[..., 7], logits[..., 7])


def test_multi_head_attention_heads_see_their_own_slice():
    torch.manual_seed(3)
    mha = MultiHeadAttention(TINY).eval()
    x = torch.randn(1, 4, TINY.d_model)
    _, maps = mha(x, *mha.project_kv(x), None, inspect=True)
    assert maps.weights.shape == (1, TINY.n_heads, 4, 4)
    assert not torch.allclose(maps.weights[:, 0], maps.weights[:, 1])


def test_config_rejects_heads_that_do_not_divide_d_model():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
