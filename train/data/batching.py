"""Examples to padded batches of about the same number of tokens (section 5.1 of the paper:
"Sentence pairs were batched together by approximate sequence length")."""

from __future__ import annotations

import math
import random

import numpy as np

from core.text.tokenizer import EOS_ID, Tokenizer, normalize_text
from train.data.corpora import Example

# A sampled segmentation is drawn from this many best ones (the "l-best" sampling of Kudo 2018)
SAMPLED_SEGMENTATIONS = 8
# The domain tag of a tagged corpus's sources (train/data/corpora.py): the byte piece 0xFF, which no
# UTF-8 text produces, so the vocabulary needs no new row and no typed sentence can ever carry it
DOMAIN_TAG = "<0xFF>"
# Texts whose best segmentations are listed at once: all of an epoch's at once held every one of
# its million sentences' 8 lists of Python ints together (a peak of 12 GB on the full corpora)
SEGMENTATION_CHUNK = 10_000


def encode_examples(
    tokenizer: Tokenizer,
    examples: list[Example],
    max_len: int,
    alpha: float = 0.0,
    seed: int = 0,
    sides: str = "both",
) -> list[tuple]:
    """(source ids <2xx> ... </s>, target ids ... </s>) per example, a tagged example's source
    <2xx> DOMAIN_TAG ... </s>; pairs longer than the model's max_len - 1 on either side are
    dropped (the decoder input adds <s>).

    With alpha > 0 the pieces of the source, or of both sides (``sides``), are a sampled
    segmentation (subword regularisation): seeded, so the same seed gives the same pairs in any
    process. The other side keeps its best segmentation."""
    rng = random.Random(seed)

    def segmented(texts: list[str], sampled: bool) -> list[list[int]]:
        if sampled and alpha:
            return sampled_segmentations(tokenizer, texts, alpha, rng)
        return tokenizer.sp.encode([normalize_text(text) for text in texts])

    sources = segmented([tokenizer.truecase(e.source_text) for e in examples], sampled=True)
    targets = segmented(
        [tokenizer.target_text(e.target_text, e.target) for e in examples], sampled=sides == "both"
    )
    encoded = []
    domain_tag = tokenizer.sp.piece_to_id(DOMAIN_TAG)
    for example, source, target in zip(examples, sources, targets):
        source = tokenizer.source_input(source, example.target)
        if example.tagged:
            source.insert(1, domain_tag)
        target = [*target, EOS_ID]  # the decoder's output; collate() puts <s> before its input
        if len(source) < max_len and len(target) < max_len:
            encoded.append((source, target))
    return encoded


def sampled_segmentations(
    tokenizer: Tokenizer, texts: list[str], alpha: float, rng: random.Random
) -> list[list[int]]:
    """For each text, one of its SAMPLED_SEGMENTATIONS best segmentations x into pieces, drawn
    with P(x) proportional to P_unigram(x)^alpha, log P_unigram(x) = sum of its pieces' log
    probabilities; smaller alpha, more varied. (SentencePiece's own sampler cannot be seeded
    reproducibly across processes, which a resumed run needs.)"""
    log_probability = [tokenizer.sp.get_score(i) for i in range(len(tokenizer))]
    drawn = []
    for start in range(0, len(texts), SEGMENTATION_CHUNK):
        normalised = [normalize_text(text) for text in texts[start : start + SEGMENTATION_CHUNK]]
        for candidates in tokenizer.sp.nbest_encode_as_ids(
            normalised, nbest_size=SAMPLED_SEGMENTATIONS
        ):
            scores = [alpha * sum(log_probability[i] for i in pieces) for pieces in candidates]
            best = max(scores)
            weights = [math.exp(score - best) for score in scores]
            drawn.append(rng.choices(candidates, weights=weights)[0])
    return drawn


