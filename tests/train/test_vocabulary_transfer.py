"""train/loop/vocabulary_transfer.py: a trained model moved onto a new vocabulary keeps its layers,
and each new piece's embedding row is the old row of the same piece or the mean of its old cut's."""

from __future__ import annotations

import pytest
import torch

from core.files.checkpoint import load_model
from core.files.model_dir import ModelDir
from core.text.tokenizer import Tokenizer
from support.tiny_corpus import tiny_corpus
from tests.conftest import FINAL_STEP
from tests.train.test_train import data_dir  # noqa: F401  (a fixture)
from tests.training import run_train
from train.loop.vocabulary_transfer import WORD_START, main, old_pieces_of, transfer
from train.shipping.card_md import training_section


@pytest.fixture(scope="module")
def moved(tiny_model_dir, tmp_path_factory):
    """(old model, old tokenizer, new tokenizer, moved model): a new vocabulary learnt on other
    sentences, so that some of its pieces are not in the old one."""
    source = ModelDir(tiny_model_dir)
    model, old = source.load_model()[0], source.load_tokenizer()
    prefix = tmp_path_factory.mktemp("new-vocabulary") / "spm"
    new = Tokenizer.train(tiny_corpus(600, seed=11), prefix, vocab_size=500)
    return model, old, new, transfer(model, old, new)


def new_pieces(old: Tokenizer, new: Tokenizer) -> list[int]:
    return [i for i in range(len(new)) if old.sp.piece_to_id(new.sp.id_to_piece(i)) == old.unk_id]


def test_pieces_of_both_vocabularies_keep_their_rows(moved):
    model, old, new, transferred = moved
    shared = [i for i in range(len(new)) if i not in set(new_pieces(old, new))]
    assert {new.pad_id, new.eos_id, *new.tag_ids.values()} <= set(shared)
    for new_id in shared:
        old_id = old.sp.piece_to_id(new.sp.id_to_piece(new_id))
        assert torch.equal(transferred.embedding.weight[new_id], model.embedding.weight[old_id])


def test_a_new_piece_is_the_mean_of_the_old_pieces_that_spell_it(moved):
    model, old, new, transferred = moved
    unseen = new_pieces(old, new)
    assert len(unseen) > 20  # the test has something to check
    for new_id in unseen:
        piece = new.sp.id_to_piece(new_id)
        old_ids = old_pieces_of(piece, old)
        spelled = "".join(old.sp.id_to_piece(i) for i in old_ids)
        assert spelled.lstrip(WORD_START) == piece.lstrip(WORD_START)
        expected = model.embedding.weight[old_ids].mean(dim=0)
        torch.testing.assert_close(transferred.embedding.weight[new_id], expected)


def test_every_layer_keeps_its_weights(moved):
    model, _, new, transferred = moved
    assert transferred.config.vocab_size == len(new) != model.config.vocab_size
    before, after = model.state_dict(), transferred.state_dict()
    assert before.keys() == after.keys()
    for name in before.keys() - {"embedding.weight"}:
        assert torch.equal(before[name], after[name]), name


def test_the_command_writes_a_model_directory_with_the_log_and_the_snapshots_moved(
    history_dir,
    data_dir,  # noqa: F811
    tmp_path,
):
    out = tmp_path / "moved"
    flags = {"--from": history_dir, "--out": out, "--vocab-size": 450, "--data-dir": data_dir}
    main([str(part) for flag in flags.items() for part in flag])
    model, tokenizer, card = ModelDir(out).load()
    assert model.config.vocab_size == len(tokenizer) == 450
    assert card["training"]["steps"] == FINAL_STEP  # the continued schedule goes on from here
    assert card["training"]["vocabulary_transfer"] == {
        "from": str(history_dir),
        "at_step": FINAL_STEP,
        "old_vocab_size": 400,
        "new_vocab_size": 450,
        "learnt_on": "tatoeba=1,multi30k=1,general=1",
    }
    assert sorted(p.name for p in out.iterdir()) == [
        "card.json",
        "metrics.jsonl",
        "model.pt",
        "snapshots",
        "spm.model",
    ]
    history, moved = ModelDir(history_dir), ModelDir(out)
    assert history.snapshot_files() and history.read_metrics()
    assert moved.read_metrics() == history.read_metrics()
    assert [s.step for s in moved.snapshots()] == [s.step for s in history.snapshots()]
    for earlier, now in zip(history.snapshot_files(), moved.snapshot_files(), strict=True):
        (old_model, old_metadata), (new_model, new_metadata) = load_model(earlier), load_model(now)
        assert new_metadata == old_metadata
        expected = transfer(old_model, history.load_tokenizer(), tokenizer).state_dict()
        for name, weight in new_model.state_dict().items():
            assert torch.equal(weight, expected[name].half().float()), name


def test_the_card_says_where_the_vocabulary_changed():
    record = {
        "from": "pretrained/en-de-fr",
        "at_step": 57719,
        "old_vocab_size": 8000,
        "new_vocab_size": 16000,
        "learnt_on": "tatoeba=1,multi30k=1,general=1",
    }
    lines = training_section({"steps": 60000, "vocabulary_transfer": record})
    assert any(
        "at step 57,719 the model `pretrained/en-de-fr` was moved from its 8,000-piece vocabulary "
        "onto a 16,000-piece one" in line
        for line in lines
    )
    assert not any("was moved" in line for line in training_section({"steps": 1}))


@pytest.mark.slow
def test_a_run_continued_from_a_moved_model_ships_the_record(data_dir, tmp_path):  # noqa: F811
    assert run_train(data_dir, tmp_path / "first", "--max-steps", "4").wait(timeout=300) == 0
    moved = tmp_path / "moved"
    flags = {"--from": tmp_path / "first" / "model", "--out": moved, "--vocab-size": 450}
    main([str(part) for flag in {**flags, "--data-dir": data_dir}.items() for part in flag])
    continued = run_train(
        data_dir, tmp_path / "second", "--init-from", str(moved), "--max-steps", "2"
    )
    output, _ = continued.communicate(timeout=300)
    assert continued.returncode == 0, output
    shipped = ModelDir(tmp_path / "second" / "model")
    record = ModelDir(moved).read_card()["training"]["vocabulary_transfer"]
    assert shipped.read_card()["training"]["vocabulary_transfer"] == record
    assert record["at_step"] == 4 and shipped.read_card()["training"]["steps"] == 6
    assert shipped.load()[0].config.vocab_size == 450


def test_the_output_may_not_be_the_model_read_nor_the_vocabulary_too_small(
    tiny_model_dir, tmp_path, capsys
):
    from train.loop.vocabulary_transfer import main

    before = {p.name: p.read_bytes() for p in tiny_model_dir.iterdir() if p.is_file()}
    for flags, message in (
        (["--out", str(tiny_model_dir)], "that is the model directory read (--from)"),
        (["--out", str(tmp_path / "new"), "--vocab-size", "0"], "must be at least 300, got 0"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["--from", str(tiny_model_dir), *flags])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tiny_model_dir.iterdir() if p.is_file()} == before
    assert not (tmp_path / "new").exists()
