"""Validation during training: the loss on held-out pairs, and sacreBLEU / chrF (with their
signatures) of beam search on a fixed sample of them, on whatever device the model is."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from core.scoring import score_translations
from core.text.tokenizer import Tokenizer
from core.translator import Translator
from train.data.batching import encode_examples, token_batches
from train.data.corpora import Example
from train.data.encoded_corpus import FlatPairs
from train.data.loader import collate, to_device
from train.loop.config import TrainConfig
from train.loop.loss import label_smoothed_loss

VALIDATION_LOSS_PAIRS = 2000  # the first pairs of the validation split the loss is measured on


class Validator:
    """Scores a model on the validation split; ``autocast`` is the training step's compute type."""

    def __init__(
        self,
        config: TrainConfig,
        valid: list[Example],
        tokenizer: Tokenizer,
        autocast: Callable[[], AbstractContextManager],
        log: Callable[[str], None],
    ) -> None:
        self.config, self.valid, self.tokenizer = config, valid, tokenizer
        self.autocast, self.log = autocast, log

    @torch.no_grad()
    def loss(self, model) -> float:
        """Label-smoothing-free cross-entropy per target token."""
        examples = self.valid[:VALIDATION_LOSS_PAIRS]
        pairs = FlatPairs.from_lists(
            encode_examples(self.tokenizer, examples, model.config.max_len)
        )
        device = next(model.parameters()).device
        total, tokens = torch.zeros((), dtype=torch.float64, device=device), 0
        for rows in token_batches(pairs.lengths, self.config.max_tokens, seed=0):
            batch = collate(pairs, rows)
            source, target_in, target_out = to_device(batch, device)
            with self.autocast():
                logits, _ = model(source, target_in)
            total += label_smoothed_loss(logits, target_out, 0.0, model.config.pad_id).double()
            tokens += batch.n_tokens
        return total.item() / max(tokens, 1)

    def sample(self, target: str) -> tuple[list[str], list[str]]:
        """A fixed, spread-out sample of validation sentences for BLEU (every k-th example)."""
        examples = [e for e in self.valid if e.target == target]
        step = max(1, len(examples) // max(self.config.valid_sentences, 1))
        chosen = examples[::step][: self.config.valid_sentences]
        return [e.source_text for e in chosen], [e.target_text for e in chosen]

    def scores(self, model, step: int) -> dict:
        """Validation loss, and sacreBLEU/chrF by beam search on the sample, per language and
        their mean; each language's line logged with its signature."""
        model.eval()
        translator = Translator(model, self.tokenizer)
        result = {"val_loss": round(self.loss(model), 4)}
        for target in sorted({e.target for e in self.valid}):
            sources, references = self.sample(target)
            hypotheses = translator.translate_batch(
                sources, target, beam_size=self.config.beam_size
            )
            scores = score_translations(hypotheses, references)
            result[f"val_bleu_{target}"] = scores["bleu"]
            result[f"val_chrf_{target}"] = scores["chrf"]
            self.log(
                f"step {step} en-{target}: BLEU {scores['bleu']:.1f} chrF {scores['chrf']:.1f} "
                f"on {len(sources)} validation sentences [{scores['signature']}]"
            )
        for metric in ("bleu", "chrf"):
            values = [v for k, v in result.items() if k.startswith(f"val_{metric}_")]
            result[f"val_{metric}"] = round(sum(values) / len(values), 2) if values else None
        return result
