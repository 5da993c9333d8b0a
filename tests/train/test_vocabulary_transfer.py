"""train/vocabulary_transfer.py: a trained model moved onto a new vocabulary keeps its layers, and
each new piece's embedding row is the old row of the same piece or the mean of its old cut's."""

from __future__ import annotations

import pytest
import torch

from core.files.model_dir import ModelDir
from core.text.tokenizer import Tokenizer
from support.tiny_corpus import tiny_corpus
from tests.conftest import FINAL_STEP
from tests.training import write_tiny_data
from train.vocabulary_transfer import WORD_START, main, old_pieces_of, transfer


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


def test_the_command_writes_a_model_directory_with_the_log_but_not_the_snapshots(
    history_dir, tmp_path
):
    data_dir = write_tiny_data(tmp_path / "data")
    out = tmp_path / "moved"
    flags = {"--from": history_dir, "--out": out, "--vocab-size": 450, "--data-dir": data_dir}
    main([str(part) for flag in flags.items() for part in flag])
    model, tokenizer, card = ModelDir(out).load()
    assert model.config.vocab_size == len(tokenizer) == 450
    assert card["vocabulary_transfer"]["old_vocab_size"] == 400
    assert card["training"]["steps"] == FINAL_STEP  # the continued schedule goes on from here
    assert sorted(p.name for p in out.iterdir()) == [
        "card.json",
        "metrics.jsonl",
        "model.pt",
        "spm.model",
    ]
    history = ModelDir(history_dir)
    assert history.snapshot_files() and history.read_metrics()
    assert ModelDir(out).read_metrics() == history.read_metrics()
