"""Move a trained model onto a new vocabulary, so a longer training run need not start from scratch.

The shipped model's vocabulary was learnt before the general-domain data came, so it cuts general
German into many short pieces. A vocabulary learnt on all the corpora fits it better, but a model
on it would otherwise start from random weights. Here the layers keep their trained weights and
only the shared embedding (which is also the output projection, section 3.4) is rebuilt, one row
per new piece:

    E_new[piece] = E_old[piece]                                if the old vocabulary has it
                 = mean(E_old[p] for p in old_cut(piece))      otherwise

where old_cut is the old vocabulary's segmentation of the piece's text. Special tokens, language
tags and byte pieces exist in both vocabularies and keep their rows.

The model's history moves with it: its training log, and each snapshot moved the same way, so the
Training dynamics page can still play attention being learned from step 100 and read every step in
the same pieces (the card's vocabulary_transfer record says up to which step they are moved).

    python -m train.loop.vocabulary_transfer --from pretrained/en-de-fr --vocab-size 16000 \
        --out runs/t16-init
    python -m train --init-from runs/t16-init --out runs/t16 ...
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from core.cli import whole_number
from core.files.checkpoint import load_model
from core.files.model_dir import ModelDir, file_step, open_model_dir
from core.model.transformer import Transformer
from core.text.tokenizer import Tokenizer
from train.data.corpora import default_data_dir, load_corpus, parse_mixture
from train.loop.config import MIN_VOCAB_SIZE
from train.loop.start import learn_vocabulary

WORD_START = "\u2581"  # SentencePiece's mark for a piece that begins a word


def old_pieces_of(piece: str, old: Tokenizer) -> list[int]:
    """The old vocabulary's ids for one new piece: the same piece if it exists, else its text cut
    by the old vocabulary (a piece inside a word loses the word-start mark the cut would add)."""
    same = old.sp.piece_to_id(piece)
    if same != old.unk_id or piece == old.sp.id_to_piece(old.unk_id):
        return [same]
    text = piece.replace(WORD_START, " ")
    ids = old.sp.encode(text)
    if not piece.startswith(WORD_START) and ids and old.sp.id_to_piece(ids[0]) == WORD_START:
        ids = ids[1:]
    return ids or [old.unk_id]


def transferred_embedding(
    old_embedding: torch.Tensor, old: Tokenizer, new: Tokenizer
) -> torch.Tensor:
    """(V_new, d_model) rows from the (V_old, d_model) ``old_embedding``, as the module says."""
    pieces = (new.sp.id_to_piece(new_id) for new_id in range(len(new)))
    return torch.stack([old_embedding[old_pieces_of(piece, old)].mean(dim=0) for piece in pieces])


def transfer(model: Transformer, old: Tokenizer, new: Tokenizer) -> Transformer:
    """A copy of ``model`` on the vocabulary ``new``: every layer's weights, a rebuilt embedding."""
    state = model.state_dict()
    state["embedding.weight"] = transferred_embedding(state["embedding.weight"], old, new)
    moved = Transformer(dataclasses.replace(model.config, vocab_size=len(new)))
    moved.load_state_dict(state)
    return moved


def move_snapshots(source: ModelDir, moved_dir: ModelDir, old: Tokenizer, new: Tokenizer) -> None:
    """Each of ``source``'s snapshots moved onto ``new``: ``moved_dir``'s snapshot of its step."""
    for path in source.snapshot_files():
        model, metadata = load_model(path)
        seconds = metadata.get("train_seconds", 0.0)
        moved_dir.save_snapshot(transfer(model, old, new), file_step(path), seconds)


def vocab_size(text: str) -> int:
    """--vocab-size: as many pieces as the trainer's vocabulary may have (train/loop/config.py)."""
    value = whole_number(text)
    if value < MIN_VOCAB_SIZE:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_VOCAB_SIZE}, got {value}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", required=True, help="trained model directory")
    parser.add_argument("--out", type=Path, required=True, help="model directory to write")
    parser.add_argument(
        "--vocab-size", type=vocab_size, default=16000, help="pieces in the new vocabulary"
    )
    parser.add_argument(
        "--mixture",
        default="tatoeba=1,multi30k=1,general=1",
        help="corpora to learn the vocabulary on (weights above 0 count; see python -m train)",
    )
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(), help="corpora folder")
    args = parser.parse_args(argv)
    if args.out.resolve() == Path(args.source).resolve():
        parser.error(f"--out {args.out}: that is the model directory read (--from)")
    source = open_model_dir(args.source)
    model, _ = source.load_model()
    args.out.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(args.data_dir, mixture=parse_mixture(args.mixture))
    new = learn_vocabulary(corpus, args.out / "vocabulary", args.vocab_size)
    old = source.load_tokenizer()
    moved = transfer(model, old, new)
    training = source.read_card().get("training", {})
    transfer_record = {
        "from": str(source.path),
        "at_step": training.get("steps", 0),
        "old_vocab_size": model.config.vocab_size,
        "new_vocab_size": len(new),
        "learnt_on": args.mixture,
    }
    # under "training", where a run continued from this directory finds its steps and carries
    # the record into the model it ships (Trainer.export)
    card = {"training": {**training, "vocabulary_transfer": transfer_record}}
    moved_dir = ModelDir(args.out).write(moved, new.model_file, card)
    # the training log goes on: its scores are of translations, whatever the vocabulary
    moved_dir.write_metrics(source.read_metrics())
    move_snapshots(source, moved_dir, old, new)
    for learnt in (new.model_file, new.model_file.with_suffix(".vocab")):
        learnt.unlink()  # the model directory keeps its copy as spm.model
    print(f"wrote {args.out}: vocabulary {model.config.vocab_size} -> {len(new)} pieces")


def vocabulary_transfer_lines(record: dict | None) -> list[str]:
    if not record:
        return []
    return [
        f"- at step {record['at_step']:,} the model `{record['from']}` was moved from its "
        f"{record['old_vocab_size']:,}-piece vocabulary onto a {record['new_vocab_size']:,}-piece "
        f"one learnt on `{record['learnt_on']}` "
        "(train/loop/vocabulary_transfer.py: the layers kept, "
        "each new piece's embedding the old one of the same piece or the mean of its old pieces')"
    ]


if __name__ == "__main__":
    main()
