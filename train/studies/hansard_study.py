"""Issue #61's comparison: continuations of the shipped model with the Hansard in their mixture
(weighed, tagged, cleaned), side by side with the model they started from and a control, recorded
in a model card.

    BASE=tatoeba=1,multi30k=6,general=3,general.fr=2
    python -m train --preset cpu --init-from pretrained/en-de-fr --max-steps 4000 --seed 51 \\
        --out runs/h61-tag --mixture $BASE,hansard=0.4 --hansard-tag --hansard-clean ...
    for RUN in runs/h61-tag runs/h61-small; do
      python -m train.shipping.card --run $RUN
      python -m train.studies.term_test --model $RUN/model --card $RUN/model
      python -m train.studies.leakage --model $RUN/model --card $RUN/model
    done
    python -m train.studies.hansard_study pretrained/en-de-fr runs/h61-tag/model \\
        runs/h61-small/model --recorded d51-control --card pretrained/en-de-fr

The control, d51-control (today's mixture, the same seed, recipe and steps), was trained and
measured for issue #51's dictionary study, whose record the card keeps: --recorded takes it from
there.

Each card must hold what train.studies.dictionary_study needs; the leakage record's register count
(train/studies/leakage.py) is read when it is there. The card gets ``hansard_study`` in card.json
and a section in card.md (train/shipping/card_sections/continuations.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.files.model_dir import ModelDir
from train.studies.dictionary_study import study_main, study_model

STUDY_KEY = "hansard_study"


def hansard_model(folder: Path) -> dict:
    """train.studies.dictionary_study's description of one model, with how it read the Hansard and
    how many FLORES French outputs speak parliament's register (None when not counted)."""
    card = ModelDir(folder).read_card()
    recipe = card.get("training", {}).get("recipe", {})
    french = next(
        (r for r in card["leakage"]["results"] if r["pair"] == "en-fr" and "register" in r), None
    )
    register = french["register"]["translations"]["sentences_with_register"] if french else None
    return {
        **study_model(folder),
        "hansard": {key: recipe.get(key, False) for key in ("hansard_tag", "hansard_clean")},
        "register": register,
    }


def main(argv: list[str] | None = None) -> int:
    return study_main(
        argv, "python -m train.studies.hansard_study", __doc__, STUDY_KEY, hansard_model
    )


if __name__ == "__main__":
    sys.exit(main())
