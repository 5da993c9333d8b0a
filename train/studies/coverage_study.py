"""How well do coverage flags find what a translation dropped or said twice? Issue #48, item 5.

    python -m train.studies.coverage_study --card pretrained/en-de-fr

Every sentence of the labelled set (train/studies/coverage_labels.tsv: source words of the shipped
model's own translations, labelled dropped / twice / once by hand) is translated again as the app
does (core.PAPER_DECODING, traced); a sentence whose translation is no longer the stored one is
named and left out, never scored against labels written for another output. Then, for each
aggregation (every head; each layer; the head survey's alignment-like heads; the Explain page's
lenses as coverage, core.inspection.coverage.lens_coverage), each labelled word's coverage is
flagged dropped below ``under`` and said twice above ``over``, and scored:

    precision = flags of the labelled kind / flags        recall = flags of the labelled kind /
                                                                   words dropped or said twice

Two sets of thresholds: the app's a-priori 0.5 / 1.5 (chosen before this study, so not tuned),
and thresholds tuned for F1 by cross-validation over the sentences (each fold's words flagged with
thresholds chosen on the other folds; a sentence's German and French in one fold). Every
aggregation's scores go to the card (``coverage_study``), and as ``best`` the one of the
cross-attention with the best cross-validated F1, its thresholds tuned on the whole set; the
Coverage page shows that, and the best of all when it is a lens (read from the aggregations by
core.inspection.coverage.measured_flags: on the shipped model occlusion), each with its
cross-validated precision and recall.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.cli import positive_int
from core.decoding.search import PAPER_DECODING
from core.files.model_dir import ModelDir
from core.inspection.coverage import (
    EVERY_HEAD,
    LENS_PREFIX,
    STUDY_KEY,
    Aggregation,
    Coverage,
    Thresholds,
    alignment_heads,
    best_entry,
    lens_coverage,
    occlusion_rows,
    word_coverage,
)
from core.inspection.head_statistics import is_punctuation
from core.inspection.head_survey import load_survey
from core.text.words import is_special_piece
from core.translator import DEFAULT_MODEL, Translation, Translator
from train.shipping.card_sections.coverage import coverage_table
from train.studies.study_args import command_line, publish

LABELS = Path(__file__).with_name("coverage_labels.tsv")
KINDS = ("dropped", "twice")  # what a flag claims; "once" is the absence of a flag
A_PRIORI = Thresholds()  # 0.5 / 1.5, the app's before this study
UNDER_GRID = tuple(round(0.05 * i, 2) for i in range(0, 21))  # 0 (never) .. 1.0
OVER_GRID = (*(round(1.0 + 0.1 * i, 2) for i in range(1, 21)), 99.0)  # 1.1 .. 3.0, 99 (never)
LENS_NAMES = ("gradient x input", "integrated gradients", "occlusion", "norm-based", "rollout")
DRY_RUN_SENTENCES = 2
DRY_RUN_IG_STEPS = 4


@dataclass(frozen=True)
class LabelledWord:
    sentence: str
    target: str
    output: str  # the translation the label was read from
    word: str
    index: int  # among the sentence's whitespace-separated words, from 0
    label: str  # "dropped", "twice" or "once"


def read_labels(path: Path) -> list[LabelledWord]:
    """The labelled set: a TSV with a header row, '#' lines its comments."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        words = [LabelledWord(**{**row, "index": int(row["index"])}) for row in rows]
    unknown = {w.label for w in words} - {*KINDS, "once"}
    if unknown:
        raise ValueError(f"{path}: unknown labels {sorted(unknown)}")
    return words


def by_sentence(words: Iterable[LabelledWord]) -> dict[tuple[str, str], list[LabelledWord]]:
    groups: dict[tuple[str, str], list[LabelledWord]] = {}
    for word in words:
        groups.setdefault((word.sentence, word.target), []).append(word)
    return groups


