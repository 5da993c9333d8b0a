"""card.md, for people: the facts of card.json (train/shipping/card.py) in sections, the studies'
among them (each study's in train/shipping/card_sections/). Pure functions of the card's dict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from core.decoding.search import PAPER_DECODING
from train.data.corpora import (
    CORPORA,
    DICTIONARY_FILES,
    corpus_weight,
    parse_mixture,
)
from train.data.sources import dictionary_weights
from train.loop.vocabulary_transfer import vocabulary_transfer_lines
from train.shipping.blend import blend_lines
from train.shipping.card_sections import (
    continuations,
    coverage,
    leakage,
    lens,
    term_test,
    vocabulary,
    width,
)

AUGMENTATION_KEYS = (  # train/data/augment.py
    "concat_fraction",
    "copy_fraction",
    "number_copies",
    "spelling_fraction",
    "subword_alpha",
)

# The studies' sections (train/shipping/card_sections/), each given its record in card.json (None
# when the card has none), in the card's order: the studies of the shipped model itself, after its
# scores; the studies that compare other runs, after its training curve and snapshots.
MODEL_STUDIES: list[tuple[str, Callable[[Any], list[str]]]] = [
    ("term_test", term_test.term_test_section),
    ("leakage", leakage.leakage_section),
    ("dictionary_study", continuations.dictionary_study_section),
    ("hansard_study", continuations.hansard_study_section),
    ("coverage_study", coverage.coverage_study_section),
    ("lens_study", lens.lens_study_section),
]
RUN_STUDIES: list[tuple[str, Callable[[Any], list[str]]]] = [
    ("width_study", width.width_study_section),
    ("vocabulary_study", vocabulary.vocabulary_study_section),
]


def card_markdown(card: dict) -> str:
    """card.md, for people: the same facts as card.json, in sections."""
    sections = [
        [f"# Model card: {card['name']}", "", card["description"]],
        architecture_section(card),
        training_section(card["training"]),
        scores_section(card["scores"]),
        *(section(card.get(key)) for key, section in MODEL_STUDIES),
        curve_section(card["training"].get("validation_curve", [])),
        snapshot_section(card.get("snapshots", [])),
        *(section(card.get(key)) for key, section in RUN_STUDIES),
        ["## Examples (beam 4)", "", "| English | target | translation |", "|---|---|---|"]
        + [f"| {e['source']} | {e['target']} | {e['translation']} |" for e in card["examples"]],
        data_section(card),
    ]
    if card.get("notes"):
        sections.append(["## Notes", "", card["notes"].strip()])
    return "\n\n".join("\n".join(section) for section in sections if section) + "\n"


def architecture_section(card: dict) -> list[str]:
    config = card["config"]
    layout = "pre-LN" if config["norm_first"] else "post-LN (as in the paper)"
    return [
        "## Architecture",
        "",
        f"- {config['n_encoder_layers']} encoder + {config['n_decoder_layers']} decoder layers, "
        f"{config['n_heads']} heads, d_model {config['d_model']}, d_ff {config['d_ff']}, {layout}",
        f"- vocabulary {config['vocab_size']} SentencePiece pieces shared by en/de/fr (digits "
        f"split, byte fallback), tied embeddings, sinusoidal positions, max length "
        f"{config['max_len']}",
        f"- {card['parameters']:,} parameters; weights stored as float16, computed in float32",
    ]


def hardware_clause(training: dict) -> str:
    """Where it trained. A continued run knows only its own machine (earlier runs may have had
    another), so a history of several runs names the last one's."""
    hardware = training.get("hardware")
    if training.get("steps_before"):
        return f"the last {training['steps'] - training['steps_before']} steps on {hardware}"
    return f"on {hardware}"


