"""Decoding: greedy search and beam search with the GNMT length penalty, both on the k/v cache.

Beam search runs for one sentence (:func:`beam_search`, which the app traces) or for a batch
(:func:`batch_beam_search`, evaluation): each sentence's :class:`Beam` decides alike in both.

Beam search can record every step (:class:`BeamStep`): the live hypotheses, each one's top-k next
tokens with log-probabilities, which candidates were kept, pruned or finished and why, and the
cross-attention weights that produced the step (raw: the translator, above, labels them). The
app's step-by-step view is drawn from this record.
What a step keeps, finishes and prunes is decided by :func:`select`, a pure function of the ranked
extensions; the words saying why are put together only when the search is traced.

The searches run on any :class:`core.decoding.decoder.Decoder`: the readable
:class:`core.model.transformer.Transformer`, or :class:`core.model.engine.Engine`, the same model
with its layers' fused CPU kernels, which computes the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import Tensor

from core.decoding.decoder import Cache, Decoder
from core.model.config import ModelConfig
from core.model.transformer import Intermediates
from core.text.tokenizer import BOS_ID, EOS_ID

# the output budget: a translation rarely needs more than 1.5 tokens per source token, plus a few
OUTPUT_PER_SOURCE_TOKEN = 1.5
OUTPUT_SLACK = 10


@dataclass(frozen=True)
class Decoding:
    """A search's settings: the beam's width (1 is greedy search) and the length penalty's alpha
    (:func:`length_penalty`; 0 ranks by raw log-probability)."""

    beam_size: int
    alpha: float


# Section 6.1 of the paper: "beam search with a beam size of 4 and length penalty alpha = 0.6".
# Every score, card, survey and opening view of this project decodes with it.
PAPER_DECODING = Decoding(beam_size=4, alpha=0.6)


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length penalty (Wu et al., 2016): lp(Y) = ((5 + |Y|) / 6) ** alpha.

    A hypothesis is ranked by log P(Y) / lp(Y); alpha = 0 ranks by raw log-probability.
    """
    return ((5 + length) / 6) ** alpha


def first_divergence(first: Sequence[int | str], second: Sequence[int | str]) -> int | None:
    """The first position where two outputs differ (one ending early counts), None when they are
    the same: where greedy and beam search part ways."""
    for position, (a, b) in enumerate(zip(first, second)):
        if a != b:
            return position
    return None if len(first) == len(second) else min(len(first), len(second))


def max_output_length(source_length: int, max_len: int) -> int:
    """Output budget in tokens (eos included): 1.5 x the source + 10, within the model's max_len."""
    return min(int(OUTPUT_PER_SOURCE_TOKEN * source_length) + OUTPUT_SLACK, max_len - 1)


def forbid_pad(log_probs: Tensor, config: ModelConfig) -> Tensor:
    """log_probs (n, V) (or logits) with pad's column -inf where the model never outputs it
    (config.suppress_pad; Marian's rule, applied as transformers' generate applies it: after the
    softmax), in place."""
    if config.suppress_pad:
        log_probs[:, config.pad_id] = float("-inf")
    return log_probs


def output_budgets(source: Tensor, config: ModelConfig, max_length: int | None) -> list[int]:
    """Each sentence's output budget: max_length, or by default :func:`max_output_length` of its
    own unpadded length, so that a sentence decodes the same alone or in a batch. source (B, S)"""
    if max_length:
        return [max_length] * source.size(0)
    lengths = (source != config.pad_id).sum(dim=1).tolist()
    return [max_output_length(n, config.max_len) for n in lengths]


