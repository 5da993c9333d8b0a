"""Examples to padded batches of about the same number of tokens (section 5.1 of the paper:
"Sentence pairs were batched together by approximate sequence length")."""

from __future__ import annotations

import math
import random

from core.text.tokenizer import EOS_ID, Tokenizer, normalize_text
from train.data import Example

# A sampled segmentation is drawn from this many best ones (the "l-best" sampling of Kudo 2018)
SAMPLED_SEGMENTATIONS = 8
# The domain tag of a tagged corpus's sources (train/data.py): the byte piece 0xFF, which no UTF-8
# text produces, so the vocabulary needs no new row and no typed sentence can ever carry it
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


def padded_width(length: int, bucket: int) -> int:
    """A batch's padded length: its longest side rounded up to a multiple of ``bucket`` (0:
    the longest side itself)."""
    return -(-length // bucket) * bucket if bucket else length


def token_batches(
    lengths: list[tuple[int, int]], max_tokens: int, seed: int, bucket: int = 0
) -> list[list[int]]:
    """Indices grouped into batches whose padded size, rows x longest side, stays <= max_tokens.

    Examples are sorted by length (random order among equal lengths) so a batch pads little; the
    batches are then shuffled. The same seed gives the same batches, which is what lets a resumed
    run continue exactly where it stopped. With ``bucket``, a batch's longest side counts rounded
    up to a multiple of it (:func:`padded_width`), as train.loader pads it: few shapes, so that
    torch.compile keeps few graphs.
    """
    rng = random.Random(seed)
    order = sorted(range(len(lengths)), key=lambda i: (max(lengths[i]), rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        longest_if_added = max(longest, *lengths[i])
        size_if_added = (len(current) + 1) * padded_width(longest_if_added, bucket)
        if current and size_if_added > max_tokens:
            batches.append(current)
            current, longest_if_added = [], max(lengths[i])
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches
