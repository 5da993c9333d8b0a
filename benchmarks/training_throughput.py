"""Training throughput: target tokens per second of the trainer's own step, where the time goes,
and how much of the machine's bf16 matrix-multiply peak the step reaches.

    python -m benchmarks.training_throughput                          # d_model 192, 2,500 tokens
    python -m benchmarks.training_throughput --d-model 128 --d-ff 512 --profile
    python -m benchmarks.training_throughput --baseline /tmp/before   # side by side, with ratio
    python -m benchmarks.training_throughput --dry-run                # seconds: a tiny model

Each measurement runs in a fresh worker process that imports core/ and train/ from a checkout
(this one, or --baseline's), builds that checkout's own Trainer (its optimizer, autocast and
model code) on the first --data-limit pairs of each corpus, and times Trainer.train_step on one
fixed synthetic batch: --batch-tokens tokens as rows of --length source and target pieces, no
padding, so every checkout does exactly the same work. With --baseline, workers alternate
between the two checkouts, repeat by repeat, so a busy machine slows them alike.

The peak is measured here, not quoted (train/hardware.py): a bf16 (4096 x 256) @ (256 x 1024)
matmul. MFU = 6 x parameters x tokens/s / peak.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROFILE_ROWS = 12


def trainer_flags(args: argparse.Namespace, out: Path) -> list[str]:
    """The flags every checkout's train.config.parse_args understands."""
    flags = ["--preset", "dry-run" if args.dry_run else "cpu", "--out", str(out)]
    flags += ["--data-dir", str(args.data_dir), "--data-limit", str(args.data_limit)]
    if not args.dry_run:
        flags += ["--vocab-size", str(args.vocab_size), "--d-model", str(args.d_model)]
        flags += ["--d-ff", str(args.d_ff), "--n-layers", str(args.n_layers)]
        flags += ["--norm-first" if args.norm_first else "--no-norm-first"]
    return [*flags, "--dropout", str(args.dropout)]


def build_trainer(args: argparse.Namespace, out: Path):
    """The checkout's own Trainer, with one synthetic batch of identical rows' lengths."""
    import random

    from train.config import parse_args
    from train.trainer import Trainer

    trainer = Trainer(parse_args(trainer_flags(args, out)))
    vocab = trainer.model_config.vocab_size
    rng = random.Random(0)
    rows = max(1, args.batch_tokens // args.length)
    trainer.train_pairs = [
        tuple([rng.randrange(4, vocab) for _ in range(args.length)] for _ in range(2))
        for _ in range(rows)
    ]
    return trainer, list(range(rows))


def measure(args: argparse.Namespace) -> dict:
    """Time train_step in this process (the worker): tokens/s per timed step, and a profile."""
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as out:
        trainer, batch = build_trainer(args, Path(out))
        trainer.model.train()
        for _ in range(args.warmup_steps):
            trainer.train_step(batch)
        rates = []
        for _ in range(args.steps):
            start = time.perf_counter()
            _, tokens = trainer.train_step(batch)
            rates.append(tokens / (time.perf_counter() - start))
        result = {"tokens_per_s": rates, "parameters": trainer.model.num_parameters()}
        if args.profile:
            result["profile"] = profile_table(trainer, batch, args.profile_steps)
    return result


def profile_table(trainer, batch: list[int], steps: int) -> str:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            trainer.train_step(batch)
    return profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=PROFILE_ROWS)


