"""The keys and values a decoder keeps between decoding steps, so that each step projects only its
new position (and the encoder output once), instead of recomputing the whole prefix.

Two layouts of one idea, both with ``length`` (positions held) and ``reorder(index)`` (beam search's
survivors take their parents' keys and values), the interface core/decoding/decoder.py declares:

- :class:`LayerCache`, one per decoder layer, two :class:`KVCache` that grow by concatenation: what
  the readable model (core/model/transformer.py) keeps.
- :class:`StepBuffers`, every layer at once in a buffer allocated once per search and written in
  place: what the layers' fused CPU kernels (core/model/engine.py) keep, the same keys and
  values.
"""

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

    @property
    def length(self) -> int:
        """Positions held."""
        return self.self_attn.length

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index``: see :meth:`KVCache.reorder`."""
        self.self_attn.reorder(index)
        self.cross_attn.reorder(index)


class StepBuffers:
    """Every decoder layer's keys and values between steps, written in place.

    Self-attention: one buffer (T_max, L, 2, B, H, d_k) for all L layers, positions outermost, so
    that a step writes one block per layer and the pages of positions not reached are never
    touched; beam search reorders the rows of every layer in one copy into a second buffer, and
    the two swap. Cross-attention: each layer's K and V of the encoder output, (B or 1, H, S, d_k)
    each, projected at the first step (batch 1 when every row decodes the same sentence), and
    copied out once for each number of rows: attending to a broadcast view, the explicit path's
    matmul would copy it at every step.
    """

    def __init__(self, max_len: int, n_layers: int, n_heads: int, d_k: int) -> None:
        self.shape = (max_len, n_layers, 2, n_heads, d_k)  # (T_max, L, 2, H, d_k), rows apart
        self.length = 0  # positions held
        self.buffer: Tensor | None = None  # (T_max, L, 2, B, H, d_k)
        self.spare: Tensor | None = None
        self.memory: list[tuple[Tensor, Tensor] | None] = [None] * n_layers  # K, V per layer
        self.memory_by_rows: list[dict[int, tuple[Tensor, Tensor]]] = [{} for _ in range(n_layers)]

    def new_buffer(self, rows: int, like: Tensor) -> Tensor:
        max_len, n_layers, two, n_heads, d_k = self.shape
        return like.new_empty(max_len, n_layers, two, rows, n_heads, d_k)

    def append(self, layer: int, kv: Tensor, batch: int) -> tuple[Tensor, Tensor]:
        """Write layer ``layer``'s [K | V] of the new positions, rows (B T_new, 2D), after the
        positions held; return its every key and value so far, views of the buffer. The last
        layer's write adds the new positions to ``length``."""
        new = kv.size(0) // batch
        if self.buffer is None:
            self.buffer = self.new_buffer(batch, kv)
        end = self.length + new
        _, n_layers, _, n_heads, d_k = self.shape
        # (B, T_new, 2, H, d_k) -> (T_new, 2, B, H, d_k)
        block = kv.view(batch, new, 2, n_heads, d_k).permute(1, 2, 0, 3, 4)
        self.buffer[self.length : end, layer, :, :batch] = block
        held = self.buffer[:end, layer, :, :batch].permute(1, 2, 3, 0, 4)  # (2, B, H, T_k, d_k)
        if layer == n_layers - 1:
            self.length = end
        return held.unbind()

    def memory_keys_values(
        self,
        layer: int,
        memory: Tensor,
        project: Callable[[Tensor], tuple[Tensor, Tensor]],
        rows: int,
    ) -> tuple[Tensor, Tensor]:
        """Layer ``layer``'s K and V of the encoder output memory (B or 1, S, D) for ``rows``
        queries, (rows, H, S, d_k) each: projected by ``project`` at the first step, and kept for
        each number of rows."""
        if self.memory[layer] is None:
            self.memory[layer] = project(memory)
        by_rows = self.memory_by_rows[layer]
        if rows not in by_rows:
            by_rows[rows] = tuple(broadcast_batch(x, rows).contiguous() for x in self.memory[layer])
        return by_rows[rows]

    def reorder(self, index: Tensor) -> None:
        """Keep the rows in ``index`` (beam search: each survivor takes its parent's keys and
        values). A batch-1 cross-attention cache serves every row alike and stays as it is."""
        rows = index.numel()
        if self.spare is None or self.spare.size(3) != rows:
            self.spare = self.new_buffer(rows, self.buffer)
        torch.index_select(self.buffer[: self.length], 3, index, out=self.spare[: self.length])
        self.buffer, self.spare = self.spare, self.buffer
        for layer, (key, value) in enumerate(self.memory):
            if key.size(0) > 1:
                self.memory[layer] = key.index_select(0, index), value.index_select(0, index)
                self.memory_by_rows[layer].clear()
