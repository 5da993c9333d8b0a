"""A GPU run anyone can do in ten minutes, in one command, that brings a model back home.

    pip install -r requirements-train.txt                      # a machine that only trains
    python -m train.gpu_run --minutes 6 --out gpu-run          # on a machine with a CUDA GPU
    python -m train.gpu_run --rehearse --out /tmp/rehearsal    # the same on a CPU, tiny, < 3 min

In order, each phase timed: print the device; run the tests marked ``gpu``; measure the GPU's
bf16 and fp32 matmul peak; train the ``gpu`` preset (the shipped model's shape, vocabulary and
mixture) from scratch for --minutes of training time and export it; score the exported model on
FLORES-200 devtest and Multi30k test_2016_flickr (beam 4) on the GPU; pack the model folder as a
tar.gz cut into parts of at most 15 MiB.

--out receives what the run brings back and nothing else: ``report.json`` (phases, tokens/s, MFU
against the measured peak, compile seconds, scores with signatures), the parts and ``JOIN.txt``
(how to join them); the app opens the joined folder as it is: ``ATTENTION_LAB_MODEL=<joined>/model
streamlit run app/main.py``. The run folder (encoded corpus, checkpoints, logs) is --run-dir.

Limits hold: --wall-minutes is a deadline (training stops in time for the export, scoring and
packing; a child still running near it is stopped with its process group), report.json is
rewritten after every phase and on SIGTERM or SIGINT (it then says which phase was under way and
how far training got), and it never holds NaN.

--rehearse proves the path on a CPU: the dry-run model, --device cpu, a few sentences scored, the
tests and the trainer without the app's packages (train/loop/environment.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import tarfile
import time
import traceback
from pathlib import Path

import torch

from core.cli import positive_float
from core.files.model_dir import SNAPSHOT_DIR, open_model_dir
from core.translator import DEFAULT_MODEL, Translator
from train.data.corpora import default_data_dir
from train.loop.environment import app_packages_imported, without_app
from train.loop.hardware import gpu_matmul_peak_flops, matmul_peak_flops, model_flops_utilisation
from train.loop.run_control import Stopped, run_group, stopped_by_signals, write_json
from train.loop.run_folder import RunDir
from train.shipping.evaluate import TEST_SETS, evaluate

REPO = Path(__file__).resolve().parent.parent
PART_BYTES = 15 * 2**20
# The shipped shape's model folder is 16.9-17.1 MiB gzipped without its snapshots (2 parts), 82 MiB
# with its 4 snapshots (6 parts): the snapshots are left out when they would need more than this
MAX_PARTS = 4
# gzip level 1: the shipped model folder without snapshots is 17.06 MiB in 1.4 s, level 6 16.91
# MiB in 2.0 s, level 9 16.90 MiB in 2.1 s (19.65 MiB stored): trained float weights hardly
# compress, and the 1% that higher levels save is not worth their time
COMPRESS_LEVEL = 1
ARCHIVE = "model.tar.gz"
REPORT = "report.json"
TEST_SECONDS = 150  # the gpu tests' share of the ten minutes
REHEARSAL_SENTENCES = 20  # per test set and language, scored in a rehearsal
REHEARSAL_MINUTES = 0.25
CPU_PEAK_REPEATS = 3
# A few minutes' run of some thousands of steps: its final model averages its last checkpoints, a
# few hundred steps apart, from the run's last half (train/loop/checkpoints.py)
GPU_CHECKPOINT_EVERY = 250  # a rehearsal's training time at most
# What the run takes after its training minutes: the export's averaging and validation, scoring
# 4,048 sentences with beam 4 and packing (an estimate, until a GPU run's report.json measures
# it); a rehearsal's few sentences take far less
AFTER_TRAINING_MINUTES = {"cuda": 3.0, "cpu": 1.0}
PACK_SECONDS = 30  # scoring stops this long before the wall deadline, for the packing
VALIDATION_SENTENCES = 200  # per language, once, by the export


def children_env(args: argparse.Namespace) -> dict:
    """The children's environment: in a rehearsal, without the app's packages (a training
    machine's, requirements-train.txt)."""
    return without_app() if args.rehearse else dict(os.environ)


def device_report(device: str) -> dict:
    """What runs here: Python, torch, CUDA and the GPU."""
    report = {"python": platform.python_version(), "torch": torch.__version__, "device": device}
    if device == "cuda":
        properties = torch.cuda.get_device_properties(0)
        report |= {
            "cuda": torch.version.cuda,
            "gpu": properties.name,
            "gpus": torch.cuda.device_count(),
            "memory_gb": round(properties.total_memory / 1e9, 1),
        }
    return report


def run_gpu_tests(args: argparse.Namespace, run: Path) -> dict:
    """pytest -m gpu, its output in the run folder's gpu-tests.log; the exit code and the summary
    line. At TEST_SECONDS, pytest and whatever it started are stopped."""
    command = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider"]
    log = run / "gpu-tests.log"
    code = run_group(command, TEST_SECONDS, log, children_env(args), REPO)
    lines = log.read_text(errors="replace").strip().splitlines()
    summary = lines[-1] if lines and code is not None else f"stopped after {TEST_SECONDS} s"
    return {"exit_code": code, "summary": summary}


def peaks(device: str) -> dict[str, float]:
    """The matmul peak of each compute type, FLOP/s, measured here (on a CPU with few repeats:
    an emulated bf16 matmul takes a second, or a minute on a busy machine at 20 repeats)."""
    if device == "cuda":
        return {dtype: gpu_matmul_peak_flops(dtype=dtype) for dtype in ("bf16", "fp32")}
    threads = torch.get_num_threads()
    return {
        dtype: matmul_peak_flops(threads, repeats=CPU_PEAK_REPEATS, dtype=dtype)
        for dtype in ("bf16", "fp32")
    }


def train_command(args: argparse.Namespace, run: Path, stop_at: float) -> list[str]:
    """`python -m train` for this run: the gpu preset from scratch with the shipped vocabulary,
    or in a rehearsal the dry-run model on the CPU; --minutes of training, and at the latest
    until ``stop_at`` (wall clock), whatever the start and the compilation took."""
    command = [sys.executable, "-m", "train", "--out", str(run), "--fresh"]
    command += ["--data-dir", str(args.data_dir), "--max-minutes", repr(args.minutes)]
    command += ["--stop-at", repr(stop_at), "--eval-every", "1000000000"]
    command += ["--valid-sentences", str(VALIDATION_SENTENCES)]
    if not args.snapshots:
        command += ["--snapshot-steps", ""]
    if args.rehearse:  # the step cap far away: the minutes stop it
        return [*command, "--dry-run", "--device", "cpu", "--max-steps", "100000", "--compile"]
    command += ["--checkpoint-every", str(GPU_CHECKPOINT_EVERY)]
    return [*command, "--preset", "gpu", "--device", "cuda", "--vocab-from", str(args.vocab_from)]


def train(args: argparse.Namespace, run: Path, stop_at: float, deadline: float) -> dict:
    """Train and export; the card's training record and the log's throughput. The trainer is
    stopped (with its whole process group) if it still runs PACK_SECONDS before the
    ``deadline``."""
    log = run / "train.log"
    timeout = deadline - PACK_SECONDS - time.time()
    code = run_group(train_command(args, run, stop_at), timeout, log, children_env(args), REPO)
    if code != 0:
        tail = log.read_text(errors="replace")[-3000:]
        ended = f"exited with {code}" if code is not None else "ran past --wall-minutes"
        raise RuntimeError(f"python -m train {ended}:\n{tail}")
    model_dir = open_model_dir(RunDir(run).model_dir.path)
    training = model_dir.read_card()["training"]
    if not training["steps"]:
        raise RuntimeError("python -m train trained 0 steps: no time was left for training")
    rates = [r["tokens_per_s"] for r in RunDir(run).read_metrics() if "tokens_per_s" in r]
    return {
        "steps": training["steps"],
        "train_seconds": training["seconds"],
        "compile_seconds": training.get("compile_seconds"),
        "seconds_to_first_step": training.get("seconds_to_first_step"),
        "dtype": training["dtype"],
        "fast_paths": training.get("fast_paths"),
        "averaged_checkpoints": training.get("averaged_checkpoints"),
        "parameters": model_dir.load_model()[0].num_parameters(),
        # the first window pays for warming up (cuDNN, the allocator): the median of the rest
        "target_tokens_per_s": statistics.median(rates[1:] or rates) if rates else None,
    }


def progress(run: Path) -> dict | None:
    """How far a stopped training got: its last metrics line."""
    try:
        lines = RunDir(run).read_metrics()
    except (OSError, ValueError):
        return None
    return lines[-1] if lines else None


def score(args: argparse.Namespace, model: Path, device: str, deadline: float) -> dict:
    """sacreBLEU and chrF (with signatures) of beam search on every test set and language; a
    test set not begun PACK_SECONDS before the ``deadline`` is left out, and said so."""
    translator = Translator.load(model, device=device)
    scores = {}
    for name, read in sorted(TEST_SETS.items()):
        for target in ("de", "fr"):
            if time.time() > deadline - PACK_SECONDS:
                scores[f"{name} en-{target}"] = {"skipped": "--wall-minutes reached"}
                continue
            sources, references = read(args.data_dir, target)
            if args.rehearse:
                sources, references = (
                    sources[:REHEARSAL_SENTENCES],
                    references[:REHEARSAL_SENTENCES],
                )
            result = evaluate(translator, sources, references, target, progress=False)
            result.pop("hypotheses")
            scores[f"{name} en-{target}"] = result
    return scores


def pack(model: Path, out: Path, snapshots: bool) -> dict:
    """The model folder as out/model.tar.gz.part-NN of at most PART_BYTES each: with its
    snapshots if asked for and they fit in MAX_PARTS parts, else without them."""
    for left_out in ((), (SNAPSHOT_DIR,))[0 if snapshots else 1 :]:
        archive = out / ARCHIVE
        with tarfile.open(archive, "w:gz", compresslevel=COMPRESS_LEVEL) as tar:
            tar.add(
                model, arcname="model", filter=lambda info, skip=left_out: leave_out(info, skip)
            )
        if archive.stat().st_size <= MAX_PARTS * PART_BYTES:
            break
    parts = split(archive, out)
    join = f"cat {ARCHIVE}.part-* > {ARCHIVE} && tar xzf {ARCHIVE}"
    (out / "JOIN.txt").write_text(
        f"{join}\n# then: ATTENTION_LAB_MODEL=$PWD/model streamlit run app/main.py\n"
    )
    return {"parts": [p.name for p in parts], "left_out": list(left_out), "join": join}


def leave_out(info: tarfile.TarInfo, names: tuple[str, ...]) -> tarfile.TarInfo | None:
    return None if any(f"/{name}" in f"/{info.name}/" for name in names) else info


def split(archive: Path, out: Path) -> list[Path]:
    """``archive`` cut into PART_BYTES pieces beside it; the whole archive removed."""
    parts = []
    with open(archive, "rb") as whole:
        while chunk := whole.read(PART_BYTES):
            parts.append(out / f"{ARCHIVE}.part-{len(parts):02d}")
            parts[-1].write_bytes(chunk)
    archive.unlink()
    return parts


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m train.gpu_run", description=__doc__)
    parser.add_argument(
        "--out", type=Path, required=True,
        help="folder for what the run brings back: report.json, the model's parts, JOIN.txt",
    )  # fmt: skip
    parser.add_argument(
        "--run-dir", type=Path, default=None,
        help="the training run's folder (encoded corpus, checkpoints, logs); default: beside "
        "--out, named <out>-run",
    )  # fmt: skip
    parser.add_argument(
        "--minutes", type=positive_float, default=6.0,
        help=f"training time, more than 0 (default: %(default)s; {REHEARSAL_MINUTES} at most in "
        "a rehearsal)",
    )  # fmt: skip
    parser.add_argument(
        "--wall-minutes", type=positive_float, default=10.0,
        help="the whole run's deadline: training stops in time for the export, scoring and "
        f"packing ({AFTER_TRAINING_MINUTES['cuda']} minutes on a GPU, "
        f"{AFTER_TRAINING_MINUTES['cpu']} in a rehearsal), whatever --minutes says "
        "(default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="corpora folder (train/data/corpora.py)",
    )
    parser.add_argument(
        "--vocab-from",
        type=Path,
        default=DEFAULT_MODEL,
        help="the model directory whose vocabulary and truecaser the run takes (default: the "
        "shipped model's)",
    )
    parser.add_argument(
        "--snapshots", action=argparse.BooleanOptionalAction, default=False,
        help="keep the training-dynamics snapshots and pack them with the model when the parts "
        f"stay at {MAX_PARTS} or fewer (default: no)",
    )  # fmt: skip
    parser.add_argument(
        "--rehearse", action="store_true",
        help="the same on a CPU with the dry-run model, its children without the app's packages",
    )  # fmt: skip
    parser.add_argument("--skip-tests", action="store_true", help="leave out the gpu tests")
    args = parser.parse_args(argv)
    if args.rehearse:
        args.minutes = min(args.minutes, REHEARSAL_MINUTES)
    args.device = "cpu" if args.rehearse else "cuda"
    if args.wall_minutes <= AFTER_TRAINING_MINUTES[args.device]:
        parser.error(
            f"--wall-minutes {args.wall_minutes} leaves no time to train: "
            f"{AFTER_TRAINING_MINUTES[args.device]} of them are kept for what follows training"
        )
    if not args.data_dir.is_dir():  # at once, not after minutes of tests on a lent GPU
        parser.error(
            f"--data-dir {args.data_dir}: no such folder; copy the corpora there (see "
            "train/data/corpora.py) or set ATTENTION_LAB_DATA"
        )
    args.run_dir = args.run_dir or args.out.with_name(f"{args.out.name}-run")
    if args.run_dir.resolve().is_relative_to(args.out.resolve()):
        parser.error("--run-dir must not be inside --out: --out holds the deliverables only")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA GPU here; --rehearse runs the same on the CPU", file=sys.stderr)
        return 2
    started, deadline = time.perf_counter(), time.time() + args.wall_minutes * 60
    report = {"command": sys.argv, "run_dir": str(args.run_dir), "phases_seconds": {}}
    args.out.mkdir(parents=True, exist_ok=True)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    for earlier in [*args.out.glob(f"{ARCHIVE}.part-*"), args.out / "JOIN.txt"]:
        earlier.unlink(missing_ok=True)  # an earlier run's parts would join into this one's
    try:
        with stopped_by_signals():
            run_phases(args, report, started, deadline)
    except Stopped as stop:  # a job scheduler's time limit, Ctrl-C: say what was done
        report["stopped"] = {"signal": str(stop), "phase": report.pop("phase", None)}
        return 128 + signal.Signals[str(stop)].value
    except BaseException as error:  # a lent GPU's ten minutes: bring back what was measured
        report["failed"] = {
            "phase": report.pop("phase", None),
            "error": repr(error),
            "traceback": traceback.format_exc()[-4000:],
        }
        raise
    finally:
        ended = report.get("stopped") or report.get("failed") or {}
        if ended.get("phase") == "train and export":  # how far it got (not an earlier run's)
            report["training_progress"] = progress(args.run_dir)
        report["total_seconds"] = round(time.perf_counter() - started, 1)
        write_json(args.out / REPORT, report)
    for name, result in report["scores"].items():
        if "bleu" in result:
            print(f"{name}: BLEU {result['bleu']:.1f} chrF {result['chrf']:.1f}")
    print(
        f"wrote {args.out / REPORT} in {report['total_seconds']} s; join the model: "
        f"{report['package']['join']} (in {args.out})"
    )
    for checkpoint in RunDir(args.run_dir).checkpoint_files():  # GBs on a lent machine
        checkpoint.unlink()
    return 0


def run_phases(args: argparse.Namespace, report: dict, started: float, deadline: float) -> None:
    """Every phase in order, each timed into report["phases_seconds"] and its result into the
    report as it comes, which is written after each phase (a failed or stopped phase leaves the
    earlier ones' results; report["phase"] names the one under way)."""
    run, device = args.run_dir, args.device

    def phase(name: str, work):
        print(f"[{time.perf_counter() - started:6.1f} s] {name} ...", flush=True)
        report["phase"] = name
        write_json(args.out / REPORT, report)
        begun = time.perf_counter()
        result = work()
        report["phases_seconds"][name] = round(time.perf_counter() - begun, 1)
        return result

    report["device"] = phase("device", lambda: device_report(device))
    print(json.dumps(report["device"]))
    if not args.skip_tests:
        report["gpu_tests"] = phase("gpu tests", lambda: run_gpu_tests(args, run))
        print(report["gpu_tests"]["summary"])
    peak = phase("matmul peak", lambda: peaks(device))
    report["peak_tflops"] = {dtype: round(flops / 1e12, 2) for dtype, flops in peak.items()}
    stop_at = deadline - AFTER_TRAINING_MINUTES[device] * 60
    if stop_at <= time.time():
        raise RuntimeError(
            f"--wall-minutes {args.wall_minutes} left no time to train after "
            f"{(time.perf_counter() - started) / 60:.1f} minutes of the phases before it"
        )
    report["training_minutes"] = round(min(args.minutes, (stop_at - time.time()) / 60), 2)
    training = phase("train and export", lambda: train(args, run, stop_at, deadline))
    report["training"] = training
    report["mfu"] = model_flops_utilisation(
        training["parameters"], training["target_tokens_per_s"] or 0, peak[training["dtype"]]
    )
    model = RunDir(run).model_dir.path
    report["scores"] = phase("score", lambda: score(args, model, device, deadline))
    report["package"] = phase("pack", lambda: pack(model, args.out, args.snapshots))
    report.pop("phase")
    report["app_packages_imported"] = app_packages_imported()


if __name__ == "__main__":
    sys.exit(main())
