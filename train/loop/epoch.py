"""An epoch's encoded pairs and batches, and the window of steps between two metrics lines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader

from core.text.tokenizer import Tokenizer
from train.data.augment import Augmentation, epoch_examples
from train.data.batching import encode_examples, token_batches
from train.data.corpora import Corpus
from train.data.encoded_corpus import FlatPairs, encoded_pairs
from train.data.loader import batch_loader, next_epoch
from train.loop.config import TrainConfig
from train.loop.distributed import Distributed
from train.loop.run_folder import RunDir


class Epochs:
    """The epochs' pairs and batches for this rank. It keeps the pairs of the epoch last asked
    for, the corpus's own pairs (encoded once) and the last DataLoader, so that an epoch whose
    pairs are the same reuses its workers."""

    def __init__(
        self,
        config: TrainConfig,
        corpus: Corpus,
        tokenizer: Tokenizer,
        augmentation: Augmentation,
        max_len: int,
        run_dir: RunDir,
        dist: Distributed,
        workers: int,
        log: Callable[[str], None],
    ) -> None:
        self.config, self.corpus, self.tokenizer = config, corpus, tokenizer
        self.augmentation, self.max_len, self.run_dir = augmentation, max_len, run_dir
        self.dist, self.workers, self.log = dist, workers, log
        self.pairs_of_epoch: int = -1  # the epoch whose pairs are train_pairs
        self.train_pairs: FlatPairs | None = None
        self.base_pairs: FlatPairs | None = None
        self.loader: DataLoader | None = None

    def loader_from(self, epoch: int, batch_in_epoch: int) -> DataLoader:
        """The epoch's remaining batches from ``batch_in_epoch`` on for this rank (every rank gets
        as many), collated: by the last epoch's DataLoader and its workers, when the pairs are the
        same (no augmentation or subword sampling, as in the gpu preset), so that no epoch waits
        for workers to start."""
        config, rank, world = self.config, self.dist.rank, self.dist.world_size
        if self.pairs_of_epoch != epoch:
            self.train_pairs, self.base_pairs = self.epoch_pairs(epoch)
            self.pairs_of_epoch = epoch
            self.log(f"{len(self.train_pairs)} training pairs in epoch {epoch}")
        lengths, seed = self.train_pairs.lengths, config.seed + epoch
        batches = token_batches(lengths, config.max_tokens, seed, config.length_bucket)
        usable = len(batches) - len(batches) % world
        mine = batches[rank:usable:world][batch_in_epoch:]
        loader = next_epoch(self.loader, self.train_pairs, mine)
        if loader is None:
            loader = batch_loader(
                self.train_pairs, mine, config.length_bucket, config.max_tokens, self.workers,
                self.dist.device,
            )  # fmt: skip
        self.loader = loader
        return loader

    def epoch_pairs(self, epoch: int) -> tuple[FlatPairs, FlatPairs | None]:
        """This epoch's encoded pairs, and the corpus's own (best segmentation, cached in the run
        folder: train/data/encoded_corpus.py), drawn from the epoch's seed so that a resumed run and
        every process of a distributed one draw the same: the corpus followed by this epoch's
        augmentation (train/data/augment.py), or, with subword sampling, every pair segmented
        afresh."""
        config, tokenizer, corpus = self.config, self.tokenizer, self.corpus
        seed, max_len = config.seed + epoch, self.max_len
        examples = epoch_examples(corpus.train, self.augmentation, seed)
        if config.subword_alpha:
            sampled = encode_examples(
                tokenizer, examples, max_len, config.subword_alpha, seed, config.subword_sides
            )
            return FlatPairs.from_lists(sampled), self.base_pairs
        base = self.base_pairs or self.corpus_pairs()
        extra = examples[len(corpus.train) :]
        if not extra:
            return base, base
        return base + FlatPairs.from_lists(encode_examples(tokenizer, extra, max_len)), base

    def corpus_pairs(self) -> FlatPairs:
        """The training corpus encoded: the main process encodes and caches it, the others read
        it."""
        run_dir, dist = self.run_dir, self.dist
        arguments = (self.tokenizer, self.corpus.train, self.max_len)
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