@torch.inference_mode()
def greedy_decode(model: Decoder, source: Tensor, max_length: int | None = None) -> list[list[int]]:
    """Pick the most probable token at every step, y_t = argmax P(y | y_<t, x), for a batch.

    source (B, S), padded -> B token lists, each ending with eos unless its length budget ran out
    (bos is not included). Each row's budget follows its own unpadded length, so a sentence decodes
    the same alone or in a batch.
    """
    config = model.config
    budgets = output_budgets(source, config, max_length)
    memory, source_mask = model.encode(source)
    cache = model.new_cache()
    ids = torch.full((source.size(0), 1), config.bos_id, dtype=torch.long, device=source.device)
    steps = []
    for _ in range(max(budgets)):
        logits = model.decode(ids, memory, source_mask, cache)[:, -1]  # (B, V)
        ids = forbid_pad(logits, config).argmax(dim=-1, keepdim=True)  # (B, 1)
        steps.append(ids)
        if (torch.cat(steps, dim=1) == config.eos_id).any(dim=1).all():
            break
    result = []
    for row, budget in zip(torch.cat(steps, dim=1).tolist(), budgets):
        row = row[:budget]
        result.append(row[: row.index(config.eos_id) + 1] if config.eos_id in row else row)
    return result


@dataclass
class Candidate:
    """One possible extension of a live hypothesis at one step."""

    parent: int  # index of the hypothesis it extends, in BeamStep.hypotheses
    token: int
    token_log_prob: float  # log P(token | parent's prefix, source)
    log_prob: float  # cumulative log-probability of the extended prefix
    normalized: float  # log_prob / length_penalty(length of the extended prefix)
    status: str = "pruned"  # "kept", "finished" or "pruned"
    reason: str = ""


@dataclass
class Hypothesis:
    ids: list[int]  # without bos
    log_prob: float  # cumulative log-probability
    finished: bool = False

    def normalized(self, alpha: float) -> float:
        return self.log_prob / length_penalty(len(self.ids), alpha)


@dataclass
class BeamStep:
    """What beam search saw and decided at one step."""

    step: int
    hypotheses: list[Hypothesis]  # the live prefixes the step extended
    candidates: list[Candidate]  # top-k per hypothesis, best first per parent
    # (layers, heads, hypotheses, source): each prefix's newest position over the source
    cross_weights: np.ndarray


@dataclass
class BeamResult:
    ids: list[int]  # best hypothesis, without bos
    log_prob: float
    finished: list[Hypothesis]  # every hypothesis that ended, in the order they ended
    steps: list[BeamStep] = field(default_factory=list)


def best_hypothesis(finished: list[Hypothesis], alpha: float) -> Hypothesis:
    """Rank ended hypotheses by log P(Y) / lp(Y); the first ended wins a tie."""
    return max(finished, key=lambda h: h.normalized(alpha))


# --------------------------------------------------------------------------------------------------
# One step's decision
# --------------------------------------------------------------------------------------------------

# why select() decided as it did, put into words only for a traced search
REASONS = {
    "enough finished": "the beam has enough finished hypotheses",
    "eos": "ends with </s>",
    "eos outside": "ends with </s> outside the top {beam_size}",
    "length limit": "reached the length limit",
    "best live": "among the {beam_size} best live extensions",
    "not best": "not among the {beam_size} best",
    "below overall": "below the best overall",  # not among the ranked extensions at all
}


@dataclass
class Selection:
    """What one step decided about its ranked extensions, rank by rank (best first)."""

    statuses: list[str]  # "kept" (stays live), "finished" (ends a hypothesis) or "pruned"
    reasons: list[str]  # keys of REASONS
    parents: list[int]  # the hypothesis each kept extension extends, best first

    def ranks(self, status: str) -> list[int]:
        return [rank for rank, s in enumerate(self.statuses) if s == status]

    @property
    def kept(self) -> list[int]:
        return self.ranks("kept")

    @property
    def finished(self) -> list[int]:
        return self.ranks("finished")

    @property
    def pruned(self) -> list[int]:
        return self.ranks("pruned")


