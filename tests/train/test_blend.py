"""train/shipping/blend.py: theta(w) = (1 - w) theta_start + w theta_run, and the weight chosen on
validation data keeps the start model's in-domain score."""

import json

import torch

from core.files.checkpoint import load_model
from core.files.model_dir import ModelDir
from core.model.transformer import Transformer
from tests.conftest import TINY
from tests.training import write_tiny_data
from train.loop.run_folder import RunDir
from train.shipping import blend


def tiny(seed: int) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(TINY).eval()


def test_the_ends_of_a_blend_are_the_two_models_and_its_middle_their_mean():
    start, run = tiny(1), tiny(2)
    for weight, expected in ((0.0, start), (1.0, run)):
        blended = blend.blend_weights(start, run, weight)
        assert all(torch.equal(blended[k], v) for k, v in expected.state_dict().items())
    middle = blend.blend_weights(start, run, 0.5)
    for name, tensor in start.state_dict().items():
        torch.testing.assert_close(middle[name], (tensor + run.state_dict()[name]) / 2)


def row(weight: float, m30k_de: float, m30k_fr: float, general_de: float) -> dict:
    scores = {"Multi30k val de": m30k_de, "Multi30k val fr": m30k_fr}
    return {"weight": weight, "bleu": {**scores, "general val de": general_de}}


def test_the_choice_is_the_best_general_score_among_blends_that_keep_multi30k():
    rows = [
        row(0.0, 40.0, 60.0, 5.0),
        row(0.5, 41.0, 60.0, 8.0),  # keeps both languages: chosen
        row(0.7, 40.5, 60.5, 7.0),  # keeps, but less general gain
        row(1.0, 39.0, 61.0, 11.0),  # best general score, loses German Multi30k
    ]
    assert blend.choose(rows)["weight"] == 0.5
    assert blend.choose([rows[0], rows[3]])["weight"] == 0.0  # no blend keeps: the start model
    table = blend.table_markdown(rows, rows[1])
    assert "| **0.5** | 41.0 | 60.0 | 8.0 |" in table.splitlines()


def test_blending_a_run_writes_the_chosen_blend_and_keeps_the_runs_own_model(
    tiny_model_dir, tmp_path
):
    data = write_tiny_data(tmp_path / "data")
    start = ModelDir(tmp_path / "start").write(tiny(1), ModelDir(tiny_model_dir).tokenizer_file)
    run = RunDir(tmp_path / "run")
    card = {"training": {"initialised_from": str(start.path), "steps": 3}}
    run.model_dir.write(tiny(2), ModelDir(tiny_model_dir).tokenizer_file, card)
    own_before = run.model_dir.model_file.read_bytes()

    assert blend.main(["--run", str(run.path), "--data-dir", str(data), "--dry-run"]) == 0
    record = run.model_dir.read_card()["training"]["blend"]
    assert [r["weight"] for r in record["table"]] == [0.0, 1.0]
    assert set(record["table"][0]["bleu"]) == {
        "Multi30k val de",
        "Multi30k val fr",
        "general val de",
    }
    assert run.unblended_model_file.read_bytes() == own_before
    written, _ = load_model(run.model_dir.model_file)
    own, _ = load_model(run.unblended_model_file)
    started, _ = load_model(start.model_file)
    expected = blend.blend_weights(started, own, record["weight"])
    for name, tensor in written.state_dict().items():
        torch.testing.assert_close(tensor, expected[name].half().float())

    # blending again starts from the run's own model, not from the blend just written
    assert blend.main(["--run", str(run.path), "--data-dir", str(data), "--dry-run"]) == 0
    again = run.model_dir.read_card()["training"]["blend"]
    assert json.dumps(again["table"]) == json.dumps(record["table"])


def test_the_card_says_the_model_is_a_blend_and_shows_the_table():
    from train.shipping.card_md import training_section

    table = [row(0.0, 40.0, 60.0, 5.0), row(0.7, 40.5, 60.5, 7.0)]
    record = {"start": "pretrained/en-de-fr", "weight": 0.7, "sentences": 500, "beam_size": 4}
    lines = training_section({"blend": {**record, "table": table}})
    text = "\n".join(lines)
    assert "w = **0.7**" in text and "`pretrained/en-de-fr`" in text
    assert "| **0.7** | 40.5 | 60.5 | 7.0 |" in text.splitlines()
    assert not any("blend" in line for line in training_section({}))
