"""What the app shows, computed without Streamlit.

:func:`analyse` runs the model once per (sentence, target, beam size, length penalty) and keeps
everything the views draw from, attention included, labelled by core; the other functions lay out
the beam search for one view (the tree, each step's candidates, the finished hypotheses re-ranked)
and read the training log.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.decoding import BeamStep, Hypothesis, best_hypothesis, length_penalty
from core.metrics_log import read_metrics
from core.tokenizer import has_control_characters
from core.translator import Translation, Translator

# Longer input is cut before tokenizing: far more than the pieces the model reads
# (Translator.max_source_tokens), which the truncation note reports.
MAX_CHARS = 2000


@dataclass
class Analysis:
    """One translation with its full trace, and what the user should know about the input."""

    result: Translation
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


def analyse(
    translator: Translator, text: str, target: str, beam_size: int, alpha: float
) -> Analysis:
    """Translate ``text`` with the full trace. Raises core.InputError when there is nothing to
    translate (its message is meant for the user)."""
    notes = []
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS]
        notes.append(f"The text is longer than {MAX_CHARS} characters; only the start is used.")
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
        notes.append(
            f"The sentence is {full} pieces long (with the language tag and </s>); the model reads "
            f"at most {translator.max_source_tokens}, so it was cut after piece "
            f"{translator.max_source_tokens - 1} and the rest is ignored."
        )
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
        source_kinds,
        _kinds(tokenizer, result.output_ids, result.output_tokens),
        dict(zip(ids, tokenizer.pieces(ids))),
        notes,
        seconds,
    )


def _kinds(tokenizer, ids: Sequence[int], pieces: Sequence[str]) -> list[str]:
    return [
        piece_kind(p, tokenizer.is_special(i), tokenizer.is_byte(i)) for i, p in zip(ids, pieces)
    ]


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

    @property
    def parent(self) -> tuple[int, ...]:
        return self.prefix[:-1]


def beam_tree(
    steps: Sequence[BeamStep], pieces: dict[int, str], upto: int, show_pruned: bool = True
) -> list[TreeNode]:
    """The tree of prefixes the search kept or finished in steps 0..upto, plus (with show_pruned)
    the candidates it pruned at step ``upto``. Nodes come parents first, laid out so that leaves
    sit one unit apart in the order of their scores, best at the top, and each parent sits at the
    middle of its children."""
    nodes = {(): TreeNode((), "<s>", -1, 0.0, 0.0, 0.0, "root")}
    for step in steps[: upto + 1]:
        for c in step.candidates:
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
    return sorted(nodes.values(), key=lambda n: n.step)


def candidate_rows(step: BeamStep, pieces: dict[int, str]) -> list[dict]:
    """One row per candidate of a step: which beam it extends, with what, and what became of it."""
    return [
        {
            "beam": c.parent + 1,
            "prefix": prefix_text(step.hypotheses[c.parent].tokens, pieces),
            "next piece": pieces.get(c.token, str(c.token)),
            "probability": math.exp(c.log_prob),
            "log-prob": c.log_prob,
            "cumulative": c.score,
            "normalised": c.normalized,
            "status": c.status,
            "why": c.reason,
        }
        for c in step.candidates
    ]


def prefix_text(tokens: Iterable[int], pieces: dict[int, str]) -> str:
    """A hypothesis as its pieces separated by spaces, <s> first."""
    return " ".join(["<s>", *(pieces.get(t, str(t)) for t in tokens)])


def rerank(finished: Sequence[Hypothesis], alpha: float, pieces: dict[int, str]) -> list[dict]:
    """The finished hypotheses ranked by log P / lp(length, alpha), best first; 'chosen' marks
    the one core.decoding.best_hypothesis returns."""
    if not finished:
        return []
    best = best_hypothesis(list(finished), alpha)
    rows = [
        {
            "hypothesis": prefix_text(h.tokens, pieces),
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
