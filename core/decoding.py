"""Decoding: greedy search and beam search with the GNMT length penalty, both on the k/v cache.

Beam search can record every step (:class:`BeamStep`): the live hypotheses, each one's top-k next
tokens with log-probabilities, which candidates were kept, pruned or finished and why, and the
cross-attention that produced the step. The app's step-by-step view is drawn from this record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from core.model import Intermediates, Transformer
from core.tokenizer import BOS_ID, EOS_ID

# the output budget: a translation rarely needs more than 1.5 tokens per source token, plus a few
OUTPUT_PER_SOURCE_TOKEN = 1.5
OUTPUT_SLACK = 10


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length penalty (Wu et al., 2016): lp(Y) = ((5 + |Y|) / 6) ** alpha.

    A hypothesis is ranked by log P(Y) / lp(Y); alpha = 0 ranks by raw log-probability.
    """
    return ((5 + length) / 6) ** alpha


def max_output_length(source_length: int, max_len: int) -> int:
    """Output budget in tokens (eos included): 1.5 x the source + 10, within the model's max_len."""
    return min(int(OUTPUT_PER_SOURCE_TOKEN * source_length) + OUTPUT_SLACK, max_len - 1)


@torch.inference_mode()
def greedy_decode(
    model: Transformer, source: Tensor, max_length: int | None = None
) -> list[list[int]]:
    """Pick the most probable token at every step, y_t = argmax P(y | y_<t, x), for a batch.

    source (B, S), padded -> B token lists, each ending with eos unless its length budget ran out
    (bos is not included). Each row's budget follows its own unpadded length, so a sentence decodes
    the same alone or in a batch.
    """
    if max_length is None:
        lengths = (source != model.config.pad_id).sum(dim=1).tolist()
        budgets = [max_output_length(n, model.config.max_len) for n in lengths]
    else:
        budgets = [max_length] * source.size(0)
    memory, memory_mask = model.encode(source)
    cache = model.new_cache()
    tokens = torch.full((source.size(0), 1), BOS_ID, dtype=torch.long, device=source.device)
    steps = []
    for _ in range(max(budgets)):
        logits = model.decode(tokens, memory, memory_mask, cache)[:, -1]  # (B, V)
        tokens = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
        steps.append(tokens)
        if (torch.cat(steps, dim=1) == EOS_ID).any(dim=1).all():
            break
    result = []
    for row, budget in zip(torch.cat(steps, dim=1).tolist(), budgets):
        row = row[:budget]
        result.append(row[: row.index(EOS_ID) + 1] if EOS_ID in row else row)
    return result


@dataclass
class Candidate:
    """One possible extension of a live hypothesis at one step."""

    parent: int  # index of the hypothesis it extends, in BeamStep.hypotheses
    token: int
    log_prob: float  # log P(token | parent's prefix, source)
    score: float  # cumulative log-probability of the extended prefix
    normalized: float  # score / length_penalty(length of the extended prefix)
    status: str = "pruned"  # "kept", "finished" or "pruned"
    reason: str = ""


@dataclass
class Hypothesis:
    tokens: list[int]  # without bos
    score: float  # cumulative log-probability
    finished: bool = False

    def normalized(self, alpha: float) -> float:
        return self.score / length_penalty(len(self.tokens), alpha)


@dataclass
class BeamStep:
    """What beam search saw and decided at one step."""

    step: int
    hypotheses: list[Hypothesis]  # the live prefixes the step extended
    candidates: list[Candidate]  # top-k per hypothesis, best first per parent
    cross_attention: Tensor  # (n_hypotheses, L, H, S): each prefix's last query over the source


@dataclass
class BeamResult:
    tokens: list[int]  # best hypothesis, without bos
    score: float
    finished: list[Hypothesis]  # every hypothesis that ended, in the order they ended
    steps: list[BeamStep] = field(default_factory=list)


def best_hypothesis(finished: list[Hypothesis], alpha: float) -> Hypothesis:
    """Rank ended hypotheses by log P(Y) / lp(Y); the first ended wins a tie."""
    return max(finished, key=lambda h: h.normalized(alpha))


