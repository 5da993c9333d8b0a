"""What each attention head does, in numbers: statistics of one kind of attention, one value per
layer and head, and a role label per head read off them.

The input is one kind of :class:`core.labelled_attention.LabelledAttention` between
pieces: ``weights`` of shape (layers, heads, queries, keys), rows summing to 1 and masked cells
exactly 0, with the text of every key (``"<2de>"``, ``"▁The"``, ``"."``, ``"</s>"``). For
self-attention
(encoder, decoder) query i and key i are the same position; cross-attention rows are target
positions and its keys source positions. Every statistic returns an array (layers, heads), the
mean of a per-row value over the rows of one sentence; :func:`mean_over_sentences` averages them
over many sentences for stable figures.

Sources: Clark et al. 2019, "What Does BERT Look At? An Analysis of BERT's Attention" (entropy,
sinks); Voita et al. 2019, "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy
Lifting, the Rest Can Be Pruned" (confidence, positional heads); Raganato & Tiedemann 2018, "An
Analysis of Encoder Representations in Transformer-Based Machine Translation" (alignment heads).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.labelled_attention import AttentionSet, LabelledAttention
from core.text.tokenizer import LANGUAGES, language_tag

EOS = "</s>"
BOS = "<s>"
MARIAN_START = "<pad>"  # a MarianMT decoder's first input (core/files/marian.py)
LANGUAGE_TAGS = frozenset(language_tag(target) for target in LANGUAGES)
SINK_KINDS = ("eos", "tag_bos", "punctuation")
OFFSETS = {"previous": -1, "same": 0, "next": 1}  # key position - query position

# Role thresholds, shown to the user next to the labels.
SINK_THRESHOLD = 0.5  # sink share (</s>, <s>/tag, punctuation), for a head that is not broad
# Share of rows whose top key is one neighbour, read as role_attention reads a head (in words,
# the decoder in pieces). Voita et al. 2019 call a head positional at 90% (a larger model's
# heads); over the survey's sample of this model (pretrained/en-de-fr, 200 validation sentences,
# 2026-11-28) two heads pass: encoder L2 H2 on the previous word in 78% of rows (83% on the animal
# sentence) and L1 H7 on the next in 79%; no other self-attention head is above 64% (the next:
# encoder L6 H8 64% previous, L1 H1 62% own word, decoder L6 H3 62% own piece): 70% sits in that
# gap, "most rows" by a margin.
POSITIONAL_THRESHOLD = 0.7
ALIGNMENT_THRESHOLD = 0.85  # diagonality of a cross-attention head
BROAD_ENTROPY = 0.8  # normalised entropy: weight spread over most of the keys

# the positional roles by neighbour, as OFFSETS names them; the group is "positional"
NEIGHBOUR_ROLES = {"previous": "previous word", "same": "own word", "next": "next word"}
ROLES = ("sink", *NEIGHBOUR_ROLES.values(), "alignment-like", "broad", "other")


def _row_mean(per_row: np.ndarray) -> np.ndarray:
    """(L, H, Q) -> (L, H): the mean over the rows of one sentence."""
    return per_row.mean(axis=-1)


def _require_self_attention(weights: np.ndarray) -> None:
    queries, keys = weights.shape[-2:]
    if queries != keys:
        raise ValueError(f"self-attention needs as many queries as keys, got {queries}x{keys}")


def _attendable_keys(weights: np.ndarray) -> np.ndarray:
    """(L, H, Q, K) -> (L, H, Q): the keys a row can attend to, read off the weights: masked cells
    are exactly 0. (A weight that underflowed to 0 in a very peaked row is counted as masked.)"""
    return (weights > 0).sum(axis=-1)


def _row_entropy(weights: np.ndarray) -> np.ndarray:
    """(L, H, Q, K) -> (L, H, Q): -sum_j a_ij log a_ij in nats, with 0 log 0 = 0."""
    logs = np.log(np.where(weights > 0, weights, 1.0))
    return -(weights * logs).sum(axis=-1)


def entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy of the attention rows, in nats (Clark et al. 2019).

    entropy = mean_i ( -sum_j a_ij log a_ij ),  0 log 0 = 0.

    0 for a head that puts each row on one key, log n for a row spread evenly over n keys. Rows of
    different lengths (causal decoder rows, short and long sentences) have different maxima: see
    :func:`normalised_entropy`.
    """
    return _row_mean(_row_entropy(weights))


