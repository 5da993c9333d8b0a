"""Choose the width by measurement: short training runs that differ only in d_model, given the
same minutes, compared by their validation curves, and recorded in a model card.

    for W in 128 192 256; do
      python -m train --preset cpu --d-model $W --d-ff $((4*W)) --out runs/width_$W \
        --max-minutes 12 --eval-every 300 --snapshot-steps ""
    done
    python -m train.studies.width_study runs/width_128 runs/width_192 runs/width_256 \
        --card pretrained/en-de-fr

Each run's metrics.jsonl gives its validation points (loss, BLEU and chrF on the validation
sample) and the training minutes at which they were taken; the card gets them as
``width_study`` in card.json and a section in card.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.files.model_dir import ModelDir
from train.loop.run_folder import RunDir
from train.shipping.card import minutes_at, tokens_seen, write_card
from train.shipping.card_sections.width import width_study_section

FIELDS = ("step", "val_loss", "val_bleu_de", "val_bleu_fr", "val_bleu")


def unfinished(runs: list[Path]) -> list[str]:
    """What keeps each of ``runs`` from the study: a folder whose model/card.json has no
    training summary was never trained to the end (or is a model folder, not a run folder)."""
    return [
        f"{run}: no finished training run (no training summary in "
        f"{RunDir(run).model_dir.card_file})"
        for run in runs
        if "training" not in RunDir(run).model_dir.read_card()
    ]


def study_run(run: Path) -> dict:
    """One run of the study: its width, parameters, mean training tokens/s, and its validation
    points with the training minutes at which each was taken."""
    run_dir = RunDir(run)
    metrics = run_dir.read_metrics()
    model, _ = run_dir.model_dir.load_model()
    training = run_dir.model_dir.read_card()["training"]
    tokens, seconds = tokens_seen(metrics)
    final = training["steps"], training["seconds"]
    return {
        "run": run.name,
        "d_model": model.config.d_model,
        "d_ff": model.config.d_ff,
        "parameters": model.num_parameters(),
        "tokens_per_second": round(tokens / seconds) if seconds else None,
        "minutes": round(training["seconds"] / 60, 2),
        "curve": [
            {
                "minutes": round(minutes_at(metrics, m["step"], *final), 2),
                **{key: m[key] for key in FIELDS if key in m},
            }
            for m in metrics
            if "val_loss" in m
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.studies.width_study", description=__doc__.split("\n")[0]
    )
    parser.add_argument("runs", type=Path, nargs="+", help="the study's training run folders")
    parser.add_argument(
        "--card", type=Path, required=True, help="model folder whose card gets the study"
    )
    args = parser.parse_args(argv)
    if problems := unfinished(args.runs):
        parser.error("; ".join(problems))
    model_dir = ModelDir(args.card)
    card = model_dir.read_card()
    card["width_study"] = sorted((study_run(run) for run in args.runs), key=lambda r: r["d_model"])
    write_card(model_dir, card)
    print("\n".join(width_study_section(card["width_study"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
