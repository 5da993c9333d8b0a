"""Decoding: beam 1 is greedy, the beam trace is the model's own arithmetic, lengths rank."""

import pytest
import torch

from core.decoding.decoder import Decoder
from core.decoding.search import (
    REASONS,
    Hypothesis,
    batch_beam_search,
    beam_search,
    best_hypothesis,
    greedy_decode,
    length_penalty,
    select,
)
from core.model.engine import Engine
from core.text.tokenizer import BOS_ID, EOS_ID
from tests.conftest import TINY, eos_prone_model


def sources(n: int = 6):
    torch.manual_seed(5)
    return [torch.randint(5, TINY.vocab_size, (1, int(torch.randint(3, 12, ())))) for _ in range(n)]


def test_beam_size_one_equals_greedy():
    ended_by_eos = 0
    for seed in range(4):
        model = eos_prone_model(seed)
        for source in sources():
            greedy = greedy_decode(model, source)[0]
            beam = beam_search(model, source, beam_size=1)
            assert beam.ids == greedy
            ended_by_eos += greedy[-1] == EOS_ID
    assert ended_by_eos > 0  # the eos path was exercised, not only the length limit


def test_batched_greedy_equals_one_at_a_time():
    model = eos_prone_model(1)
    rows = [s[0].tolist() for s in sources()]
    width = max(len(r) for r in rows)
    padded = torch.tensor([r + [TINY.pad_id] * (width - len(r)) for r in rows])
    batched = greedy_decode(model, padded)
    assert batched == [greedy_decode(model, torch.tensor([r]))[0] for r in rows]


class OnlyTheInterface:
    """A decoder that offers the searches what :class:`Decoder` declares, and nothing else."""

    def __init__(self, model) -> None:
        self.config = model.config
        self.encode, self.new_cache, self.decode = model.encode, model.new_cache, model.decode

    def __getattr__(self, name: str):
        raise AssertionError(
            f"a search asked the model for {name!r}, which Decoder does not declare"
        )


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_the_searches_ask_only_what_the_decoder_interface_declares(fast):
    model = eos_prone_model(1)
    decoder = Engine(model) if fast else model
    assert isinstance(decoder, Decoder)
    bare = OnlyTheInterface(decoder)
    assert isinstance(bare, Decoder)
    assert not isinstance(object(), Decoder)
    source = sources(1)[0]
    assert greedy_decode(bare, source) == greedy_decode(decoder, source)
    traced, expected = (beam_search(d, source, 4, trace=True) for d in (bare, decoder))
    assert (traced.ids, traced.log_prob) == (expected.ids, expected.log_prob)
    rows = padded(mixed_sentences(3, 1))
    assert [r.ids for r in batch_beam_search(bare, rows, 4)] == [
        r.ids for r in batch_beam_search(decoder, rows, 4)
    ]


