"""Ship a trained run: score it, write the model card, and on request copy it into pretrained/.

    python -m train.card --run runs/cpu                                # card in runs/cpu/model/
    python -m train.card --run runs/cpu --export pretrained/en-de-fr   # ship it

Scores Multi30k test_2016_flickr (in-domain: image captions), FLORES-200 devtest (general domain:
Wikinews, Wikivoyage, Wikibooks; a test set only, never trained on) and the run's validation split
with sacreBLEU and chrF (beam search), then writes card.json (for programs, the app's Model page)
and card.md (for people) beside model.pt, spm.model, metrics.jsonl and the snapshots. Without
--export nothing outside the run folder changes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path, PurePath

from core.cli import positive_int
from core.decoding.search import PAPER_DECODING
from core.files.model_dir import ModelDir, RunDir
from core.text.tokenizer import LANGUAGES
from core.translator import DEFAULT_MODEL, Translator
from train.blend import table_markdown
from train.data import (
    CORPORA,
    DICTIONARY_FILES,
    CorpusError,
    corpus_weight,
    default_data_dir,
    flores_devtest,
    load_corpus,
    multi30k_test,
    parse_mixture,
)
from train.evaluate import evaluate
from train.hardware import matmul_peak_flops, model_flops_utilisation

DATA_SOURCES = [
    {
        "name": "Tatoeba English-German (manythings.org/anki release 2018-05-13)",
        "pairs": 159665,
        "license": "CC-BY 2.0 FR",
        "attribution": "Sentences from tatoeba.org, via manythings.org/anki",
    },
    {
        "name": "Tatoeba English-French (manythings.org/anki release 2019-04-07)",
        "pairs": 153401,
        "license": "CC-BY 2.0 FR",
        "attribution": "Sentences from tatoeba.org, via manythings.org/anki",
    },
    {
        "name": "Multi30k task 1 (en-de, en-fr): train for training, val for validation",
        "pairs": 2 * (29000 + 1014),
        "license": "research use",
        "attribution": "Elliott et al. 2016, Multi30K: Multilingual English-German Image "
        "Descriptions (github.com/multi30k/dataset)",
    },
    {
        "name": "WMT news test sets en-de (newstest 2008-2021 except 2014 and 2019, WMT general "
        "test 2022-2024)",
        "pairs": 33815 + 5632,
        "license": "research use",
        "attribution": "statmt.org WMT shared tasks, via github Helsinki-NLP/OPUS-MT-testsets "
        "and wmt-conference/wmt22-24-news-systems",
    },
    {
        "name": "MLQE-PE English-German Wikipedia sentences with post-edits",
        "pairs": 8999,
        "license": "CC0",
        "attribution": "Fomicheva et al. 2022, MLQE-PE (github sheffieldnlp/mlqe-pe)",
    },
    {
        "name": "BConTrasT English-German customer-service chat (WMT20 chat task)",
        "pairs": 13962,
        "license": "CC BY-SA 4.0 (share-alike: this model is derived from it)",
        "attribution": "Farajian et al. 2020, BConTrasT (github Unbabel/BConTrasT)",
    },
    {
        "name": "WMT news test sets en-fr (newstest 2008-2013, newsdiscusstest 2015)",
        "pairs": 18035,
        "license": "research use",
        "attribution": "statmt.org WMT shared tasks, via github Helsinki-NLP/OPUS-MT-testsets",
    },
]
DICTIONARY_SOURCES = {  # train/data.py's DICTIONARY_FILES: named when a run trains on them
    "ding-sentences": {
        "name": "Ding English-German dictionary, its example sentences",
        "pairs": 21478,
        "license": "GPL-2+",
        "attribution": "Ding, Frank Richter, TU Chemnitz, via Debian's trans-de-en 1.9",
    },
    "ding-terms": {
        "name": "Ding English-German dictionary, its headwords and phrases (one row per sense)",
        "pairs": 357405,
        "license": "GPL-2+",
        "attribution": "Ding, Frank Richter, TU Chemnitz, via Debian's trans-de-en 1.9",
    },
    "freedict-terms": {
        "name": "FreeDict English-French and French-English dictionaries, headwords and senses",
        "pairs": 17453,
        "license": "GPL-2+",
        "attribution": "FreeDict, via Debian's dict-freedict-eng-fra / -fra-eng 2022.04.21",
    },
}
TEST_SETS = {  # name -> (reader, domain); the card scores each set whose files are present
    "multi30k test_2016_flickr": (multi30k_test, "in-domain"),
    "FLORES-200 devtest": (flores_devtest, "general"),
}


def score_sets(
    translator: Translator, data_dir: Path, beam_size: int, limit: int, valid_sentences: int
) -> list[dict]:
    """BLEU/chrF on the test sets (TEST_SETS) and on an evenly spread sample of the validation
    split (every k-th pair, Tatoeba, general and Multi30k val alike), per language."""
    scores = []
    valid = load_corpus(data_dir).valid
    for target in LANGUAGES:
        sets = {}
        for name, (read, _) in TEST_SETS.items():
            try:
                sets[name] = read(data_dir, target)
            except CorpusError as error:
                if not isinstance(error.__cause__, FileNotFoundError):
                    raise
                print(f"skipped {name} en-{target}: not found in {data_dir}", file=sys.stderr)
        examples = [e for e in valid if e.target == target]
        examples = examples[:: max(1, len(examples) // valid_sentences)][:valid_sentences]
        sets["validation split"] = (
            [e.source_text for e in examples],
            [e.target_text for e in examples],
        )
        for name, (sources, references) in sets.items():
            if limit:
                sources, references = sources[:limit], references[:limit]
            result = evaluate(translator, sources, references, target, beam_size)
            scores.append(
                {
                    "set": name,
                    "domain": TEST_SETS[name][1] if name in TEST_SETS else "validation",
                    "pair": f"en-{target}",
                    "bleu": result["bleu"],
                    "chrf": result["chrf"],
                    "bleu_signature": result["signature"],
                    "chrf_signature": result["chrf_signature"],
                    "beam_size": beam_size,
                    "sentences": result["sentences"],
                    "seconds": result["seconds"],
                }
            )
            print(json.dumps(scores[-1]), file=sys.stderr)
    return scores


EXAMPLES = [
    "A man is riding a bicycle.",
    "I am very hungry.",
    "The animal didn't cross the street because it was too tired.",
    "The agreement on the European Economic Area was signed in August 1992.",
    "The quick brown fox jumps over the lazy dog.",
    "My neighbour bought a small red car last week.",
    "John lives in Salt Lake City. He enjoys hiking with his dog.",
    "Two young children in red shirts are playing football in a park next to a large fountain "
    "while their parents sit on a wooden bench and watch them in the warm afternoon sun.",
    # what a lecturer on this very subject types (issue #27)
    "Attention is all you need.",
    "Let's learn deep learning!",
    "Machine translation has improved a lot in recent years.",
    "His cat hates hiking.",
    "The children are sleeping, so please be quiet.",
]
AUGMENTATION_KEYS = (  # train/augment.py
    "concat_fraction",
    "copy_fraction",
    "number_copies",
    "spelling_fraction",
    "subword_alpha",
)


def example_translations(translator: Translator) -> list[dict]:
    return [
        {
            "source": text,
            "target": target,
            "translation": translator.translate(text, target).text,  # PAPER_DECODING
        }
        for text in EXAMPLES
        for target in sorted(LANGUAGES)
    ]


def build_card(translator: Translator, training: dict, scores: list[dict], name: str) -> dict:
    config = translator.model.config
    return {
        "name": name,
        "description": (
            "Encoder-decoder Transformer (Vaswani et al. 2017) translating English into German "
            "and French with one shared SentencePiece vocabulary; the target language is chosen "
            "by a <2de>/<2fr> tag at the start of the source. Trained with Attention Lab's "
            "train/ script."
        ),
        "config": config.__dict__,
        "parameters": translator.model.num_parameters(),
        "languages": {"source": "en", "targets": sorted(LANGUAGES)},
        "data": DATA_SOURCES + trained_dictionaries(training.get("recipe", {})),
        "training": training,
        "scores": scores,
        "examples": example_translations(translator),
    }


def dictionary_weights(recipe: dict) -> dict[str, float]:
    """The dictionaries a run's mixture gave a weight above 0 (train/data.py), with it."""
    weights = parse_mixture(recipe.get("mixture", ""))
    return {
        corpus: max(corpus_weight(weights, corpus, target) for target in files)
        for corpus, files in DICTIONARY_FILES.items()
        if any(corpus_weight(weights, corpus, target) > 0 for target in files)
    }