def padded_width(length, bucket: int):
    """A batch's padded length: its longest side rounded up to a width of the ladder of
    ``bucket`` (0: the longest side itself); of an int or of a numpy array of them.

    The ladder's steps grow with the length, as a float's do (3 significant bits): multiples of
    ``bucket`` up to 8 x bucket, then of 2 x bucket up to 16 x bucket, of 4 x bucket up to 32 x
    bucket, and so on. Rounding wastes under ``bucket`` positions up to 8 x bucket and under a
    fifth of the width above, and the widths stay few: bucket 8 up to 128 pieces has 12 (8, 16,
    .., 64, 80, 96, 112, 128). Plain multiples of 16 left 0.70 of the shipped mixture's padded
    positions real (issue #56)."""
    if not bucket:
        return length
    lengths = np.asarray(length, dtype=np.int64)
    octave = np.floor(np.log2(np.maximum(lengths - 1, 1) / bucket)).astype(np.int64)
    step = bucket * 2 ** np.maximum(octave - 2, 0)  # (length - 1) / bucket < 8: bucket
    width = -(-lengths // step) * step
    return int(width) if width.ndim == 0 else width


def token_batches(
    lengths: np.ndarray | list[tuple[int, int]], max_tokens: int, seed: int, bucket: int = 0
) -> list[np.ndarray]:
    """Indices grouped into batches (an array each) whose padded size, rows x longest side,
    stays <= max_tokens (a pair longer than that alone is a batch of its own).

    Examples are sorted by length (random order among equal lengths) so a batch pads little; the
    batches are then shuffled. The same seed gives the same batches, which is what lets a resumed
    run continue exactly where it stopped. With ``bucket``, a batch's longest side counts rounded
    up to a width of the ladder (:func:`padded_width`), as train.data.loader pads it: few shapes, so
    that torch.compile keeps few graphs; and among the pairs of one such width the order is by
    the source's width, then the target's (:func:`width_order`), so that a batch's shorter side
    pads to its own width, not to the longer side's.

    In numpy, for an epoch of 870,431 pairs: the random draws are Python's (random.Random(seed),
    one per pair in order, then the shuffle); without a bucket the batches are the very ones of
    the loop over pairs that this replaced (2.9-4.8 s an epoch), and a run resumed across the
    change goes on with the same batches. A bucketed run (the gpu and full presets) resumed
    across the order by both sides' widths (issue #56) goes on with batches of that order.
    """
    rng = random.Random(seed)
    pairs = np.asarray(lengths, dtype=np.int64).reshape(-1, 2)  # (P, 2)
    ties = np.fromiter((rng.random() for _ in range(len(pairs))), np.float64, len(pairs))
    by_tie = np.argsort(ties)  # then a stable sort by length: 5x faster than np.lexsort here
    order = by_tie[np.argsort(width_order(pairs, bucket)[by_tie], kind="stable")]
    width = padded_width(pairs[order].max(1), bucket)  # non-decreasing along order
    # Greedily, a batch begun at position i of order takes position j while j - i + 1 rows of
    # width[j] fit: j - capacity[j] + 1 <= i, and that left side grows strictly with j
    capacity = np.maximum(max_tokens // np.maximum(width, 1), 1)
    first_start = np.arange(len(order)) - capacity + 1  # the earliest start that fits j
    starts, start = [], 0
    while start < len(order):
        starts.append(start)
        start = int(np.searchsorted(first_start, start, side="right"))
    batches = np.split(order, starts[1:]) if starts else []
    rng.shuffle(batches)
    return batches


def width_order(pairs: np.ndarray, bucket: int) -> np.ndarray:
    """The sort key of pairs of lengths (P, 2): without a bucket the longer side; with one the
    padded width of the longer side, then of the source, then of the target.

    Sorted by the longer side alone, a batch pads both sides to about the longer side's width,
    and a pair whose one side is much shorter than the other wastes the difference: the shipped
    mixture's 25,000-token batches on the ladder of 4 kept 0.848 of their positions real so,
    0.902 in this order, and 0.929 on the ladder of 2 (issue #56: benchmarks/epoch_batching.py).
    The shapes are more (14 to 54 on the ladder of 4, 76 on that of 2), which the compiled
    layers' dynamic shapes take without a new graph (train/loop/compiled.py)."""
    if not bucket:
        return pairs.max(1)
    source, target = padded_width(pairs[:, 0], bucket), padded_width(pairs[:, 1], bucket)
    widths = padded_width(int(np.max(pairs, initial=0)), bucket) + 1  # > any padded width
    return (np.maximum(source, target) * widths + source) * widths + target
