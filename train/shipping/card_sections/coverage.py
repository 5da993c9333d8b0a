"""card.md's section of the coverage study (train/studies/coverage_study.py)."""

from __future__ import annotations

from train.shipping.card_sections.tables import markdown_table, percent


def coverage_table(aggregations: list[dict]) -> list[str]:
    """The coverage study's table (train/studies/coverage_study.py): each aggregation's precision /
    recall (and flags) at the a-priori 0.5 / 1.5 and cross-validated, per kind, and the
    thresholds the whole set would choose."""
    rows = []
    for r in aggregations:
        fixed, held = r["a_priori"], r["cross_validated"]
        rows.append(
            [
                r["name"],
                r["describe"],
                f"{percent(fixed['precision'])} / {percent(fixed['recall'])} ({fixed['flags']})",
                f"{percent(held['precision'])} / {percent(held['recall'])} ({held['flags']})",
                *(
                    f"{percent(held[kind]['precision'])} / {percent(held[kind]['recall'])}"
                    for kind in ("dropped", "twice")
                ),
                f"{r['tuned_on_all']['under']:g} / {r['tuned_on_all']['over']:g}",
            ]
        )
    header = [
        "aggregation",
        "heads",
        "0.5 / 1.5: P / R (flags)",
        "cross-validated: P / R (flags)",
        "dropped P / R",
        "twice P / R",
        "thresholds on all",
    ]
    return markdown_table(header, rows)


def coverage_study_section(record: dict | None) -> list[str]:
    """card.md's section: how well coverage flags find dropped and repeated words."""
    if not record:
        return []
    best = record["best"]
    changed = record["changed"]
    labels = record["by_label"]
    return [
        "## Coverage flags measured (issue #48)",
        "",
        f"{record['words']} source words of {record['sentences']} of the model's own "
        f"translations (beam {record['beam_size']}, alpha {record['alpha']}), labelled by hand "
        f"({labels['dropped']} dropped, {labels['twice']} said twice, {labels['once']} once; "
        f"train/studies/{record['labels']}). A flag is right when its kind (dropped: coverage "
        "below under; said twice: above over) is the word's label; P = right / flags, R = right / "
        "words dropped or said twice. Cross-validated: thresholds tuned for F1 on "
        f"{record['folds'] - 1} of {record['folds']} folds of sentences, scored on the other. "
        f"Lenses as coverage: |value| per output piece as shares (integrated gradients "
        f"{record['ig_steps']} steps). `{record['command']}`",
        "",
        *coverage_table(record["aggregations"]),
        "",
        f"The Coverage page shows **{best['name']}** at {best['under']:g} / {best['over']:g} "
        f"(tuned on all the words): cross-validated precision {percent(best['precision'])}, "
        f"recall {percent(best['recall'])}.",
        *(
            [f"Not scored, translated otherwise than labelled: {len(changed)} sentences."]
            if changed
            else []
        ),
    ]