def trained_dictionaries(recipe: dict) -> list[dict]:
    """The card's data sources for the dictionaries the run trained on (GPL-2+: named)."""
    return [DICTIONARY_SOURCES[corpus] for corpus in dictionary_weights(recipe)]


def card_markdown(card: dict) -> str:
    """card.md, for people: the same facts as card.json, in sections."""
    sections = [
        [f"# Model card: {card['name']}", "", card["description"]],
        architecture_section(card),
        training_section(card["training"]),
        scores_section(card["scores"]),
        term_test_section(card.get("term_test")),
        leakage_section(card.get("leakage")),
        curve_section(card["training"].get("validation_curve", [])),
        snapshot_section(card.get("snapshots", [])),
        width_study_section(card.get("width_study", [])),
        vocabulary_study_section(card.get("vocabulary_study", {})),
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
    """The device the run trained on, the step's paths chosen for it (train/hardware.py), and the
    compile warm-up, which the training time leaves out."""
    paths = training["fast_paths"]
    attention = "explicit attention" if paths["explicit_attention"] else "fused attention"
    dropout = "byte-mask dropout" if paths["byte_mask_dropout"] else "F.dropout"
    rows = paths["loss_chunk_rows"]
    loss = f"the loss fused with the projection, {rows} rows at a time" if rows else "whole logits"
    text = f"device {training.get('device', 'cpu')}: {attention}, {dropout}, {loss}"
    if training.get("compile_seconds"):
        text += f"; compiled layers, warm-up {training['compile_seconds']:.0f} s apart"
    return text


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
        text = f"{corpus} {corpus_weight(weights, corpus, ''):g}"
        overrides = [
            f"en-{key.split('.')[1]} {w:g}"
            for key, w in weights.items()
            if key.startswith(f"{corpus}.")
        ]
        parts.append(text + (f" ({', '.join(overrides)})" if overrides else ""))
    held_out = "; the term test's held-out terms left out"
    return ", ".join(parts) + (held_out if dictionaries else "")


def augmentation_lines(recipe: dict) -> list[str]:
    """What train/augment.py added to each epoch, when the run asked for it."""
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
    return lines


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
    return lines


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
    ]


