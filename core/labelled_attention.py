"""Attention that travels with its labels (as in BertViz): the weights of every layer and head,
``weights[layer, head, query, key]`` as NumPy, with the text of every query and key.

A translation holds three kinds, piece by piece and merged into words:

    kind      queries (rows)                 keys (columns)
    encoder   source pieces <2de> ... </s>   source pieces
    decoder   decoder positions              decoder input pieces <s> ...
    cross     decoder positions              source pieces

A decoder position reads one piece and predicts the next, and is labelled with both:
"<s> → ▁Sie", "▁Sie → ▁isst", ..., the last one predicting "</s>". A beam search step has rows of
the same kind, one per live hypothesis, whose next piece is yet to be chosen: "beam 1: ▁Sie → ?".

It sits below the translator, which labels what the searches return, and below inspection, whose
lenses read it: core's layers point one way (tests/core/test_import_directions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from core.model.transformer import AttentionMaps, Intermediates
from core.text.tokenizer import BOS_ID
from core.text.words import merge_attention, words

PREDICTS = " → "
HYPOTHESIS_TAIL = 3  # pieces of a hypothesis shown in its beam-step label


@dataclass(frozen=True)
class LabelledAttention:
    """One kind of attention, each array (layers, heads, queries, keys)."""

    weights: np.ndarray  # softmax over the keys: rows sum to 1, masked cells exactly 0
    query_labels: list[str]
    key_labels: list[str]
    scores: np.ndarray | None = None  # QK^T / sqrt(d_k); None when merged into words
    allowed: np.ndarray | None = None  # (queries, keys): where the mask lets a query attend

    @property
    def masked_scores(self) -> np.ndarray | None:
        """The scores with -inf where the mask forbids, as the model computed them: derived, not
        stored (one mask serves every layer and head; keeping them would add half again to the
        scores' memory in every cached analysis)."""
        if self.scores is None or self.allowed is None:
            return None
        return np.where(self.allowed, self.scores, np.float32(-np.inf))  # float32, no upcast


@dataclass(frozen=True)
class AttentionSet:
    """The three kinds of attention of one translation."""

    encoder: LabelledAttention
    decoder: LabelledAttention
    cross: LabelledAttention


def prediction_labels(reads: Sequence[str], predicts: Sequence[str]) -> list[str]:
    """Decoder positions as 'what it reads → what it predicts'."""
    return [f"{read}{PREDICTS}{predicted}" for read, predicted in zip(reads, predicts)]


def hypothesis_labels(
    prefixes: Sequence[Sequence[int]],
    pieces: Callable[[list[int]], list[str]],
    bos_id: int = BOS_ID,
) -> list[str]:
    """The rows of a beam search step: each live hypothesis's newest position, which reads the
    end of its prefix (token ids, the decoder's first input ``bos_id`` not included) and predicts
    what the step chooses."""
    labels = []
    for beam, prefix in enumerate(prefixes, start=1):
        read = [bos_id, *prefix]
        cut = "… " if len(read) > HYPOTHESIS_TAIL else ""
        tail = " ".join(pieces(read[-HYPOTHESIS_TAIL:]))
        labels.append(f"beam {beam}: {cut}{tail}{PREDICTS}?")
    return labels


def labelled(
    maps: list[AttentionMaps], query_labels: Sequence[str], key_labels: Sequence[str], row: int = 0
) -> LabelledAttention:
    """L x (B, H, Q, K) maps of one layer stack -> the LabelledAttention of batch row ``row``."""

    def stack(name: str) -> np.ndarray:
        return torch.stack([getattr(m, name)[row] for m in maps]).float().cpu().numpy()

    # the mask broadcasts over layers and heads: the first layer's first head holds it
    allowed = ~torch.isneginf(maps[0].masked_scores[row, 0]).cpu().numpy()
    return LabelledAttention(
        stack("weights"), list(query_labels), list(key_labels), stack("scores"), allowed
    )


def traced_attention(
    intermediates: Intermediates,
    source: Sequence[str],
    decoder_input: Sequence[str],
    output: Sequence[str],
) -> AttentionSet:
    """The attention of a teacher-forced pass over one sentence, labelled with its pieces."""
    positions = prediction_labels(decoder_input, output)
    return AttentionSet(
        labelled(intermediates.encoder_self, source, source),
        labelled(intermediates.decoder_self, positions, decoder_input),
        labelled(intermediates.cross, positions, source),
    )


def in_words(
    pieces: AttentionSet,
    source: Sequence[str],
    decoder_input: Sequence[str],
    output: Sequence[str],
) -> AttentionSet:
    """The same attention between words (see :func:`core.text.words.merge_attention`).

    A decoder row becomes the positions that predict the pieces of one output word, labelled
    'previous word → word'; decoder keys are the words of the decoder input.
    """
    source_groups, source_words = words(source)
    input_groups, input_words = words(decoder_input)
    output_groups, output_words = words(output)
    positions = prediction_labels([input_words[0], *output_words[:-1]], output_words)

    def merge(attention: LabelledAttention, queries, keys) -> LabelledAttention:
        (query_groups, query_labels), (key_groups, key_labels) = queries, keys
        weights = merge_attention(attention.weights, query_groups, key_groups)
        return LabelledAttention(weights, query_labels, key_labels)

    return AttentionSet(
        merge(pieces.encoder, (source_groups, source_words), (source_groups, source_words)),
        merge(pieces.decoder, (output_groups, positions), (input_groups, input_words)),
        merge(pieces.cross, (output_groups, positions), (source_groups, source_words)),
    )