def word_columns(found: Coverage, sentence: str) -> list[int]:
    """The coverage column of each whitespace-separated word of ``sentence``: the columns that
    are neither special pieces nor punctuation, in order (punctuation at a word's end has a
    column of its own)."""
    columns = [
        i
        for i, label in enumerate(found.source_labels)
        if not is_special_piece(label) and not is_punctuation(label)
    ]
    words = [token for token in sentence.split() if not is_punctuation(token)]
    if len(columns) != len(words):
        raise ValueError(f"{sentence!r}: {len(words)} words but {len(columns)} coverage columns")
    return columns


def predict(values: np.ndarray, thresholds: Thresholds) -> list[str]:
    """'dropped' below ``under``, 'twice' above ``over``, else 'once'."""
    return [
        "dropped" if v < thresholds.under else "twice" if v > thresholds.over else "once"
        for v in values
    ]


def precision_recall(predicted: list[str], labels: list[str], kinds=KINDS) -> dict:
    """Flags among ``kinds`` scored against the labels: a flag is right when its kind is the
    label's. precision = right / flags, recall = right / labelled words of those kinds, F1 their
    harmonic mean (0 when either is 0; precision None without a flag)."""
    flags = sum(p in kinds for p in predicted)
    problems = sum(label in kinds for label in labels)
    right = sum(p in kinds and p == label for p, label in zip(predicted, labels))
    precision = right / flags if flags else None
    recall = right / problems if problems else None
    f1 = 2 * right / (flags + problems) if flags + problems else 0.0
    return {
        "flags": flags,
        "right": right,
        "problems": problems,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def scores(predicted: list[str], labels: list[str]) -> dict:
    """precision_recall over both kinds, and for each kind apart."""
    return {
        **precision_recall(predicted, labels),
        **{kind: precision_recall(predicted, labels, (kind,)) for kind in KINDS},
    }


def tune(values: np.ndarray, labels: list[str]) -> Thresholds:
    """The thresholds of the grid with the best F1 on these words (the first of equals: the
    lowest under, then the lowest over)."""
    best, best_f1 = A_PRIORI, -1.0
    for under in UNDER_GRID:
        dropped = values < under
        for over in OVER_GRID:
            predicted = np.where(dropped, "dropped", np.where(values > over, "twice", "once"))
            f1 = precision_recall(list(predicted), labels)["f1"]
            if f1 > best_f1:
                best, best_f1 = Thresholds(under, over), f1
    return best


def cross_validated(values: np.ndarray, labels: list[str], folds: np.ndarray) -> tuple[list, list]:
    """Each fold's words flagged with thresholds tuned on the other folds: the predictions, and
    each fold's thresholds."""
    predicted = np.empty(len(labels), dtype=object)
    chosen = []
    for fold in np.unique(folds):
        train, held_out = folds != fold, folds == fold
        thresholds = tune(values[train], [lab for lab, t in zip(labels, train) if t])
        predicted[held_out] = predict(values[held_out], thresholds)
        chosen.append({"under": thresholds.under, "over": thresholds.over})
    return list(predicted), chosen


def lens_rows(model: torch.nn.Module, result: Translation, ig_steps: int) -> dict[str, np.ndarray]:
    """Each Explain lens (core/inspection/attribution.py) for every output piece, (rows, source
    pieces) per lens: gradient x input, integrated gradients (``ig_steps`` steps), occlusion (the
    Coverage page's own core.inspection.coverage.occlusion_rows), norm-based (mean over layers and
    heads) and rollout."""
    from captum.attr import InputXGradient  # captum only for the lenses

    from core.inspection import attribution

    model.eval()
    embedding = attribution.source_token(model, result)
    rows: dict[str, list[np.ndarray]] = {name: [] for name in LENS_NAMES[:2]}
    for position in range(result.attention.cross.weights.shape[2]):
        log_prob = attribution.LogProbability(model, result, position)
        gradient = InputXGradient(log_prob).attribute(embedding.clone().requires_grad_())
        integrated, _ = attribution.integrated_gradients(log_prob, embedding, ig_steps)
        rows["gradient x input"].append(gradient.sum(-1)[0].detach().cpu().numpy())
        rows["integrated gradients"].append(integrated.sum(-1)[0].detach().cpu().numpy())
    return {
        **{name: np.stack(values) for name, values in rows.items()},
        "occlusion": occlusion_rows(model, result),
        "norm-based": attribution.norm_based(model, result).mean(axis=(0, 1)),
        "rollout": attribution.cross_rollout(result),
    }


@dataclass
class Measured:
    """Every aggregation's coverage of the scored words, in one order."""

    words: list[LabelledWord]
    values: dict[str, np.ndarray]  # aggregation name -> (words,)
    changed: list[dict]  # sentences whose translation is no longer the labelled one


def measure(
    translator: Translator,
    groups: dict[tuple[str, str], list[LabelledWord]],
    aggregations: list[Aggregation],
    ig_steps: int,
) -> Measured:
    """Translate each labelled sentence as the app does and read each aggregation's coverage
    of its labelled words; a sentence translated otherwise than stored is set aside."""
    words, changed = [], []
    values: dict[str, list[float]] = {a.name: [] for a in aggregations}
    values.update({name: [] for name in LENS_NAMES})
    for (sentence, target), labelled in groups.items():
        result = translator.translate(
            sentence, target, PAPER_DECODING.beam_size, PAPER_DECODING.alpha, trace=True
        )
        if result.text != labelled[0].output:
            changed.append({"sentence": sentence, "target": target, "stored": labelled[0].output,
                            "now": result.text})  # fmt: skip
            print(f"CHANGED, not scored: {target} {sentence!r} -> {result.text!r}", flush=True)
            continue
        found = word_coverage(result)
        columns = [word_columns(found, sentence)[w.index] for w in labelled]
        check_words(found, columns, labelled)
        for aggregation in aggregations:
            values[aggregation.name].extend(aggregation.values(found)[columns])
        for name, lens in lens_rows(translator.model, result, ig_steps).items():
            values[name].extend(EVERY_HEAD.values(lens_coverage(result, lens))[columns])
        words.extend(labelled)
        print(f"{target} {sentence}", flush=True)
    return Measured(words, {name: np.array(v) for name, v in values.items()}, changed)


def check_words(found: Coverage, columns: list[int], labelled: list[LabelledWord]) -> None:
    """Each label's word is its column's (case aside: the truecaser lowercases a first word)."""
    for column, word in zip(columns, labelled):
        if found.source_labels[column].lower() != word.word.lower():
            raise ValueError(
                f"{word.sentence!r}: word {word.index} is {word.word!r} in the labels but "
                f"{found.source_labels[column]!r} in the coverage"
            )


def folds_of(words: list[LabelledWord], count: int) -> np.ndarray:
    """Each word's fold: its source sentence's order of first appearance, modulo ``count`` (a
    sentence's German and French in one fold)."""
    order = list(dict.fromkeys(w.sentence for w in words))
    return np.array([order.index(w.sentence) % count for w in words])


def thresholds_scores(values: np.ndarray, labels: list[str], thresholds: Thresholds) -> dict:
    """The thresholds and the scores of the flags they give."""
    return {
        "under": thresholds.under,
        "over": thresholds.over,
        **scores(predict(values, thresholds), labels),
    }


def aggregation_record(
    aggregation: Aggregation | None, name: str, values: np.ndarray, labels, folds
) -> dict:
    """One aggregation's scores: a priori, cross-validated, and the thresholds the whole set
    would choose."""
    predicted, fold_thresholds = cross_validated(values, labels, folds)
    return {
        "name": name,
        "layer": aggregation.layer if aggregation else None,
        "heads": [list(h) for h in aggregation.heads] if aggregation else [],
        "describe": aggregation.describe() if aggregation else "Explain lens, |value| as shares",
        "a_priori": thresholds_scores(values, labels, A_PRIORI),
        "cross_validated": {"fold_thresholds": fold_thresholds, **scores(predicted, labels)},
        "tuned_on_all": thresholds_scores(values, labels, tune(values, labels)),
    }


def study(measured: Measured, aggregations: list[Aggregation], folds: int) -> list[dict]:
    """Every aggregation's record, the attention ones first, then the lenses."""
    labels = [w.label for w in measured.words]
    fold = folds_of(measured.words, folds)
    named: list[tuple[Aggregation | None, str]] = [(a, a.name) for a in aggregations]
    named += [(None, f"{LENS_PREFIX}{name}") for name in LENS_NAMES]
    return [
        aggregation_record(a, name, measured.values[name.removeprefix(LENS_PREFIX)], labels, fold)
        for a, name in named
    ]


def best_record(records: list[dict]) -> dict:
    """The aggregation with the best cross-validated F1 among those the cross-attention alone gives
    (no lens), with its thresholds tuned on the whole set and its cross-validated precision and
    recall. The best of all, a lens among them, is read from ``aggregations`` by the same rule
    (core.inspection.coverage.best_entry, measured_flags)."""
    best = best_entry(records, lenses=False)
    held_out = best["cross_validated"]
    return {
        "name": best["name"],
        "layer": best["layer"],
        "heads": best["heads"],
        "under": best["tuned_on_all"]["under"],
        "over": best["tuned_on_all"]["over"],
        "precision": held_out["precision"],
        "recall": held_out["recall"],
        "f1": held_out["f1"],
    }


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.studies.coverage_study", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", type=Path, default=DEFAULT_MODEL, help=f"model folder (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--labels", type=Path, default=LABELS, help=f"the labelled words (default {LABELS})"
    )
    parser.add_argument(
        "--card", type=Path, help="model folder whose card gets the study (default: print only)"
    )
    parser.add_argument(
        "--folds",
        type=positive_int,
        default=2,
        help="cross-validation folds over the sentences (default 2)",
    )
    parser.add_argument(
        "--ig-steps",
        type=positive_int,
        default=32,
        help="integrated gradients' steps per output piece (default 32; the Explain page uses 160)",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch threads for the translations (default 1)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=f"only the first {DRY_RUN_SENTENCES} labelled sentences, {DRY_RUN_IG_STEPS} "
        "integrated-gradients steps, and no card: seconds",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.dry_run and args.card:
        parser().error("--dry-run writes no card: leave out --card")
    torch.set_num_threads(args.threads)
    translator = Translator.load(args.model)
    groups = by_sentence(read_labels(args.labels))
    if args.dry_run:
        groups = dict(list(groups.items())[:DRY_RUN_SENTENCES])
    aggregations = [EVERY_HEAD, *(Aggregation(f"layer {n + 1}", layer=n) for n in range(6))]
    survey = load_survey(args.model)
    if survey is not None:
        aggregations.append(alignment_heads(survey.statistics["cross"]["diagonality"]))
    ig_steps = DRY_RUN_IG_STEPS if args.dry_run else args.ig_steps
    measured = measure(translator, groups, aggregations, ig_steps)
    records = study(measured, aggregations, args.folds)
    labels = [w.label for w in measured.words]
    record = {
        "command": command_line("python -m train.studies.coverage_study", argv),
        "labels": args.labels.name,
        "labels_sha256": hashlib.sha256(args.labels.read_bytes()).hexdigest(),
        "model_sha256": ModelDir(args.model).model_sha256(),
        "beam_size": PAPER_DECODING.beam_size,
        "alpha": PAPER_DECODING.alpha,
        "sentences": len(groups) - len(measured.changed),
        "words": len(labels),
        "problems": sum(label in KINDS for label in labels),
        "by_label": {label: labels.count(label) for label in (*KINDS, "once")},
        "changed": measured.changed,
        "folds": args.folds,
        "ig_steps": ig_steps,
        "aggregations": records,
        "best": best_record(records),
    }
    publish(record, STUDY_KEY, None if args.dry_run else args.card)
    print("\n".join(coverage_table(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
