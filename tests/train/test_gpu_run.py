"""The GPU run's command, rehearsed on the CPU end to end (without the app's packages, and stopped
by SIGTERM), its limits, and its parts of the model folder."""

import json
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from core.files.checkpoint import safe_load
from core.files.model_dir import step_file
from core.translator import Translator
from tests.training import write_tiny_data
from train import gpu_run
from train.loop.checkpoints import checkpoints_to_average
from train.loop.environment import without_app
from train.loop.state import TrainState
from train.loop.trainer import Trainer

REHEARSAL_TIMEOUT = 600  # < 3 minutes on an idle machine; the shared one runs it slower


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
    package = gpu_run.pack(model, out, snapshots=True)
    parts = sorted(out.glob("model.tar.gz.part-*"))
    assert [p.name for p in parts] == package["parts"] and len(parts) >= 2
    assert all(p.stat().st_size <= 3000 for p in parts)
    joined = tmp_path / "joined.tar.gz"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(joined) as tar:
        tar.extractall(tmp_path / "back", filter="data")
    assert (tmp_path / "back/model/model.pt").read_bytes() == (model / "model.pt").read_bytes()
    assert package["left_out"] == [] and "cat model.tar.gz.part-*" in package["join"]


def test_the_snapshots_are_packed_only_when_asked_for_and_they_fit(tmp_path, monkeypatch):
    model = tmp_path / "model"
    (model / "snapshots").mkdir(parents=True)
    (model / "model.pt").write_bytes(b"m" * 100)
    snapshot = torch.randint(0, 256, (20_000,), dtype=torch.uint8).numpy().tobytes()
    (model / "snapshots" / "step_0000001.pt").write_bytes(snapshot)  # incompressible
    monkeypatch.setattr(gpu_run, "PART_BYTES", 3000)
    for asked, out in ((False, tmp_path / "without"), (True, tmp_path / "with")):
        out.mkdir()
        package = gpu_run.pack(model, out, snapshots=asked)
        assert package["left_out"] == ["snapshots"]  # unasked; asked, 7 parts > MAX_PARTS
        assert len(package["parts"]) == 1


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-0.0", "six"])
@pytest.mark.parametrize("flag", ["--minutes", "--wall-minutes"])
def test_a_duration_that_is_not_finite_and_positive_is_refused(tmp_path, capsys, flag, value):
    with pytest.raises(SystemExit):
        gpu_run.parse_args(["--out", str(tmp_path / "out"), flag, value])
    assert flag in capsys.readouterr().err


def test_the_trainer_gets_the_minutes_exactly_and_a_deadline(tmp_path):
    flags = ["--out", str(tmp_path / "out"), "--data-dir", str(tmp_path)]
    args = gpu_run.parse_args([*flags, "--minutes", "0.004"])
    command = gpu_run.train_command(args, tmp_path / "run", stop_at=1234.5)
    assert command[command.index("--max-minutes") + 1] == "0.004"  # not "0.00": no limit
    assert command[command.index("--stop-at") + 1] == "1234.5"
    assert command[command.index("--snapshot-steps") + 1] == ""  # none unless --snapshots
    assert args.run_dir == tmp_path / "out-run"  # beside --out, not in it


def test_the_wall_budget_must_leave_time_to_train_and_the_run_folder_stay_out_of_out(tmp_path):
    out = ["--out", str(tmp_path / "out"), "--data-dir", str(tmp_path)]
    with pytest.raises(SystemExit):
        gpu_run.parse_args([*out, "--wall-minutes", "2"])  # 3 kept for after
    with pytest.raises(SystemExit):
        gpu_run.parse_args([*out, "--run-dir", str(tmp_path / "out" / "run")])
    with pytest.raises(SystemExit):
        gpu_run.parse_args([*out, "--data-dir", str(tmp_path / "no data")])
    assert gpu_run.parse_args([*out, "--rehearse", "--minutes", "9"]).minutes == 0.25


@pytest.mark.parametrize(
    ("seconds", "now", "expected"),
    [(59.0, 99.0, False), (60.0, 99.0, True), (1.0, 100.0, True), (1.0, 99.9, False)],
)
def test_training_stops_at_its_minutes_or_its_deadline_whichever_comes_first(
    monkeypatch, seconds, now, expected
):
    monkeypatch.setattr("train.loop.trainer.time.time", lambda: now)
    trainer = SimpleNamespace(
        config=SimpleNamespace(max_minutes=1.0, stop_at=100.0, log_every=10),
        dist=SimpleNamespace(world_size=1, mean=lambda value: value),
        state=TrainState(step=3, train_seconds=seconds),
    )
    assert Trainer.out_of_time(trainer) is expected