def training_summary(run: Path) -> dict:
    """The run's own record (the trainer's card.json), its recipe, throughput, MFU and the
    validation curve from metrics.jsonl."""
    model_dir = RunDir(run).model_dir
    training = model_dir.read_card().get("training", {})
    config = training.pop("train_config", {})
    recipe_keys = [
        "warmup",
        "lr_scale",
        "max_tokens",
        "label_smoothing",
        "dropout",
        "dtype",
        "cooldown_steps",
    ]
    recipe_keys += ["average_last", "mixture", *AUGMENTATION_KEYS, "subword_sides"]
    training["recipe"] = {key: config[key] for key in recipe_keys if key in config}
    training["truecase"] = model_dir.truecase_file.is_file()
    metrics = model_dir.read_metrics()  # the whole history, see lineage.py
    tokens, seconds = tokens_seen(metrics)
    if seconds:
        training["tokens_per_second"] = round(tokens / seconds)
        training["target_tokens"] = round(tokens)
    tokens, seconds = tokens_seen(metrics, after_step=training.get("steps_before", 0))
    if seconds:  # the earlier runs may have trained on other machines in another compute type
        training["run_tokens_per_second"] = round(tokens / seconds)
    final = training.get("steps", 0), training.get("seconds", 0)
    training["validation_curve"] = [
        {"minutes": minutes_at(metrics, m["step"], *final), **m} for m in metrics if "val_loss" in m
    ]
    return training