def select(
    extensions: Sequence[tuple[int, int]],
    beam_size: int,
    n_finished: int,
    last_step: bool,
    eos_id: int = EOS_ID,
) -> Selection:
    """The rule of fairseq for one step of beam search.

    extensions: (parent, token) of the 2 x beam_size best extensions by cumulative
    log-probability, best first; n_finished: hypotheses that ended at earlier steps. Going down
    the ranks: once beam_size hypotheses have ended, the rest is pruned; an extension by eos ends
    its hypothesis if it ranks in the top beam_size and is pruned below; any other extension stays
    live while fewer than beam_size do (at the last step it ends instead: the length budget is
    spent) and is pruned after.
    """
    statuses, reasons, parents = [], [], []
    for rank, (parent, token) in enumerate(extensions):
        if n_finished + statuses.count("finished") >= beam_size:
            status, reason = "pruned", "enough finished"
        elif token == eos_id:
            status, reason = ("finished", "eos") if rank < beam_size else ("pruned", "eos outside")
        elif statuses.count("kept") < beam_size:
            status, reason = ("finished", "length limit") if last_step else ("kept", "best live")
        else:
            status, reason = "pruned", "not best"
        statuses.append(status)
        reasons.append(reason)
        if status == "kept":
            parents.append(parent)
    return Selection(statuses, reasons, parents)


# --------------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------------


@dataclass
class Beam:
    """One sentence's search: its live hypotheses, and those that ended, in the order they ended."""

    beam_size: int
    budget: int  # output tokens, eos included
    bos_id: int = BOS_ID  # the model's (ModelConfig.bos_id, eos_id)
    eos_id: int = EOS_ID
    live: list[Hypothesis] = field(default_factory=lambda: [Hypothesis([], 0.0)])
    finished: list[Hypothesis] = field(default_factory=list)
    done: bool = False  # beam_size hypotheses have ended, or none stays live

    def last_ids(self) -> list[int]:
        """What each live hypothesis feeds the decoder next: its newest token (bos at first)."""
        return [h.ids[-1] if h.ids else self.bos_id for h in self.live]

    def advance(
        self, step: int, extensions: list[tuple[int, int]], log_probs: list[float]
    ) -> Selection:
        """One step: :func:`select` decides on the ranked extensions (parent, token) of the live
        hypotheses, with their cumulative log-probabilities; the kept ones, in rank order, are the
        live hypotheses of the next step."""
        last_step = step == self.budget - 1
        selection = select(extensions, self.beam_size, len(self.finished), last_step, self.eos_id)
        grown = [
            Hypothesis([*self.live[parent].ids, token], log_prob)
            for (parent, token), log_prob in zip(extensions, log_probs)
        ]
        self.finished += [replace(grown[rank], finished=True) for rank in selection.finished]
        self.live = [grown[rank] for rank in selection.kept]
        self.done = len(self.finished) >= self.beam_size or not selection.kept
        return selection

    def result(self, alpha: float, steps: list[BeamStep] | None = None) -> BeamResult:
        best = best_hypothesis(self.finished, alpha)
        return BeamResult(best.ids, best.log_prob, self.finished, steps or [])


def best_extensions(
    log_probs: Tensor, sentences: int, beam_size: int
) -> tuple[list[list[float]], list[list[tuple[int, int]]]]:
    """The 2 x beam_size best extensions of each sentence, best first: their cumulative
    log-probabilities, and (parent, token), parent counting the sentence's own hypotheses.

    log_probs (n, V): log_prob(hypothesis) + log P(token | hypothesis, source), the sentences' rows
    one after the other, each sentence with n / sentences of them.
    """
    vocab = log_probs.size(1)
    side_by_side = log_probs.view(sentences, -1)  # (sentences, n / sentences x V)
    top_log_probs, top_index = side_by_side.topk(min(2 * beam_size, side_by_side.size(1)))
    extensions = [[divmod(index, vocab) for index in row] for row in top_index.tolist()]
    return top_log_probs.tolist(), extensions


def follow_parents(cache: Sequence[Cache], parents: list[int], device: torch.device) -> None:
    """Keep the cache's rows of ``parents``, in that order: each kept hypothesis takes its parent's
    keys and values (a row index_select; rows no parent names are dropped)."""
    index = torch.tensor(parents, device=device)
    for layer_cache in cache:
        layer_cache.reorder(index)


