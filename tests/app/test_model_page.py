"""The Model page names the model a continued run started from by its name and step, never by
the path of the machine that trained it."""

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from core.files.model_dir import ModelDir
from tests.app.apptest import MAIN
from tests.app.test_app import assert_fine

MACHINE_PATH = "/home/someone/runs/en-de-fr"


@pytest.fixture
def continued(tiny_model_dir, tmp_path, monkeypatch):
    """The tiny model, its card saying it continued a run: write_training(record) sets the
    card's training record."""
    copy = ModelDir(tmp_path / "continued")
    shutil.copytree(tiny_model_dir, copy.path)
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(copy.path))

    def write_training(record: dict) -> None:
        copy.write_card({**copy.read_card(), "training": record})

    return write_training


def training_table(at) -> dict[str, str]:
    (table,) = [frame.value for frame in at.dataframe if "" in frame.value.columns]
    return dict(zip(table[""], table["value"]))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("start", "shown"),
    [
        ({"initialised_from": MACHINE_PATH, "steps_before": 81040}, "en-de-fr, step 81,040"),
        ({"initialised_from": MACHINE_PATH}, "en-de-fr"),
        ({"initialised_from": {"name": "en-de-fr", "step": 30893}}, "en-de-fr, step 30,893"),
    ],
)
def test_the_model_a_run_continued_is_named_by_name_and_step(continued, start, shown):
    continued({"steps": 100, **start})
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.switch_page("views/model.py")
    at.run()
    assert_fine(at)
    table = training_table(at)
    assert table["initialised from"] == shown
    assert not any(MACHINE_PATH in str(value) for value in table.values())