def run_worker(args: argparse.Namespace, source: Path) -> dict:
    """measure() in a fresh process importing core/ and train/ from ``source``."""
    command = [sys.executable, __file__, "--worker", str(source), *worker_flags(args)]
    completed = subprocess.run(command, capture_output=True, text=True, cwd=source)
    if completed.returncode:
        raise SystemExit(f"worker for {source} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def worker_flags(args: argparse.Namespace) -> list[str]:
    flags = [f"--{name.replace('_', '-')}={value}" for name, value in shape_options(args).items()]
    flags += ["--norm-first" if args.norm_first else "--no-norm-first"]
    flags += ["--profile"] if args.profile else []
    return flags + (["--dry-run"] if args.dry_run else [])


def shape_options(args: argparse.Namespace) -> dict:
    names = ["d_model", "d_ff", "n_layers", "vocab_size", "dropout", "batch_tokens", "length"]
    names += ["threads", "steps", "warmup_steps", "profile_steps", "data_dir", "data_limit"]
    return {name: getattr(args, name) for name in names}


def report(args: argparse.Namespace, after: list[dict], before: list[dict]) -> None:
    from train.hardware import matmul_peak_flops, model_flops_utilisation

    peak = matmul_peak_flops(args.threads)
    print(f"bf16 matmul peak, measured: {peak / 1e12:.2f} TFLOP/s on {args.threads} thread(s)")
    print(f"{'checkout':<12} {'tokens/s':>10} {'ms/step':>9} {'MFU':>7} {'parameters':>12}")
    rates = {}
    for name, results in (("this", after), ("baseline", before)):
        if not results:
            continue
        rate = statistics.median([r for result in results for r in result["tokens_per_s"]])
        parameters = results[0]["parameters"]
        rates[name] = rate
        tokens_per_step = max(1, args.batch_tokens // args.length) * args.length
        step_ms = 1000 * tokens_per_step / rate
        mfu = model_flops_utilisation(parameters, rate, peak)
        print(f"{name:<12} {rate:>10,.0f} {step_ms:>9.0f} {mfu:>7.1%} {parameters:>12,}")
    if "baseline" in rates:
        print(f"this / baseline: {rates['this'] / rates['baseline']:.2f}x tokens per second")
    for name, results in (("this", after), ("baseline", before)):
        if results and "profile" in results[0]:
            print(f"\nprofile ({name}, {args.profile_steps} steps):\n{results[0]['profile']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--d-model", type=int, default=192, help="model width (default: %(default)s)")
    add("--d-ff", type=int, default=768, help="feed-forward inner size (default: %(default)s)")
    add("--n-layers", type=int, default=6, help="encoder and decoder layers (default: 6)")
    add("--vocab-size", type=int, default=8000, help="SentencePiece pieces (default: 8000)")
    add("--norm-first", action=argparse.BooleanOptionalAction, default=True, help="pre-LN")
    add("--dropout", type=float, default=0.1, help="dropout (default: %(default)s)")
    add("--batch-tokens", type=int, default=2500, help="target tokens per batch (default: 2500)")
    add("--length", type=int, default=25, help="source and target pieces per row (default: 25)")
    add("--threads", type=int, default=2, help="torch threads (default: %(default)s)")
    add("--steps", type=int, default=10, help="timed steps per repeat (default: %(default)s)")
    add("--warmup-steps", type=int, default=3, help="untimed steps first (default: 3)")
    add("--repeats", type=int, default=2, help="worker runs per checkout (default: 2)")
    add("--profile", action="store_true", help="print torch.profiler's table of the step")
    add("--profile-steps", type=int, default=3, help="steps profiled (default: %(default)s)")
    add("--data-dir", type=Path, default=REPO.parent / "shared" / "data", help="corpora folder")
    add("--data-limit", type=int, default=20000, help="pairs read per corpus file (vocabulary)")
    add("--baseline", type=Path, help="another checkout (holding core/ and train/) to compare")
    add("--dry-run", action="store_true", help="seconds: the dry-run model, 2 steps, 1 repeat")
    add("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dry_run:
        args.steps, args.warmup_steps, args.repeats, args.profile_steps = 2, 1, 1, 1
        args.data_limit, args.batch_tokens, args.length = 1500, 400, 20
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker is not None:
        sys.path.insert(0, str(args.worker))
        os.environ["TQDM_DISABLE"] = "1"
        print(json.dumps(measure(args)))
        return
    after, before = [], []
    runs = [(after, REPO)] + ([(before, args.baseline.resolve())] if args.baseline else [])
    for repeat in range(args.repeats):
        for results, source in runs if repeat % 2 == 0 else runs[::-1]:  # each first by turns
            results.append(run_worker(args, source))
    report(args, after, before)


if __name__ == "__main__":
    main()
