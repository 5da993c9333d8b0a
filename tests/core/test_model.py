"""Model invariants: attention is a distribution, masks hold exactly, paths and caches agree."""

import copy
import math

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import (
    Attend,
    MultiHeadAttention,
    Transformer,
    attention,
    padding_mask,
    positional_encoding,
    subsequent_mask,
)
from core.text.tokenizer import BOS_ID
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
    _, trace = model(source, target, trace=True)
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
    fast, none = model(source, target, trace=False)
    explicit, trace = model(source, target, trace=True)
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
    memory, source_mask = model.encode(source)
    cache = model.new_cache()
    steps = [
        model.decode(target[:, t : t + 1], memory, source_mask, cache)
        for t in range(target.size(1))
    ]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    # a cache fed two positions at a time gives the same too
    cache = model.new_cache()
    pairs = [model.decode(target[:, t : t + 2], memory, source_mask, cache) for t in range(0, 7, 2)]
    assert torch.allclose(torch.cat(pairs, dim=1), full, atol=1e-5)


def test_embeddings_are_tied_and_scaled(model):
    source, target = batch()
    logits, trace = model(source, target, trace=True)
    expected = model.embedding.weight[source] * math.sqrt(TINY.d_model)
    assert torch.equal(trace.source_token, expected)
    assert torch.equal(trace.source_position, positional_encoding(TINY.max_len, TINY.d_model)[:9])
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
    trace = []
    mha(x, x, None, maps=trace)
    (maps,) = trace
    assert maps.weights.shape == (1, TINY.n_heads, 4, 4)
    assert not torch.allclose(maps.weights[:, 0], maps.weights[:, 1])


class ZeroHead(Attend):
    """The heads as the model's own Attend computes them, one of them then zeroed."""

    def __init__(self, head: int) -> None:
        super().__init__()
        self.head = head

    def forward(self, query, key, value, mask, with_maps):
        heads, maps = super().forward(query, key, value, mask, with_maps)
        heads = heads.clone()
        heads[:, self.head] = 0.0
        return heads, maps


def concat_heads(model, name: str, trace: bool) -> torch.Tensor:
    """Concat(head_1, ..., head_h) (B, T_q, D), the input of W^O in the attention ``name``."""
    seen = []
    w_o = model.get_submodule(name).w_o
    hook = w_o.register_forward_pre_hook(lambda _, inputs: seen.append(inputs[0]))
    with torch.no_grad():
        model(*batch(), trace=trace)
    hook.remove()
    (concat,) = seen
    return concat


@pytest.mark.parametrize("trace", [False, True])  # fused kernel and explicit path
def test_an_attend_put_in_the_seam_computes_the_heads(model, trace):
    """Every multi-head attention takes its heads from its Attend: one that zeroes head 1 removes
    exactly that head's slice of Concat(head_1, ..., head_h), the input of W^O, and leaves the
    other heads' slices as they were, in encoder self-, decoder self- and cross-attention."""
    head, d_k = 1, TINY.d_k
    names = [name for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)]
    assert len(names) == TINY.n_encoder_layers + 2 * TINY.n_decoder_layers
    for name in names:
        changed = copy.deepcopy(model)
        changed.get_submodule(name).attend = ZeroHead(head).eval()
        before, after = concat_heads(model, name, trace), concat_heads(changed, name, trace)
        zeroed = slice(head * d_k, (head + 1) * d_k)
        assert (after[..., zeroed] == 0).all() and (before[..., zeroed] != 0).any(), name
        kept = torch.ones(TINY.d_model, dtype=torch.bool)
        kept[zeroed] = False
        assert torch.equal(after[..., kept], before[..., kept]), name


def test_config_rejects_heads_that_do_not_divide_d_model():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)


