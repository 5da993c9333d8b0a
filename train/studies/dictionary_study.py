"""Issue #51's comparison: continuations of one model that differ only in their mixture, side by
side with the model they started from, recorded in a model card.

    BASE=tatoeba=1,multi30k=6,general=3,general.fr=2
    python -m train --preset cpu --init-from pretrained/en-de-fr --max-steps 4000 --seed 51 \\
        --out runs/d51-control --mixture $BASE ...                  # and runs/d51-terms, ...
    for RUN in runs/d51-control runs/d51-terms; do
      python -m train.shipping.card --run $RUN
      python -m train.studies.term_test --model $RUN/model --card $RUN/model
      python -m train.studies.leakage --model $RUN/model --card $RUN/model
    done
    python -m train.studies.dictionary_study pretrained/en-de-fr runs/d51-control/model \\
        runs/d51-terms/model --card pretrained/en-de-fr

Each model folder's card.json must hold train.shipping.card's scores (FLORES devtest, Multi30k
test_2016_flickr, the validation split), train.studies.term_test's and train.studies.leakage's
records and the card's examples (among them #27's six sentences and #9's four). The first folder is
the model the others continued; the card gets them as ``dictionary_study`` in card.json and a
section in card.md (train/shipping/card_sections/continuations.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.files.model_dir import ModelDir
from train.studies.study_args import command_line, publish

STUDY_KEY = "dictionary_study"
NEEDED = ("scores", "term_test", "leakage", "examples")  # what each compared card must hold


def missing_records(folders: list[Path]) -> list[str]:
    """What keeps each folder from the study: a record its card lacks."""
    problems = []
    for folder in folders:
        card = ModelDir(folder).read_card()
        absent = [key for key in NEEDED if not card.get(key)]
        if absent:
            problems.append(f"{folder}: its card.json has no {', '.join(absent)}")
    return problems


def study_model(folder: Path) -> dict:
    """One model of the study: its mixture and own steps, BLEU and chrF per test set and pair,
    the term test's shares, the leakage counts and the examples' translations."""
    card = ModelDir(folder).read_card()
    training = card.get("training", {})
    return {
        "model": folder.name if folder.name != "model" else folder.parent.name,
        "mixture": training.get("recipe", {}).get("mixture", ""),
        "steps": training.get("steps", 0) - training.get("steps_before", 0),
        "scores": {
            f"{score['set']} {score['pair']}": {"bleu": score["bleu"], "chrf": score["chrf"]}
            for score in card["scores"]
        },
        "term_test": {
            result["dictionary"]: {
                key: result[key] for key in ("alone", "carrier", "unseen_alone", "unseen_carrier")
            }
            for result in card["term_test"]["results"]
        },
        "leakage": {
            f"{result['words_of']} words in {result['pair']}": result["translations"][
                "sentences_with_leak"
            ]
            for result in card["leakage"]["results"]
        },
        "examples": {f"{e['target']}: {e['source']}": e["translation"] for e in card["examples"]},
    }


def recorded_model(card: Path, name: str) -> dict:
    """A model an earlier study recorded in ``card`` (its folder gone: a control trained in
    another session), by name, with a note that it was measured there."""
    records = ModelDir(card).read_card()
    for study in (value for key, value in records.items() if key.endswith("_study")):
        for model in study.get("models", []) if isinstance(study, dict) else []:
            if model.get("model") == name:
                return {**model, "recorded_by": study["command"]}
    raise SystemExit(f"no study in {card}'s card recorded a model named {name!r}")


def study_main(argv: list[str] | None, prog: str, doc: str, key: str, describe=study_model):
    """A continuation study's command line: the model folders, checked, each described by
    ``describe``, the models named by --recorded taken from the card's earlier studies, and the
    record put in ``--card``'s card under ``key``."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument(
        "models",
        type=Path,
        nargs="+",
        help="model folders: first the model the others continued, then each continuation",
    )
    parser.add_argument(
        "--card", type=Path, required=True, help="model folder whose card gets the study"
    )
    parser.add_argument(
        "--recorded",
        action="append",
        default=[],
        metavar="NAME",
        help="a model another study of --card's card recorded (e.g. a control whose run folder "
        "is gone), put after the model folders; may be given again",
    )
    args = parser.parse_args(argv)
    if problems := missing_records(args.models):
        parser.error("; ".join(problems))
    recorded = [recorded_model(args.card, name) for name in args.recorded]
    record = {
        "command": command_line(prog, argv),
        "models": [describe(folder) for folder in args.models] + recorded,
    }
    publish(record, key, args.card)
    return 0


def main(argv: list[str] | None = None) -> int:
    return study_main(argv, "python -m train.studies.dictionary_study", __doc__, STUDY_KEY)


if __name__ == "__main__":
    sys.exit(main())
