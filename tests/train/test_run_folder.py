"""The trainer writes only in a folder it made, a new or empty one, or a run of its own from before
its marker; every numeric flag is checked before any work (issue 59, findings 1 and 6)."""

import subprocess
import sys

import pytest

from core.files.model_dir import ModelDir
from tests.core.test_model_dir import modules_spelling
from tests.training import train_command
from train.loop import run_folder as run_folder_module
from train.loop.config import parse_args
from train.loop.run_folder import (
    MARKER_FILE,
    ForeignFolder,
    RunDir,
    check_run_folder,
    claim_run_folder,
)

# The names a run folder has and a model directory has not, as code would spell them.
RUN_FOLDER_NAMES = ["checkpoints", "encoded", "model_before_blend.pt", "attention-lab-run.json"]


@pytest.fixture
def model_dir(tmp_path):
    """A model directory's files (their bytes do not matter: nothing may touch them)."""
    folder = tmp_path / "en-de-fr"
    for name in ("model.pt", "spm.model", "truecase.en", "card.json", "metrics.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(f"the model's {name}".encode())
    (folder / "snapshots").mkdir()
    (folder / "snapshots" / "step_0000100.pt").write_bytes(b"a snapshot")
    return folder


def contents(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def refusal(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def test_a_model_directory_is_refused_and_left_untouched(model_dir, capsys):
    before = contents(model_dir)
    error = refusal(["--dry-run", "--out", str(model_dir), "--fresh"], capsys)
    assert f"--out {model_dir}: a model directory" in error and "another --out" in error
    assert contents(model_dir) == before


@pytest.mark.slow
def test_python_m_train_fresh_on_a_model_directory_changes_nothing(model_dir, tmp_path):
    before = contents(model_dir)
    command = [sys.executable, "-m", "train", *train_command(tmp_path, model_dir, "--fresh")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "a model directory" in done.stderr
    assert "Traceback" not in done.stderr
    assert contents(model_dir) == before


def test_a_foreign_folder_and_a_file_are_refused(tmp_path, capsys):
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "chapter1.tex").write_text("my work")
    assert "a folder the trainer did not make" in refusal(["--out", str(foreign)], capsys)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("notes")
    assert f"--out {a_file}: a file, not a folder" in refusal(["--out", str(a_file)], capsys)


def test_a_new_an_empty_and_a_marked_folder_are_accepted(tmp_path):
    for folder in (tmp_path / "new", tmp_path / "empty"):
        if folder.name == "empty":
            folder.mkdir()
        check_run_folder(folder)
        claim_run_folder(folder)
        assert (folder / MARKER_FILE).is_file()
    marked = tmp_path / "empty"
    (marker_note := marked / "notes.txt").write_text("the person's own file beside a run")
    check_run_folder(marked)  # a folder the trainer made stays its own
    assert marker_note.is_file()


def test_a_folder_holding_only_a_console_log_is_accepted(tmp_path):
    (tmp_path / "train.log").write_text("tee'd before the run began")
    check_run_folder(tmp_path)


def test_a_run_folder_from_before_the_marker_is_adopted(tmp_path):
    run = tmp_path / "h61-tag"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "step_0000500.pt").write_bytes(b"a checkpoint")
    (run / "metrics.jsonl").write_text('{"step": 500}\n')
    (run / "train.log").write_text("the person's log of the run")
    check_run_folder(run)
    claim_run_folder(run)
    assert (run / MARKER_FILE).is_file() and (run / "train.log").is_file()


def test_fresh_clears_only_what_the_trainer_wrote(tmp_path):
    run = RunDir(tmp_path / "run")
    claim_run_folder(run.path)
    for name in ("metrics.jsonl", "spm.model", "notes.txt"):
        (run.path / name).write_text(name)
    (run.path / "snapshots").mkdir()
    run.remove_earlier_run()
    assert sorted(p.name for p in run.path.iterdir()) == [MARKER_FILE, "notes.txt"]


def test_the_trainer_checks_the_folder_before_writing(model_dir):
    from train.loop.trainer import Trainer

    config = parse_args(["--dry-run"])
    config.out = str(model_dir)  # past the flags' check, as a program might build it
    before = contents(model_dir)
    with pytest.raises(ForeignFolder, match="a model directory"):
        Trainer(config)
    assert contents(model_dir) == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-steps", "-1"], "--max-steps: must be at least 1, got -1"),
        (["--max-steps", "0"], "--max-steps: must be at least 1, got 0"),
        (["--max-minutes", "nan"], "--max-minutes: must be a finite number, got nan"),
        (["--max-minutes", "inf"], "--max-minutes: must be a finite number, got inf"),
        (["--max-minutes", "-5"], "--max-minutes: must be at least 0, got -5.0"),
        (["--dropout", "2"], "--dropout: must be at least 0 and below 1, got 2.0"),
        (["--d-model", "10", "--n-heads", "3"], "--d-model 10 must be divisible by --n-heads 3"),
        (["--d-model", "15", "--n-heads", "5"], "--d-model: must be even"),
        (["--vocab-size", "0"], "--vocab-size: must be at least 300, got 0"),
        (["--lr-scale", "0"], "--lr-scale: must be above 0, got 0.0"),
        (["--beam-size", "0"], "--beam-size: must be between 1 and 16, got 0"),
        (["--copy-fraction", "1.5"], "--copy-fraction: must be between 0 and 1, got 1.5"),
        (["--checkpoint-every", "0"], "--checkpoint-every: must be at least 1, got 0"),
        (["--snapshot-steps", "5,x"], "--snapshot-steps: not whole numbers: '5,x'"),
    ],
)
def test_a_numeric_flag_out_of_range_is_named_with_exit_status_2(flags, message, capsys):
    assert message in refusal(["--dry-run", *flags], capsys)


