"""benchmarks/engine_layout.py stays runnable, and its "rule" column is the engine's own rule."""

import torch

from benchmarks import engine_layout
from core.model.engine import PACK_ABOVE_BYTES


def test_every_weight_is_timed_in_both_kernels_and_the_rule_is_the_engines():
    records = engine_layout.measure(["d128"], [4], repeats=1)
    assert len(records) == len(engine_layout.weight_shapes("d128"))
    for record in records:
        out, in_ = record["out_in"]
        assert record["rule"] == ("oneDNN" if out * in_ * 4 > PACK_ABOVE_BYTES else "MKL")
        assert min(record["us"].values()) > 0
        # the table's last column: what the engine's rule costs against the faster kernel
        cost = record["us"][record["rule"]] / min(record["us"].values()) - 1
        line = engine_layout.table_line(record)
        assert line.endswith(f"+{cost:.0%}") if cost > 0 else not line.rstrip().endswith("%")


def test_dry_run_prints_the_cpu_flags_and_a_line_per_weight(capsys):
    threads = torch.get_num_threads()
    try:
        engine_layout.main(["--dry-run"])
    finally:
        torch.set_num_threads(threads)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("CPU flags:")
    assert sum(line.startswith("d128") for line in lines) == len(
        engine_layout.weight_shapes("d128")
    )
