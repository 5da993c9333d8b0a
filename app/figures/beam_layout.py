"""What the Beam search page draws, laid out from core's trace without Streamlit: the tree of
hypotheses (:func:`tree_layout`), each step's candidates worth showing and their table rows,
what each of core's reasons means, and the finished hypotheses re-ranked."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core import (
    REASONS,
    BeamStep,
    Candidate,
    Hypothesis,
    best_hypothesis,
    length_penalty,
)

# At most about this many candidate bars per step (beam 8 traces 16 per beam: 128 bars)
MAX_CANDIDATE_BARS = 32
MIN_CANDIDATES_PER_BEAM = 3

Detokenize = Callable[[Sequence[int]], str]  # token ids -> text, as Tokenizer.decode


@dataclass
class TreeNode:
    """One prefix in the beam search tree; the root is the empty prefix (just <s>)."""

    prefix: tuple[int, ...]
    piece: str
    step: int  # the step that proposed it (root: -1); drawn at depth step + 1
    token_log_prob: float  # log P(last token | the rest)
    log_prob: float  # cumulative log-probability
    normalized: float  # log_prob / length_penalty(len(prefix), alpha)
    status: str  # "root", "kept", "finished" or "pruned"
    reason: str = ""
    y: float = 0.0  # vertical position from the layout
    text: str = ""  # the prefix as text (detokenized), when tree_layout is given a detokenizer

    @property
    def parent(self) -> tuple[int, ...]:
        return self.prefix[:-1]


def tree_layout(
    steps: Sequence[BeamStep],
    pieces: dict[int, str],
    upto: int,
    show_pruned: bool = True,
    per_beam: int | None = None,
    detokenize: Detokenize | None = None,
) -> list[TreeNode]:
    """The tree of prefixes the search kept or finished in steps 0..upto, plus (with show_pruned)
    the candidates it pruned at step ``upto`` (with ``per_beam``, only those that
    :func:`shown_candidates` shows). Nodes come parents first, laid out so that leaves sit one unit
    apart in the order of their scores, best at the top, and each parent sits at the middle of its
    children. With ``detokenize`` each node carries its prefix as text."""
    nodes = {(): TreeNode((), "<s>", -1, 0.0, 0.0, 0.0, "root")}
    for step in steps[: upto + 1]:
        shown = shown_candidates(step, per_beam) if step.step == upto else step.candidates
        for c in shown:
            if c.status == "pruned" and not (show_pruned and step.step == upto):
                continue
            prefix = (*step.hypotheses[c.parent].ids, c.token)
            nodes[prefix] = TreeNode(
                prefix,
                pieces.get(c.token, str(c.token)),
                step.step,
                c.token_log_prob,
                c.log_prob,
                c.normalized,
                c.status,
                c.reason,
            )
    children: dict[tuple[int, ...], list[TreeNode]] = {}
    for node in nodes.values():
        if node.prefix:
            children.setdefault(node.parent, []).append(node)
    next_leaf = 0.0

    def place(node: TreeNode) -> float:
        nonlocal next_leaf
        kids = sorted(children.get(node.prefix, []), key=lambda n: -n.log_prob)
        if kids:
            node.y = float(np.mean([place(kid) for kid in kids]))
        else:
            node.y, next_leaf = next_leaf, next_leaf + 1
        return node.y

    place(nodes[()])
    if detokenize is not None:
        for node in nodes.values():
            node.text = detokenize(node.prefix)
    return sorted(nodes.values(), key=lambda n: n.step)


def candidates_per_beam(beam_size: int) -> int:
    """How many candidates of each beam a step shows: about MAX_CANDIDATE_BARS in all, at least
    MIN_CANDIDATES_PER_BEAM each (beam 4: 8, beam 8: 4)."""
    return max(MIN_CANDIDATES_PER_BEAM, MAX_CANDIDATE_BARS // max(beam_size, 1))


def tree_candidates_per_beam(beam_size: int) -> int:
    """How many candidates of each beam the tree draws at its shaded step: half as many as the
    bars, at least 2, since the tree also holds every earlier step (beam 4: 4, beam 8: 2)."""
    return max(2, candidates_per_beam(beam_size) // 2)


def traced_per_beam(step: BeamStep) -> int:
    """How many candidates the trace holds for each live hypothesis of a step (its top k)."""
    return len(step.candidates) // max(len(step.hypotheses), 1)


def shown_candidates(step: BeamStep, per_beam: int | None) -> list[Candidate]:
    """The candidates of a step worth drawing: the ``per_beam`` most probable of each beam (the
    trace lists each beam's best first), and every one the search kept or finished, wherever it
    ranks. None: all of them."""
    if per_beam is None:
        return list(step.candidates)
    seen: dict[int, int] = {}  # beam -> candidates of it met so far
    shown = []
    for candidate in step.candidates:
        rank = seen.get(candidate.parent, 0)
        seen[candidate.parent] = rank + 1
        if rank < per_beam or candidate.status != "pruned":
            shown.append(candidate)
    return shown


# What each of core's reasons (core.decoding.search.REASONS) means, for a legend and the tooltips;
# {beam} is the beam size, {ranked} the 2 x beam extensions each step ranks.
REASON_EXPLANATIONS = {
    "enough finished": (
        "{beam} hypotheses have already ended, so the search stops: nothing else is kept."
    ),
    "eos": (
        "Ranks among the {beam} best of the {ranked} ranked extensions and ends with </s>: the "
        "hypothesis is finished and waits for the final ranking by log P / lp."
    ),
    "eos outside": (
        "Ends with </s>, but ranks below the top {beam} of the {ranked} ranked extensions, so it "
        "is dropped instead of finished."
    ),
    "length limit": (
        "The output has reached the most pieces it may have: at the last step every surviving "
        "extension ends here."
    ),
    "best live": (
        "One of the {beam} best-scoring extensions (cumulative log-probability) that do not "
        "end: it stays live and is extended at the next step."
    ),
    "not best": (
        "Among the {ranked} best extensions of all beams, but {beam} better ones were already "
        "kept live, so it is pruned."
    ),
    "below overall": (
        "Not even among the {ranked} best extensions of all beams together (by cumulative "
        "log-probability), so the search never considered it; drawn because it is one of its "
        "own beam's most probable pieces."
    ),
}


def reason_explanations(beam_size: int) -> dict[str, str]:
    """Each reason as core words it for this beam size -> what it means."""
    return {
        REASONS[key].format(beam_size=beam_size): explanation.format(
            beam=beam_size, ranked=2 * beam_size
        )
        for key, explanation in REASON_EXPLANATIONS.items()
    }


def candidate_rows(
    step: BeamStep,
    pieces: dict[int, str],
    detokenize: Detokenize,
    candidates: Sequence[Candidate] | None = None,
) -> list[dict]:
    """One row per candidate of a step (or of ``candidates``, a selection of them): which beam it
    extends (its prefix as text), with what piece, and what became of it."""
    return [
        {
            "beam": c.parent + 1,
            "prefix": detokenize(step.hypotheses[c.parent].ids),
            "next piece": pieces.get(c.token, str(c.token)),
            "probability": math.exp(c.token_log_prob),
            "log-prob": c.token_log_prob,
            "cumulative": c.log_prob,
            "normalised": c.normalized,
            "status": c.status,
            "why": c.reason,
        }
        for c in (step.candidates if candidates is None else candidates)
    ]


def rerank(finished: Sequence[Hypothesis], alpha: float, detokenize: Detokenize) -> list[dict]:
    """The finished hypotheses (as text) ranked by log P / lp(length, alpha), best first;
    'chosen' marks the one core.decoding.search.best_hypothesis returns."""
    if not finished:
        return []
    best = best_hypothesis(list(finished), alpha)
    rows = [
        {
            "hypothesis": detokenize(h.ids),
            "length": len(h.ids),
            "log P": h.log_prob,
            "lp": length_penalty(len(h.ids), alpha),
            "normalised": h.normalized(alpha),
            "chosen": h is best,
        }
        for h in finished
    ]
    rows.sort(key=lambda row: (not row["chosen"], -row["normalised"]))
    return [{"rank": i + 1, **row} for i, row in enumerate(rows)]


def rerank_curves(finished: Sequence[Hypothesis], alphas: np.ndarray) -> list[np.ndarray]:
    """For each finished hypothesis, its normalised score at every alpha."""
    return [np.array([h.normalized(float(alpha)) for alpha in alphas]) for h in finished]


def rerank_ranks(
    finished: Sequence[Hypothesis], alphas: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each finished hypothesis's rank (1 = the output) and its gap to the best normalised score
    (>= 0) at every alpha, both (hypotheses, alphas). A tie goes to the hypothesis that ended
    first, as in core.decoding.search.best_hypothesis."""
    scores = np.stack(rerank_curves(finished, alphas))  # (H, A)
    order = np.argsort(-scores, axis=0, kind="stable")  # (H, A): hypothesis at each rank
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, len(finished) + 1)[:, None], axis=0)
    return ranks, scores.max(axis=0, keepdims=True) - scores
