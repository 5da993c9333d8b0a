"""card.md's sections for the studies a model was put through (train/width_study.py,
vocab_study.py, vocabulary_transfer.py, blend.py, term_test.py, leakage.py): each a pure function
of the study's record in card.json, an empty list when the card has none."""

from __future__ import annotations

import itertools
import math

from train.blend import table_markdown
from train.sources import DICTIONARY_SOURCES


def vocabulary_transfer_lines(record: dict | None) -> list[str]:
    if not record:
        return []
    return [
        f"- at step {record['at_step']:,} the model `{record['from']}` was moved from its "
        f"{record['old_vocab_size']:,}-piece vocabulary onto a {record['new_vocab_size']:,}-piece "
        f"one learnt on `{record['learnt_on']}` (train/vocabulary_transfer.py: the layers kept, "
        "each new piece's embedding the old one of the same piece or the mean of its old pieces')"
    ]


def blend_lines(record: dict | None) -> list[str]:
    """The blend of the run with the model it started from (train/blend.py), and its table."""
    if not record:
        return []
    return [
        f"- the shipped weights are a blend (train/blend.py): (1 - w) x `{record['start']}` + w x "
        f"this run's model, w = **{record['weight']:g}**, the weight with the best general-domain "
        "validation BLEU among those that keep Multi30k val at the start model's level "
        f"({record['sentences']} validation pairs per set and language, "
        f"beam {record['beam_size']}):",
        "",
        table_markdown(
            record["table"], next(r for r in record["table"] if r["weight"] == record["weight"])
        ),
        "",
    ]


def term_test_section(record: dict | None) -> list[str]:
    """card.md's section: the share of held-out dictionary terms translated to a listed sense
    (train/term_test.py), alone and in the carrier sentence."""
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


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


def leakage_section(record: dict | None) -> list[str]:
    """card.md's section: words of the other target language in the translations
    (train/leakage.py), against the same count on the human references."""
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


STUDY_MARK_MINUTES = 3  # a study's table compares the runs every this many minutes, or more


STUDY_MARKS = 5  # ... so that at most this many marks (columns) make the table


FLORES_LANGUAGES = ("en", "de", "fr")


def value_at_minutes(curve: list[dict], key: str, minutes: float) -> float | None:
    """``key`` of a run's validation curve at ``minutes`` of training, interpolated linearly
    between the validations around it; None outside the curve."""
    for before, after in itertools.pairwise(curve):
        if before["minutes"] <= minutes <= after["minutes"]:
            span = after["minutes"] - before["minutes"]
            share = (minutes - before["minutes"]) / span if span else 1.0
            return before[key] + share * (after[key] - before[key])
    return None


def equal_minutes_table(study: list[dict], key: str, header: str) -> list[str]:
    """A study's runs side by side at equal training minutes: each run (named by its ``key``,
    the column ``header``) with its throughput and its validation BLEU / loss at each mark,
    interpolated between the validations around it."""
    # the last mark is a whole minute the longest run reached (70.02 minutes: 70, not 71)
    longest = max(1, math.floor(max(point["minutes"] for run in study for point in run["curve"])))
    spacing = max(STUDY_MARK_MINUTES, math.ceil(longest / STUDY_MARKS))
    marks = sorted({*range(spacing, longest, spacing), longest})
    lines = [
        f"| {header} | parameters | tokens/s | steps | "
        + " | ".join(f"{mark} min" for mark in marks)
        + " |",
        "|---" * (4 + len(marks)) + "|",
    ]
    for run in study:
        cells = []
        for mark in marks:
            bleu, loss = (
                value_at_minutes(run["curve"], name, mark) for name in ("val_bleu", "val_loss")
            )
            cells.append("-" if bleu is None else f"{bleu:.1f} / {loss:.2f}")
        # A run too short for its log's clock to tick has no throughput.
        throughput = run["tokens_per_second"]
        lines.append(
            f"| {run[key]:,} | {run['parameters']:,} | "
            f"{'-' if throughput is None else format(throughput, ',')} | "
            f"{run['curve'][-1]['step']:,} | " + " | ".join(cells) + " |"
        )
    return lines


def width_study_section(study: list[dict]) -> list[str]:
    """card.md's section: each width's throughput and its validation at equal minutes."""
    if not study:
        return []
    return [
        "## Width study (equal training minutes)",
        "",
        "Short runs from scratch that differ only in width (d_ff = 4 d_model), each given the same "
        "training minutes: validation BLEU (mean of en-de and en-fr on the validation sample, "
        "greedy) / validation loss at each mark, interpolated between the validations around it "
        "(`python -m train.width_study`).",
        "",
        *equal_minutes_table(study, "d_model", "d_model"),
    ]