def training_section(training: dict) -> list[str]:
    recipe = training.get("recipe", {})
    lines = [
        "## Training",
        "",
        f"- preset `{training.get('preset')}`, {training.get('steps')} steps, "
        f"{training.get('seconds', 0) / 60:.0f} minutes of training steps; "
        f"{hardware_clause(training)}",
        f"- about {training.get('target_tokens', 0):,} target tokens at a mean "
        f"{training.get('tokens_per_second', 0):,.0f} target tokens/s (from metrics.jsonl; the "
        "time counts training steps, not validation)",
    ]
    if training.get("mfu") is not None:
        rate = training.get("run_tokens_per_second")  # cards written before it: the mean of all
        whose = f"the last run ({rate:,} target tokens/s)" if rate else "the mean throughput"
        lines.append(
            f"- model FLOPs utilisation of {whose}: {training['mfu']:.1%} of the machine's "
            f"measured {training.get('dtype', 'bf16')} matmul peak "
            f"({training['peak_tflops']:.2f} TFLOP/s)"
        )
    if training.get("initialised_from"):  # a name; cards before 2026-11-28 held a path
        name = PurePath(training["initialised_from"]).name
        lines.append(
            f"- continued from `{name}` at step {training.get('steps_before', 0):,} (the steps "
            "before this run)"
        )
    if training.get("fast_paths"):
        lines.append(f"- {device_text(training)}")
    lines += vocabulary_transfer_lines(training.get("vocabulary_transfer"))
    if training.get("truecase"):
        lines.append(
            "- the English source truecased (`truecase.en`, Moses's truecaser learnt on the "
            "training sources): the first word of a sentence as it is usually written inside one"
        )
    if recipe:
        lines.append(
            f"- Adam (0.9, 0.98, 1e-9), the paper's warm-up ({recipe['warmup']} steps) + inverse "
            f"square root schedule x {recipe['lr_scale']}{cooldown_text(recipe)}, batches of about "
            f"{recipe['max_tokens']:,} tokens, label smoothing {recipe['label_smoothing']}, "
            f"dropout {recipe['dropout']} (sub-layer outputs and embeddings, as in the paper), "
            f"compute type {training.get('dtype', 'bf16' if recipe.get('bf16') else 'fp32')}; "
            f"final model = average of the "
            f"last {recipe['average_last']} checkpoints"
        )
        lines.append(
            f"- data mixture, times each training pair is seen per epoch: {mixture_text(recipe)}"
        )
        lines += augmentation_lines(recipe)
    return lines + blend_lines(training.get("blend"))


def device_text(training: dict) -> str:
    """The device the run trained on, the step's paths chosen for it (train/loop/hardware.py), and
    the compile warm-up, which the training time leaves out."""
    paths = training["fast_paths"]
    attention = "explicit attention" if paths["explicit_attention"] else "fused attention"
    dropout = "byte-mask dropout" if paths["byte_mask_dropout"] else "F.dropout"
    rows = paths["loss_chunk_rows"]
    loss = f"the loss fused with the projection, {rows} rows at a time" if rows else "whole logits"
    text = f"device {training.get('device', 'cpu')}: {attention}, {dropout}, {loss}"
    if training.get("compile_seconds"):
        text += f"; compiled layers, warm-up {training['compile_seconds']:.0f} s apart"
    return text


def cooldown_text(recipe: dict) -> str:
    steps = recipe.get("cooldown_steps", 0)
    return f", falling linearly to 0 over the last {steps:,} steps" if steps else ""


def mixture_text(recipe: dict) -> str:
    """ "tatoeba=1,general=2,general.fr=6" -> "tatoeba 1, multi30k 1, general 2 (en-fr 6)";
    a dictionary only when the run trained on it, and then with the held-out terms left out."""
    weights = parse_mixture(recipe.get("mixture", ""))
    dictionaries = dictionary_weights(recipe)
    parts = []
    for corpus in CORPORA:
        if corpus in DICTIONARY_FILES and corpus not in dictionaries:
            continue
        if corpus == "hansard" and not corpus_weight(weights, corpus, "fr"):
            continue
        text = f"{corpus} {corpus_weight(weights, corpus, ''):g}"
        overrides = [
            f"en-{key.split('.')[1]} {w:g}"
            for key, w in weights.items()
            if key.startswith(f"{corpus}.")
        ]
        parts.append(text + (f" ({', '.join(overrides)})" if overrides else ""))
    held_out = "; the term test's held-out terms left out"
    return ", ".join(parts) + (held_out if dictionaries else "") + hansard_text(recipe, weights)


def hansard_text(recipe: dict, weights: dict[str, float]) -> str:
    """How the Hansard was read, when the run read it (train/data/parliament.py,
    train/data/batching.py)."""
    if not corpus_weight(weights, "hansard", "fr"):
        return ""
    how = [
        "cleaned of parliament's formulas" if recipe.get("hansard_clean") else "as is",
        "its sources tagged in training (never at inference)" if recipe.get("hansard_tag") else "",
    ]
    return "; the Hansard " + ", ".join(filter(None, how))


def augmentation_lines(recipe: dict) -> list[str]:
    """What train/data/augment.py added to each epoch, when the run asked for it."""
    concat, copy, numbers, spelling, alpha = (recipe.get(key, 0) for key in AUGMENTATION_KEYS)
    sides = "the source's" if recipe.get("subword_sides") == "source" else "each side's"
    lines = []
    if concat:
        lines.append(f"- plus {concat:.0%} more pairs per epoch, each two random pairs joined")
    if copy:
        lines.append(
            f"- plus, for {copy:.0%} of the pairs that carry a name or number unchanged, a copy "
            "with an invented name or a random number in its place, drawn afresh each epoch"
        )
    if numbers:
        lines.append(f"- plus {numbers} such copies of every pair that carries a number")
    if spelling:
        lines.append(
            f"- plus, for {spelling:.0%} of the pairs with an American spelling, a copy whose "
            "English is spelled the British way (neighbour, colour)"
        )
    if alpha:
        lines.append(
            f"- subword regularisation: each epoch, {sides} pieces drawn from its 8 best "
            f"segmentations, P ~ P_unigram^{alpha}"
        )
    return lines