def mixed_sentences(n: int, seed: int) -> list[list[int]]:
    """n random sources of 2 to 40 tokens (a budget of up to 70 output tokens)."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 41, (n,), generator=generator).tolist()
    return [torch.randint(5, TINY.vocab_size, (n,), generator=generator).tolist() for n in lengths]


def padded(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(row) for row in rows)
    return torch.tensor([row + [TINY.pad_id] * (width - len(row)) for row in rows])


# MKL multiplies 1 to 3 rows with another kernel than 4 or more, so the first step of a search
# (one row) can differ in its last bits from the same row among others: a score of -150 by about
# 1.5e-5, two float32 steps (3.8e-5 the most in 600 sentences).
LOG_PROB_ROUNDING = 1e-4


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_batched_beam_search_equals_one_sentence_at_a_time(fast):
    """The same outputs, log-probabilities and ended hypotheses, whether a sentence is searched
    alone or among others of other lengths, padded, ending at other steps, by eos or by the length
    limit."""
    ended_by_eos = ended_by_length = 0
    for seed in (1, 2):  # model 0 ends every search at once
        model = eos_prone_model(seed)
        decoder = Engine(model) if fast else model
        rows = mixed_sentences(100, seed)
        for start in range(0, len(rows), 25):
            batch = rows[start : start + 25]
            for row, result in zip(batch, batch_beam_search(decoder, padded(batch), 4)):
                alone = beam_search(decoder, torch.tensor([row]), 4)
                assert result.ids == alone.ids
                assert [h.ids for h in result.finished] == [h.ids for h in alone.finished]
                assert result.log_prob == pytest.approx(alone.log_prob, abs=LOG_PROB_ROUNDING)
                ended_by_eos += result.ids[-1] == EOS_ID
                ended_by_length += result.ids[-1] != EOS_ID
    assert ended_by_eos > 20 and ended_by_length > 20


@pytest.mark.parametrize("beam_size", [2, 3])
def test_batched_beam_search_equals_one_sentence_at_a_time_with_narrow_beams(beam_size):
    model = eos_prone_model(2)
    rows = mixed_sentences(30, 2)
    for row, result in zip(rows, batch_beam_search(model, padded(rows), beam_size)):
        alone = beam_search(model, torch.tensor([row]), beam_size)
        assert result.ids == alone.ids
        assert result.log_prob == pytest.approx(alone.log_prob, abs=LOG_PROB_ROUNDING)


def test_batched_beam_size_one_equals_greedy():
    for seed in range(2):
        model = eos_prone_model(seed)
        source = padded(mixed_sentences(40, seed))
        beams = batch_beam_search(model, source, beam_size=1)
        assert [beam.ids for beam in beams] == greedy_decode(model, source)


def test_batched_beam_search_drops_the_sentences_that_are_done(monkeypatch):
    """The decoder runs on the live rows only: beam_size per sentence still searching."""
    model = eos_prone_model(1)
    rows = mixed_sentences(12, 1)  # their searches take 3 to 70 steps
    decode, batch_rows = model.decode, []

    def counting_decode(target, *args, **kwargs):
        batch_rows.append(target.size(0))
        return decode(target, *args, **kwargs)

    monkeypatch.setattr(model, "decode", counting_decode)
    results = batch_beam_search(model, padded(rows), beam_size=3)
    # a search is done at the step that ends its last hypothesis
    steps = [max(len(h.ids) for h in result.finished) for result in results]
    searching = [sum(n > step for n in steps) for step in range(max(steps))]
    assert batch_rows == [12] + [3 * n for n in searching[1:]]
    assert batch_rows[-1] < batch_rows[1]  # some were done before others


def model_log_probs(model, source, prefix):
    """log P(. | prefix, source) by a full, uncached forward pass."""
    logits, _ = model(source, torch.tensor([[BOS_ID, *prefix]]))
    return logits[0, -1].log_softmax(-1)


def test_beam_trace_recomputes_from_the_models_log_probabilities():
    model = eos_prone_model(2)
    source = sources()[0]
    result = beam_search(model, source, beam_size=3, alpha=0.6, trace=True)
    assert result.steps and result.steps[0].hypotheses[0].ids == []
    for step in result.steps:
        for cand in step.candidates:
            parent = step.hypotheses[cand.parent]
            log_probs = model_log_probs(model, source, parent.ids)
            assert cand.token_log_prob == pytest.approx(log_probs[cand.token].item(), abs=1e-4)
            assert cand.log_prob == pytest.approx(parent.log_prob + cand.token_log_prob, abs=1e-4)
            lp = length_penalty(len(parent.ids) + 1, 0.6)
            assert cand.normalized == pytest.approx(cand.log_prob / lp, abs=1e-5)
        kept = [c for c in step.candidates if c.status == "kept"]
        assert len(kept) <= 3
        # the next step's hypotheses are exactly the kept candidates
        if step.step + 1 < len(result.steps):
            following = result.steps[step.step + 1].hypotheses
            assert [h.ids for h in following] == [
                [*step.hypotheses[c.parent].ids, c.token]
                for c in sorted(kept, key=lambda c: -c.log_prob)
            ]
    # the result is the best finished hypothesis under the length penalty
    assert result.ids == best_hypothesis(result.finished, 0.6).ids
    assert result.log_prob == pytest.approx(
        model_log_probs_sum(model, source, result.ids), abs=1e-3
    )


def model_log_probs_sum(model, source, tokens):
    logits, _ = model(source, torch.tensor([[BOS_ID, *tokens[:-1]]]))
    return logits[0].log_softmax(-1).gather(1, torch.tensor(tokens)[:, None]).sum().item()


def test_beam_trace_cross_attention_is_the_models():
    model = eos_prone_model(3)
    source = sources()[1]
    result = beam_search(model, source, beam_size=2, trace=True)
    step = result.steps[2]
    hyp = step.hypotheses[0]
    _, trace = model(source, torch.tensor([[BOS_ID, *hyp.ids]]), trace=True)
    expected = torch.stack([m.weights[0, :, -1] for m in trace.cross])  # (L, H, S)
    weights = torch.from_numpy(step.cross_weights)  # (L, H, n, S)
    assert torch.allclose(weights[:, :, 0], expected, atol=1e-5)
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-5)


def test_wider_beams_find_at_least_as_probable_outputs():
    model = eos_prone_model(0)
    for source in sources():
        greedy = beam_search(model, source, beam_size=1, alpha=0.0)
        wide = beam_search(model, source, beam_size=5, alpha=0.0)
        assert wide.log_prob >= greedy.log_prob - 1e-4


def test_length_penalty_reranks_finished_hypotheses():
    short = Hypothesis([5, EOS_ID], -2.0, finished=True)
    long = Hypothesis([5, 6, 7, 8, 9, 10, EOS_ID], -2.6, finished=True)
    assert best_hypothesis([short, long], alpha=0.0) is short
    assert best_hypothesis([short, long], alpha=1.0) is long  # -2.6/2 > -2.0/1.17
    assert length_penalty(1, 0.6) == pytest.approx(1.0)
    assert length_penalty(7, 1.0) == pytest.approx(2.0)


# select(): (parent, token) extensions ranked best first; tokens 5.. are ordinary pieces
def test_selection_keeps_the_best_live_extensions_with_their_parents():
    chosen = select([(1, 5), (0, 6), (1, 7), (0, 8), (1, 9)], 2, 0, last_step=False)
    assert chosen.kept == [0, 1] and chosen.parents == [1, 0]
    assert chosen.finished == [] and chosen.pruned == [2, 3, 4]
    assert chosen.reasons[:3] == ["best live", "best live", "not best"]


def test_selection_ends_hypotheses_by_eos_only_in_the_top_beam_size():
    chosen = select([(0, 5), (1, EOS_ID), (0, 6), (2, EOS_ID), (1, 7)], 2, 0, last_step=False)
    assert chosen.finished == [1]  # rank 1 is within the top 2; rank 3 is not
    assert chosen.statuses == ["kept", "finished", "kept", "pruned", "pruned"]
    assert chosen.reasons[3] == "eos outside" and chosen.parents == [0, 0]


def test_selection_prunes_everything_once_the_beam_has_enough_finished():
    chosen = select([(0, EOS_ID), (0, 5), (1, 6)], 2, 1, last_step=False)
    assert chosen.finished == [0] and chosen.kept == [] and chosen.pruned == [1, 2]
    assert chosen.reasons[1:] == ["enough finished", "enough finished"]


def test_selection_at_the_last_step_ends_what_would_stay_live():
    chosen = select([(0, 5), (1, 6), (0, EOS_ID), (1, 7)], 2, 0, last_step=True)
    assert chosen.finished == [0, 1] and chosen.kept == [] and chosen.parents == []
    assert chosen.reasons[:2] == ["length limit", "length limit"]
    assert all(reason in REASONS for reason in chosen.reasons)


def test_untraced_search_builds_no_narration(monkeypatch):
    def narrate(*args):
        raise AssertionError("narration built without a trace")

    monkeypatch.setattr("core.decoding.search._Narrator.record", narrate)
    model = eos_prone_model(0)
    assert beam_search(model, sources()[0], beam_size=3).steps == []
    with pytest.raises(AssertionError, match="narration"):
        beam_search(model, sources()[0], beam_size=3, trace=True)
