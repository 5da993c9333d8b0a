"""The vocabulary study: pieces per word, and real (dry-run) training runs of two vocabulary
sizes read into a model card."""

import json

import pytest

from core.files.model_dir import ModelDir
from support.tiny_corpus import tiny_corpus
from tests.training import run_train, write_gz, write_tiny_data
from train.shipping import card
from train.studies import vocab_study


def test_pieces_per_word_counts_pieces_over_whitespace_words(tiny_model_dir):
    tokenizer = ModelDir(tiny_model_dir).load_tokenizer()
    sentences = tiny_corpus(20, 5)
    pieces = [len(tokenizer.encode(sentence)) for sentence in sentences]
    words = [len(sentence.split()) for sentence in sentences]
    assert vocab_study.pieces_per_word(tokenizer, sentences) == sum(pieces) / sum(words)
    # a word the vocabulary never saw falls apart into many pieces
    unseen = "Donaudampfschifffahrtsgesellschaftskapitän"
    assert vocab_study.pieces_per_word(tokenizer, [unseen]) > 5


def write_flores(data_dir):
    for language, seed in (("en", 11), ("de", 12), ("fr", 13)):
        write_gz(data_dir / f"flores/devtest.{language}.gz", tiny_corpus(30, seed))


@pytest.mark.slow  # two training runs in subprocesses
def test_two_vocabularies_go_into_the_card_with_their_curves(tmp_path):
    data_dir = write_tiny_data(tmp_path / "data")
    write_flores(data_dir)
    runs = []
    for size in (480, 400):
        run = tmp_path / f"vocab_{size}"
        flags = ("--vocab-size", str(size), "--max-steps", "4", "--eval-every", "2")
        process = run_train(data_dir, run, *flags, "--log-every", "2")
        assert process.wait(timeout=300) == 0
        runs.append(run)
    card_dir = runs[0] / "model"
    base = ["--run", str(runs[0]), "--data-dir", str(data_dir), "--limit", "3", "--threads", "1"]
    assert card.main([*base, "--valid-sentences", "3"]) == 0  # the full card the study joins
    reference = ["--reference", str(card_dir), "--reference-learnt-on", "made-up text"]
    argv = [*map(str, runs), *reference, "--card", str(card_dir), "--data-dir", str(data_dir)]

    assert vocab_study.main(argv) == 0

    study = json.loads((card_dir / "card.json").read_text())["vocabulary_study"]
    profiles = study["vocabularies"]
    assert [p["name"] for p in profiles] == ["model", "vocab_480", "vocab_400"]
    assert [p["pieces"] for p in profiles] == [480, 480, 400]
    assert profiles[0]["learnt_on"] == "made-up text" and "multi30k" in profiles[1]["learnt_on"]
    for language in ("en", "de", "fr"):  # fewer pieces to choose from: more pieces a word
        assert profiles[2]["pieces_per_word"][language] > profiles[1]["pieces_per_word"][language]
    assert set(profiles[1]["terms"]) == set(vocab_study.TERMS)
    assert [run["vocab_size"] for run in study["runs"]] == [480, 400]
    assert all([p["step"] for p in run["curve"]] == [2, 4, 4] for run in study["runs"])
    section = (card_dir / "card.md").read_text().split("## Vocabulary study", 1)[1]
    assert "| vocab_400 |" in section and "| 400 |" in section  # profile and curve rows


def test_a_continued_run_is_refused(tmp_path):
    card_dir = tmp_path / "run" / "model"
    card_dir.mkdir(parents=True)
    (card_dir / "card.json").write_text(
        json.dumps({"training": {"initialised_from": "pretrained/en-de-fr"}})
    )
    with pytest.raises(vocab_study.NotFromScratch, match="continued pretrained/en-de-fr"):
        vocab_study.study([tmp_path / "run"], tmp_path)


def test_a_folder_that_is_not_a_finished_run_is_a_clear_error(tmp_path, capsys):
    model_folder = tmp_path / "t16-init"  # a model folder, as vocabulary_transfer writes one
    model_folder.mkdir()
    (model_folder / "card.json").write_text(json.dumps({"name": "moved"}))
    with pytest.raises(SystemExit) as exit_info:
        vocab_study.main([str(model_folder), "--data-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"{model_folder}: no finished training run" in error and "--reference" in error