def minutes_at(metrics: list[dict], step: int, final_step: int, final_seconds: float) -> float:
    """Training minutes when ``step`` ended: the total for the final step, else the last log
    line at or before it (lines come every --log-every steps, and the last step of a run that a
    later one continued may fall between them)."""
    if step == final_step:
        return final_seconds / 60
    logged = (m["elapsed_s"] for m in metrics if "elapsed_s" in m and m["step"] <= step)
    return max(logged, default=0) / 60


def tokens_seen(metrics: list[dict], after_step: int = 0) -> tuple[float, float]:
    """(target tokens, seconds) of training after ``after_step`` (a continued run's own part),
    from the logged windows: each window's tokens/s times its own length in time. The history's
    clock runs on across continued runs (lineage.shifted), so a window is the time since the
    record before it."""
    tokens = seconds = 0.0
    before = 0.0
    for record in metrics:
        if "tokens_per_s" not in record:
            continue
        window = record["elapsed_s"] - before
        before = record["elapsed_s"]
        if record["step"] > after_step:
            tokens += record["tokens_per_s"] * window
            seconds += window
    return tokens, seconds


def add_utilisation(training: dict, parameters: int, threads: int) -> None:
    """MFU of the last run's own mean throughput (not the history's, which may mix machines and
    compute types) against this machine's measured matmul peak in that run's compute type: the
    card is written where the run trained."""
    if training.get("run_tokens_per_second") and "CPU" in str(training.get("hardware")):
        peak = matmul_peak_flops(threads, dtype=training.get("dtype", "bf16"))
        training["peak_tflops"] = round(peak / 1e12, 3)
        training["mfu"] = model_flops_utilisation(
            parameters, training["run_tokens_per_second"], peak
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.card", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--run", type=Path, required=True, help="training run folder (holds model/)"
    )
    parser.add_argument(
        "--export",
        type=Path,
        help=f"model directory to ship it to, e.g. {DEFAULT_MODEL} (default: none, the card is "
        "written into the run's model/ only)",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder, as for training"
    )
    parser.add_argument(
        "--beam-size",
        type=positive_int,
        default=PAPER_DECODING.beam_size,
        help="beam size for the scores (default: %(default)s)",
    )
    parser.add_argument(
        "--valid-sentences", type=int, default=1000, help="validation pairs scored per language"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=0,
        help="score only N sentences per set (0 = all; for dry runs)",
    )
    parser.add_argument(
        "--notes",
        type=Path,
        help="a Markdown file added to card.md (e.g. how the shape was chosen)",
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="threads the MFU peak is measured on"
    )
    args = parser.parse_args(argv)

    model_dir = RunDir(args.run).model_dir
    translator = Translator.load(model_dir.path)
    scores = score_sets(translator, args.data_dir, args.beam_size, args.limit, args.valid_sentences)
    training = training_summary(args.run)
    add_utilisation(training, translator.model.num_parameters(), args.threads)
    name = (args.export or args.run).name
    card = build_card(translator, training, scores, name)
    earlier = model_dir.snapshots()[:-1]  # the last is the final model
    card["snapshots"] = [{"file": snapshot.weights, "step": snapshot.step} for snapshot in earlier]
    card["notes"] = args.notes.read_text() if args.notes else ""
    write_card(model_dir, card)
    if args.export:
        model_dir.copy_to(ModelDir(args.export))  # the run's model, snapshots included
    print(f"wrote {args.export or model_dir.path}")
    return 0


def write_card(model_dir: ModelDir, card: dict) -> None:
    """The card for programs and for people."""
    model_dir.write_card(card, card_markdown(card))


if __name__ == "__main__":
    sys.exit(main())