@torch.inference_mode()
def beam_search(
    model: Decoder,
    source: Tensor,
    beam_size: int = PAPER_DECODING.beam_size,
    alpha: float = PAPER_DECODING.alpha,
    max_length: int | None = None,
    trace: bool = False,
    top_k: int | None = None,
) -> BeamResult:
    """Beam search for one source sentence (1, S), the live beams batched through the cache.

    At every step each live hypothesis is extended by every token, and :func:`select` decides
    which of the 2 x beam_size best extensions stay live, end or are pruned. Search stops once
    beam_size hypotheses have ended or the length budget is spent. The result is the ended
    hypothesis with the best length-normalised log-probability (log P / lp). beam_size=1 is exactly
    greedy search.

    With trace=True every step is recorded, showing top_k candidates per hypothesis (default
    2 x beam_size) and the step's cross-attention weights.
    """
    if source.size(0) != 1:
        raise ValueError("beam_search decodes one sentence at a time: source must be (1, S)")
    config = model.config
    budget = max_length or max_output_length(source.size(1), config.max_len)
    beam = Beam(beam_size, budget, config.bos_id, config.eos_id)
    narrator = _Narrator(beam_size, top_k or 2 * beam_size, alpha) if trace else None
    memory, source_mask = model.encode(source)  # (1, S, D), shared by every hypothesis
    cache = model.new_cache()
    for step in range(beam.budget):
        live, recorded = beam.live, Intermediates() if trace else None
        last = torch.tensor(beam.last_ids(), device=source.device)[:, None]  # (n, 1)
        logits = model.decode(last, memory, source_mask, cache, recorded)
        token_log_probs = forbid_pad(logits[:, -1].float().log_softmax(dim=-1), config)  # (n, V)
        prefix = torch.tensor([h.log_prob for h in live], device=source.device)[:, None]  # (n, 1)
        log_probs = prefix + token_log_probs  # (n, V)
        (top_log_probs,), (extensions,) = best_extensions(log_probs, 1, beam_size)
        selection = beam.advance(step, extensions, top_log_probs)
        if narrator:
            narrator.record(step, live, token_log_probs, log_probs, extensions, selection, recorded)
        if beam.done:
            break
        if selection.parents != list(range(len(live))):  # a survivor in its parent's row stays
            follow_parents(cache, selection.parents, source.device)
    return beam.result(alpha, narrator.steps if narrator else None)


