"""Ship a trained run: score it, write the model card, and on request copy it into pretrained/.

    python -m train.shipping.card --run runs/cpu            # card in runs/cpu/model/
    python -m train.shipping.card --run runs/cpu --export pretrained/en-de-fr   # ship it

Scores Multi30k test_2016_flickr (in-domain: image captions), FLORES-200 devtest (general domain:
Wikinews, Wikivoyage, Wikibooks; a test set only, never trained on) and the run's validation split
with sacreBLEU and chrF (beam search), then writes card.json (for programs, the app's Model page)
and card.md (for people) beside model.pt, spm.model, metrics.jsonl and the snapshots. Without
--export nothing outside the run folder changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.cli import non_negative_int, positive_int
from core.decoding.search import PAPER_DECODING
from core.files.model_dir import ModelDir
from core.text.tokenizer import LANGUAGES
from core.translator import DEFAULT_MODEL, Translator
from train.data.corpora import (
    CorpusError,
    default_data_dir,
    flores_devtest,
    load_corpus,
    multi30k_test,
)
from train.data.sources import DATA_SOURCES, trained_named_corpora
from train.loop.hardware import matmul_peak_flops, model_flops_utilisation
from train.loop.run_folder import RunDir
from train.shipping.card_md import AUGMENTATION_KEYS, card_markdown
from train.shipping.evaluate import evaluate

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
                    # flat, for the Model page's table: over the source budget; of those cut
                    "long_sentences": result["long_sentences"]["long"],
                    "cut_sentences": result["long_sentences"]["cut"],
                    "source_budget": result["long_sentences"]["source_budget"],
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
        "data": DATA_SOURCES + trained_named_corpora(training.get("recipe", {})),
        "training": training,
        "scores": scores,
        "examples": example_translations(translator),
    }


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
    recipe_keys += ["average_last", "mixture", "hansard_tag", "hansard_clean"]
    recipe_keys += [*AUGMENTATION_KEYS, "subword_sides"]
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
        prog="python -m train.shipping.card", description=__doc__.split("\n")[0]
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
        "--valid-sentences",
        type=positive_int,
        default=1000,
        help="validation pairs scored per language",
    )
    parser.add_argument(
        "--limit",
        type=non_negative_int,
        default=0,
        help="score only N sentences per set (0 = all; for dry runs)",
    )
    parser.add_argument(
        "--notes",
        type=Path,
        help="a Markdown file added to card.md (e.g. how the shape was chosen)",
    )
    parser.add_argument(
        "--threads", type=positive_int, default=2, help="threads the MFU peak is measured on"
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