@torch.inference_mode()
def beam_search(
    model: Transformer,
    source: Tensor,
    beam_size: int = 4,
    alpha: float = 0.6,
    max_length: int | None = None,
    trace: bool = False,
    top_k: int | None = None,
) -> BeamResult:
    """Beam search for one source sentence (1, S), the live beams batched through the cache.

    At every step each live hypothesis is extended by every token; of the 2 x beam_size best
    extensions by cumulative log-probability, those ending in eos within the top beam_size become
    finished hypotheses and the best beam_size others stay live (the rule of fairseq). Search
    stops once beam_size hypotheses have finished or the
    length budget is spent (then the live ones finish as they are). The result is the finished
    hypothesis with the best length-normalised score. beam_size=1 is exactly greedy search.

    With trace=True every step is recorded, showing top_k candidates per hypothesis (default
    2 x beam_size).
    """
    if source.size(0) != 1:
        raise ValueError("beam_search decodes one sentence at a time: source must be (1, S)")
    max_length = max_length or max_output_length(source.size(1), model.config.max_len)
    top_k = top_k or 2 * beam_size
    memory, memory_mask = model.encode(source)  # (1, S, D), shared by every hypothesis
    cache = model.new_cache()
    live = [Hypothesis([], 0.0)]
    finished: list[Hypothesis] = []
    steps: list[BeamStep] = []
    for step in range(max_length):
        last = [h.tokens[-1] if h.tokens else BOS_ID for h in live]
        step_trace = Intermediates() if trace else None
        logits = model.decode(
            torch.tensor(last, device=source.device)[:, None],
            memory,
            memory_mask,
            cache,
            trace=step_trace,
        )[:, -1]  # (n, V)
        log_probs = logits.float().log_softmax(dim=-1)
        scores = torch.tensor([h.score for h in live], device=source.device)[:, None] + log_probs
        best_scores, best_index = scores.view(-1).topk(min(2 * beam_size, scores.numel()))

        kept: list[Hypothesis] = []
        parents: list[int] = []
        decided: dict[tuple[int, int], tuple[str, str]] = {}
        last_step = step == max_length - 1
        for rank, (score, index) in enumerate(zip(best_scores.tolist(), best_index.tolist())):
            parent, token = divmod(index, log_probs.size(1))
            tokens = [*live[parent].tokens, token]
            if len(finished) >= beam_size:
                decided[parent, token] = ("pruned", "the beam has enough finished hypotheses")
            elif token == EOS_ID and rank < beam_size:
                finished.append(Hypothesis(tokens, score, finished=True))
                decided[parent, token] = ("finished", "ends with </s>")
            elif token == EOS_ID:
                decided[parent, token] = ("pruned", f"ends with </s> outside the top {beam_size}")
            elif len(kept) < beam_size:
                if last_step:
                    finished.append(Hypothesis(tokens, score, finished=True))
                    decided[parent, token] = ("finished", "reached the length limit")
                else:
                    kept.append(Hypothesis(tokens, score))
                    parents.append(parent)
                    decided[parent, token] = ("kept", f"among the {beam_size} best live extensions")
            else:
                decided[parent, token] = ("pruned", f"not among the {beam_size} best")

        if trace:
            steps.append(
                BeamStep(
                    step,
                    live,
                    _candidates(log_probs, scores, live, decided, top_k, alpha),
                    _last_query_cross_attention(step_trace),
                )
            )
        if len(finished) >= beam_size or not kept:
            break
        if parents != list(range(len(live))):  # each survivor in its parent's row needs no move
            index = torch.tensor(parents, device=source.device)
            for layer_cache in cache:
                layer_cache.reorder(index)
        live = kept

    best = best_hypothesis(finished, alpha)
    return BeamResult(best.tokens, best.score, finished, steps)


def _candidates(
    log_probs: Tensor,
    scores: Tensor,
    live: list[Hypothesis],
    decided: dict[tuple[int, int], tuple[str, str]],
    top_k: int,
    alpha: float,
) -> list[Candidate]:
    """The top_k extensions of every live hypothesis, with what the search decided about each.

    Decisions come from the search itself; an extension it never reached is pruned for ranking
    below the 2 x beam_size best overall.
    """
    candidates = []
    top_log_probs, top_tokens = log_probs.topk(min(top_k, log_probs.size(1)), dim=-1)  # (n, k)
    top_scores = scores.gather(1, top_tokens)  # (n, k)
    for parent, hypothesis in enumerate(live):
        length = len(hypothesis.tokens) + 1
        for log_prob, token, score in zip(
            top_log_probs[parent].tolist(), top_tokens[parent].tolist(), top_scores[parent].tolist()
        ):
            status, reason = decided.get((parent, token), ("pruned", "below the best overall"))
            candidates.append(
                Candidate(
                    parent,
                    token,
                    log_prob,
                    score,
                    score / length_penalty(length, alpha),
                    status,
                    reason,
                )
            )
    return candidates


def _last_query_cross_attention(trace: Intermediates) -> Tensor:
    """(n, L, H, S): each hypothesis's newest query position over the source."""
    return torch.stack([maps.weights[:, :, -1] for maps in trace.cross], dim=1)
