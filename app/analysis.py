"""What the app shows, computed without Streamlit.

:func:`analyse` runs the model once per (sentence, target, beam size, length penalty) and keeps
everything the views draw from, attention included, labelled by core; the other functions lay out
the beam search for one view (the tree, each step's candidates, the finished hypotheses re-ranked)
and read the training log.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.decoding import (
    REASONS,
    BeamStep,
    Candidate,
    Hypothesis,
    best_hypothesis,
    length_penalty,
)
from core.metrics_log import read_metrics
from core.sentences import Excerpt, excerpt
from core.tokenizer import has_control_characters
from core.translator import Translation, Translator

# Longer input is cut before tokenizing, between sentences (core.sentences.excerpt): far more than
# the pieces the model reads as one sequence (Translator.max_source_tokens), which the truncation
# note reports.
MAX_CHARS = 2000
# At most about this many candidate bars per step (beam 8 traces 16 per beam: 128 bars)
MAX_CANDIDATE_BARS = 32
MIN_CANDIDATES_PER_BEAM = 3

Detokenize = Callable[[Sequence[int]], str]  # token ids -> text, as Tokenizer.decode


@dataclass
class Analysis:
    """One translation with its full trace, and what the user should know about the input."""

    result: Translation
    read: Excerpt  # what of the text the app read: whole sentences up to MAX_CHARS characters
    source_kinds: list[str]  # piece_kind of each source piece
    output_kinds: list[str]  # piece_kind of each output piece
    pieces: dict[int, str]  # every token id that appears in the beam search trace -> its piece
    notes: list[str] = field(default_factory=list)  # messages about the input, no user text
    seconds: float = 0.0  # time the model took


def piece_kind(piece: str, is_special: bool, is_byte: bool) -> str:
    """How a piece is shown: 'special', 'byte', 'word start' (begins with ▁) or 'continuation'."""
    if is_special:
        return "special"
    if is_byte:
        return "byte"
    return "word start" if piece.startswith("▁") else "continuation"


def piece_count(kinds: Sequence[str]) -> int:
    """How many pieces, special tokens (the language tag, </s>) not counted: what the
    Tokenization and Translate pages both call pieces."""
    return sum(kind != "special" for kind in kinds)


def analyse(
    translator: Translator, text: str, target: str, beam_size: int, alpha: float
) -> Analysis:
    """Translate ``text`` with the full trace. Raises core.InputError when there is nothing to
    translate (its message is meant for the user)."""
    read = excerpt(text, MAX_CHARS)
    text = read.text
    notes = []
    if note := excerpt_note(read):
        notes.append(note)
    if has_control_characters(text):
        notes.append(
            "The text holds control or zero-width characters; the model reads them as spaces."
        )
    start = time.perf_counter()
    result = translator.translate(text, target, beam_size, alpha, trace=True)
    seconds = time.perf_counter() - start
    tokenizer = translator.tokenizer
    if result.truncated:
        full = len(tokenizer.encode_source(text, target))
        notes.append(truncation_note(full, translator.max_source_tokens, read.sentences))
    source_kinds = _kinds(tokenizer, result.source_ids, result.source_tokens)
    if "byte" in source_kinds:
        notes.append(
            f"{source_kinds.count('byte')} pieces are raw UTF-8 bytes (byte fallback): characters "
            "the vocabulary lacks, such as emoji or other scripts. The model saw few of them in "
            "training, so expect a poor translation of that part."
        )
    ids = {c.token for step in result.steps for c in step.candidates}
    ids |= {t for h in result.finished for t in h.tokens}
    return Analysis(
        result,
        read,
        source_kinds,
        _kinds(tokenizer, result.output_ids, result.output_tokens),
        dict(zip(ids, tokenizer.pieces(ids))),
        notes,
        seconds,
    )


def excerpt_note(read: Excerpt) -> str | None:
    """What the app left out of a text longer than MAX_CHARS characters; None when nothing (or
    only space) was."""
    if read.whole and not read.sentences_left_out:
        return None
    if not read.whole:
        return (
            f"The text is longer than {MAX_CHARS} characters, and so is its first sentence: only "
            f"the start is used ({read.characters_left_out:,} characters left out)."
        )
    kept = "sentence" if read.sentences == 1 else f"{read.sentences} sentences"
    left = "sentence" if read.sentences_left_out == 1 else f"{read.sentences_left_out} sentences"
    return (
        f"The text is longer than {MAX_CHARS} characters: the app reads its first {kept} "
        f"({len(read.text):,} characters) and leaves out the {left} after "
        f"{'it' if read.sentences == 1 else 'them'} ({read.characters_left_out:,} characters)."
    )


def truncation_note(pieces: int, max_pieces: int, sentences: int) -> str:
    """The note on a text of ``pieces`` source pieces, more than the model reads; a text of
    several ``sentences`` is cut only where it is read as one sequence."""
    cut = (
        f"the model reads at most {max_pieces}, so it was cut after piece {max_pieces - 1} and "
        "the rest is ignored."
    )
    if sentences <= 1:
        return f"The sentence is {pieces} pieces long (with the language tag and </s>); {cut}"
    return (
        f"Read as one sequence, as the charts read it, the text is {pieces} pieces long (with the "
        f"language tag and </s>); {cut} Translated sentence by sentence (the Translate page), "
        "each sentence is read on its own."
    )


def _kinds(tokenizer, ids: Sequence[int], pieces: Sequence[str]) -> list[str]:
    return [
        piece_kind(p, tokenizer.is_special(i), tokenizer.is_byte(i)) for i, p in zip(ids, pieces)
    ]


# Switching each head of one kind off alone is one batched, teacher-forced pass over
# 1 + layers x heads copies of the sentence: on the shipped model (one thread, as the app runs
# it) it took 1.2 to 5 times as long as the traced search that translated the sentence, 2 to 3
# times for most sentences and beam sizes.
IMPORTANCE_PER_TRANSLATION = 3.0


def importance_estimate(analysis: Analysis) -> str:
    """How long head importance for ``analysis`` should take on this server, for people: "under
    a second", "about 4 s"."""
    seconds = IMPORTANCE_PER_TRANSLATION * analysis.seconds
    return "under a second" if seconds < 1 else f"about {seconds:.0f} s"


