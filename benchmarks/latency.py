"""Translation latency: milliseconds per sentence of ``Translator.translate``, medians of repeats.

Random models translate a 30-token source by greedy search (beam 1) and beam search (beam 4), with
and without the attention trace: d256, the size in the latency budget (6 + 6 layers, 8 heads,
d_model 256, d_ff 1024, 8000 pieces); d192, the shape of the shipped model (train's CPU preset:
d_model 192, d_ff 768, pre-LN); d128, the previous shipped shape; and a tiny one. Two lengths:

    forced   the search runs exactly --steps steps (max_length; a random model never says </s>)
    natural  the default length budget, 1.5 x source + 10 tokens, which the d256 random model
             spends whole (the steps column says how many steps each search took)

The budget: the shipped shape (d192) and d256, beam 4, trace, 32 output tokens, under 150 ms.

    python -m benchmarks.latency                          # the table
    python -m benchmarks.latency --dry-run                # seconds: the tiny model, one repeat
    python -m benchmarks.latency --baseline /tmp/before   # side by side with another core/

Every repeat runs all cases in turn, so a busy machine slows them alike; ratios within one run say
more than milliseconds. With --baseline, each repeat runs this checkout and the other one in
alternating worker processes and reports after / before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# name -> ModelConfig fields (dropout plays no part in eval mode)
MODELS = {
    "tiny": dict(
        vocab_size=400, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64
    ),
    "d128": dict(vocab_size=8000, d_model=128, n_heads=8, d_ff=512, norm_first=True),
    "d192": dict(vocab_size=8000, d_model=192, n_heads=8, d_ff=768, norm_first=True),
    "d256": dict(vocab_size=8000, d_model=256, n_heads=8, d_ff=1024),
}
SEARCHES = {"greedy": 1, "beam4": 4}
BUDGET_MODELS = ["d192", "d256"]  # the shipped shape and the reference size


class NumberTokenizer:
    """A stand-in vocabulary: text is piece ids written as numbers, so a source has exactly the
    length asked for. (SentencePiece takes microseconds; it is not what is measured here.)"""

    def __init__(self, vocab_size: int) -> None:
        from core.tokenizer import EOS_ID, LANGUAGES

        self.eos_id = EOS_ID
        self.tag_ids = {target: 4 + i for i, target in enumerate(sorted(LANGUAGES))}
        self.vocab_size = vocab_size

    def __len__(self) -> int:
        return self.vocab_size

    def encode_source(self, text: str, target: str) -> list[int]:
        return [self.tag_ids[target], *map(int, text.split()), self.eos_id]

    def decode(self, ids: list[int]) -> str:
        return " ".join(map(str, ids))

    def pieces(self, ids: list[int]) -> list[str]:
        return [f"<{i}>" for i in ids]


def build_translator(name: str, seed: int = 0):
    """A Translator around a random model of MODELS[name], in eval mode."""
    import torch

    from core.model import ModelConfig, Transformer
    from core.translator import Translator

    config = ModelConfig(**MODELS[name], max_len=256)
    torch.manual_seed(seed)
    return Translator(Transformer(config), NumberTokenizer(config.vocab_size))


def source_text(vocab_size: int, length: int, seed: int = 0) -> str:
    """length - 2 random piece ids: with the language tag and </s>, a source of ``length``."""
    import random

    rng = random.Random(seed)
    return " ".join(str(rng.randrange(8, vocab_size)) for _ in range(length - 2))


def cases(args: argparse.Namespace) -> list[dict]:
    return [
        dict(model=model, search=search, trace=trace, length=length, threads=threads)
        for model in args.models
        for threads in args.threads
        for search in SEARCHES
        for trace in (False, True)
        for length in ("forced", "natural")
    ]


def label(case: dict) -> str:
    trace = "trace" if case["trace"] else "-"
    return (
        f"{case['model']:<5} {case['search']:<6} {trace:<5} {case['length']:<7} {case['threads']}"
    )


def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    """Run every case args.repeats times, round-robin; returns label -> milliseconds, and
    label + ' steps' -> decoding steps."""
    import torch

    translators = {name: build_translator(name) for name in args.models}
    texts = {
        name: source_text(MODELS[name]["vocab_size"], args.source_length) for name in args.models
    }
    todo = cases(args)

    def translate(case: dict):
        torch.set_num_threads(case["threads"])
        return translators[case["model"]].translate(
            texts[case["model"]],
            beam_size=SEARCHES[case["search"]],
            trace=case["trace"],
            max_length=args.steps if case["length"] == "forced" else None,
        )

    results: dict[str, list[float]] = {label(case): [] for case in todo}
    for case in todo:  # warm-up, and how many steps the search took (trace or not, the same)
        results[label(case) + " steps"] = [len(translate({**case, "trace": True}).steps)]
        translate(case)
    for _ in range(args.repeats):
        for case in todo:
            start = time.perf_counter()
            translate(case)
            results[label(case)].append(1000 * (time.perf_counter() - start))
    return results


def run_worker(args: argparse.Namespace, source: Path) -> dict[str, list[float]]:
    """measure() in a fresh process importing core/ from ``source``."""
    command = [sys.executable, __file__, "--worker", str(source), *worker_flags(args)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def worker_flags(args: argparse.Namespace) -> list[str]:
    return [
        "--models",
        *args.models,
        "--threads",
        *map(str, args.threads),
        "--steps",
        str(args.steps),
        "--source-length",
        str(args.source_length),
        "--repeats",
        "1",
    ]


def merge(into: dict[str, list[float]], more: dict[str, list[float]]) -> None:
    for key, values in more.items():
        into.setdefault(key, []).extend(values)


def report(args: argparse.Namespace, after: dict, before: dict | None) -> None:
    header = f"{'model search trace length threads':<36} {'steps':>6} {'ms':>8}"
    if before is not None:
        header += f" {'before ms':>10} {'after/before':>12}"
    print(header)
    for case in cases(args):
        key = label(case)
        ms = statistics.median(after[key])
        line = f"{key:<36} {after[key + ' steps'][0]:>6} {ms:>8.1f}"
        if before is not None:
            old = statistics.median(before[key])
            line += f" {old:>10.1f} {ms / old:>12.2f}"
        print(line)
    budget = {"search": "beam4", "trace": True, "length": "forced"}
    for model in [name for name in BUDGET_MODELS if name in args.models]:
        for threads in args.threads:
            ms = statistics.median(after[label({**budget, "model": model, "threads": threads})])
            verdict = "met" if ms < args.budget else "NOT met"
            print(
                f"budget: {model} beam 4 + trace, {args.steps} steps, {threads} thread(s): "
                f"{ms:.1f} ms, {verdict} (< {args.budget:g} ms)"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        choices=sorted(MODELS),
        default=["tiny", "d128", "d192", "d256"],
        help="model sizes to run (default: %(default)s)",
    )
    parser.add_argument(
        "--threads",
        nargs="+",
        type=int,
        help="torch.set_num_threads values to run every case with (default: torch's default)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=32,
        help="decoding steps (output tokens) of the forced-length cases",
    )
    parser.add_argument(
        "--source-length", type=int, default=30, help="source tokens, tag and </s> included"
    )
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of every case")
    parser.add_argument(
        "--budget", type=float, default=150.0, help="milliseconds the budget case must beat"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a folder holding another core/ (e.g. an export of an older commit): each repeat "
        "runs it and this checkout in alternating worker processes",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="seconds: the tiny model, 4 steps, one repeat (checks that the benchmark runs)",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dry_run:
        args.models, args.steps, args.repeats = ["tiny"], 4, 1

    source = args.worker or REPO
    sys.path.insert(0, str(source))
    import torch

    args.threads = args.threads or [torch.get_num_threads()]
    if args.worker:
        print(json.dumps(measure(args)))
        return

    import core

    print(f"torch {torch.__version__}, core from {Path(core.__file__).parent}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    before = None
    if args.baseline is None:
        after = measure(args)
    else:
        after, before = {}, {}
        runs = [(after, REPO), (before, args.baseline)]
        for repeat in range(args.repeats):
            for results, source in runs if repeat % 2 == 0 else runs[::-1]:  # each first by turns
                merge(results, run_worker(args, source))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(args, after, before)


if __name__ == "__main__":
    main()
