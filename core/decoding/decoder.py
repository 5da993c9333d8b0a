"""What the searches ask of a model, declared: a :class:`Decoder` encodes a source once, keeps
a key/value cache, and gives the next token's logits for new decoder positions.

Both the readable :class:`core.model.transformer.Transformer` and
:class:`core.model.engine.Engine` (the model with its layers' fused CPU kernels) satisfy it, so
greedy search and beam search run on either without knowing which (tests/core/test_decoding.py
runs them on an object that offers this and nothing else).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from torch import Tensor

from core.model.config import ModelConfig
from core.model.transformer import Intermediates


class Cache(Protocol):
    """One entry of a decoder's key/value cache."""

    @property
    def length(self) -> int:
        """Decoder positions held."""

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index`` (B_new,), in that order: beam search's survivors take
        their parents' keys and values."""


@runtime_checkable
class Decoder(Protocol):
    """An encoder-decoder as decoding sees it (shapes as in core/model/transformer.py)."""

    config: ModelConfig  # pad_id, bos_id, eos_id, max_len, suppress_pad

    def encode(
        self, source: Tensor, intermediates: Intermediates | None = None
    ) -> tuple[Tensor, Tensor]:
        """source (B, S) -> memory (B, S, D) and its padding mask (B, 1, 1, S)."""

    def new_cache(self) -> Sequence[Cache]:
        """An empty key/value cache for :meth:`decode`."""

    def decode(
        self,
        decoder_input: Tensor,
        memory: Tensor,
        source_mask: Tensor,
        cache: Sequence[Cache] | None = None,
        intermediates: Intermediates | None = None,
    ) -> Tensor:
        """Logits (B, T, V) for the token after each decoder position; with a cache, decoder_input
        holds only the positions after those already cached. memory may be (1, S, D), shared
        by all B rows. ``intermediates`` get the embeddings and each layer's attention maps."""