def scores_section(scores: list[dict]) -> list[str]:
    lines = [
        "## Scores (sacreBLEU, beam search)",
        "",
        "| set | domain | pair | sentences | BLEU | chrF |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['set']} | {s.get('domain', '')} | {s['pair']} | {s['sentences']} | "
        f"{s['bleu']:.1f} | {s['chrf']:.1f} |"
        for s in scores
    ]
    signatures = sorted(
        {(s["bleu_signature"], s["chrf_signature"], s["beam_size"]) for s in scores}
    )
    for bleu, chrf, beam in signatures:
        lines += [
            "",
            f"BLEU signature `{bleu}`; chrF signature `{chrf}`; beam {beam}, length penalty "
            f"alpha {PAPER_DECODING.alpha}.",
        ]
    return lines + long_sentences_note(scores)


def long_sentences_note(scores: list[dict]) -> list[str]:
    """How the scores' sentences over the model's source budget were read (train.shipping.evaluate):
    clause by clause, and how many still cut; nothing for scores from before the count."""
    counted = [s for s in scores if "long_sentences" in s]
    if not counted:
        return []
    parts = [
        f"{s['set']} {s['pair']} {s['long_sentences']} of {s['sentences']}"
        + (f" ({s['cut_sentences']} still cut)" if s["cut_sentences"] else "")
        for s in counted
        if s["long_sentences"]
    ]
    listed = "; ".join(parts) or "none"
    return [
        "",
        f"Sentences over the model's {counted[0]['source_budget']} source pieces are translated "
        f"clause by clause (core/text/clauses.py), none cut silently: {listed}.",
    ]


def curve_section(curve: list[dict]) -> list[str]:
    """Validation during training, as a table (the app's Model page draws it)."""
    if not curve:
        return []
    lines = [
        "## Learning curve (validation sample during training)",
        "",
        "| step | minutes | val loss | BLEU en-de | BLEU en-fr |",
        "|---|---|---|---|---|",
    ]
    return lines + [
        f"| {point['step']} | {point['minutes']:.0f} | {point['val_loss']:.3f} | "
        f"{point.get('val_bleu_de', 0):.1f} | {point.get('val_bleu_fr', 0):.1f} |"
        for point in curve
    ]


def snapshot_section(snapshots: list[dict]) -> list[str]:
    if not snapshots:
        return []
    steps = ", ".join(str(snapshot["step"]) for snapshot in snapshots)
    return [
        "## Snapshots",
        "",
        f"`snapshots/` keeps float16 copies of the model at steps {steps} (the final model is "
        "`model.pt`), for watching attention being learned.",
    ]


def data_section(card: dict) -> list[str]:
    lines = ["## Data and licenses", ""]
    lines += [
        f"- {d['name']}: {d['pairs']:,} pairs, {d['license']}. {d['attribution']}."
        for d in card["data"]
    ]
    return [
        *lines,
        "",
        "The Tatoeba files exclude every pair whose English or target side occurs in the public "
        "Tatoeba test sets or in the Multi30k test sets. The validation split is carved by English "
        "sentence: no English sentence is on both sides.",
        "",
        model_terms(card["data"]),
    ]


# What each kind of licence asks of a model derived from the data, by a word its licence holds
LICENCE_DUTIES = (
    ("research", "use for research only"),
    ("BY-SA", "share-alike: the model is shared under CC BY-SA 4.0"),
    ("CC-BY", "attribution, as above"),
    ("GPL", "the GPL-2+'s terms for a work derived from the dictionaries"),
)


def model_terms(data: list[dict]) -> str:
    """The terms the weights carry, derived from the licences of the data they were trained on
    (CC0 asks nothing); the code's own licence is the repository's LICENSE."""
    duties = []
    for word, duty in LICENCE_DUTIES:
        names = [d["name"].split(" (")[0] for d in data if word in d["license"]]
        if names:
            duties.append(f"{duty} ({'; '.join(dict.fromkeys(names))})")
    return (
        "**Terms of the model.** The weights are derived from every corpus above and carry their "
        "terms: " + "; ".join(duties) + ". The code that trained them is MIT-licensed (LICENSE)."
    )