def vocabulary_study_section(study: dict) -> list[str]:
    """card.md's section: what each vocabulary costs in pieces on general-domain text, how it
    cuts a lecturer's terms, and runs that differ only in their vocabulary at equal minutes."""
    if not study:
        return []
    profiles = study["vocabularies"]
    lines = [
        "## Vocabulary study",
        "",
        "Pieces per word (whitespace words) on FLORES-200 devtest, counted only, never trained on, "
        "and how each vocabulary cuts a few terms (`python -m train.vocab_study`).",
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


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a cell's "|" escaped, so a translation cannot split its row."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]


def dictionary_study_section(record: dict | None) -> list[str]:
    """Issue #51's continuations beside the model they started from (train/dictionary_study.py):
    test scores, the term test and leakage, then the examples' translations."""
    return continuation_section(
        record,
        "## Dictionary corpora: equal-step continuations (issue #51)",
        "Term test (held-out dictionary terms, share matched) and leakage (train/leakage.py):",
    )


def hansard_study_section(record: dict | None) -> list[str]:
    """Issue #61's continuations with the Hansard (train/hansard_study.py): as the dictionary
    study, with how each read the Hansard and the register count."""
    return continuation_section(
        record,
        "## The Hansard: equal-step continuations (issue #61)",
        "Term test (held-out dictionary terms, share matched), leakage and parliament's register "
        "(FLORES French outputs that say 'Monsieur le Président', 'député(e)' or 'honorable' "
        "where the English has no 'Speaker', 'member' or 'honourable'; train/leakage.py):",
    )


def recipe_text(model: dict) -> str:
    """A compared model's steps and mixture, and how it read the Hansard when it did."""
    hansard = model.get("hansard", {})
    how = [
        name
        for key, name in (("hansard_tag", "tagged"), ("hansard_clean", "cleaned"))
        if hansard.get(key)
    ]
    recorded = f", as `{model['recorded_by']}` measured it" if "recorded_by" in model else ""
    return (
        f"`{model['model']}` {model['steps']:,} steps, `{model['mixture']}`"
        + (f" (the Hansard {' and '.join(how)})" if how else "")
        + recorded
    )


def continuation_section(record: dict | None, title: str, measures: str) -> list[str]:
    """Continuations of one model beside it: test scores, the term test, leakage (and the
    register count, when counted), then the examples' translations."""
    if not record:
        return []
    models = record["models"]
    names = [model["model"] for model in models]
    score_keys = list(models[0]["scores"])
    scores = [
        [key, *(score_text(model["scores"].get(key)) for model in models)] for key in score_keys
    ]
    terms = [
        [f"{dictionary} {how}", *(percent(model["term_test"][dictionary][how]) for model in models)]
        for dictionary in models[0]["term_test"]
        for how in ("alone", "carrier", "unseen_alone", "unseen_carrier")
    ]
    leaks = [
        [f"FLORES sentences with {key}", *(str(model["leakage"][key]) for model in models)]
        for key in models[0]["leakage"]
    ]
    if any("register" in model for model in models):
        registers = [
            "-" if model.get("register") is None else str(model["register"]) for model in models
        ]
        leaks.append(["FLORES French sentences in parliament's register", *registers])
    examples = [
        [key, *(model["examples"].get(key, "-") for model in models)]
        for key in models[0]["examples"]
    ]
    return [
        title,
        "",
        "The first model is the one the others continued, each for the same steps with the same "
        "seed and recipe, differing only in the mixture: "
        + "; ".join(recipe_text(model) for model in models)
        + f". `{record['command']}`",
        "",
        "BLEU / chrF (sacreBLEU, beam 4):",
        "",
        *markdown_table(["test set", *names], scores),
        "",
        measures,
        "",
        *markdown_table(["", *names], terms + leaks),
        "",
        "The examples (#27's sentences and #9's among them):",
        "",
        *markdown_table(["target: English", *names], examples),
    ]


def score_text(score: dict | None) -> str:
    return "-" if score is None else f"{score['bleu']:.1f} / {score['chrf']:.1f}"


def coverage_table(aggregations: list[dict]) -> list[str]:
    """The coverage study's table (train/coverage_study.py): each aggregation's precision /
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
        f"train/{record['labels']}). A flag is right when its kind (dropped: coverage below "
        "under; said twice: above over) is the word's label; P = right / flags, R = right / "
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


def lens_study_section(record: dict | None) -> list[str]:
    """card.md's section: the layer at which the chosen word becomes the lens's first choice
    (train/lens_study.py)."""
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
