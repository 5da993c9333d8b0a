"""At which decoder layer does the word the model writes become its first choice? Issue #58.

    python -m train.studies.lens_study --card pretrained/en-de-fr

A sample of Multi30k test_2016_flickr sentences is translated as the app does (core.PAPER_DECODING)
into each target language, and the logit lens (core/inspection/logit_lens.py) is read at every
output position: the layer from which the piece the translation chose stays the lens's first
choice to the end (LogitLens.settled_layer; 0 the embedding). Positions whose last state does not
rank the chosen piece first (a beam search may choose lower) are counted apart. The card receives
the mean layer, and the share of positions settled by each layer (``lens_study``).
"""

from __future__ import annotations

import random
import sys

import numpy as np
import torch

from core.inspection.logit_lens import logit_lens
from core.translator import Translator
from train.data.corpora import multi30k_test
from train.studies.study_args import command_line, publish, study_parser

PROG = "python -m train.studies.lens_study"
STUDY_KEY = "lens_study"
DRY_RUN_SENTENCES = 2


def settled_layers(translator: Translator, sentences: list[str], target: str) -> np.ndarray:
    """The settled layer of every output position of every sentence's translation."""
    layers = []
    for sentence in sentences:
        result = translator.translate(sentence, target)
        layers.append(logit_lens(translator, result, top=1).settled_layer())
    return np.concatenate(layers)


def summary(layers: np.ndarray, n_layers: int) -> dict:
    """Mean settled layer over the positions whose last state ranks the choice first, and the
    share of those settled by each layer 0..n_layers."""
    ranked = layers[layers >= 0]
    return {
        "positions": int(layers.size),
        "last_layer_ranks_choice_first": round(float(ranked.size / layers.size), 4),
        "mean_layer": round(float(ranked.mean()), 2),
        "settled_by_layer": [round(float((ranked <= k).mean()), 4) for k in range(n_layers + 1)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(PROG, __doc__, "the lens study")
    parser.add_argument("--sentences", type=int, default=300, help="sentences per language")
    parser.add_argument("--seed", type=int, default=58, help="seed of the sentence sample")
    parser.add_argument("--dry-run", action="store_true", help="two sentences, print only")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    translator = Translator.load(args.model)
    count = DRY_RUN_SENTENCES if args.dry_run else args.sentences
    n_layers = translator.model.config.n_decoder_layers
    results = {}
    for target in translator.languages:
        english, _ = multi30k_test(args.data_dir, target)
        sample = random.Random(args.seed).sample(english, min(count, len(english)))
        results[target] = summary(settled_layers(translator, sample, target), n_layers)
    record = {
        "corpus": "multi30k test_2016_flickr",
        "sentences": count,
        "seed": args.seed,
        "decoder_layers": n_layers,
        "results": results,
        "command": command_line(PROG, argv),
    }
    publish(record, STUDY_KEY, None if args.dry_run else args.card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
