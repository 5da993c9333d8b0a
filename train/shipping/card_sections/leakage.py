"""card.md's section of the language leakage count (train/studies/leakage.py)."""

from __future__ import annotations


def leakage_section(record: dict | None) -> list[str]:
    """card.md's section: words of the other target language in the translations
    (train/studies/leakage.py), against the same count on the human references."""
    if not record:
        return []
    lines = [
        f"## Language leakage ({record['test_set']})",
        "",
        "A word of a translation (letters, case folded) counts as the other language's when it "
        "occurs in that language's side of the training sentences, never in its own "
        "language's side, and not in the English source; the references, counted by the same "
        f"rule, show its false alarms. Beam {record['beam_size']}, length penalty "
        f"alpha {record['alpha']}. `{record['command']}`",
        "",
        "| pair | words of | translations with such a word | words | most frequent | "
        "references with such a word | words |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in record["results"]:
        out, ref = r["translations"], r["references"]
        lines.append(
            f"| {r['pair']} | {r['words_of']} | {out['sentences_with_leak']} of "
            f"{out['sentences']} | {out['words']} | {', '.join(out['most_frequent'])} | "
            f"{ref['sentences_with_leak']} of {ref['sentences']} | {ref['words']} |"
        )
    for r in record["results"]:
        if "register" in r:
            out, ref = r["register"]["translations"], r["register"]["references"]
            lines += [
                "",
                f"Parliament's register ({r['pair']}): {out['sentences_with_register']} of "
                f"{out['sentences']} translations say 'Monsieur le Président', 'député(e)' or "
                "'honorable' where the English has no 'Speaker', 'member' or 'honourable' "
                f"(the references, by the same rule: {ref['sentences_with_register']}).",
            ]
    return lines
