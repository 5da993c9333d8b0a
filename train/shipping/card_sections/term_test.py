"""card.md's section of the term test (train/studies/term_test.py)."""

from __future__ import annotations

from train.data.sources import DICTIONARY_SOURCES
from train.shipping.card_sections.tables import percent


def term_test_section(record: dict | None) -> list[str]:
    """card.md's section: the share of held-out dictionary terms translated to a listed sense
    (train/studies/term_test.py), alone and in the carrier sentence."""
    if not record:
        return []
    lines = [
        "## Term test (held-out dictionary terms)",
        "",
        f"Dictionary terms whose rows no training reads ({record['held_out']}, drawn at "
        f"random from the dictionaries with seed {record['seed']}; the sentence corpora may still "
        "hold the words: the terms whose English never occurs in them, as whole words, are "
        "counted apart): the share whose translation holds one of the term's listed senses "
        "as whole words, case-insensitively, alone and inside the carrier sentence "
        f'"{record["carrier"].format("X")}" (there, only the words after the carrier\'s own '
        f"translation, {' / '.join(repr(t) for t in record['carrier_translations'].values())}, "
        f"when the output starts with it); beam {record['beam_size']}, length penalty "
        f"alpha {record['alpha']}. `{record['command']}`",
        "",
        "| dictionary | pair | terms | alone | in the carrier | terms the training sentences "
        "never show | alone | in the carrier | outputs that start with the carrier's translation |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['dictionary']} | {r['pair']} | {r['terms']} | {r['alone']:.1%} | "
        f"{r['carrier']:.1%} | {r['unseen_terms']} | {percent(r['unseen_alone'])} | "
        f"{percent(r['unseen_carrier'])} | {r['carrier_frame_kept']:.1%} |"
        for r in record["results"]
    ]
    sources = [DICTIONARY_SOURCES[r["dictionary"]] for r in record["results"]]
    named = "; ".join(f"{d['name']} ({d['attribution']}), {d['license']}" for d in sources)
    return [*lines, "", f"Terms from {named}."]