def normalised_entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy of each row divided by its maximum, log(number of attendable keys) (Clark et al.
    2019's entropy, rescaled).

    normalised_entropy = mean_i ( -sum_j a_ij log a_ij / log n_i ),  n_i = #{j : a_ij > 0},

    in [0, 1]: 0 when a row is on one key, 1 when it is uniform over every key it may see. A row
    with a single attendable key (the first causal decoder row) counts as 0. This is the one the
    dashboard should colour by and the one BROAD_ENTROPY applies to: it compares rows of
    different lengths and sentences of different lengths on one scale.
    """
    row_maximum = np.log(_attendable_keys(weights))  # (L, H, Q)
    row_entropy = _row_entropy(weights)
    ratio = np.divide(
        row_entropy, row_maximum, out=np.zeros_like(row_entropy), where=row_maximum > 0
    )
    return _row_mean(ratio)


def confidence(weights: np.ndarray, key_labels: Sequence[str]) -> np.ndarray:
    """Mean of each row's largest weight, excluding </s> (Voita et al. 2019).

    confidence = mean_i max_{j : key j is not </s>} a_ij.

    "Excluding </s>" means the maximum is taken over the other keys, with the weights as they
    are (not renormalised): a head that puts every row on </s> has confidence 0, a head that puts
    every row on one other key has confidence 1. Without a key other than </s> it is 0.
    """
    kept = np.array([label != EOS for label in key_labels])
    if not kept.any():
        return np.zeros(weights.shape[:2])
    return _row_mean(weights[..., kept].max(axis=-1))


def is_punctuation(label: str) -> bool:
    """A piece made only of Unicode punctuation (categories P*), once its word marker ▁ is
    dropped: ".", ",", "▁«", "?!"."""
    text = label.replace("▁", "")
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def sink_kind(label: str) -> str | None:
    """Which kind of sink a key is: "eos" (</s>), "tag_bos" (the language tag <2de>/<2fr> or a
    Marian model's >>de<<, or <s>, the first key of the decoder; a Marian model's is <pad>),
    "punctuation", or None for an ordinary key."""
    if label == EOS:
        return "eos"
    marian_tag = label.startswith(">>") and label.endswith("<<")
    if label in (BOS, MARIAN_START) or label in LANGUAGE_TAGS or marian_tag:
        return "tag_bos"
    if is_punctuation(label):
        return "punctuation"
    return None


def sink_shares(
    weights: np.ndarray, key_labels: Sequence[str], self_attention: bool
) -> dict[str, np.ndarray]:
    """Share of each row's weight on each kind of sink key (Clark et al. 2019).

    sink_share_kind = mean_{i in R} sum_{j : key j is a sink of that kind} a_ij,

    for the kinds of :func:`sink_kind`: "eos", "tag_bos", "punctuation". Clark et al. find heads
    that park their weight on [SEP], [CLS] and punctuation when they have nothing to do; ours are
    </s>, the language tag or <s>, and punctuation. R is every row for cross-attention; for
    self-attention it is the rows whose own position is not a sink, since a sink reading itself
    or another sink says nothing (the first causal decoder row can only read <s>), and a head
    that keeps each word on itself should not look like a sink in a short sentence. If every
    position is a sink, R is every row.
    """
    kinds = [sink_kind(label) for label in key_labels]
    rows = np.ones(weights.shape[-2], dtype=bool)  # (Q,)
    if self_attention:
        _require_self_attention(weights)
        if any(kind is None for kind in kinds):
            rows = np.array([kind is None for kind in kinds])
    shares = {}
    for kind in SINK_KINDS:
        on_kind = np.array([k == kind for k in kinds], dtype=weights.dtype)  # (K,)
        shares[kind] = _row_mean((weights @ on_kind)[..., rows])
    return shares


def sink_share(weights: np.ndarray, key_labels: Sequence[str], self_attention: bool) -> np.ndarray:
    """Share of the weight on all sinks together (Clark et al. 2019): the sum of the kinds of
    :func:`sink_shares`, mean_{i in R} sum_{j : key j is a sink} a_ij."""
    return sum(sink_shares(weights, key_labels, self_attention).values())


def positional_shares(weights: np.ndarray) -> dict[str, np.ndarray]:
    """Self-attention: share of rows whose top key is the previous, the same or the next position
    (Voita et al. 2019, who call a head "positional" when one of them is at least 90%).

    share_offset = #{i : argmax_j a_ij = i + offset} / #{i : position i + offset exists},

    for offset -1 ("previous"), 0 ("same"), +1 ("next"). Only rows that have such a neighbour
    count: the first row has no previous position, so a previous-token head scores 100%. Ties go
    to the first key. The causal decoder never sees the next position: its "next" share is 0.
    """
    _require_self_attention(weights)
    n = weights.shape[-1]
    top_key = weights.argmax(axis=-1)  # (L, H, Q)
    positions = np.arange(n)
    shares = {}
    for name, offset in OFFSETS.items():
        has_neighbour = (positions + offset >= 0) & (positions + offset < n)  # (Q,)
        hits = (top_key == positions + offset)[..., has_neighbour]
        shares[name] = hits.mean(axis=-1) if has_neighbour.any() else np.zeros(weights.shape[:2])
    return shares


def mean_distance(weights: np.ndarray) -> np.ndarray:
    """Self-attention: mean attention distance, in positions.

    mean_distance = mean_i sum_j a_ij |i - j|.

    0 for a head on the same position, 1 for a head on a neighbour, large for heads that reach
    across the sentence.
    """
    _require_self_attention(weights)
    positions = np.arange(weights.shape[-1])
    distance = np.abs(positions[:, None] - positions[None, :])  # (Q, K)
    return _row_mean((weights * distance).sum(axis=-1))


def _relative_positions(n: int) -> np.ndarray:
    """The centres of n equal slices of [0, 1]: position i of n -> (i + 1/2) / n."""
    return (np.arange(n) + 0.5) / n


def diagonality(weights: np.ndarray) -> np.ndarray:
    """Cross-attention: how close a head's weight lies to the diagonal of the (target, source)
    rectangle, a proxy for the alignment heads of translation models (Raganato & Tiedemann 2018;
    Voita et al. 2019).

    diagonality = 1 - mean_i sum_j a_ij |r_i - s_j|,  r_i = (i + 1/2)/T,  s_j = (j + 1/2)/S,

    for T target rows and S source keys: the weight-averaged distance between relative positions,
    turned into a score in [0, 1]. 1 for target i on source i when T = S; a head attending
    uniformly scores about 2/3, one on the reversed diagonal about 1/2. It tolerates local
    reordering (German verbs move) and does not ask for one key per row.
    """
    targets, sources = weights.shape[-2:]
    distance = np.abs(
        _relative_positions(targets)[:, None] - _relative_positions(sources)[None, :]
    )  # (T, S)
    return 1.0 - _row_mean((weights * distance).sum(axis=-1))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 of a vector, tied values sharing their average rank (as Spearman's rho
    needs)."""
    _, tie_group, group_sizes = np.unique(values, return_inverse=True, return_counts=True)
    first_rank = np.cumsum(group_sizes) - group_sizes
    return (first_rank + (group_sizes - 1) / 2)[tie_group]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation; 0 when either side is constant (no order to follow)."""
    rank_x, rank_y = _ranks(x) - (len(x) - 1) / 2, _ranks(y) - (len(y) - 1) / 2
    spread = np.sqrt((rank_x**2).sum() * (rank_y**2).sum())
    return float((rank_x * rank_y).sum() / spread) if spread > 0 else 0.0


def monotonicity(weights: np.ndarray) -> np.ndarray:
    """Cross-attention: does the top source key move forward as the target moves forward?

    monotonicity = Spearman's rho between the row index i and the row's top key argmax_j a_ij,

    in [-1, 1]: 1 when each row's top key comes after (or with) the previous row's, as a
    monotone word alignment would (Raganato & Tiedemann 2018); -1 for the reversed order; 0 when
    every row has the same top key.
    """
    top_key = weights.argmax(axis=-1)  # (L, H, Q)
    rows = np.arange(weights.shape[-2])
    return np.array([[_spearman(rows, head) for head in layer] for layer in top_key])


def statistics_per_head(
    weights: np.ndarray, key_labels: Sequence[str], self_attention: bool
) -> dict[str, np.ndarray]:
    """Every statistic of one kind of attention for one sentence, each (layers, heads).

    Keys: "entropy", "normalised_entropy", "confidence", "sink_share", "sink_share_eos",
    "sink_share_tag_bos", "sink_share_punctuation"; for self-attention also "previous_share",
    "same_share", "next_share", "mean_distance"; for cross-attention "diagonality",
    "monotonicity". The app and the survey pass :func:`role_attention`, in words but for the
    decoder: there punctuation is glued to its word, and a punctuation sink is a word of
    punctuation alone.
    """
    if weights.ndim != 4 or weights.shape[-1] != len(key_labels):
        raise ValueError(
            f"expected weights (layers, heads, queries, {len(key_labels)} keys), "
            f"got {weights.shape}"
        )
    shares = sink_shares(weights, key_labels, self_attention)
    statistics = {
        "entropy": entropy(weights),
        "normalised_entropy": normalised_entropy(weights),
        "confidence": confidence(weights, key_labels),
        "sink_share": sum(shares.values()),
        **{f"sink_share_{kind}": share for kind, share in shares.items()},
    }
    if self_attention:
        positional = positional_shares(weights)
        statistics |= {f"{name}_share": share for name, share in positional.items()}
        statistics["mean_distance"] = mean_distance(weights)
    else:
        statistics["diagonality"] = diagonality(weights)
        statistics["monotonicity"] = monotonicity(weights)
    return statistics


def mean_over_sentences(
    sentences: Iterable[tuple[np.ndarray, Sequence[str]]], self_attention: bool
) -> dict[str, np.ndarray]:
    """The mean of each statistic of :func:`head_statistics` over sentences, each given as
    (weights, key_labels) of one kind: every sentence counts the same, whatever its length."""
    per_sentence = [
        statistics_per_head(weights, key_labels, self_attention)
        for weights, key_labels in sentences
    ]
    if not per_sentence:
        raise ValueError("no sentences to average over")
    return {
        name: np.mean([statistics[name] for statistics in per_sentence], axis=0)
        for name in per_sentence[0]
    }


@dataclass(frozen=True)
class HeadRole:
    """The role of one head (layer and head count from 0) and the figure that decided it."""

    layer: int
    head: int
    role: str  # one of ROLES
    evidence: str
    share: float | None = None  # a positional head's share of rows on its neighbour

    @property
    def group(self) -> str:
        """The role, with the three neighbours' roles as one, "positional"."""
        return "positional" if self.role in NEIGHBOUR_ROLES.values() else self.role

    @property
    def label(self) -> str:
        """The role as a figure shows it, a positional head's with its share: "previous word
        76%"."""
        return self.role if self.share is None else f"{self.role} {self.share:.0%}"


def _role(
    statistics: Mapping[str, np.ndarray], layer: int, head: int
) -> tuple[str, str, float | None]:
    """The first role whose threshold the head passes, in order: sink, positional, alignment-like,
    broad, other; with the evidence, and a positional head's share. A head that spreads its
    weight evenly is broad, not a sink, even when most keys of a short sentence are sinks."""

    def value(name: str) -> float:
        return float(statistics[name][layer, head])

    spread = value("normalised_entropy")
    sinks = value("sink_share")
    if sinks >= SINK_THRESHOLD and spread < BROAD_ENTROPY:
        split = ", ".join(f"{kind} {value(f'sink_share_{kind}'):.0%}" for kind in SINK_KINDS)
        return "sink", f"{sinks:.0%} of the weight on sinks ({split})", None
    if "same_share" in statistics:
        neighbour = max(OFFSETS, key=lambda name: value(f"{name}_share"))
        share = value(f"{neighbour}_share")
        if share >= POSITIONAL_THRESHOLD:
            return (
                NEIGHBOUR_ROLES[neighbour],
                f"top key is the {neighbour} position in {share:.0%} of rows",
                share,
            )
    if "diagonality" in statistics and value("diagonality") >= ALIGNMENT_THRESHOLD:
        return "alignment-like", f"diagonality {value('diagonality'):.2f}", None
    if spread >= BROAD_ENTROPY:
        return "broad", f"normalised entropy {spread:.2f}", None
    return "other", "no statistic past its threshold", None


def role_attention(pieces: AttentionSet, words: AttentionSet, kind: str) -> LabelledAttention:
    """The attention of ``kind`` that heads are read on: in words for the encoder and
    cross-attention (a head that keeps each word on the one before is a previous-word head
    however many pieces the words have), in pieces for the decoder, whose word view is not square
    (a row predicts an output word, its keys are the input words, one word behind)."""
    return getattr(pieces if kind == "decoder" else words, kind)


def sentence_roles(attention: LabelledAttention, self_attention: bool) -> list[HeadRole]:
    """The role of every head on one sentence, from its :func:`role_attention`: the one
    classification the Story, the Heads lab and the survey (on its sample) give."""
    statistics = statistics_per_head(attention.weights, attention.key_labels, self_attention)
    return head_roles(statistics)


def head_roles(statistics: Mapping[str, np.ndarray]) -> list[HeadRole]:
    """A role per head from :func:`head_statistics` (or :func:`mean_over_sentences`), layer by
    layer. Thresholds: SINK_THRESHOLD, POSITIONAL_THRESHOLD, ALIGNMENT_THRESHOLD, BROAD_ENTROPY.
    Sink comes first, so that heads parked on </s> or the tag are not also called positional."""
    layers, heads = statistics["entropy"].shape
    return [
        HeadRole(layer, head, *_role(statistics, layer, head))
        for layer in range(layers)
        for head in range(heads)
    ]


WHAT_TO_NOTICE = {
    "sink": "park their weight on </s>, the tag or punctuation, a way of doing nothing "
    "(Clark et al. 2019)",
    "positional": "look at a fixed neighbour whatever the word (Voita et al. 2019)",
    "alignment-like": "follow the source in order, like a word alignment",
    "broad": "spread their weight over the whole sentence, a bag-of-words summary",
    "other": "fit none of these patterns by these thresholds: open them to see what they track",
}


def what_to_notice(roles: Sequence[HeadRole]) -> str:
    """A short caption: for each role present, how many heads have it, the first few of them
    (layers and heads counted from 1) and what to notice about them."""
    groups: dict[str, list[HeadRole]] = {group: [] for group in WHAT_TO_NOTICE}
    for role in roles:
        groups[role.group].append(role)
    sentences = []
    for group, members in groups.items():
        if not members:
            continue
        named = ", ".join(
            f"L{r.layer + 1} H{r.head + 1}" + (f" {r.label}" if group == "positional" else "")
            for r in members[:3]
        )
        more = f" and {len(members) - 3} more" if len(members) > 3 else ""
        sentences.append(
            f"{group.capitalize()} heads, {len(members)} of {len(roles)} ({named}{more}), "
            f"{WHAT_TO_NOTICE[group]}."
        )
    return " ".join(sentences)
