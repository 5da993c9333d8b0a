"""A GPU run anyone can do in ten minutes, in one command, that brings a model back home.

    python -m train.gpu_run --minutes 6 --out gpu-run          # on a machine with a CUDA GPU
    python -m train.gpu_run --rehearse --out /tmp/rehearsal    # the same on a CPU, tiny, < 3 min

In order, each phase timed: print the device; run the tests marked ``gpu``; measure the GPU's
bf16 and fp32 matmul peak; train the ``gpu`` preset (the shipped model's shape, vocabulary and
mixture) from scratch for --minutes of training time and export it; score the exported model on
FLORES-200 devtest and Multi30k test_2016_flickr (beam 4) on the GPU; write ``report.json``
(phases, tokens/s, MFU against the measured peak, compile seconds, scores with signatures) and
the model folder as a tar.gz cut into parts of at most 15 MiB (``JOIN.txt`` says how to join
them), which the app opens as it is: ``ATTENTION_LAB_MODEL=<joined>/model streamlit run
app/main.py``.

--rehearse proves the path on a CPU: the dry-run model, --device cpu, a few sentences scored.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tarfile
import time
import traceback
from pathlib import Path

import torch

from core.files.model_dir import SNAPSHOT_DIR, RunDir, open_model_dir
from core.translator import DEFAULT_MODEL, Translator
from train.data import default_data_dir
from train.evaluate import TEST_SETS, evaluate
from train.hardware import gpu_matmul_peak_flops, matmul_peak_flops, model_flops_utilisation

REPO = Path(__file__).resolve().parent.parent
PART_BYTES = 15 * 2**20
MAX_PARTS = 6
ARCHIVE = "model.tar.gz"
TEST_SECONDS = 150  # the gpu tests' share of the ten minutes
REHEARSAL_SENTENCES = 20  # per test set and language, scored in a rehearsal
# What the run takes besides its training minutes: the trainer's start and compile warm-up, the
# export's validation, scoring 4,048 sentences with beam 4 and packing (an estimate, until a GPU
# run's report.json measures it)
AFTER_TRAINING_MINUTES = 3.5
VALIDATION_SENTENCES = 200  # per language, once, by the export


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


def run_gpu_tests(out: Path) -> dict:
    """pytest -m gpu, its output in out/gpu-tests.log; the exit code and the summary line."""
    command = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider"]
    try:
        completed = subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, timeout=TEST_SECONDS
        )
    except subprocess.TimeoutExpired as timeout:
        (out / "gpu-tests.log").write_text(str(timeout.stdout or ""))
        return {"exit_code": None, "summary": f"stopped after {TEST_SECONDS} s"}
    (out / "gpu-tests.log").write_text(completed.stdout + completed.stderr)
    lines = completed.stdout.strip().splitlines()
    return {"exit_code": completed.returncode, "summary": lines[-1] if lines else ""}


def peaks(device: str) -> dict[str, float]:
    """The matmul peak of each compute type, FLOP/s, measured here."""
    if device == "cuda":
        return {dtype: gpu_matmul_peak_flops(dtype=dtype) for dtype in ("bf16", "fp32")}
    threads = torch.get_num_threads()
    return {dtype: matmul_peak_flops(threads, dtype=dtype) for dtype in ("bf16", "fp32")}


def train_command(args: argparse.Namespace, run: Path) -> list[str]:
    """`python -m train` for this run: the gpu preset from scratch with the shipped vocabulary,
    or in a rehearsal the dry-run model on the CPU."""
    command = [sys.executable, "-m", "train", "--out", str(run), "--fresh"]
    command += ["--data-dir", str(args.data_dir), "--max-minutes", f"{args.minutes:.2f}"]
    command += ["--eval-every", "1000000000", "--valid-sentences", str(VALIDATION_SENTENCES)]
    if args.rehearse:
        return [*command, "--dry-run", "--device", "cpu", "--max-steps", "40", "--compile"]
    return [*command, "--preset", "gpu", "--device", "cuda", "--vocab-from", str(args.vocab_from)]


def train(args: argparse.Namespace, run: Path) -> dict:
    """Train and export; the card's training record and the log's throughput."""
    log_file = run.parent / "train.log"
    with open(log_file, "w") as log:
        completed = subprocess.run(train_command(args, run), cwd=REPO, stdout=log, stderr=log)
    if completed.returncode:
        tail = log_file.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"python -m train exited with {completed.returncode}:\n{tail}")
    model_dir = open_model_dir(RunDir(run).model_dir.path)
    training = model_dir.read_card()["training"]
    rates = [r["tokens_per_s"] for r in RunDir(run).read_metrics() if "tokens_per_s" in r]
    return {
        "steps": training["steps"],
        "train_seconds": training["seconds"],
        "compile_seconds": training.get("compile_seconds"),
        "seconds_to_first_step": training.get("seconds_to_first_step"),
        "dtype": training["dtype"],
        "fast_paths": training.get("fast_paths"),
        "parameters": model_dir.load_model()[0].num_parameters(),
        # the first window pays for warming up (cuDNN, the allocator): the median of the rest
        "target_tokens_per_s": statistics.median(rates[1:] or rates) if rates else None,
    }


def score(args: argparse.Namespace, model: Path, device: str) -> dict:
    """sacreBLEU and chrF (with signatures) of beam search on every test set and language."""
    translator = Translator.load(model, device=device)
    scores = {}
    for name, read in sorted(TEST_SETS.items()):
        for target in ("de", "fr"):
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


def pack(model: Path, out: Path) -> dict:
    """The model folder as out/model.tar.gz.part-NN of at most PART_BYTES each, at most
    MAX_PARTS of them: without its snapshots if the whole does not fit."""
    for left_out in ((), (SNAPSHOT_DIR,)):
        archive = out / ARCHIVE
        with tarfile.open(archive, "w:gz") as tar:
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
    parser.add_argument("--out", type=Path, required=True, help="folder for the report and model")
    parser.add_argument(
        "--minutes", type=float, default=6.0, help="training time (default: %(default)s)"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="corpora folder (train/data.py)"
    )
    parser.add_argument(
        "--vocab-from",
        type=Path,
        default=DEFAULT_MODEL,
        help="the model directory whose vocabulary and truecaser the run takes (default: the "
        "shipped model's)",
    )
    parser.add_argument(
        "--rehearse", action="store_true", help="the same on a CPU with the dry-run model"
    )
    parser.add_argument(
        "--wall-minutes",
        type=float,
        default=9.0,
        help="the whole run's limit: training gets at most what is left of it after the phases "
        f"before it, less {AFTER_TRAINING_MINUTES} minutes for what follows (default: 9)",
    )
    parser.add_argument("--skip-tests", action="store_true", help="leave out the gpu tests")
    args = parser.parse_args(argv)
    if args.rehearse:
        args.minutes = min(args.minutes, 0.5)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = "cpu" if args.rehearse else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA GPU here; --rehearse runs the same on the CPU", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"command": sys.argv, "phases_seconds": {}}
    started = time.perf_counter()
    try:
        run_phases(args, device, report, started)
    except BaseException as error:  # a lent GPU's ten minutes: bring back what was measured
        report["failed"] = {"error": repr(error), "traceback": traceback.format_exc()[-4000:]}
        raise
    finally:
        report["total_seconds"] = round(time.perf_counter() - started, 1)
        (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    for name, result in report["scores"].items():
        print(f"{name}: BLEU {result['bleu']:.1f} chrF {result['chrf']:.1f}")
    print(
        f"wrote {args.out / 'report.json'} in {report['total_seconds']} s; join the model: "
        f"{report['package']['join']} (in {args.out})"
    )
    for checkpoint in RunDir(args.out / "run").checkpoint_files():  # GBs on a lent machine
        checkpoint.unlink()
    return 0


def run_phases(args: argparse.Namespace, device: str, report: dict, started: float) -> None:
    """Every phase in order, each timed into report["phases_seconds"] and its result into the
    report as it comes (a failed phase leaves the earlier ones' results)."""
    run = args.out / "run"

    def phase(name: str, work):
        print(f"[{time.perf_counter() - started:6.1f} s] {name} ...", flush=True)
        begun = time.perf_counter()
        result = work()
        report["phases_seconds"][name] = round(time.perf_counter() - begun, 1)
        return result

    report["device"] = phase("device", lambda: device_report(device))
    print(json.dumps(report["device"]))
    if not args.skip_tests:
        report["gpu_tests"] = phase("gpu tests", lambda: run_gpu_tests(args.out))
        print(report["gpu_tests"]["summary"])
    peak = phase("matmul peak", lambda: peaks(device))
    report["peak_tflops"] = {dtype: round(flops / 1e12, 2) for dtype, flops in peak.items()}
    left = args.wall_minutes - (time.perf_counter() - started) / 60 - AFTER_TRAINING_MINUTES
    if left < args.minutes:
        print(f"training for {max(left, 0.5):.1f} minutes, not {args.minutes}: --wall-minutes")
        args.minutes = max(left, 0.5)
    report["training_minutes"] = round(args.minutes, 2)
    training = report["training"] = phase("train and export", lambda: train(args, run))
    if training["target_tokens_per_s"]:
        report["mfu"] = model_flops_utilisation(
            training["parameters"], training["target_tokens_per_s"], peak[training["dtype"]]
        )
    model = RunDir(run).model_dir.path
    report["scores"] = phase("score", lambda: score(args, model, device))
    report["package"] = phase("pack", lambda: pack(model, args.out))


if __name__ == "__main__":
    sys.exit(main())