def test_without_a_gpu_the_gpu_run_says_so_and_points_to_the_rehearsal(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert gpu_run.main(["--out", str(tmp_path / "run"), "--data-dir", str(tmp_path)]) == 2
    assert "--rehearse" in capsys.readouterr().err


def rehearsal(tmp_path, *flags: str) -> tuple[list[str], dict]:
    """The rehearsal's command on the tiny corpora, and its environment: without the app's
    packages, as on a machine that only trains."""
    data = write_tiny_data(tmp_path / "data")
    out = tmp_path / "rehearsal"
    command = [sys.executable, "-m", "train.gpu_run", "--rehearse", "--out", str(out)]
    return [*command, "--data-dir", str(data), *flags], without_app()


@pytest.mark.slow
def test_the_rehearsal_trains_exports_scores_and_packs_a_model_the_app_opens(tmp_path):
    command, env = rehearsal(tmp_path)
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=REHEARSAL_TIMEOUT, env=env
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out, run = tmp_path / "rehearsal", tmp_path / "rehearsal-run"
    report = json.loads((out / "report.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == [
        "JOIN.txt", "model.tar.gz.part-00", "report.json",
    ]  # fmt: skip
    assert report["app_packages_imported"] == [] and "phase" not in report
    assert set(report["phases_seconds"]) == {
        "device", "gpu tests", "matmul peak", "train and export", "score", "pack",
    }  # fmt: skip
    assert report["gpu_tests"]["exit_code"] in (0, 5)  # every gpu test skipped here, none broken
    training = report["training"]
    assert training["steps"] > 0 and training["compile_seconds"] > 0
    # the minutes stopped it, not the step cap (100,000)
    assert 15 <= training["train_seconds"] < 60 and training["steps"] < 100_000
    assert training["target_tokens_per_s"] > 0 and 0 < report["mfu"] < 1
    assert set(report["scores"]) == {
        f"{s} en-{t}" for s in ("flores", "multi30k") for t in ["de", "fr"]
    }
    assert all("nrefs:1" in score["signature"] for score in report["scores"].values())
    subprocess.run(report["package"]["join"], shell=True, cwd=out, check=True)
    shipped = safe_load(run / "model/model.pt")["state_dict"]
    joined = safe_load(out / "model/model.pt")["state_dict"]
    assert all(torch.equal(shipped[name], joined[name]) for name in shipped)
    assert Translator.load(out / "model").translate("The dog runs.", "de").text is not None
    assert not (out / "model/snapshots").exists()  # not asked for


@pytest.mark.slow
def test_a_rehearsal_stopped_by_sigterm_while_training_says_how_far_it_got(tmp_path):
    command, env = rehearsal(tmp_path, "--skip-tests")
    out, run = tmp_path / "rehearsal", tmp_path / "rehearsal-run"
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    waited = time.monotonic() + REHEARSAL_TIMEOUT
    while not (run / "metrics.jsonl").exists():  # the first steps are logged: it trains
        assert process.poll() is None and time.monotonic() < waited, process.stderr.read()
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGTERM
    report = json.loads((out / "report.json").read_text())
    assert report["stopped"] == {"signal": "SIGTERM", "phase": "train and export"}
    assert report["training_progress"]["step"] > 0 and report["peak_tflops"]["fp32"] > 0
    assert "train and export" not in report["phases_seconds"]
    assert [p.name for p in out.iterdir()] == ["report.json"]
    trainers = subprocess.run(["pgrep", "-f", str(run)], capture_output=True, text=True)
    assert trainers.stdout == ""  # the trainer was stopped with the run


@pytest.mark.slow
def test_a_failed_phase_still_writes_the_report_with_what_was_measured(tmp_path):
    out, empty = tmp_path / "rehearsal", tmp_path / "empty"
    empty.mkdir()
    flags = ["--rehearse", "--skip-tests", "--out", str(out), "--data-dir", str(empty)]
    with pytest.raises(RuntimeError, match="no training data found"):
        gpu_run.main(flags)
    report = json.loads((out / "report.json").read_text())
    assert report["peak_tflops"]["fp32"] > 0  # the phases before the failure
    assert "train and export" not in report["phases_seconds"]
    assert "no training data found" in report["failed"]["error"]
    assert report["failed"]["phase"] == "train and export"


@pytest.mark.parametrize(
    ("steps", "final", "expected"),
    [
        ([1000, 2000, 3000, 4000, 5000], 5000, [3000, 4000, 5000]),  # not its warm-up (1,500)
        ([2000, 2500, 3000, 3500, 4000], 4000, [2000, 2500, 3000, 3500, 4000]),
        ([10, 20, 30], 30, [20, 30]),
        ([100, 200, 300, 310], 310, [200, 300, 310]),  # the last step, saved after its loop
        ([100], 1000, [100]),  # the last checkpoint always
    ],
)
def test_the_final_model_averages_checkpoints_of_the_runs_last_half_only(steps, final, expected):
    paths = [Path(step_file(step)) for step in steps]
    chosen = checkpoints_to_average(paths, count=5, final_step=final)
    assert chosen == [Path(step_file(step)) for step in expected]
