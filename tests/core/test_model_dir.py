"""The model directory: one module names its files, writes them atomically, reads them back
tolerantly, and says which file is missing when a folder is not a model directory."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import torch

from core import CheckpointError, InputError, Translator
from core.files import model_dir as model_dir_module
from core.files.checkpoint import TEMPORARY_SUFFIX, atomic_save
from core.files.model_dir import (
    CARD_FILE,
    HEADS_FILE,
    MODEL_FILE,
    SHIPPED_FILES,
    TOKENIZER_FILE,
    ModelDir,
    NotAModelDir,
    Snapshot,
    open_model_dir,
)
from core.model.transformer import Transformer
from core.translate import main as translate_main
from core.translator import DEFAULT_MODEL
from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
# Every file of core/files/model_dir.py's docstring, as code would spell it; the folder too
# (snapshots/) is named there, but "snapshots" is also a card's key. A run folder's own names are
# train/loop/run_folder.py's (tests/train/test_run_folder.py).
FILES = ["model.pt", "spm.model", "spm.vocab", "card.json", "card.md", "metrics.jsonl"]
FILES += ["heads.json"]


@pytest.fixture
def copied(tiny_model_dir, tmp_path) -> ModelDir:
    """A writable copy of the tiny model directory."""
    shutil.copytree(tiny_model_dir, tmp_path / "model")
    return ModelDir(tmp_path / "model")


def modules_spelling(names: list[str]) -> set[str]:
    """The code files (under core, app, train, benchmarks) that spell one of ``names`` as a
    string."""
    return {
        str(path.relative_to(REPO))
        for folder in ("core", "app", "train", "benchmarks")
        for path in (REPO / folder).rglob("*.py")
        if any(f'"{name}"' in path.read_text(encoding="utf-8") for name in names)
    }


def test_only_the_model_directory_module_spells_the_file_names():
    assert modules_spelling(FILES) == {"core/files/model_dir.py"}
    documented = model_dir_module.__doc__
    assert all(name in documented for name in [*FILES, "snapshots/"])


def test_every_file_has_its_own_name_and_lives_in_the_directory(tmp_path):
    directory = ModelDir(str(tmp_path))
    files = [
        directory.model_file,
        directory.tokenizer_file,
        directory.card_file,
        directory.card_text_file,
        directory.metrics_file,
        directory.snapshot_dir,
        directory.heads_file,
    ]
    assert len(set(files)) == len(files) and all(f.parent == tmp_path for f in files)
    assert directory.snapshot_file(100) == tmp_path / "snapshots" / "step_0000100.pt"


def test_a_written_directory_reads_back(tiny_model_dir, tmp_path):
    torch.manual_seed(0)
    model, card = Transformer(TINY), {"name": "Grüße", "training": {"steps": 30}}
    tokenizer = ModelDir(tiny_model_dir).tokenizer_file
    directory = ModelDir(tmp_path / "new").write(model, tokenizer, card)
    directory.write_card(card, "# Grüße\n")
    directory.write_metrics([{"step": 10, "train_loss": 5.0}, {"step": 20, "val_loss": 4.0}])
    directory.save_snapshot(model, 10, train_seconds=1.5)

    loaded, vocabulary, read_card = open_model_dir(tmp_path / "new").load()
    for name, weights in model.state_dict().items():
        assert torch.equal(weights.half().float(), loaded.state_dict()[name]), name
    assert len(vocabulary) == TINY.vocab_size and read_card == card
    assert (
        directory.card_file.read_text(encoding="utf-8")
        == json.dumps(card, indent=2, ensure_ascii=False) + "\n"
    )
    assert directory.read_card_text() == "# Grüße\n"
    assert [record["step"] for record in directory.read_metrics()] == [10, 20]
    assert directory.snapshots() == [
        Snapshot(10, "snapshots/step_0000010.pt"),
        Snapshot(30, MODEL_FILE),
    ]
    assert directory.load_model(directory.snapshots()[0].weights)[1] == {
        "step": 10,
        "train_seconds": 1.5,
    }
    assert directory.is_current(directory.model_sha256())
    assert not list(directory.path.rglob(f"*{TEMPORARY_SUFFIX}"))


@pytest.mark.skipif(not (DEFAULT_MODEL / MODEL_FILE).is_file(), reason="no shipped model")
def test_the_shipped_card_and_log_are_written_byte_for_byte_as_they_are(tmp_path):
    shipped, again = ModelDir(DEFAULT_MODEL), ModelDir(tmp_path)
    again.write_card(shipped.read_card())
    again.write_metrics(shipped.read_metrics())
    assert again.card_file.read_bytes() == shipped.card_file.read_bytes()
    assert again.metrics_file.read_bytes() == shipped.metrics_file.read_bytes()


def test_what_a_killed_process_leaves_is_read_tolerantly(copied):
    copied.write_metrics([{"step": 5, "train_loss": 6.0}])
    with copied.metrics_file.open("a", encoding="utf-8") as log:
        log.write('{"step": 6, "train_lo')  # killed while appending
    assert copied.read_metrics() == [{"step": 5, "train_loss": 6.0}]
    copied.save_snapshot(Transformer(TINY), 5, train_seconds=0.0)
    # a snapshot killed mid-write: atomic_save's temporary file, never renamed
    (copied.snapshot_dir / f".step_0000009.pt.x1y2{TEMPORARY_SUFFIX}").write_bytes(b"PK\x03")
    assert [snapshot.step for snapshot in copied.snapshots()] == [5, 6]
    assert open_model_dir(copied.path) == copied


def test_a_failed_write_keeps_the_previous_card(copied, monkeypatch):
    before = copied.card_file.read_bytes()

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        copied.write_card({"name": "half"}, "# half")
    assert copied.card_file.read_bytes() == before
    assert not copied.card_text_file.exists()
    assert not list(copied.path.glob(f"*{TEMPORARY_SUFFIX}"))


@pytest.mark.parametrize("missing", [MODEL_FILE, TOKENIZER_FILE])
def test_a_folder_without_a_file_is_an_input_error_naming_it(copied, missing):
    (copied.path / missing).unlink()
    message = f"{copied.path}: not a model directory, it has no {missing} "
    with pytest.raises(NotAModelDir, match=f"^{re.escape(message)}") as error:
        open_model_dir(copied.path)
    assert isinstance(error.value, InputError) and isinstance(error.value, CheckpointError)
    with pytest.raises(InputError, match=f"no {missing}"):
        Translator.load(copied.path)


def test_the_command_line_says_which_file_is_missing(copied, capsys):
    (copied.path / TOKENIZER_FILE).unlink()
    assert translate_main(["--model", str(copied.path), "A dog."]) == 2
    assert f"it has no {TOKENIZER_FILE}" in capsys.readouterr().err
    assert translate_main(["--model", str(copied.path / "nowhere"), "A dog."]) == 2
    assert "no such model directory" in capsys.readouterr().err


def test_a_second_format_is_detected_in_one_place(copied, tmp_path, monkeypatch):
    class OtherFormat(ModelDir):
        @staticmethod
        def missing(path: Path) -> list[str]:
            return [] if (path / "other.bin").is_file() else ["other.bin"]

    monkeypatch.setattr(model_dir_module, "FORMATS", (ModelDir, OtherFormat))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "other.bin").write_bytes(b"")
    assert type(open_model_dir(tmp_path / "other")) is OtherFormat
    assert type(open_model_dir(copied.path)) is ModelDir  # the first format that fits


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"name": ', "not a readable JSON model card"),
        (b'{"name": "\xff"}', "not a readable JSON model card"),
        (b'["a", "list"]', "the model card is a list, not an object"),
        (b"[" * 100_000, "not a readable JSON model card"),
    ],
    ids=["truncated", "invalid-utf8", "list", "nested-too-deep"],
)
def test_a_card_that_is_not_a_json_object_is_refused(tmp_path, content, message):
    (tmp_path / CARD_FILE).write_bytes(content)
    with pytest.raises(
        CheckpointError, match=f"^{re.escape(str(tmp_path / CARD_FILE))}: {message}"
    ):
        ModelDir(tmp_path).read_card()


def test_a_missing_card_is_empty_and_a_good_one_is_read(tmp_path):
    assert ModelDir(tmp_path).read_card() == {}
    assert ModelDir(tmp_path).read_card_text() is None
    (tmp_path / CARD_FILE).write_text('{"name": "Grüße"}', encoding="utf-8")
    assert ModelDir(tmp_path).read_card() == {"name": "Grüße"}


def test_shipping_copies_the_model_and_its_history_but_not_the_survey(copied, tmp_path):
    copied.write_card({"name": "run"}, "# run\n")
    copied.write_metrics([{"step": 1, "train_loss": 2.0}])
    copied.save_snapshot(Transformer(TINY), 1, train_seconds=0.5)
    copied.heads_file.write_text("{}")
    export = ModelDir(tmp_path / "export")
    export.path.mkdir()
    atomic_save({"stale": True}, export.snapshot_file(99))  # an earlier export's snapshot
    copied.copy_to(export)
    for name in SHIPPED_FILES:
        assert (export.path / name).read_bytes() == (copied.path / name).read_bytes(), name
    assert [path.name for path in export.snapshot_files()] == ["step_0000001.pt"]
    assert not (export.path / HEADS_FILE).exists()