@torch.inference_mode()
def batch_beam_search(
    model: Decoder,
    source: Tensor,
    beam_size: int = PAPER_DECODING.beam_size,
    alpha: float = PAPER_DECODING.alpha,
    max_length: int | None = None,
) -> list[BeamResult]:
    """Beam search for a batch of sentences, source (B, S) padded: for each sentence the search of
    :func:`beam_search` (its :class:`Beam` decides alike, within its own length budget), with the
    live hypotheses of every sentence as the rows of one batch, and without a trace.

    Rows: the hypotheses of the first sentence still searching, then the next one's, and so on;
    every sentence has as many rows as the others: one at the first step, then beam_size (of the
    2 x beam_size best extensions at most beam_size end by eos, one per parent, and the others
    stay live until beam_size do). A sentence whose search is done leaves the batch: the cache
    keeps the rows of the survivors' parents only.

    The outputs are beam_search's; a log-probability may differ in its last float32 bits, for MKL
    multiplies 1 to 3 rows with another kernel than more (beam_search's first step has one row).
    """
    config = model.config
    budgets = output_budgets(source, config, max_length)
    beams = [Beam(beam_size, budget, config.bos_id, config.eos_id) for budget in budgets]
    memory, source_mask = model.encode(source)  # (B, S, D), (B, 1, 1, S)
    cache = model.new_cache()
    searching = list(range(len(beams)))  # the sentences still searching, in row order
    row_sentences, row_memory, row_mask = searching, memory, source_mask  # each row's sentence's
    for step in range(max(budgets)):
        live = [h for i in searching for h in beams[i].live]
        last = [[token] for i in searching for token in beams[i].last_ids()]
        last = torch.tensor(last, device=source.device)  # (n, 1)
        logits = model.decode(last, row_memory, row_mask, cache)
        token_log_probs = forbid_pad(logits[:, -1].float().log_softmax(dim=-1), config)  # (n, V)
        prefix = torch.tensor([h.log_prob for h in live], device=source.device)[:, None]  # (n, 1)
        log_probs = prefix + token_log_probs  # (n, V)
        rows_each = len(live) // len(searching)
        ranked = zip(searching, *best_extensions(log_probs, len(searching), beam_size))
        parents, going_on = [], []
        for position, (i, top_log_probs, extensions) in enumerate(ranked):
            selection = beams[i].advance(step, extensions, top_log_probs)
            if not beams[i].done:
                going_on.append(i)
                parents += [position * rows_each + parent for parent in selection.parents]
        if not going_on:
            break
        if parents != list(range(len(live))):
            follow_parents(cache, parents, source.device)
        searching = going_on
        sentences = [i for i in searching for _ in beams[i].live]
        if sentences != row_sentences:
            row_sentences, index = sentences, torch.tensor(sentences, device=source.device)
            row_memory, row_mask = memory.index_select(0, index), source_mask.index_select(0, index)
    return [beam.result(alpha) for beam in beams]


class _Narrator:
    """Records each step of a traced beam search as a :class:`BeamStep`."""

    def __init__(self, beam_size: int, top_k: int, alpha: float) -> None:
        self.beam_size, self.top_k, self.alpha = beam_size, top_k, alpha
        self.steps: list[BeamStep] = []

    def record(
        self,
        step: int,
        live: list[Hypothesis],
        token_log_probs: Tensor,
        log_probs: Tensor,
        extensions: list[tuple[int, int]],
        selection: Selection,
        intermediates: Intermediates,
    ) -> None:
        decided = {
            extension: (status, self.reason(reason))
            for extension, status, reason in zip(extensions, selection.statuses, selection.reasons)
        }
        # the newest query position of each hypothesis: L x (n, H, S) -> (L, H, n, S)
        weights = torch.stack([maps.weights[:, :, -1] for maps in intermediates.cross]).transpose(
            1, 2
        )
        candidates = self.candidates(token_log_probs, log_probs, live, decided)
        self.steps.append(BeamStep(step, live, candidates, weights.float().cpu().numpy()))

    def reason(self, key: str) -> str:
        return REASONS[key].format(beam_size=self.beam_size)

    def candidates(
        self,
        token_log_probs: Tensor,
        log_probs: Tensor,
        live: list[Hypothesis],
        decided: dict[tuple[int, int], tuple[str, str]],
    ) -> list[Candidate]:
        """The top_k extensions of every live hypothesis, with what the search decided about each;
        an extension outside the ranked 2 x beam_size best is pruned as below the best overall."""
        candidates = []
        k = min(self.top_k, token_log_probs.size(1))
        top_token_log_probs, top_ids = token_log_probs.topk(k, dim=-1)  # (n, k)
        top_log_probs = log_probs.gather(1, top_ids)  # (n, k)
        below = ("pruned", self.reason("below overall"))
        for parent, hypothesis in enumerate(live):
            lp = length_penalty(len(hypothesis.ids) + 1, self.alpha)
            for token_log_prob, token, log_prob in zip(
                top_token_log_probs[parent].tolist(),
                top_ids[parent].tolist(),
                top_log_probs[parent].tolist(),
            ):
                status, reason = decided.get((parent, token), below)
                candidates.append(
                    Candidate(
                        parent, token, token_log_prob, log_prob, log_prob / lp, status, reason
                    )
                )
        return candidates
