"""An epoch's encoded pairs and batches, and the window of steps between two metrics lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch.utils.data import DataLoader

from train.augment import epoch_examples
from train.batching import encode_examples, token_batches
from train.encoded_corpus import FlatPairs, encoded_pairs
from train.loader import batch_loader, next_epoch

if TYPE_CHECKING:
    from train.trainer import Trainer


def epoch_loader(trainer: Trainer) -> DataLoader:
    """This epoch's remaining batches for this rank (every rank gets as many), collated: by the
    last epoch's DataLoader and its workers, when the pairs are the same (no augmentation or
    subword sampling, as in the gpu preset), so that no epoch waits for workers to start."""
    if trainer.pairs_of_epoch != trainer.epoch:
        trainer.train_pairs, trainer.base_pairs = epoch_pairs(trainer)
        trainer.pairs_of_epoch = trainer.epoch
        trainer.log(f"{len(trainer.train_pairs)} training pairs in epoch {trainer.epoch}")
    config, rank, world = trainer.config, trainer.dist.rank, trainer.dist.world_size
    lengths, seed = trainer.train_pairs.lengths, config.seed + trainer.epoch
    batches = token_batches(lengths, config.max_tokens, seed, config.length_bucket)
    usable = len(batches) - len(batches) % world
    mine = batches[rank:usable:world][trainer.batch_in_epoch :]
    loader = next_epoch(trainer.loader, trainer.train_pairs, mine)
    if loader is None:
        loader = batch_loader(
            trainer.train_pairs, mine, config.length_bucket, config.max_tokens, trainer.workers,
            trainer.device,
        )  # fmt: skip
    trainer.loader = loader
    return loader


def epoch_pairs(trainer: Trainer) -> tuple[FlatPairs, FlatPairs | None]:
    """This epoch's encoded pairs, and the corpus's own (best segmentation, cached in the run
    folder: train/encoded_corpus.py), drawn from the epoch's seed so that a resumed run and every
    process of a distributed one draw the same: the corpus followed by this epoch's augmentation
    (train/augment.py), or, with subword sampling, every pair segmented afresh."""
    config, tokenizer, corpus = trainer.config, trainer.tokenizer, trainer.corpus
    seed, max_len = config.seed + trainer.epoch, trainer.model_config.max_len
    examples = epoch_examples(corpus.train, trainer.augmentation, seed)
    if config.subword_alpha:
        sampled = encode_examples(
            tokenizer, examples, max_len, config.subword_alpha, seed, config.subword_sides
        )
        return FlatPairs.from_lists(sampled), trainer.base_pairs
    base = trainer.base_pairs or corpus_pairs(trainer)
    extra = examples[len(corpus.train) :]
    if not extra:
        return base, base
    return base + FlatPairs.from_lists(encode_examples(tokenizer, extra, max_len)), base


def corpus_pairs(trainer: Trainer) -> FlatPairs:
    """The training corpus encoded: the main process encodes and caches it, the others read it."""
    run_dir, dist = trainer.run_dir, trainer.dist
    arguments = (trainer.tokenizer, trainer.corpus.train, trainer.model_config.max_len)
    files = (run_dir.tokenizer_file, run_dir.truecase_file)
    if dist.main:
        pairs = encoded_pairs(*arguments, run_dir.encoded_dir, files)
    dist.barrier()
    if not dist.main:
        pairs = encoded_pairs(*arguments, run_dir.encoded_dir, files, write=False)
    return pairs


@dataclass
class LogWindow:
    """The steps since the last metrics line: their target tokens, summed loss and seconds. The
    loss stays a tensor on the device until the line is written."""

    tokens: int = 0
    loss: torch.Tensor | float = 0.0
    steps: int = 0
    seconds: float = 0.0

    def add(self, loss: torch.Tensor | float, tokens: int, seconds: float) -> None:
        self.tokens += tokens
        self.loss = self.loss + loss
        self.steps += 1
        self.seconds += seconds
