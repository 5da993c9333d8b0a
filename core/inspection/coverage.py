"""Source coverage: how much attention each source piece (or word) received over the whole output,
and from it the pieces a translation may have left out or said twice.

Tu et al. 2016 ("Modeling Coverage for Neural Machine Translation") keep a coverage vector while
decoding, the attention each source word j has received up to output step i:

    C(i, j) = C(i - 1, j) + α(i, j)            (their linguistic coverage divides α by a fertility)

so that at the end C(j) = Σ_i α(i, j). GNMT (Wu et al. 2016) re-ranks finished hypotheses with the
coverage penalty cp(X; Y) = β Σ_j log(min(Σ_i p(i, j), 1.0)), which costs a source word that
received less than one output word's worth of attention in total.

Here, for the cross-attention of a traced translation, weights[l, h, t, s] (rows t: the decoder
positions, the one predicting </s> included; columns s: the source pieces), per layer and head

    coverage[l, h, s] = Σ_t weights[l, h, t, s]

and for one number per source piece the mean of those over the heads of a layer, or over every
layer and head. Each row sums to 1, so the coverages sum to the number of rows: a piece translated
once receives about one row's worth. In words (``Translation.word_attention``, see
:func:`core.labelled_attention.in_words`) a row is an output word (its pieces' rows
averaged) and a source word receives its pieces' weights summed: coverage then counts output words,
and a word the output spells in three pieces still counts once.

Under-covered, below ``Thresholds.under``: little attention, likely dropped. Over-covered, above
``Thresholds.over``: attended by several output positions, likely translated twice. Both are
candidates, not verdicts: a Transformer's cross-attention is spread over many heads and drawn to
sinks, and a decoder can attend to a word and still leave it out (the rows that attended it, see
:meth:`Coverage.received`, show when it did). The language tag and </s> soak up attention without
being translated, and are never flagged, nor is punctuation: :func:`word_coverage` gives the
punctuation fused to a word ("tired.") a column of its own, so that the attention a final full
stop soaks up does not make its word look said twice.

Which heads to read, and the thresholds, are measured rather than assumed: ``python -m
train.studies.coverage_study`` scores every :class:`Aggregation` (every head, one layer, the
survey's alignment-like heads, the Explain page's lenses through :func:`lens_coverage`) against
words labelled by hand (train/studies/coverage_labels.tsv), and the model card keeps every
aggregation's precision and recall, read back by :func:`measured_flags`: the best of the
cross-attention's aggregations, and the best of all when that is a lens (on the shipped model
occlusion, :func:`occlusion_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.errors import InputError
from core.inspection.head_statistics import ALIGNMENT_THRESHOLD, is_punctuation
from core.labelled_attention import LabelledAttention, prediction_labels
from core.text.tokenizer import BOS_ID
from core.text.words import is_special_piece, merge_attention, word_groups, word_label

if TYPE_CHECKING:  # a type hint only: inspection does not import the translator above it
    from core.model.transformer import Transformer
    from core.translator import Translation

UNDER_COVERED = 0.5  # less than half a row's worth of attention in total
OVER_COVERED = 1.5  # more than one and a half rows' worth
NOT_YET = "?"  # what the newest row of a live hypothesis predicts: the step has not chosen


@dataclass(frozen=True)
class Thresholds:
    """Coverage below ``under`` flags a source piece as under-covered, above ``over`` as
    over-covered."""

    under: float = UNDER_COVERED
    over: float = OVER_COVERED

    def __post_init__(self) -> None:
        if not (0 <= self.under < self.over):
            raise InputError(
                f"Coverage thresholds need 0 <= under < over, got under {self.under} and over "
                f"{self.over}."
            )


@dataclass(frozen=True)
class Flags:
    """The source pieces (or words) flagged, as positions into the source labels, the most extreme
    first."""

    under: list[int]  # coverage below the under threshold, lowest first
    over: list[int]  # coverage above the over threshold, highest first


@dataclass(frozen=True)
class Coverage:
    """The coverage of the source by the rows of a cross-attention (layers, heads, rows, source)."""

    attention: LabelledAttention

    @property
    def source_labels(self) -> list[str]:
        return self.attention.key_labels

    @property
    def per_head(self) -> np.ndarray:
        """coverage[l, h, s] = Σ_t weights[l, h, t, s]: (layers, heads, source)."""
        return self.attention.weights.sum(axis=2)

    def received(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """What each row gave each source piece, (rows, source): the weights of ``head`` of
        ``layer`` (both counted from 0), their mean over the heads of ``layer`` with head None,
        or over every layer and head with both None. Column s shows which output rows attended
        piece s; its sum is the piece's coverage."""
        weights = self.attention.weights  # (L, H, rows, S)
        if layer is None:
            if head is not None:
                raise InputError("Pick a layer for the head.")
            return weights.mean(axis=(0, 1))
        layers, heads = weights.shape[:2]
        if not 0 <= layer < layers:
            raise InputError(f"There is no layer {layer + 1}: the model has {layers}.")
        if head is None:
            return weights[layer].mean(axis=0)
        if not 0 <= head < heads:
            raise InputError(f"There is no head {head + 1}: a layer has {heads}.")
        return weights[layer, head]

    def values(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """One coverage per source piece, (source,): ``per_head`` of ``head`` of ``layer``
        (counted from 0), its mean over the heads of ``layer`` with head None, or over every
        layer and head with both None."""
        return self.received(layer, head).sum(axis=0)

    def growth(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """Tu et al.'s C(i, j) row by row, (rows, source): the coverage after each output
        position, the last row equal to :meth:`values`."""
        return np.cumsum(self.received(layer, head), axis=0)

    def flags(self, layer: int | None = None, thresholds: Thresholds = Thresholds()) -> Flags:
        """The under- and over-covered source pieces of :meth:`values`, special pieces (the
        language tag, </s>) left out."""
        return flag(self.values(layer), self.source_labels, thresholds)


def attention_coverage(cross: LabelledAttention) -> Coverage:
    """The coverage of a translation's cross-attention, by pieces (``Translation.attention
    .cross``) or by words (``Translation.word_attention.cross``)."""
    if cross.weights.ndim != 4 or cross.weights.shape[-1] != len(cross.key_labels):
        raise InputError(
            "Coverage needs cross-attention weights (layers, heads, rows, source) with a label "
            f"per source column, got {cross.weights.shape} for {len(cross.key_labels)} labels."
        )
    if cross.weights.shape[2] == 0:
        raise InputError("Coverage needs at least one output row.")
    return Coverage(cross)


def word_coverage(result: Translation, weights: np.ndarray | None = None) -> Coverage:
    """The coverage of ``result``'s source words, as
    ``attention_coverage(result.word_attention.cross)``
    but with punctuation fused to a word's end its own column ("tired." read as "tired" and "."):
    the final full stop soaks up attention as </s> does, and a word should not look said twice
    for the attention its punctuation received. Rows are the output words. ``weights`` (layers,
    heads, output pieces, source pieces) stands in for the cross-attention when given (see
    :func:`lens_coverage`)."""
    source = result.source_tokens
    words = [part for group in word_groups(source) for part in _punctuation_apart(group, source)]
    if weights is None:
        weights = result.attention.cross.weights
    weights = merge_attention(weights, word_groups(result.output_tokens), words)
    labels = [word_label([source[i] for i in group]) for group in words]
    return attention_coverage(
        LabelledAttention(weights, result.word_attention.cross.query_labels, labels)
    )


def _punctuation_apart(group: list[int], pieces: Sequence[str]) -> list[list[int]]:
    """A word's pieces, with the punctuation pieces at its end as a word of their own: [▁tired,
    .] -> [▁tired], [.]; a word of punctuation alone stays whole."""
    end = len(group)
    while end > 0 and is_punctuation(pieces[group[end - 1]]):
        end -= 1
    return [group[:end], group[end:]] if 0 < end < len(group) else [group]


def flag(values: np.ndarray, labels: Sequence[str], thresholds: Thresholds = Thresholds()) -> Flags:
    """Positions of the ``values`` (one per source label) below ``thresholds.under``, lowest first,
    and above ``thresholds.over``, highest first; special pieces and punctuation, which soak up
    attention without being translated word for word, are never flagged."""
    candidates = [
        i
        for i, label in enumerate(labels)
        if not is_special_piece(label) and not is_punctuation(label)
    ]
    under = [i for i in candidates if values[i] < thresholds.under]
    over = [i for i in candidates if values[i] > thresholds.over]
    return Flags(sorted(under, key=lambda i: values[i]), sorted(over, key=lambda i: -values[i]))


def lens_coverage(result: Translation, lens: np.ndarray) -> Coverage:
    """Word coverage from another lens than cross-attention (attribution.py's gradient x input,
    integrated gradients, occlusion, norm-based, rollout): ``lens`` (output pieces, source pieces)
    gives each output piece t a value v(t, j) per source piece j, made a row of shares like an
    attention row,

        share(t, j) = |v(t, j)| / Σ_j' |v(t, j')|

    and read by :func:`word_coverage` as one layer of one head. A row with no signal at all
    (every |v| 0) shares evenly."""
    magnitude = np.abs(np.asarray(lens, dtype=float))
    expected = result.attention.cross.weights.shape[2:]
    if magnitude.shape != expected:
        raise InputError(f"A lens needs a value per output and source piece {expected}.")
    totals = magnitude.sum(axis=-1, keepdims=True)
    even = np.full_like(magnitude, 1 / magnitude.shape[-1])
    shares = np.divide(magnitude, totals, out=even, where=totals > 0)
    return word_coverage(result, shares[None, None])


OCCLUSION = "occlusion"  # the Explain lens the Coverage page computes for every output piece


def occlusion_rows(model: Transformer, result: Translation) -> np.ndarray:
    """The Explain page's occlusion lens (:func:`core.inspection.attribution.occlusion`) for every
    output piece, (output pieces, source pieces): the drop in log p(y_t) with source piece j
    replaced by <unk>, one batch of the sentence with each piece hidden per output piece. Read as
    coverage by :func:`lens_coverage`, as train/studies/coverage_study.py measured it."""
    from core.inspection import attribution  # Captum loads when a lens is asked for

    rows = result.attention.cross.weights.shape[2]
    return np.stack([attribution.occlusion(model, result, t) for t in range(rows)])


def occlusion_per_translation(result: Translation) -> float:
    """Roughly how many times as long :func:`occlusion_rows` takes as the traced beam search that
    made ``result``: S (S + rows) / 100 for S source pieces and rows output pieces (each row runs
    the model over S copies of the sentence; the search runs it over the beam, a piece a step).
    On the shipped model, one thread, beam 4: 3.3 to 6.8 times for single sentences (this says 2.9
    to 5.8), 21 and 30 times for two and three sentences (14 and 41); on the tests' tiny model 14
    to 30 times (22 to 62). An estimate, for deciding whether to wait for it."""
    rows, pieces = result.attention.cross.weights.shape[2:]
    return pieces * (pieces + rows) / 100


def path_attention(
    result: Translation,
    ids: Sequence[int],
    pieces: Callable[[list[int]], list[str]],
    bos_id: int = BOS_ID,
) -> LabelledAttention:
    """The cross-attention rows that decoded ``ids`` (the decoder's first input
    ``bos_id`` not included) in the traced beam search of ``result``: at each step t, the row of
    the live hypothesis ids[:t], (layers, heads, rows, source). A live hypothesis of step s has
    s + 1 rows, the newest predicting what step s is choosing (NOT_YET); a finished hypothesis of
    n tokens has n, the last predicting its last token. Cached decoding gives a teacher-forced
    pass's rows, so the output's path is its traced ``attention.cross``
    (tests/core/test_coverage.py)."""
    rows = []
    for step in result.steps:
        prefix = list(ids[: step.step])
        found = [i for i, h in enumerate(step.hypotheses) if h.ids == prefix]
        if len(prefix) < step.step or not found:
            break
        rows.append(step.cross_weights[:, :, found[0]])  # (L, H, S)
    if not rows or len(rows) < len(ids):
        raise InputError("Those tokens are no hypothesis of this beam search.")
    reads = pieces([bos_id, *ids[: len(rows) - 1]])
    predicts = pieces(list(ids[: len(rows)]))
    predicts += [NOT_YET] * (len(rows) - len(predicts))
    return LabelledAttention(
        np.stack(rows, axis=2),  # (L, H, rows, S)
        prediction_labels(reads, predicts),
        result.source_tokens,
    )


def step_coverage(
    result: Translation,
    step: int,
    pieces: Callable[[list[int]], list[str]],
    bos_id: int = BOS_ID,
) -> list[Coverage]:
    """The coverage so far of each live hypothesis of beam step ``step``, in the step's order:
    how coverage grows as the search goes (``pieces``, ``bos_id``: see :func:`path_attention`)."""
    steps = result.steps
    if not 0 <= step < len(steps):
        raise InputError(f"There is no step {step}: the search took {len(steps)} (from 0).")
    hypotheses = steps[step].hypotheses
    return [attention_coverage(path_attention(result, h.ids, pieces, bos_id)) for h in hypotheses]


@dataclass(frozen=True)
class Aggregation:
    """Which heads' coverage make one number per source word: the mean over ``heads`` ((layer,
    head) pairs counted from 0) when given, else over the heads of ``layer`` (from 0), else over
    every layer and head,

        value(s) = (1 / |heads|) Σ_(l, h) ∈ heads Σ_t weights[l, h, t, s]."""

    name: str
    layer: int | None = None
    heads: tuple[tuple[int, int], ...] = ()

    def received(self, found: Coverage) -> np.ndarray:
        """What each output row gave each source word, (rows, source), in these heads."""
        if not self.heads:
            return found.received(self.layer)
        weights = found.attention.weights
        layers, heads = weights.shape[:2]
        if any(not (0 <= layer < layers and 0 <= head < heads) for layer, head in self.heads):
            raise InputError(f"{self.name}: a head the model ({layers} x {heads}) lacks.")
        return np.mean([weights[layer, head] for layer, head in self.heads], axis=0)

    def values(self, found: Coverage) -> np.ndarray:
        """One coverage per source word, (source,)."""
        return self.received(found).sum(axis=0)

    def growth(self, found: Coverage) -> np.ndarray:
        """Tu et al.'s C(i, j) in these heads, row by row, (rows, source)."""
        return np.cumsum(self.received(found), axis=0)

    def describe(self) -> str:
        """The heads in words: "every layer and head", "layer 3", "L3 H4, L4 H2" (from 1)."""
        if self.heads:
            return ", ".join(f"L{layer + 1} H{head + 1}" for layer, head in self.heads)
        return "every layer and head" if self.layer is None else f"layer {self.layer + 1}"


EVERY_HEAD = Aggregation("mean of all heads")


def alignment_heads(diagonality: np.ndarray, threshold: float = ALIGNMENT_THRESHOLD) -> Aggregation:
    """The cross-attention heads the head survey calls alignment-like, diagonality at least
    ``threshold`` over its sample (heads.json, never the labelled words), most diagonal first."""
    order = np.argsort(-diagonality, axis=None, kind="stable")
    picked = [np.unravel_index(i, diagonality.shape) for i in order]
    heads = tuple(
        (int(layer), int(head)) for layer, head in picked if diagonality[layer, head] >= threshold
    )
    if not heads:
        raise InputError(f"No cross-attention head has diagonality {threshold:g} or more.")
    return Aggregation("alignment-like heads", heads=heads)


STUDY_KEY = "coverage_study"  # the model card's record of python -m train.studies.coverage_study
LENS_PREFIX = "lens: "  # the study's name of an Explain lens read as coverage: "lens: occlusion"


def best_entry(entries: Sequence[dict], lenses: bool = True) -> dict:
    """The study's entry (``record["aggregations"]``) with the best cross-validated F1, the first
    of equals: of every aggregation, or with ``lenses`` False of those the cross-attention alone
    gives (no lens)."""
    candidates = [e for e in entries if lenses or not e["name"].startswith(LENS_PREFIX)]
    if not candidates:
        raise InputError("The coverage study has no aggregation to choose from.")
    return max(candidates, key=lambda entry: entry["cross_validated"]["f1"])


@dataclass(frozen=True)
class MeasuredLens:
    """An Explain lens read as coverage (:func:`lens_coverage`) that the coverage study found
    better than every aggregation of the cross-attention: its thresholds tuned on every labelled
    word, and the precision and recall its flags had on folds their thresholds were not chosen
    on."""

    lens: str  # the lens's name on the Explain page: "occlusion"
    thresholds: Thresholds
    precision: float | None
    recall: float | None
    f1: float


@dataclass(frozen=True)
class MeasuredFlags:
    """The aggregation and thresholds the coverage study found best on a model, with the
    precision and recall its flags had on the labelled words (on folds its thresholds were not
    chosen on)."""

    aggregation: Aggregation  # the best of the cross-attention's aggregations
    thresholds: Thresholds
    precision: float  # flags that were right / flags
    recall: float  # dropped or said-twice words flagged as such / such words
    words: int  # labelled words scored
    problems: int  # of them dropped or said twice
    model_sha256: str  # the model.pt the study translated with
    command: str
    a_priori: dict[str, tuple[float | None, float | None]]  # name -> (precision, recall) at 0.5/1.5
    best_lens: MeasuredLens | None = None  # the best of all when it is a lens, not attention


def measured_flags(card: dict) -> MeasuredFlags | None:
    """The study's best flags from a model card's record (see train/studies/coverage_study.py), None
    when the card has none: its ``best`` (of the cross-attention's aggregations), and the best
    of all its aggregations when that is a lens, by the same rule (:func:`best_entry`)."""
    record = card.get(STUDY_KEY)
    if not record:
        return None
    best = record["best"]
    heads = tuple((int(layer), int(head)) for layer, head in best.get("heads", []))
    overall = best_entry(record["aggregations"])
    best_lens = None
    if overall["name"].startswith(LENS_PREFIX):
        held_out, tuned = overall["cross_validated"], overall["tuned_on_all"]
        best_lens = MeasuredLens(
            overall["name"].removeprefix(LENS_PREFIX),
            Thresholds(tuned["under"], tuned["over"]),
            held_out["precision"],
            held_out["recall"],
            held_out["f1"],
        )
    return MeasuredFlags(
        Aggregation(best["name"], best.get("layer"), heads),
        Thresholds(best["under"], best["over"]),
        best["precision"],
        best["recall"],
        record["words"],
        record["problems"],
        record["model_sha256"],
        record["command"],
        {
            entry["name"]: (entry["a_priori"]["precision"], entry["a_priori"]["recall"])
            for entry in record["aggregations"]
        },
        best_lens,
    )
