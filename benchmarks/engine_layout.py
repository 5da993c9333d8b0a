"""Checks the engine's oneDNN rule on this CPU: for every weight of the model shapes, is MKL's addmm
or oneDNN's laid-out matmul faster, and does core/model/engine.py's PACK_ABOVE_BYTES rule pick it?

core/model/engine.py runs a weight through oneDNN (laid out once for its kernel) when it is larger
than PACK_ABOVE_BYTES, and through MKL's addmm otherwise. The crossover depends on the CPU (AMX,
AVX-512, AVX2) and on the thread count, so this script prints, per weight and row count, both
times in microseconds, which is faster, and what the rule picks; the last column shows the cost
of the rule's choice where it is the slower one. The CPU's matrix features head the table.

    python -m benchmarks.engine_layout                  # d128, d192, d256 at 1, 4 and 16 rows
    python -m benchmarks.engine_layout --threads 2      # at 2 threads
    python -m benchmarks.engine_layout --dry-run        # seconds: d128, 4 rows, few repeats

Rows: 1 is greedy search, 4 a beam of 4 (the rows oneDNN lays weights out for), 16 the batched
beam search of several sentences. Each repeat times both kernels in turn (train.loop.hardware.
best_seconds), so a busy machine slows them alike.
"""

from __future__ import annotations

import argparse

import torch

from benchmarks.flags import at_least
from benchmarks.latency import MODELS
from core.model.engine import BEAM_ROWS, PACK_ABOVE_BYTES, onednn_layout
from train.loop.hardware import best_seconds, cpu_flags

CALLS = 50  # matmuls per timed call: one takes microseconds, below the clock's resolution


def weight_shapes(name: str) -> dict[str, tuple[int, int]]:
    """(out, in) of every distinct weight a model of MODELS[name] multiplies by, by role."""
    shape = MODELS[name]
    d_model, d_ff, vocab = shape["d_model"], shape["d_ff"], shape["vocab_size"]
    return {
        "W^O, cross W^Q": (d_model, d_model),
        "cross [W^K; W^V]": (2 * d_model, d_model),
        "[W^Q; W^K; W^V]": (3 * d_model, d_model),
        "FFN W_1": (d_ff, d_model),
        "FFN W_2": (d_model, d_ff),
        "vocabulary E": (vocab, d_model),
    }


def kernel_microseconds(out_in: tuple[int, int], rows: int, repeats: int) -> dict[str, float]:
    """Microseconds of y = x W^T + b for x (rows, in) by MKL's addmm and by oneDNN's laid-out
    weight; best of ``repeats``."""
    weight, bias = torch.randn(out_in), torch.randn(out_in[0])
    x = torch.randn(rows, out_in[1])
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, BEAM_ROWS)
    weight_t = weight.t()

    def mkl():
        for _ in range(CALLS):
            torch.addmm(bias, x, weight_t)

    def onednn():
        for _ in range(CALLS):
            torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")

    seconds = best_seconds({"MKL": mkl, "oneDNN": onednn}, repeats)
    return {kernel: 1e6 * value / CALLS for kernel, value in seconds.items()}


def measure(models: list[str], rows_list: list[int], repeats: int) -> list[dict]:
    """One record per model, weight and row count: both kernels' microseconds, the faster one and
    the one the engine's rule picks."""
    records = []
    for name in models:
        for role, out_in in weight_shapes(name).items():
            rule = "oneDNN" if onednn_layout(torch.empty(out_in)) is not None else "MKL"
            for rows in rows_list:
                us = kernel_microseconds(out_in, rows, repeats)
                records.append(
                    dict(
                        model=name,
                        role=role,
                        out_in=out_in,
                        rows=rows,
                        us=us,
                        rule=rule,
                        faster=min(us, key=us.get),
                    )
                )
    return records


def table_line(record: dict) -> str:
    (out, in_), us, rule = record["out_in"], record["us"], record["rule"]
    cost = us[rule] / us[record["faster"]] - 1
    return (
        f"{record['model']:5} {record['role']:17} {out:>5}x{in_:<4} {out * in_ * 4 / 1024:6.0f} KB "
        f"{record['rows']:>4} {us['MKL']:8.1f} {us['oneDNN']:9.1f}  {record['faster']:6}  "
        f"{rule:6}  " + (f"+{cost:.0%}" if cost > 0 else "")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["d128", "d192", "d256"], choices=MODELS)
    parser.add_argument("--rows", nargs="+", type=at_least(1), default=[1, 4, 16], help="rows of x")
    parser.add_argument("--threads", type=at_least(1), default=1, help="torch threads")
    parser.add_argument(
        "--repeats", type=at_least(1), default=7, help="timed calls per kernel (best)"
    )
    parser.add_argument("--dry-run", action="store_true", help="d128, 4 rows, 2 repeats")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.models, args.rows, args.repeats = ["d128"], [4], 2
    torch.set_num_threads(args.threads)
    print(f"CPU flags: {' '.join(cpu_flags()) or 'none reported'}; {args.threads} thread(s)")
    print(f"engine rule: oneDNN above {PACK_ABOVE_BYTES // 1024} KB of float32 weight")
    print(
        f"{'model':5} {'weight':17} {'(out x in)':>10} {'size':>9} {'rows':>4} {'MKL us':>8} "
        f"{'oneDNN us':>9} {'faster':6}  {'rule':6} {'rule costs'}"
    )
    for record in measure(args.models, args.rows, args.repeats):
        print(table_line(record))


if __name__ == "__main__":
    main()
