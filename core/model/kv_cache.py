"""The keys and values a decoder keeps between decoding steps, so that each step projects only its
new position (and the encoder output once), instead of recomputing the whole prefix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor


def broadcast_batch(x: Tensor, batch: int) -> Tensor:
    """(1, ...) -> (batch, ...) as a view, without copying; (batch, ...) is returned as it is.

    Beam search keeps the cross-attention keys and values of its one sentence once, shared by
    every hypothesis.
    """
    return x if x.size(0) == batch else x.expand(batch, *x.shape[1:])


@dataclass
class KVCache:
    """One attention's keys and values kept between decoding steps, each (B, H, T_k, d_k).

    Self-attention grows by the new positions at every step. Cross-attention attends to the
    encoder output, which does not change: it is projected once, and for the hypotheses of one
    sentence (beam search) held once, with batch 1, shared by every hypothesis.
    """

    grows: bool
    key: Tensor | None = None
    value: Tensor | None = None

    @property
    def length(self) -> int:
        """Positions held, T_k."""
        return 0 if self.key is None else self.key.size(2)

    def keys_values(
        self, context: Tensor, project: Callable[[Tensor], tuple[Tensor, Tensor]]
    ) -> tuple[Tensor, Tensor]:
        """The keys and values to attend to, projecting from ``context`` (what is attended to)
        only what is not held."""
        if self.key is None:
            self.key, self.value = project(context)
        elif self.grows:
            key, value = project(context)
            self.key = torch.cat([self.key, key], dim=2)
            self.value = torch.cat([self.value, value], dim=2)
        return self.key, self.value

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index`` (beam search: follow each surviving hypothesis's parent).
        A shared batch-1 cross-attention cache serves every row alike and stays as it is."""
        if self.grows or self.key.size(0) > 1:
            self.key, self.value = (
                self.key.index_select(0, index),
                self.value.index_select(0, index),
            )


@dataclass
class LayerCache:
    """One decoder layer's keys and values kept between decoding steps."""

    self_attn: KVCache = field(default_factory=lambda: KVCache(grows=True))
    cross_attn: KVCache = field(default_factory=lambda: KVCache(grows=False))

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index``: see :meth:`KVCache.reorder`."""
        self.self_attn.reorder(index)
        self.cross_attn.reorder(index)
