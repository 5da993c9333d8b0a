"""The dry run under torchrun with two processes on the CPU (gloo): it trains, checkpoints and
resumes, and both processes end with the same weights, as DistributedDataParallel promises."""

import contextlib
import os
import signal
import subprocess
import sys

import pytest
import torch

from core.files.checkpoint import safe_load
from tests.training import train_command, write_tiny_data

pytestmark = pytest.mark.slow  # two training processes


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("data"))


def torchrun(data_dir, out, *flags) -> str:
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"),
        *("-m", "tests.distributed_worker", *train_command(data_dir, out, *flags)),
    ]
    # a session of its own, so that a timeout ends the workers too, not only their launcher
    launcher = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        output, _ = launcher.communicate(timeout=900)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)
    assert launcher.returncode == 0, output
    return output


def assert_ranks_agree(out):
    rank0, rank1 = (torch.load(out / f"weights_rank{r}.pt", weights_only=True) for r in (0, 1))
    assert rank0.keys() == rank1.keys()
    for name, weights in rank0.items():
        assert torch.equal(weights, rank1[name]), name


def test_two_processes_train_checkpoint_resume_and_agree(data_dir, tmp_path):
    out = tmp_path / "run"
    flags = ("--checkpoint-every", "5", "--eval-every", "1000", "--snapshot-steps", "")
    first = torchrun(data_dir, out, "--max-steps", "10", *flags)
    assert "2 process(es)" in first and "wrote" in first
    assert sorted(p.name for p in (out / "checkpoints").glob("*.pt")) == [
        "step_0000005.pt",
        "step_0000010.pt",
    ]
    assert_ranks_agree(out)
    trained = safe_load(out / "checkpoints" / "step_0000010.pt")["model"]
    rank0 = torch.load(out / "weights_rank0.pt", weights_only=True)
    assert all(torch.equal(trained[name], w) for name, w in rank0.items())  # what was saved

    second = torchrun(data_dir, out, "--max-steps", "15", *flags)
    assert f"resumed from {out / 'checkpoints' / 'step_0000010.pt'}" in second
    assert safe_load(out / "checkpoints" / "step_0000015.pt")["step"] == 15
    assert_ranks_agree(out)
