"""The GPU run's command, rehearsed on the CPU end to end, and its parts of the model folder."""

import json
import subprocess
import sys
import tarfile

import pytest
import torch

from core.files.checkpoint import safe_load
from core.translator import Translator
from tests.training import write_tiny_data
from train import gpu_run


def test_the_model_folder_is_cut_into_parts_that_join_back(tmp_path, monkeypatch):
    model = tmp_path / "model"
    (model / "snapshots").mkdir(parents=True)
    (model / "model.pt").write_bytes(
        torch.randint(0, 256, (10_000,), dtype=torch.uint8).numpy().tobytes()
    )
    (model / "snapshots" / "step_0000001.pt").write_bytes(b"s" * 5000)
    monkeypatch.setattr(gpu_run, "PART_BYTES", 3000)
    out = tmp_path / "out"
    out.mkdir()
    package = gpu_run.pack(model, out)
    parts = sorted(out.glob("model.tar.gz.part-*"))
    assert [p.name for p in parts] == package["parts"] and len(parts) >= 2
    assert all(p.stat().st_size <= 3000 for p in parts)
    joined = tmp_path / "joined.tar.gz"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(joined) as tar:
        tar.extractall(tmp_path / "back", filter="data")
    assert (tmp_path / "back/model/model.pt").read_bytes() == (model / "model.pt").read_bytes()
    assert package["left_out"] == [] and "cat model.tar.gz.part-*" in package["join"]


def test_without_a_gpu_the_gpu_run_says_so_and_points_to_the_rehearsal(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert gpu_run.main(["--out", str(tmp_path / "run")]) == 2
    assert "--rehearse" in capsys.readouterr().err


@pytest.mark.slow
def test_the_rehearsal_trains_exports_scores_and_packs_a_model_the_app_opens(tmp_path):
    data = write_tiny_data(tmp_path / "data")
    out = tmp_path / "rehearsal"
    command = [sys.executable, "-m", "train.gpu_run", "--rehearse", "--out", str(out)]
    completed = subprocess.run(
        [*command, "--data-dir", str(data)], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert set(report["phases_seconds"]) == {
        "device", "gpu tests", "matmul peak", "train and export", "score", "pack",
    }  # fmt: skip
    assert report["gpu_tests"]["exit_code"] in (0, 5)  # every gpu test skipped here, none broken
    training = report["training"]
    assert training["steps"] > 0 and training["compile_seconds"] > 0
    assert training["target_tokens_per_s"] > 0 and 0 < report["mfu"] < 1
    assert set(report["scores"]) == {
        f"{s} en-{t}" for s in ("flores", "multi30k") for t in ["de", "fr"]
    }
    assert all("nrefs:1" in score["signature"] for score in report["scores"].values())
    subprocess.run(report["package"]["join"], shell=True, cwd=out, check=True)
    shipped = safe_load(out / "run/model/model.pt")["state_dict"]
    joined = safe_load(out / "model/model.pt")["state_dict"]
    assert all(torch.equal(shipped[name], joined[name]) for name in shipped)
    assert Translator.load(out / "model").translate("The dog runs.", "de").text is not None


@pytest.mark.slow
def test_a_failed_phase_still_writes_the_report_with_what_was_measured(tmp_path):
    out = tmp_path / "rehearsal"
    flags = ["--rehearse", "--skip-tests", "--out", str(out), "--data-dir", str(tmp_path / "none")]
    with pytest.raises(RuntimeError, match="no training data found"):
        gpu_run.main(flags)
    report = json.loads((out / "report.json").read_text())
    assert report["peak_tflops"]["fp32"] > 0  # the phases before the failure
    assert "train and export" not in report["phases_seconds"]
    assert "no training data found" in report["failed"]["error"]
