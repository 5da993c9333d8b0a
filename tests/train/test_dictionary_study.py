"""Issue #51's comparison: each model's card records side by side, in the card that gets them."""

import json
import shutil
from pathlib import Path

import pytest

from train.studies import dictionary_study, hansard_study

SHIPPED = Path(__file__).resolve().parents[2] / "pretrained" / "en-de-fr"


def write_model_card(folder: Path, mixture: str, bleu: float, ding_alone: float) -> Path:
    """A model folder whose card.json holds the records the study reads."""
    folder.mkdir(parents=True)
    card = {
        "training": {"steps": 4100, "steps_before": 100, "recipe": {"mixture": mixture}},
        "scores": [
            {"set": "FLORES-200 devtest", "pair": "en-de", "bleu": bleu, "chrf": 50.0},
            {"set": "FLORES-200 devtest", "pair": "en-fr", "bleu": bleu + 1, "chrf": 51.0},
        ],
        "term_test": {
            "results": [
                {
                    "dictionary": "ding-terms",
                    "alone": ding_alone,
                    "carrier": 0.04,
                    "unseen_alone": 0.03,
                    "unseen_carrier": None,
                }
            ]
        },
        "leakage": {
            "results": [
                {"pair": "en-fr", "words_of": "de", "translations": {"sentences_with_leak": 7}}
            ]
        },
        "examples": [{"source": "A fox | a dog.", "target": "de", "translation": "Ein Fuchs."}],
    }
    (folder / "card.json").write_text(json.dumps(card))
    return folder


def test_the_study_puts_every_models_records_side_by_side_in_the_card(tmp_path):
    start = write_model_card(tmp_path / "start", "tatoeba=1", 15.9, 0.056)
    terms = write_model_card(
        tmp_path / "d51-terms" / "model", "tatoeba=1,ding-terms=0.1", 16.4, 0.3
    )
    target = tmp_path / "card"
    target.mkdir()
    shutil.copy(SHIPPED / "card.json", target / "card.json")
    assert (
        dictionary_study.main([str(start), str(terms.parent / "model"), "--card", str(target)]) == 0
    )

    record = json.loads((target / "card.json").read_text())["dictionary_study"]
    first, second = record["models"]
    assert (first["model"], second["model"]) == ("start", "d51-terms")  # a run's name, not "model"
    assert second["steps"] == 4000 and second["mixture"] == "tatoeba=1,ding-terms=0.1"
    assert second["scores"]["FLORES-200 devtest en-fr"] == {"bleu": 17.4, "chrf": 51.0}
    assert second["term_test"]["ding-terms"]["alone"] == 0.3
    assert second["leakage"] == {"de words in en-fr": 7}
    markdown = (target / "card.md").read_text()
    section = markdown.split("## Dictionary corpora", 1)[1].split("\n## ", 1)[0]
    assert "| FLORES-200 devtest en-de | 15.9 / 50.0 | 16.4 / 50.0 |" in section
    assert "| ding-terms alone | 5.6% | 30.0% |" in section
    assert "| ding-terms unseen_carrier | - | - |" in section
    assert "| FLORES sentences with de words in en-fr | 7 | 7 |" in section
    assert "| de: A fox \\| a dog. | Ein Fuchs. | Ein Fuchs. |" in section  # "|" escaped


def test_a_card_without_the_records_is_named_before_anything_is_written(tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "card.json").write_text(json.dumps({"scores": [{"set": "x"}]}))
    with pytest.raises(SystemExit) as exit_info:
        dictionary_study.main([str(bare), "--card", str(bare)])
    assert exit_info.value.code == 2
    assert f"{bare}: its card.json has no term_test, leakage, examples" in capsys.readouterr().err
    assert "dictionary_study" not in json.loads((bare / "card.json").read_text())


def test_the_hansard_study_adds_how_each_read_it_and_the_register_count(tmp_path):
    start = write_model_card(tmp_path / "start", "tatoeba=1", 15.9, 0.056)
    tagged = write_model_card(tmp_path / "h61-tag" / "model", "tatoeba=1,hansard=0.4", 16.0, 0.05)
    card = json.loads((tagged / "card.json").read_text())
    card["training"]["recipe"].update(hansard_tag=True, hansard_clean=True)
    card["leakage"]["results"][0]["register"] = {"translations": {"sentences_with_register": 3}}
    (tagged / "card.json").write_text(json.dumps(card))
    target = tmp_path / "card"
    target.mkdir()
    shutil.copy(SHIPPED / "card.json", target / "card.json")
    assert hansard_study.main([str(start), str(tagged), "--card", str(target)]) == 0

    first, second = json.loads((target / "card.json").read_text())["hansard_study"]["models"]
    assert first["register"] is None and second["register"] == 3
    assert second["hansard"] == {"hansard_tag": True, "hansard_clean": True}
    section = (target / "card.md").read_text().split("## The Hansard", 1)[1].split("\n## ", 1)[0]
    assert "`h61-tag` 4,000 steps, `tatoeba=1,hansard=0.4` (the Hansard tagged and cleaned)" in (
        section
    )
    assert "| FLORES French sentences in parliament's register | - | 3 |" in section


def test_a_control_an_earlier_study_recorded_joins_by_name(tmp_path):
    start = write_model_card(tmp_path / "start", "tatoeba=1", 15.9, 0.056)
    tagged = write_model_card(tmp_path / "h61-tag" / "model", "tatoeba=1,hansard=0.4", 16.0, 0.05)
    target = tmp_path / "card"
    target.mkdir()
    shutil.copy(SHIPPED / "card.json", target / "card.json")  # its dictionary_study: d51-control
    shipped = json.loads((SHIPPED / "card.json").read_text())["dictionary_study"]
    (control,) = [model for model in shipped["models"] if model["model"] == "d51-control"]
    argv = [str(start), str(tagged), "--card", str(target), "--recorded", "d51-control"]
    assert hansard_study.main(argv) == 0

    models = json.loads((target / "card.json").read_text())["hansard_study"]["models"]
    assert [model["model"] for model in models] == ["start", "h61-tag", "d51-control"]
    assert models[2]["scores"] == control["scores"]
    assert models[2]["recorded_by"] == shipped["command"]
    section = (target / "card.md").read_text().split("## The Hansard", 1)[1].split("\n## ", 1)[0]
    assert f"as `{shipped['command']}` measured it" in section

    with pytest.raises(SystemExit, match=r"no study in .* recorded a model named .gone."):
        hansard_study.main([str(start), "--card", str(target), "--recorded", "gone"])