def test_beams_sharing_one_cross_attention_cache_decode_as_if_each_had_its_own(model):
    """Hypotheses of one sentence share its cross-attention keys and values (batch 1); reordering
    the beams follows their parents in the self-attention cache and leaves the shared part alone.
    Every step equals a cache with a copy per beam and a full recomputation of each prefix."""
    torch.manual_seed(4)
    source = torch.randint(5, TINY.vocab_size, (1, 9))
    memory, source_mask = model.encode(source)  # (1, S, D)
    shared, per_beam = model.new_cache(), model.new_cache()
    prefixes = torch.tensor([[BOS_ID], [BOS_ID]])  # (n, t)
    # two hypotheses become three, they swap places and die out, then the beam narrows to two
    for parents in ([0, 0, 1], [2, 0, 1], [1, 1, 2], [0, 2]):
        n = prefixes.size(0)
        step = model.decode(prefixes[:, -1:], memory, source_mask, shared)[:, -1]  # (n, V)
        copied = model.decode(
            prefixes[:, -1:], memory.expand(n, -1, -1), source_mask.expand(n, -1, -1, -1), per_beam
        )[:, -1]
        full, _ = model(source.expand(n, -1), prefixes)
        assert torch.allclose(step, copied, atol=1e-5)
        assert torch.allclose(step, full[:, -1], atol=1e-5)
        index = torch.tensor(parents)
        for layer_cache in [*shared, *per_beam]:
            layer_cache.reorder(index)
        new_tokens = torch.randint(5, TINY.vocab_size, (len(parents), 1))
        prefixes = torch.cat([prefixes[index], new_tokens], dim=1)
    assert all(c.cross_attn.key.size(0) == 1 and c.self_attn.key.size(0) == 2 for c in shared)
    assert all(c.cross_attn.key.size(0) == 2 for c in per_beam)


def test_decoding_weights_follow_the_parameters_through_every_change(model):
    """With autograd on or off, the linear layers and the tied output projection multiply by the
    current parameters, through in-place edits and load_state_dict (no stale copy of a weight is
    kept), the state_dict holds the parameters only, and gradients reach them."""
    layer = model.decoder_layers[0].feed_forward.w_1
    x = torch.randn(3, TINY.d_model)

    def assert_current():
        assert torch.allclose(model.unembed(x), x @ model.embedding.weight.T, atol=1e-6)
        assert torch.allclose(layer(x), x @ layer.weight.T + layer.bias, atol=1e-6)

    with torch.inference_mode():
        assert_current()
    with torch.no_grad():
        model.embedding.weight[7] += 1.0
        layer.weight[0] += 1.0
        assert_current()
        torch.manual_seed(9)
        model.load_state_dict(Transformer(TINY).state_dict())
        assert_current()
    assert list(model.state_dict()) == [name for name, _ in model.named_parameters()]
    (model.unembed(x).sum() + layer(x).sum()).backward()
    assert torch.allclose(model.embedding.weight.grad, x.sum(0).expand(TINY.vocab_size, -1))
    assert torch.allclose(layer.weight.grad, x.sum(0).expand(TINY.d_ff, -1))


def test_the_paper_is_the_default_and_other_models_are_configuration():
    """Beyond the paper (core/files/marian.py's models): the defaults add nothing to the model, and
    each field changes what it says and nothing else."""
    paper = Transformer(TINY)
    assert "output_bias" not in paper.state_dict()
    halves = positional_encoding(50, 16, "halves")
    interleaved = positional_encoding(50, 16)
    assert torch.equal(halves[:, :8], interleaved[:, 0::2])  # the sines, then the cosines
    assert torch.equal(halves[:, 8:], interleaved[:, 1::2])
    source, target = batch()
    variants = {
        "activation": "swish",
        "scale_embedding": False,
        "positional_layout": "halves",
        "output_bias": True,
    }
    reference = paper.eval()(source, target)[0]
    for name, value in variants.items():
        torch.manual_seed(0)
        model = Transformer(ModelConfig(**{**vars(TINY), name: value})).eval()
        model.load_state_dict(paper.state_dict(), strict=name != "output_bias")
        if name == "output_bias":
            with torch.no_grad():
                model.output_bias[5] = 2.0
            logits = model(source, target)[0]
            assert torch.equal(logits[..., 5], reference[..., 5] + 2.0)
            assert torch.equal(logits[..., 6:], reference[..., 6:])
        else:
            assert not torch.allclose(model(source, target)[0], reference), name
    with pytest.raises(ValueError, match="activation='tanh'"):
        ModelConfig(activation="tanh")
    with pytest.raises(ValueError, match="positional_layout"):
        ModelConfig(positional_layout="sines")
