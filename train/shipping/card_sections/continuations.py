"""card.md's sections of the equal-step continuations: the dictionary corpora
(train/studies/dictionary_study.py) and the Hansard (train/studies/hansard_study.py)."""

from __future__ import annotations

from train.shipping.card_sections.tables import markdown_table, percent


def dictionary_study_section(record: dict | None) -> list[str]:
    """Issue #51's continuations beside the model they started from
    (train/studies/dictionary_study.py): test scores, the term test and leakage, then the examples'
    translations."""
    return continuation_section(
        record,
        "## Dictionary corpora: equal-step continuations (issue #51)",
        "Term test (held-out dictionary terms, share matched) and leakage "
        "(train/studies/leakage.py):",
    )


def hansard_study_section(record: dict | None) -> list[str]:
    """Issue #61's continuations with the Hansard (train/studies/hansard_study.py): as the
    dictionary study, with how each read the Hansard and the register count."""
    return continuation_section(
        record,
        "## The Hansard: equal-step continuations (issue #61)",
        "Term test (held-out dictionary terms, share matched), leakage and parliament's register "
        "(FLORES French outputs that say 'Monsieur le Président', 'député(e)' or 'honorable' "
        "where the English has no 'Speaker', 'member' or 'honourable'; train/studies/leakage.py):",
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
