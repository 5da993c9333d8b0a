"""The coverage study (train/studies/coverage_study.py): its precision and recall on hand-made flags
whose answer is known, thresholds tuned on other folds than those they score, the labelled set's
shape, and the card's section."""

import numpy as np
import pytest

from core.inspection.coverage import Thresholds
from train.shipping.card_sections.coverage import coverage_study_section
from train.studies.coverage_study import (
    LABELS,
    best_record,
    cross_validated,
    folds_of,
    precision_recall,
    predict,
    read_labels,
    scores,
    tune,
)


def test_precision_and_recall_of_hand_made_flags():
    labels = ["dropped", "twice", "once", "once", "dropped", "twice"]
    predicted = ["dropped", "dropped", "once", "twice", "once", "twice"]
    # flags: 4 (two dropped, two twice); right: word 0 (dropped) and word 5 (twice)
    # problems: 4 (words 0, 1, 4, 5)
    found = scores(predicted, labels)
    assert (found["flags"], found["right"], found["problems"]) == (4, 2, 4)
    assert found["precision"] == pytest.approx(2 / 4) and found["recall"] == pytest.approx(2 / 4)
    assert found["f1"] == pytest.approx(0.5)
    # dropped: flagged 0 and 1, right 0; words dropped 0 and 4
    assert found["dropped"]["precision"] == pytest.approx(1 / 2)
    assert found["dropped"]["recall"] == pytest.approx(1 / 2)
    # twice: flagged 3 and 5, right 5; words said twice 1 and 5
    assert (found["twice"]["precision"], found["twice"]["recall"]) == (0.5, 0.5)


def test_no_flag_has_no_precision_and_no_recall():
    found = precision_recall(["once", "once"], ["dropped", "once"])
    assert found["precision"] is None and found["recall"] == 0 and found["f1"] == 0


def test_predict_flags_below_under_and_above_over_only():
    predicted = predict(np.array([0.2, 0.5, 1.0, 1.5, 1.7]), Thresholds(0.5, 1.5))
    assert predicted == ["dropped", "once", "once", "once", "twice"]


def test_tuning_separates_a_separable_set():
    values = np.array([0.1, 0.3, 0.9, 1.0, 1.1, 2.2])
    labels = ["dropped", "dropped", "once", "once", "once", "twice"]
    thresholds = tune(values, labels)
    assert 0.3 < thresholds.under <= 0.9 and 1.1 <= thresholds.over < 2.2
    assert scores(predict(values, thresholds), labels)["f1"] == 1.0


def test_cross_validation_scores_each_fold_with_the_other_folds_thresholds():
    # fold 0 would pick under > 0.6 for itself; fold 1's words say 0.6 is translated once
    values = np.array([0.6, 1.0, 0.2, 0.6, 1.0])
    labels = ["dropped", "once", "dropped", "once", "once"]
    folds = np.array([0, 0, 1, 1, 1])
    predicted, chosen = cross_validated(values, labels, folds)
    assert chosen[0]["under"] <= 0.6  # tuned on fold 1 only
    assert predicted[0] == "once"  # so fold 0's 0.6 goes unflagged: a miss the study counts
    assert predicted[2] == "dropped"


def test_the_labelled_set():
    words = read_labels(LABELS)
    labels = [w.label for w in words]
    assert len(words) >= 40
    assert {w.target for w in words} == {"de", "fr"}
    assert sum(label != "once" for label in labels) >= 10
    for target in ("de", "fr"):
        assert any(w.label != "once" for w in words if w.target == target)
    outputs = {(w.sentence, w.target): w.output for w in words}
    for w in words:  # one output per sentence and target, and each word where the index says
        assert outputs[(w.sentence, w.target)] == w.output
        assert w.sentence.split()[w.index].rstrip(".,;:!?") == w.word
    area = next(w for w in words if w.word == "Area" and w.target == "de")
    assert area.label == "dropped"  # the example
    folds = folds_of(words, 2)
    for sentence in {w.sentence for w in words}:  # German and French in one fold
        assert len({f for w, f in zip(words, folds) if w.sentence == sentence}) == 1


def aggregation(name: str, f1: float) -> dict:
    held = {"precision": 0.5, "recall": 0.25, "f1": f1, "flags": 2}
    per_kind = {"dropped": dict(held), "twice": {**held, "precision": None}}
    return {
        "name": name,
        "layer": 2 if name == "layer 3" else None,
        "heads": [],
        "describe": name,
        "a_priori": {"under": 0.5, "over": 1.5, **held, **per_kind},
        "cross_validated": {"fold_thresholds": [], **held, **per_kind},
        "tuned_on_all": {"under": 0.3, "over": 2.0, **held, **per_kind},
    }


def test_the_best_is_the_page_computable_aggregation_with_the_best_held_out_f1():
    records = [aggregation("mean of all heads", 0.2), aggregation("layer 3", 0.4)]
    records.append(aggregation("lens: occlusion", 0.9))  # the page cannot compute a lens
    best = best_record(records)
    assert (best["name"], best["layer"], best["under"], best["over"]) == ("layer 3", 2, 0.3, 2.0)
    record = {
        "command": "python -m train.studies.coverage_study",
        "labels": "coverage_labels.tsv",
        "words": 50,
        "sentences": 5,
        "beam_size": 4,
        "alpha": 0.6,
        "by_label": {"dropped": 8, "twice": 2, "once": 40},
        "folds": 2,
        "ig_steps": 32,
        "changed": [{"sentence": "s", "target": "de", "stored": "a", "now": "b"}],
        "aggregations": records,
        "best": best,
    }
    text = "\n".join(coverage_study_section(record))
    assert "| layer 3 | layer 3 | 50.0% / 25.0% (2) |" in text
    assert "**layer 3** at 0.3 / 2" in text and "1 sentences" in text
    assert coverage_study_section(None) == []


@pytest.mark.slow
def test_the_dry_run_on_the_shipped_model(capsys):
    from core.translator import DEFAULT_MODEL
    from train.studies.coverage_study import main

    if not DEFAULT_MODEL.is_dir():
        pytest.skip("no shipped model")
    assert main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "| mean of all heads |" in out and "| lens: integrated gradients |" in out
    assert "CHANGED" not in out