def test_max_minutes_0_means_no_limit_and_the_leads_flags_pass(tmp_path):
    flags = ["--preset", "cpu", "--max-steps", "4000", "--cooldown-steps", "2000"]
    config = parse_args([*flags, "--max-minutes", "0", "--seed", "51", "--out", str(tmp_path)])
    assert config.max_minutes == 0 and config.seed == 51


def test_only_the_run_folder_module_spells_its_names():
    assert modules_spelling(RUN_FOLDER_NAMES) == {"train/loop/run_folder.py"}
    documented = run_folder_module.__doc__
    assert all(name in documented for name in ["checkpoints/", "encoded/", *RUN_FOLDER_NAMES[2:]])


def test_every_file_of_a_run_has_its_own_name_and_lives_in_the_folder(tmp_path):
    run = RunDir(tmp_path / "run")
    assert run.model_dir == ModelDir(tmp_path / "run" / "model")
    assert run.checkpoint_file(7) == tmp_path / "run" / "checkpoints" / "step_0000007.pt"
    assert run.tokenizer_prefix.with_suffix(".model") == run.tokenizer_file


def test_starting_a_run_over_keeps_its_model(tmp_path):
    run = RunDir(tmp_path)
    written = [run.tokenizer_file, run.tokenizer_prefix.with_suffix(".vocab"), run.metrics_file]
    written += [run.checkpoint_file(5), run.snapshot_file(5), run.model_dir.card_file]
    for path in written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    run.remove_earlier_run()
    assert [path for path in written if path.exists()] == [run.model_dir.card_file]
    assert run.checkpoint_files() == [] and run.snapshot_files() == []


def test_a_resumed_run_forgets_the_log_after_its_checkpoint(tmp_path):
    run = RunDir(tmp_path)
    for step in (10, 20, 30):
        run.append_metrics({"step": step, "train_loss": 1.0})
    run.truncate_metrics(last_step=20)
    assert [record["step"] for record in run.read_metrics()] == [10, 20]
