"""Evaluation speed: sentences per second of ``python -m train.shipping.evaluate``'s translation and
scoring, and whether BLEU (and every translation) stays the same.

    python -m benchmarks.evaluation                           # 200 Multi30k test sentences, beam 4
    python -m benchmarks.evaluation --baseline /tmp/before    # side by side, with the ratio
    python -m benchmarks.evaluation --sentences 1000 --target fr
    python -m benchmarks.evaluation --dry-run                 # seconds: a tiny random model

Each measurement runs in a fresh worker process that imports core/ and train/ from a checkout
(this one, or --baseline's), loads --model with that checkout's Translator and times its
train.shipping.evaluate.evaluate on the first --sentences sentences of Multi30k test_2016_flickr
(English -> --target, from --data-dir) at --beam-size: translation and sacreBLEU, not the loading.
With --baseline, workers alternate between the two checkouts, repeat by repeat, so a busy machine
slows them alike; the report gives each checkout's median and the ratio, and whether the two
produced the same BLEU and the same translations.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from benchmarks.flags import at_least, checkout_folder
except ModuleNotFoundError:  # a worker runs this file as a script: benchmarks/ is sys.path[0]
    from flags import at_least, checkout_folder

REPO = Path(__file__).resolve().parent.parent
DRY_RUN_SENTENCES = 12


def test_set(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The first --sentences sources and references: Multi30k's test set, or in a dry run
    made-up sentences (support/tiny_corpus.py)."""
    if args.dry_run:
        from support.tiny_corpus import tiny_corpus

        return tiny_corpus(args.sentences, seed=1), tiny_corpus(args.sentences, seed=2)
    from train.data.corpora import multi30k_test

    sources, references = multi30k_test(args.data_dir, args.target)
    return sources[: args.sentences], references[: args.sentences]


def measure(args: argparse.Namespace) -> dict:
    """Time evaluate() in this process (the worker), after an untimed warm-up sentence."""
    import torch

    from core.translator import Translator
    from train.shipping.evaluate import evaluate

    torch.set_num_threads(args.threads)
    translator = Translator.load(args.model)
    sources, references = test_set(args)
    translator.translate_batch(sources[:1], args.target, args.beam_size, args.alpha)
    start = time.perf_counter()
    result = evaluate(
        translator,
        sources,
        references,
        args.target,
        args.beam_size,
        args.alpha,
        progress=False,
    )
    seconds = time.perf_counter() - start
    translations = "\n".join(result["hypotheses"]).encode()
    return {
        "sentences_per_s": len(sources) / seconds,
        "bleu": result["bleu"],
        "translations": hashlib.sha256(translations).hexdigest(),
    }


def run_worker(args: argparse.Namespace, source: Path) -> dict:
    """measure() in a fresh process importing core/ and train/ from ``source``."""
    command = [sys.executable, __file__, "--worker", str(source), *worker_flags(args)]
    completed = subprocess.run(command, capture_output=True, text=True, cwd=source)
    if completed.returncode:
        raise SystemExit(f"worker for {source} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def worker_flags(args: argparse.Namespace) -> list[str]:
    names = ["model", "target", "sentences", "beam_size", "alpha", "threads", "data_dir"]
    flags = [f"--{name.replace('_', '-')}={getattr(args, name)}" for name in names]
    return flags + (["--dry-run"] if args.dry_run else [])


def report(args: argparse.Namespace, after: list[dict], before: list[dict]) -> None:
    what = "made-up sentences" if args.dry_run else "Multi30k test_2016_flickr"
    print(
        f"{args.sentences} {what}, en-{args.target}, beam {args.beam_size}, "
        f"{args.threads} thread(s), {len(after)} repeat(s)"
    )
    print(f"{'checkout':<12} {'sentences/s':>12} {'BLEU':>7}")
    rates = {}
    for name, results in (("this", after), ("baseline", before)):
        if results:
            rates[name] = statistics.median(result["sentences_per_s"] for result in results)
            print(f"{name:<12} {rates[name]:>12.2f} {results[0]['bleu']:>7.2f}")
    if before:
        print(f"this / baseline: {rates['this'] / rates['baseline']:.2f}x sentences per second")
        same_bleu = {r["bleu"] for r in after + before} == {after[0]["bleu"]}
        same_text = {r["translations"] for r in after + before} == {after[0]["translations"]}
        print(f"BLEU identical: {'yes' if same_bleu else 'NO'}")
        print(f"translations identical: {'yes' if same_text else 'NO'}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags; no import of core/ or train/ here, for a worker imports them from its checkout."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--model", type=Path, help="model directory (default: the shipped model)")
    add("--target", default="de", choices=["de", "fr"], help="target language (default: de)")
    add("--sentences", type=at_least(1), default=200, help="first N test sentences (default: 200)")
    # the defaults are core's PAPER_DECODING, written out: a worker imports the baseline's core
    add("--beam-size", type=at_least(1), default=4, help="beam size (default: %(default)s)")
    add(
        "--alpha",
        "--length-penalty",
        dest="alpha",
        type=float,
        default=0.6,
        help="the GNMT length penalty's alpha (default: %(default)s)",
    )
    add(
        "--threads",
        type=at_least(1),
        default=1,
        help="torch threads per worker (default: 1; with other work on the cores, two threads "
        "can be many times slower: see benchmarks/latency.py)",
    )
    add("--repeats", type=at_least(1), default=2, help="worker runs per checkout (default: 2)")
    add("--data-dir", type=Path, help="holds multi30k/ (default: train's data directory)")
    add("--baseline", type=checkout_folder, help="another checkout (holding core/, train/)")
    add(
        "--dry-run",
        action="store_true",
        help=f"seconds: a tiny random model on {DRY_RUN_SENTENCES} made-up sentences, 1 repeat",
    )
    add("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dry_run and args.worker is None:
        args.sentences, args.repeats = DRY_RUN_SENTENCES, 1
    return args


def tiny_model_dir(directory: Path) -> Path:
    """A random model of benchmarks/latency.py's tiny shape, with a vocabulary trained on
    made-up sentences, written as a model directory."""
    import torch

    from benchmarks.latency import MODELS
    from core.files.model_dir import ModelDir
    from core.model.config import ModelConfig
    from core.model.transformer import Transformer
    from core.text.tokenizer import Tokenizer
    from support.tiny_corpus import tiny_corpus

    config = ModelConfig(**MODELS["tiny"], max_len=96)
    tokenizer = Tokenizer.train(tiny_corpus(), directory / "spm", config.vocab_size)
    torch.manual_seed(0)
    return ModelDir(directory / "model").write(Transformer(config), tokenizer.model_file).path


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker is not None:
        sys.path.insert(0, str(args.worker))
        os.environ["TQDM_DISABLE"] = "1"
        print(json.dumps(measure(args)))
        return
    from core.translator import DEFAULT_MODEL
    from train.data.corpora import default_data_dir

    args.data_dir = (args.data_dir or default_data_dir()).resolve()
    with tempfile.TemporaryDirectory() as directory:
        args.model = tiny_model_dir(Path(directory)) if args.dry_run else args.model
        args.model = (args.model or DEFAULT_MODEL).resolve()
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        after, before = [], []
        runs = [(after, REPO)] + ([(before, args.baseline.resolve())] if args.baseline else [])
        for repeat in range(args.repeats):
            for results, source in runs if repeat % 2 == 0 else runs[::-1]:  # each first by turns
                results.append(run_worker(args, source))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(args, after, before)


if __name__ == "__main__":
    main()
