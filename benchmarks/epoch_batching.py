"""An epoch's batching, as the trainer does it at the start of every epoch: seconds of
train.data.batching.token_batches over the shipped mixture's pairs, and how many of the padded
positions are real, with each --length-bucket, and how many batch shapes that makes.

    python -m benchmarks.epoch_batching                           # the shipped mixture
    python -m benchmarks.epoch_batching --baseline /tmp/before    # side by side, with ratio

The pairs are encoded once with the shipped vocabulary and truecaser (train/data/encoded_corpus.py,
cached in --cache; about 4 minutes the first time). Each checkout is timed in a fresh worker
process that imports its own train.data.batching, turns by turn, so a busy machine slows them alike;
a checkout whose epoch gave token_batches Python lists (before numpy batching) is given them, the
conversion timed with it, as its trainer did.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def shipped_lengths(data_dir: Path, mixture: str, cache: Path) -> np.ndarray:
    """(P, 2) source and target lengths of the mixture's training pairs, encoded as the gpu
    preset encodes them (the shipped vocabulary and truecaser, max_len 128)."""
    from core.files.model_dir import open_model_dir
    from core.translator import DEFAULT_MODEL
    from train.data.corpora import load_corpus, parse_mixture
    from train.data.encoded_corpus import encoded_pairs

    corpus = load_corpus(data_dir, mixture=parse_mixture(mixture))
    model = open_model_dir(DEFAULT_MODEL)
    files = (model.tokenizer_file, model.truecase_file)
    return encoded_pairs(model.load_tokenizer(), corpus.train, 128, cache, files).lengths


def worker(lengths_file: Path, max_tokens: int, bucket: int) -> dict:
    """In a checkout's process: seconds of one epoch's token_batches, on the clock and of the
    process's CPU time (what an idle core would take; the shared machine's load skews the clock)."""
    import inspect

    from train.data.batching import token_batches

    lengths = np.load(lengths_file)
    takes_arrays = "np.ndarray" in str(inspect.signature(token_batches).parameters["lengths"])
    started, cpu_started = time.perf_counter(), time.process_time()
    batches = token_batches(lengths if takes_arrays else lengths.tolist(), max_tokens, 1, bucket)
    cpu_seconds = time.process_time() - cpu_started
    return {"seconds": time.perf_counter() - started, "cpu": cpu_seconds, "batches": len(batches)}


def padding(lengths: np.ndarray, max_tokens: int, bucket: int) -> tuple[float, int]:
    """This checkout's share of real positions, and its number of batch shapes, in an epoch."""
    from train.data.batching import token_batches
    from train.data.loader import batch_shape, real_share

    batches = token_batches(lengths, max_tokens, 1, bucket)
    shapes = {batch_shape(lengths[rows], bucket, max_tokens) for rows in batches}
    return real_share(lengths, batches, bucket, max_tokens), len(shapes)


def run_worker(checkout: Path, lengths_file: Path, max_tokens: int, bucket: int) -> dict:
    command = [sys.executable, "-m", "benchmarks.epoch_batching", "--worker", str(lengths_file)]
    command += ["--max-tokens", str(max_tokens), "--bucket", str(bucket)]
    env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{REPO}"}
    completed = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    from train.data.corpora import default_data_dir
    from train.loop.config import SHIPPED_MIXTURE

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.epoch_batching", description=__doc__
    )
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(), help="corpora folder")
    parser.add_argument(
        "--mixture", default=SHIPPED_MIXTURE, help="corpus weights (train/data/corpora.py)"
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "epoch-batching",
        help="folder of the encoded pairs (default: in the temporary folder)",
    )  # fmt: skip
    parser.add_argument("--baseline", type=Path, help="another checkout, timed side by side")
    parser.add_argument("--repeats", type=int, default=3, help="timed epochs per checkout")
    parser.add_argument("--max-tokens", type=int, default=25000, help="tokens per batch")
    parser.add_argument(
        "--bucket", type=int, nargs="*", default=[0, 4, 2], help="--length-bucket values"
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.max_tokens, args.bucket[0])))
        return
    lengths_file = args.cache / "lengths.npy"
    if not lengths_file.is_file():
        args.cache.mkdir(parents=True, exist_ok=True)
        np.save(lengths_file, shipped_lengths(args.data_dir, args.mixture, args.cache))
    checkouts = {"this": REPO, **({"baseline": args.baseline} if args.baseline else {})}
    lengths = np.load(lengths_file)
    print(f"{len(lengths):,} pairs, batches of {args.max_tokens:,} tokens")
    for bucket in args.bucket:
        runs = {name: [] for name in checkouts}
        for _ in range(args.repeats):
            for name, checkout in checkouts.items():
                runs[name].append(run_worker(checkout, lengths_file, args.max_tokens, bucket))
        seconds = {name: statistics.median(r["seconds"] for r in rs) for name, rs in runs.items()}
        for name, rs in runs.items():
            spread = ", ".join(f"{r['seconds']:.2f}" for r in rs)
            cpu = statistics.median(r.get("cpu", math.nan) for r in rs)
            print(
                f"bucket {bucket:2d} {name:8s}: {seconds[name]:.2f} s (median of {spread}), "
                f"{cpu:.2f} s of CPU"
            )
        if args.baseline:
            print(f"bucket {bucket:2d} speed-up: {seconds['baseline'] / seconds['this']:.1f}x")
        share, shapes = padding(lengths, args.max_tokens, bucket)
        print(f"bucket {bucket:2d} here: {share:.3f} of the padded positions real, {shapes} shapes")


if __name__ == "__main__":
    main()
