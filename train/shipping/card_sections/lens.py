"""card.md's section of the logit lens study (train/studies/lens_study.py)."""

from __future__ import annotations


def lens_study_section(record: dict | None) -> list[str]:
    """card.md's section: the layer at which the chosen word becomes the lens's first choice
    (train/studies/lens_study.py)."""
    if not record:
        return []
    lines = [
        "## Where the word forms (logit lens, issue #58)",
        "",
        f"{record['sentences']} sentences of {record['corpus']} (sampled with seed "
        f"{record['seed']}), translated with the app's decoding; at each output position, the "
        "decoder layer from which the chosen piece stays the logit lens's first choice to the "
        "end (0: the embedding). `" + record["command"] + "`",
        "",
        "| target | positions | last layer ranks the choice first | mean layer | "
        + " | ".join(f"settled by L{k}" for k in range(record["decoder_layers"] + 1))
        + " |",
        "|---|---|---|---|" + "---|" * (record["decoder_layers"] + 1),
    ]
    return lines + [
        f"| {target} | {r['positions']} | {r['last_layer_ranks_choice_first']:.1%} | "
        f"{r['mean_layer']:.2f} | " + " | ".join(f"{s:.0%}" for s in r["settled_by_layer"]) + " |"
        for target, r in record["results"].items()
    ]
