"""Training throughput: target tokens per second of the trainer's own step in bf16 and in float32,
which of the two `--dtype auto` picks on this machine, where the time goes, and how much of the
machine's matrix-multiply peak the step reaches.

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

This checkout is measured in both compute types (--dtype bf16 and fp32), the baseline with its own
default. The peak is measured here, not quoted (train/loop/hardware.py): a (4096 x 256) @ (256 x
1024) matmul in each type. MFU = 6 x parameters x tokens/s / peak of the step's type.
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

try:
    from benchmarks.flags import at_least, checkout_folder
except ModuleNotFoundError:  # a worker runs this file as a script: benchmarks/ is sys.path[0]
    from flags import at_least, checkout_folder

REPO = Path(__file__).resolve().parent.parent
PROFILE_ROWS = 12


def trainer_flags(args: argparse.Namespace, out: Path) -> list[str]:
    """The flags every checkout's train.loop.config.parse_args understands."""
    flags = ["--preset", "dry-run" if args.dry_run else "cpu", "--out", str(out)]
    flags += ["--data-dir", str(args.data_dir), "--data-limit", str(args.data_limit)]
    if not args.dry_run:
        flags += ["--vocab-size", str(args.vocab_size), "--d-model", str(args.d_model)]
        flags += ["--d-ff", str(args.d_ff), "--n-layers", str(args.n_layers)]
        flags += ["--norm-first" if args.norm_first else "--no-norm-first"]
    flags += ["--dtype", args.dtype] if args.dtype else []
    if args.worker is not None and args.worker.resolve() == REPO:  # a baseline may not know them
        flags += ["--device", args.device]
    flags += ["--compile"] if args.compile else []
    return [*flags, "--dropout", str(args.dropout)]


