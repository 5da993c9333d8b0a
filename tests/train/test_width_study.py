"""The width study: real (dry-run) training runs of two widths, read into a model card."""

import json

import pytest

from tests.training import run_train, write_tiny_data
from train.shipping import card
from train.studies import width_study


@pytest.mark.slow  # two training runs in subprocesses
def test_two_widths_go_into_the_card_with_their_validation_minutes(tmp_path):
    data_dir = write_tiny_data(tmp_path / "data")
    runs = []
    for width in (32, 16):  # given out of order: the card sorts them
        run = tmp_path / f"width_{width}"
        flags = ("--d-model", str(width), "--d-ff", str(2 * width), "--max-steps", "8")
        process = run_train(data_dir, run, *flags, "--eval-every", "4", "--log-every", "2")
        assert process.wait(timeout=300) == 0
        runs.append(run)
    model_dir = runs[0] / "model"
    base = ["--run", str(runs[0]), "--data-dir", str(data_dir), "--limit", "3", "--threads", "1"]
    assert card.main([*base, "--valid-sentences", "3"]) == 0
    examples = json.loads((model_dir / "card.json").read_text())["examples"]

    assert width_study.main([*map(str, runs), "--card", str(model_dir)]) == 0

    written = json.loads((model_dir / "card.json").read_text())
    assert written["examples"] == examples  # the rest of the card stays
    study = written["width_study"]
    assert [run["d_model"] for run in study] == [16, 32]
    assert study[0]["parameters"] < study[1]["parameters"]
    for run in study:
        # steps 4 and 8, then the exported model's validation at the final step, 8 again
        assert [point["step"] for point in run["curve"]] == [4, 8, 8]
        minutes = [point["minutes"] for point in run["curve"]]
        assert minutes == sorted(minutes) and minutes[-1] == run["minutes"]
        assert all("val_bleu" in point for point in run["curve"])
    markdown = (model_dir / "card.md").read_text()
    section = markdown.split("## Width study", 1)[1].split("\n## ", 1)[0]
    assert "| 16 |" in section and "| 32 |" in section


def test_a_run_that_never_finished_is_named_not_a_key_error(tmp_path, capsys):
    run = tmp_path / "width_64"
    (run / "checkpoints").mkdir(parents=True)  # killed before its model and card were written
    with pytest.raises(SystemExit) as exit_info:
        width_study.main([str(run), "--card", str(tmp_path / "card")])
    assert exit_info.value.code == 2
    assert f"{run}: no finished training run" in capsys.readouterr().err
