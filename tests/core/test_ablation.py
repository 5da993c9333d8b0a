"""Switching heads off: an ablated head adds exactly nothing, the shared model is untouched, and
decoding with heads off keeps the decoding invariants (cached = recomputed, beam 1 = greedy)."""

import pytest
import torch

from core import InputError
from core.decoding.search import beam_search, greedy_decode
from core.inspection.ablation import (
    Head,
    HeadsOff,
    ablated,
    attention_module,
    install,
    intervened_translator,
)
from core.model.transformer import Attend, MultiHeadAttention
from core.text.tokenizer import BOS_ID, EOS_ID
from tests.conftest import TINY, eos_prone_model

OFF = [Head("encoder", 0, 1), Head("decoder", 1, 0), Head("cross", 1, 3)]


def sources(n: int = 5):
    torch.manual_seed(7)
    return [torch.randint(5, TINY.vocab_size, (1, int(torch.randint(3, 12, ())))) for _ in range(n)]


def test_an_ablated_head_feeds_exactly_zero_into_the_output_projection():
    model = ablated(eos_prone_model(0), OFF)
    source, target = sources()[0], torch.tensor([[BOS_ID, 9, 10, 11]])
    seen = {}
    for head in OFF:
        module = attention_module(model, head)
        module.w_o.register_forward_pre_hook(
            lambda _, inputs, head=head: seen.setdefault(head, inputs[0].clone())
        )
    with torch.no_grad():
        model(source, target)
    d_k = TINY.d_model // TINY.n_heads
    for head, concat in seen.items():
        assert torch.all(concat[..., head.head * d_k : (head.head + 1) * d_k] == 0), head.name
        other = (head.head + 1) % TINY.n_heads
        assert concat[..., other * d_k : (other + 1) * d_k].abs().sum() > 0


@pytest.mark.parametrize("trace", [False, True])  # fused kernel and explicit path
def test_the_weights_of_an_ablated_head_change_nothing(trace):
    model = ablated(eos_prone_model(0), OFF)
    source, target = sources()[1], torch.tensor([[BOS_ID, 9, 10, 11]])
    with torch.no_grad():
        before, _ = model(source, target, trace=trace)
        d_k = TINY.d_model // TINY.n_heads
        for head in OFF:
            rows = slice(head.head * d_k, (head.head + 1) * d_k)
            attention_module(model, head).w_v.weight[rows] += 1.0
            attention_module(model, head).w_q.weight[rows] -= 0.5
        after, _ = model(source, target, trace=trace)
    assert torch.equal(before, after)


def test_all_gates_open_is_the_model_itself_and_the_original_is_untouched():
    original = eos_prone_model(3)
    source, target = sources()[2], torch.tensor([[BOS_ID, 5, 6]])
    opened = ablated(original, [])
    for module in opened.modules():
        if isinstance(module, MultiHeadAttention):
            install(HeadsOff(torch.ones(TINY.n_heads)), module)
    switched_off = ablated(original, OFF)
    with torch.no_grad():
        assert torch.equal(original(source, target)[0], opened(source, target)[0])
        assert not torch.equal(original(source, target)[0], switched_off(source, target)[0])
    assert all(type(m) is Attend for m in original.modules() if isinstance(m, Attend))


def test_decoding_with_heads_off_keeps_its_invariants():
    ended_by_eos = 0
    for seed in range(3):
        model = ablated(eos_prone_model(seed), OFF)
        for source in sources():
            greedy = greedy_decode(model, source)[0]
            assert beam_search(model, source, beam_size=1).ids == greedy
            ended_by_eos += greedy[-1] == EOS_ID
            # the cached search's choices are the argmax of a full recomputation at every step
            with torch.no_grad():
                for t in range(len(greedy)):
                    prefix = torch.tensor([[BOS_ID, *greedy[:t]]])
                    logits, _ = model(source, prefix)
                    assert int(logits[0, -1].argmax()) == greedy[t]
    assert ended_by_eos > 0


def test_head_names_round_trip_and_bad_ones_are_input_errors(translator):
    for head in OFF:
        assert Head.parse(head.name) == head
    assert Head("encoder", 4, 4).name == "enc L5 H5"
    with pytest.raises(InputError, match="not a head"):
        Head.parse("encoder 5 5")
    with pytest.raises(InputError, match="no head"):
        intervened_translator(translator, [Head("cross", 9, 0)])
    changed = intervened_translator(translator, OFF).translate("The dog runs.", "de", 2)
    assert isinstance(changed.text, str)


def test_an_ablated_model_moved_to_another_device_gates_there():
    """The gate follows the heads: "meta" stands in for a GPU, where a gate left on the CPU
    would fail ("Tensor on device cpu is not on the expected device")."""
    model = ablated(eos_prone_model(0), OFF).to("meta")
    source = torch.tensor([[5, 6, 7]], device="meta")
    target = torch.tensor([[BOS_ID, 9]], device="meta")
    logits, _ = model(source, target)
    assert logits.device.type == "meta"
    assert logits.shape == (1, 2, TINY.vocab_size)