def build_trainer(args: argparse.Namespace, out: Path):
    """The checkout's own Trainer, with one synthetic batch of identical rows' lengths: collated
    by train.data.loader where the checkout has it, else (checkouts before the DataLoader, 03f0cc5
    and earlier) the rows' indices into the trainer's train_pairs, which its step collated."""
    import random

    from train.loop.config import parse_args
    from train.loop.trainer import Trainer

    trainer = Trainer(parse_args(trainer_flags(args, out)))
    vocab = trainer.model_config.vocab_size
    rng = random.Random(0)
    rows = max(1, args.batch_tokens // args.length)
    pairs = [
        tuple([rng.randrange(4, vocab) for _ in range(args.length)] for _ in range(2))
        for _ in range(rows)
    ]
    try:
        from train.data.encoded_corpus import FlatPairs
        from train.data.loader import collate
    except ImportError:
        trainer.train_pairs = pairs
        return trainer, list(range(rows))
    return trainer, collate(FlatPairs.from_lists(pairs), list(range(rows)))


def measure(args: argparse.Namespace) -> dict:
    """Time train_step in this process (the worker): tokens/s per timed step, and a profile."""
    import torch

    torch.set_num_threads(args.threads)
    synchronize = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    with tempfile.TemporaryDirectory() as out:
        trainer, batch = build_trainer(args, Path(out))
        trainer.model.train()
        started = time.perf_counter()
        trainer.train_step(batch)  # with --compile, the graphs are built here
        synchronize()
        first_step = time.perf_counter() - started
        for _ in range(args.warmup_steps):
            trainer.train_step(batch)
        rates = []
        for _ in range(args.steps):
            synchronize()
            start = time.perf_counter()
            _, tokens = trainer.train_step(batch)
            synchronize()
            rates.append(tokens / (time.perf_counter() - start))
        result = {
            "tokens_per_s": rates,
            "parameters": trainer.model.num_parameters(),
            "first_step_s": first_step,
        }
        if args.profile:
            result["profile"] = profile_table(trainer, batch, args.profile_steps)
    return result


def profile_table(trainer, batch, steps: int) -> str:
    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    activities += [ProfilerActivity.CUDA] if torch.cuda.is_available() else []
    with profile(activities=activities) as profiler:
        for _ in range(steps):
            trainer.train_step(batch)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
    averages = profiler.key_averages()
    phases = [
        f"{event.key:<18} {event.cpu_time_total / 1000 / steps:>9.1f} ms on the host, "
        f"{getattr(event, 'device_time_total', 0) / 1000 / steps:>9.1f} ms on the device"
        for event in averages
        if event.key.startswith("step: ")  # the trainer's phases (train/loop/trainer.py train_step)
    ]
    table = averages.table(sort_by="self_cpu_time_total", row_limit=PROFILE_ROWS)
    return "\n".join(["phases of a step, per step:", *phases, "", table])


def run_worker(
    args: argparse.Namespace, source: Path, dtype: str | None, compiled: bool = False
) -> dict:
    """measure() in a fresh process importing core/ and train/ from ``source``; ``dtype`` None
    leaves the checkout's own default (a baseline may not know --dtype)."""
    flags = [*worker_flags(args), *([f"--dtype={dtype}"] if dtype else [])]
    flags += ["--compile"] if compiled else []
    command = [sys.executable, __file__, "--worker", str(source), *flags]
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
    names += ["device"]
    return {name: getattr(args, name) for name in names}


def report(args: argparse.Namespace, runs: dict[str, list[dict]]) -> None:
    from train.loop.hardware import (
        choose_dtype,
        cpu_flags,
        gpu_matmul_peak_flops,
        matmul_peak_flops,
        model_flops_utilisation,
    )

    print(f"CPU flags: {' '.join(cpu_flags()) or 'none of AMX, AVX-512, AVX2'}")
    if args.device == "cuda":
        peaks = {dtype: gpu_matmul_peak_flops(dtype=dtype) for dtype in ("bf16", "fp32")}
        where = "the GPU"
    else:
        peaks = {dtype: matmul_peak_flops(args.threads, dtype=dtype) for dtype in ("bf16", "fp32")}
        where = f"{args.threads} thread(s)"
    for dtype, peak in peaks.items():
        print(f"{dtype} matmul peak, measured: {peak / 1e12:.2f} TFLOP/s on {where}")
    print(
        f"{'checkout':<20} {'tokens/s':>10} {'ms/step':>9} {'MFU':>7} {'parameters':>12} "
        f"{'first step s':>13}"
    )
    rates = {}
    for name, results in runs.items():
        rate = statistics.median([r for result in results for r in result["tokens_per_s"]])
        rates[name] = rate
        tokens_per_step = max(1, args.batch_tokens // args.length) * args.length
        # the baseline trains in its own default type, which this process does not learn
        dtype = name.rsplit(" ", 1)[-1]
        mfu = "-"
        if dtype in peaks:
            mfu = f"{model_flops_utilisation(results[0]['parameters'], rate, peaks[dtype]):.1%}"
        first_step = statistics.median(result.get("first_step_s", 0.0) for result in results)
        print(
            f"{name:<20} {rate:>10,.0f} {1000 * tokens_per_step / rate:>9.0f} {mfu:>7} "
            f"{results[0]['parameters']:>12,} {first_step:>13.1f}"
        )
    chosen = choose_dtype({"bf16": 1 / rates["this bf16"], "fp32": 1 / rates["this fp32"]})
    print(
        f"--dtype auto picks {chosen} on this machine (bf16 / fp32: "
        f"{rates['this bf16'] / rates['this fp32']:.2f}x tokens per second)"
    )
    if "baseline" in rates:
        print(f"this {chosen} / baseline: {rates[f'this {chosen}'] / rates['baseline']:.2f}x")
    for name, results in runs.items():
        if "profile" in results[0]:
            print(f"\nprofile ({name}, {args.profile_steps} steps):\n{results[0]['profile']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    whole, vocabulary = at_least(1), at_least(300)
    add("--d-model", type=whole, default=192, help="model width (default: %(default)s)")
    add("--d-ff", type=whole, default=768, help="feed-forward inner size (default: %(default)s)")
    add("--n-layers", type=whole, default=6, help="encoder and decoder layers (default: 6)")
    add("--vocab-size", type=vocabulary, default=8000, help="SentencePiece pieces (default: 8000)")
    add("--norm-first", action=argparse.BooleanOptionalAction, default=True, help="pre-LN")
    add("--dropout", type=float, default=0.1, help="dropout (default: %(default)s)")
    add("--batch-tokens", type=whole, default=2500, help="target tokens per batch (default: 2500)")
    add("--length", type=whole, default=25, help="source and target pieces per row (default: 25)")
    add("--threads", type=whole, default=2, help="torch threads (default: %(default)s)")
    add("--steps", type=whole, default=10, help="timed steps per repeat (default: %(default)s)")
    add("--warmup-steps", type=at_least(0), default=3, help="untimed steps first (default: 3)")
    add("--repeats", type=whole, default=2, help="worker runs per checkout (default: 2)")
    add("--profile", action="store_true", help="print torch.profiler's table of the step")
    add("--profile-steps", type=whole, default=3, help="steps profiled (default: %(default)s)")
    add("--data-dir", type=Path, default=REPO.parent / "shared" / "data", help="corpora folder")
    add("--data-limit", type=at_least(0), default=20000, help="pairs read per corpus file")
    add("--baseline", type=checkout_folder, help="another checkout (holding core/, train/)")
    add("--dry-run", action="store_true", help="seconds: the dry-run model, 2 steps, 1 repeat")
    add("--worker", type=Path, help=argparse.SUPPRESS)
    add(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where this checkout trains (a baseline trains on the CPU)",
    )
    add(
        "--compile",
        action="store_true",
        help="this checkout with --compile too (its first "
        "step, which builds the graphs, reported apart)",
    )
    add("--dtype", choices=["bf16", "fp32"], help=argparse.SUPPRESS)  # a worker's compute type
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
    workers = [("this bf16", REPO, "bf16", False), ("this fp32", REPO, "fp32", False)]
    workers += [("this bf16 compiled", REPO, "bf16", True)] if args.compile else []
    workers += [("baseline", args.baseline.resolve(), None, False)] if args.baseline else []
    runs: dict[str, list[dict]] = {name: [] for name, *_ in workers}
    for repeat in range(args.repeats):
        for name, *worker in workers if repeat % 2 == 0 else workers[::-1]:  # first by turns
            runs[name].append(run_worker(args, *worker))
    report(args, runs)


if __name__ == "__main__":
    main()
