"""card.md's section of the vocabulary study (train/studies/vocab_study.py)."""

from __future__ import annotations

from train.shipping.card_sections.tables import equal_minutes_table

FLORES_LANGUAGES = ("en", "de", "fr")


def vocabulary_study_section(study: dict | None) -> list[str]:
    """card.md's section: what each vocabulary costs in pieces on general-domain text, how it
    cuts a lecturer's terms, and runs that differ only in their vocabulary at equal minutes."""
    if not study:
        return []
    profiles = study["vocabularies"]
    lines = [
        "## Vocabulary study",
        "",
        "Pieces per word (whitespace words) on FLORES-200 devtest, counted only, never trained on, "
        "and how each vocabulary cuts a few terms (`python -m train.studies.vocab_study`).",
        "",
        "| vocabulary | learnt on | pieces | " + " | ".join(FLORES_LANGUAGES) + " |",
        "|---" * (3 + len(FLORES_LANGUAGES)) + "|",
    ]
    for profile in profiles:
        per_word = [f"{profile['pieces_per_word'][language]:.2f}" for language in FLORES_LANGUAGES]
        lines.append(
            f"| {profile['name']} | {profile['learnt_on']} | {profile['pieces']:,} | "
            + " | ".join(per_word)
            + " |"
        )
    lines += [
        "",
        "| term | " + " | ".join(profile["name"] for profile in profiles) + " |",
        "|---" * (1 + len(profiles)) + "|",
    ]
    lines += [
        f"| {term} | " + " | ".join(f"`{profile['terms'][term]}`" for profile in profiles) + " |"
        for term in profiles[0]["terms"]
    ]
    if study["runs"]:
        lines += [
            "",
            "Runs from scratch that differ only in their vocabulary, given the same training "
            "minutes side by side on one machine: validation BLEU (mean of en-de and en-fr on the "
            "validation sample) / validation loss at each mark.",
            "",
            *equal_minutes_table(study["runs"], "vocab_size", "pieces"),
        ]
    return lines
