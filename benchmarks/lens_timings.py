"""Time the logit lens and the direct contributions (issue 58) against their budget.

    python -m benchmarks.lens_timings                     # the budget, on the shipped model
    python -m benchmarks.lens_timings --baseline /tmp/before   # side by side with another core/
    python -m benchmarks.lens_timings --model DIR --repeat 9

Budget: the lens of a translation of about 30 pieces (core.inspection.logit_lens: the decoder
walked, every state read through the output projection, top pieces, ranks, entropies) under
300 ms on one thread, as the app computes. The direct contributions are timed beside it. With
--baseline, the same runs in a subprocess on that checkout's code (one that has the lens).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUDGET_MS = 300.0
# 29 source pieces on the shipped model, the language tag and </s> included; its German
# translation takes 25-30 (the run prints the counts)
SENTENCE = (
    "A group of young children in colourful shirts are playing football in a small park "
    "next to a large old fountain in the city."
)


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU (process) milliseconds of ``action``: on a machine shared with
    other work, the wall clock counts the time this process waited for a core, CPU time not."""
    wall, cpu = [], []
    for _ in range(repeat):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start_wall)
        cpu.append(time.process_time() - start_cpu)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


def measure(model: str, repeat: int) -> dict:
    """Median milliseconds of the lens and of the contributions, one thread."""
    import torch

    from core import Translator
    from core.inspection import direct_contributions, logit_lens

    torch.set_num_threads(1)
    translator = Translator.load(model)
    result = translator.translate(SENTENCE, "de")
    logit_lens(translator, result)  # warm up
    return {
        "source pieces": len(result.source_ids),
        "output pieces": len(result.output_ids),
        "lens": timed(lambda: logit_lens(translator, result), repeat),
        "contributions": timed(lambda: direct_contributions(translator.model, result), repeat),
    }


def measured_in(checkout: Path, model: str, repeat: int) -> dict:
    """:func:`measure` on ``checkout``'s code, in a process of its own."""
    command = [sys.executable, "-m", "benchmarks.lens_timings", "--worker"]
    command += ["--model", str(model), "--repeat", str(repeat)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    output = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    output.check_returncode()
    return json.loads(output.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    from core import DEFAULT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=os.environ.get("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL)),
        help="model folder (default: $ATTENTION_LAB_MODEL, else the shipped model)",
    )
    parser.add_argument("--repeat", type=int, default=7, help="runs per median")
    parser.add_argument("--baseline", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.model, args.repeat)))
        return
    print(f"model: {args.model}, load average before: {os.getloadavg()[0]:.1f}")
    runs = {"this": measured_in(REPO, args.model, args.repeat)}
    if args.baseline:
        runs["baseline"] = measured_in(args.baseline, args.model, args.repeat)
    for name, found in runs.items():
        print(
            f"{name}: {found['output pieces']} output pieces ({found['source pieces']} source): "
            f"lens {found['lens'][0]:.0f} ms (CPU {found['lens'][1]:.0f} ms; budget "
            f"{BUDGET_MS:.0f} ms), direct contributions {found['contributions'][0]:.0f} ms (CPU "
            f"{found['contributions'][1]:.0f} ms), one thread"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
