"""card.md's section of the width study (train/studies/width_study.py)."""

from __future__ import annotations

from train.shipping.card_sections.tables import equal_minutes_table


def width_study_section(study: list[dict] | None) -> list[str]:
    """card.md's section: each width's throughput and its validation at equal minutes."""
    if not study:
        return []
    return [
        "## Width study (equal training minutes)",
        "",
        "Short runs from scratch that differ only in width (d_ff = 4 d_model), each given the same "
        "training minutes: validation BLEU (mean of en-de and en-fr on the validation sample, "
        "greedy) / validation loss at each mark, interpolated between the validations around it "
        "(`python -m train.studies.width_study`).",
        "",
        *equal_minutes_table(study, "d_model", "d_model"),
    ]