# --------------------------------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------------------------------


@dataclass
class TreeNode:
    """One prefix in the beam search tree; the root is the empty prefix (just <s>)."""

    prefix: tuple[int, ...]
    piece: str
    step: int  # the step that proposed it (root: -1); drawn at depth step + 1
    log_prob: float  # log P(last token | the rest)
    score: float  # cumulative log-probability
    normalized: float  # score / length_penalty(len(prefix), alpha)
    status: str  # "root", "kept", "finished" or "pruned"
    reason: str = ""
    y: float = 0.0  # vertical position from the layout
    text: str = ""  # the prefix as text (detokenized), when beam_tree is given a detokenizer

    @property
    def parent(self) -> tuple[int, ...]:
        return self.prefix[:-1]


def beam_tree(
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
            prefix = (*step.hypotheses[c.parent].tokens, c.token)
            nodes[prefix] = TreeNode(
                prefix,
                pieces.get(c.token, str(c.token)),
                step.step,
                c.log_prob,
                c.score,
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
        kids = sorted(children.get(node.prefix, []), key=lambda n: -n.score)
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


# What each of core's reasons (core.decoding.REASONS) means, for a legend and the tooltips;
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
            "prefix": detokenize(step.hypotheses[c.parent].tokens),
            "next piece": pieces.get(c.token, str(c.token)),
            "probability": math.exp(c.log_prob),
            "log-prob": c.log_prob,
            "cumulative": c.score,
            "normalised": c.normalized,
            "status": c.status,
            "why": c.reason,
        }
        for c in (step.candidates if candidates is None else candidates)
    ]


def prefix_text(tokens: Iterable[int], pieces: dict[int, str]) -> str:
    """A hypothesis as its pieces separated by spaces, <s> first."""
    return " ".join(["<s>", *(pieces.get(t, str(t)) for t in tokens)])


def rerank(finished: Sequence[Hypothesis], alpha: float, detokenize: Detokenize) -> list[dict]:
    """The finished hypotheses (as text) ranked by log P / lp(length, alpha), best first;
    'chosen' marks the one core.decoding.best_hypothesis returns."""
    if not finished:
        return []
    best = best_hypothesis(list(finished), alpha)
    rows = [
        {
            "hypothesis": detokenize(h.tokens),
            "length": len(h.tokens),
            "log P": h.score,
            "lp": length_penalty(len(h.tokens), alpha),
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
    first, as in core.decoding.best_hypothesis."""
    scores = np.stack(rerank_curves(finished, alphas))  # (H, A)
    order = np.argsort(-scores, axis=0, kind="stable")  # (H, A): hypothesis at each rank
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, len(finished) + 1)[:, None], axis=0)
    return ranks, scores.max(axis=0, keepdims=True) - scores


# --------------------------------------------------------------------------------------------------
# Model card and training log
# --------------------------------------------------------------------------------------------------


def training_log(path: Path) -> tuple[list[dict], list[dict]]:
    """The training and the validation records of a run's metrics.jsonl (read by
    core.metrics_log, which skips unreadable lines; a missing file is empty)."""
    records = read_metrics(path)
    train = [r for r in records if "train_loss" in r]
    val = [r for r in records if "train_loss" not in r and ("val_loss" in r or "val_bleu" in r)]
    return train, val


def series(records: Sequence[dict], key: str) -> tuple[list[float], list[float]]:
    """(steps, values) of the records that hold a number under ``key``."""
    points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), int | float)]
    return [p[0] for p in points], [p[1] for p in points]


CARD_NAMES = {  # the card's keys that do not say what they are by themselves
    "seconds": "training time",
    "peak_tflops": "measured bf16 matmul peak (TFLOP/s)",
    "mfu": "model FLOPs utilisation (share of that peak)",
}


def card_value(key: str, value: object) -> str | None:
    """One value of the model card's training record as a person reads it; None for what the page
    shows better elsewhere (a list of records, such as the validation curve, is a chart)."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if key == "seconds" and isinstance(value, int | float):
        hours, minutes = divmod(round(value / 60), 60)
        return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    if key == "mfu" and isinstance(value, float):
        return f"{value:.1%}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        if any(isinstance(item, dict | list) for item in value):
            return None
        return ", ".join(str(item) for item in value)
    return str(value)


def card_facts(training: dict) -> list[dict]:
    """The card's training record as table rows {"": name, "value": text}: a nested record (the
    recipe, the final validation) one row per entry, named "recipe: warmup"."""
    rows = []
    for key, value in training.items():
        entries = value.items() if isinstance(value, dict) else [(None, value)]
        for inner, item in entries:
            text = card_value(inner or key, item)
            if text is not None:
                name = CARD_NAMES.get(key, key) if inner is None else f"{key}: {inner}"
                rows.append({"": name.replace("_", " "), "value": text})
    return rows
