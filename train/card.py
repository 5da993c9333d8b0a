"""Ship a trained run: score it, write the model card, copy it into pretrained/.

    python -m train.card --run runs/cpu --export pretrained/en-de-fr

Scores Multi30k test_2016_flickr (en-de, en-fr) and the run's validation split with sacreBLEU and
chrF (beam search), then writes card.json (for programs, the app's Model page) and card.md (for
people) beside model.pt, spm.model and metrics.jsonl.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from core.checkpoint import CARD_FILE, MODEL_FILE, TOKENIZER_FILE
from core.metrics_log import read_metrics
from core.tokenizer import LANGUAGES
from core.translator import DEFAULT_MODEL, Translator
from train.data import default_data_dir, load_corpus, multi30k_test
from train.evaluate import evaluate

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
]


def score_sets(
    translator: Translator, data_dir: Path, beam_size: int, limit: int, valid_sentences: int
) -> list[dict]:
    """BLEU/chrF on Multi30k test_2016_flickr and on an evenly spread sample of the validation
    split (every k-th pair, Tatoeba and Multi30k val alike), per language."""
    scores = []
    valid = load_corpus(data_dir).valid
    for target in LANGUAGES:
        sets = {"multi30k test_2016_flickr": multi30k_test(data_dir, target)}
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


EXAMPLES = ["A man is riding a bicycle.", "I am very hungry.", "The dog runs away."]


def example_translations(translator: Translator) -> list[dict]:
    return [
        {"source": text, "target": target, "translation": translator.translate(text, target).text}
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
        "data": DATA_SOURCES,
        "training": training,
        "scores": scores,
        "examples": example_translations(translator),
    }


def card_markdown(card: dict) -> str:
    config, training = card["config"], card["training"]
    layout = "pre-LN" if config["norm_first"] else "post-LN (as in the paper)"
    lines = [
        f"# Model card: {card['name']}",
        "",
        card["description"],
        "",
        "## Architecture",
        "",
        f"- {config['n_encoder_layers']} encoder + {config['n_decoder_layers']} decoder layers, "
        f"{config['n_heads']} heads, d_model {config['d_model']}, d_ff {config['d_ff']}, {layout}",
        f"- vocabulary {config['vocab_size']} SentencePiece pieces shared by en/de/fr, tied "
        f"embeddings, sinusoidal positions, max length {config['max_len']}",
        f"- {card['parameters']:,} parameters; weights stored as float16, computed in float32",
        "",
        "## Training",
        "",
        f"- preset `{training.get('preset')}`, {training.get('steps')} steps, "
        f"{training.get('seconds', 0) / 60:.0f} minutes on {training.get('hardware')}",
        f"- about {training.get('target_tokens', 0):,} target tokens at a mean "
        f"{training.get('tokens_per_second', 0):,.0f} target tokens/s (from metrics.jsonl; the "
        "time counts training steps, not validation)",
        "- Adam (0.9, 0.98, 1e-9), the paper's warm-up + inverse square root schedule, label "
        "smoothing 0.1, dropout 0.1; final model = average of the last checkpoints",
        "",
        "## Scores (sacreBLEU, beam search)",
        "",
        "| set | pair | sentences | BLEU | chrF |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['set']} | {s['pair']} | {s['sentences']} | {s['bleu']:.1f} | {s['chrf']:.1f} |"
        for s in card["scores"]
    ]
    signatures = sorted(
        {(s["bleu_signature"], s["chrf_signature"], s["beam_size"]) for s in card["scores"]}
    )
    for bleu, chrf, beam in signatures:
        lines += [
            "",
            f"BLEU signature `{bleu}`; chrF signature `{chrf}`; beam {beam}, length penalty 0.6.",
        ]
    lines += ["", "## Examples (beam 4)", "", "| English | target | translation |", "|---|---|---|"]
    lines += [f"| {e['source']} | {e['target']} | {e['translation']} |" for e in card["examples"]]
    lines += ["", "## Data and licenses", ""]
    lines += [
        f"- {d['name']}: {d['pairs']:,} pairs, {d['license']}. {d['attribution']}."
        for d in card["data"]
    ]
    lines += [
        "",
        "The Tatoeba files exclude every pair whose English or target side occurs in the public "
        "Tatoeba test sets or in the Multi30k test sets. The validation split is carved by English "
        "sentence: no English sentence is on both sides.",
        "",
    ]
    return "\n".join(lines)


def training_summary(run: Path) -> dict:
    """The run's own record (the trainer's card.json) plus throughput from metrics.jsonl."""
    training = json.loads((run / "model" / CARD_FILE).read_text()).get("training", {})
    rates = [m["tokens_per_s"] for m in read_metrics(run / "metrics.jsonl") if "tokens_per_s" in m]
    training.pop("train_config", None)
    if rates:
        training["tokens_per_second"] = round(sum(rates) / len(rates))
        training["target_tokens"] = round(
            training["tokens_per_second"] * training.get("seconds", 0)
        )
    return training


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
        default=DEFAULT_MODEL,
        help="model directory to write (default: %(default)s)",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder, as for training"
    )
    parser.add_argument("--beam-size", type=int, default=4, help="beam size for the scores")
    parser.add_argument(
        "--valid-sentences", type=int, default=1000, help="validation pairs scored per language"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=0,
        help="score only N sentences per set (0 = all; for dry runs)",
    )
    args = parser.parse_args(argv)

    translator = Translator.load(args.run / "model")
    scores = score_sets(translator, args.data_dir, args.beam_size, args.limit, args.valid_sentences)
    card = build_card(translator, training_summary(args.run), scores, args.export.name)
    args.export.mkdir(parents=True, exist_ok=True)
    for name in (MODEL_FILE, TOKENIZER_FILE, "metrics.jsonl"):
        shutil.copyfile(args.run / "model" / name, args.export / name)
    (args.export / CARD_FILE).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    (args.export / "card.md").write_text(card_markdown(card))
    print(f"wrote {args.export}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
