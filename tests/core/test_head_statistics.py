"""Head statistics on hand-made attention matrices whose answer is known."""

import math

import numpy as np
import pytest

from core.inspection.head_statistics import (
    ALIGNMENT_THRESHOLD,
    POSITIONAL_THRESHOLD,
    confidence,
    diagonality,
    entropy,
    head_roles,
    is_punctuation,
    mean_distance,
    mean_over_sentences,
    monotonicity,
    normalised_entropy,
    positional_shares,
    sink_kind,
    sink_shares,
    statistics_per_head,
    what_to_notice,
)

SOURCE = ["<2de>", "▁The", "▁cat", "▁sleeps", ".", "</s>"]  # sinks at 0, 4 and 5
N = len(SOURCE)
EOS_POSITION = N - 1


def heads(*matrices: np.ndarray) -> np.ndarray:
    """(Q, K) matrices -> one layer of heads, (1, H, Q, K)."""
    return np.stack(matrices)[None]


def one_hot_rows(top_keys: list[int], keys: int = N) -> np.ndarray:
    """Each row i puts all its weight on key top_keys[i]."""
    return np.eye(keys)[top_keys]


DIAGONAL = np.eye(N)
ON_EOS = one_hot_rows([EOS_POSITION] * N)
UNIFORM = np.full((N, N), 1 / N)
PREVIOUS = one_hot_rows([0, *range(N - 1)])  # the first row has no previous: it reads itself


def test_a_diagonal_head_is_all_same_position_with_zero_entropy_and_distance():
    weights = heads(DIAGONAL)
    shares = positional_shares(weights)
    assert shares["same"][0, 0] == 1.0
    assert shares["previous"][0, 0] == shares["next"][0, 0] == 0.0
    assert entropy(weights)[0, 0] == 0.0
    assert normalised_entropy(weights)[0, 0] == 0.0
    assert mean_distance(weights)[0, 0] == 0.0
    # the </s> row sits on </s>, and confidence looks past </s>: 0 for that row, 1 for the rest
    assert confidence(weights, SOURCE)[0, 0] == pytest.approx((N - 1) / N)
    # sinks reading themselves are not a sink head
    assert statistics_per_head(weights, SOURCE, self_attention=True)["sink_share"][0, 0] == 0.0
    assert head_roles(statistics_per_head(weights, SOURCE, True))[0].role == "own word"


def test_a_head_on_eos_is_a_sink_with_zero_entropy_and_zero_confidence():
    statistics = statistics_per_head(heads(ON_EOS), SOURCE, self_attention=True)
    assert statistics["entropy"][0, 0] == 0.0
    assert statistics["sink_share"][0, 0] == statistics["sink_share_eos"][0, 0] == 1.0
    assert statistics["sink_share_tag_bos"][0, 0] == statistics["sink_share_punctuation"][0, 0] == 0
    # confidence is the largest weight on a key other than </s>, not renormalised: none here
    assert statistics["confidence"][0, 0] == 0.0
    [role] = head_roles(statistics)
    assert role.role == "sink"
    assert "eos 100%" in role.evidence


def test_confidence_of_a_head_on_one_ordinary_key_is_one():
    assert confidence(heads(one_hot_rows([2] * N)), SOURCE)[0, 0] == 1.0


def test_a_uniform_head_has_entropy_log_n_and_is_broad():
    statistics = statistics_per_head(heads(UNIFORM), SOURCE, self_attention=True)
    assert statistics["entropy"][0, 0] == pytest.approx(math.log(N))
    assert statistics["normalised_entropy"][0, 0] == pytest.approx(1.0)
    # half of this short sentence's keys are sinks, so it puts half its weight there; still broad
    assert statistics["sink_share"][0, 0] == pytest.approx(0.5)
    assert head_roles(statistics)[0].role == "broad"


def test_normalised_entropy_divides_each_row_by_its_own_attendable_keys():
    causal_uniform = np.tril(np.ones((N, N))) / np.arange(1, N + 1)[:, None]
    weights = heads(causal_uniform)
    # row i is uniform over i + 1 keys; the first row has one key and counts as 0
    assert entropy(weights)[0, 0] == pytest.approx(np.mean(np.log(np.arange(1, N + 1))))
    assert normalised_entropy(weights)[0, 0] == pytest.approx((N - 1) / N)


def test_a_previous_token_head_is_all_previous():
    weights = heads(PREVIOUS)
    shares = positional_shares(weights)
    assert shares["previous"][0, 0] == 1.0
    assert shares["same"][0, 0] == pytest.approx(1 / N)  # the first row
    assert mean_distance(weights)[0, 0] == pytest.approx((N - 1) / N)
    statistics = statistics_per_head(weights, SOURCE, self_attention=True)
    [role] = head_roles(statistics)
    assert (role.role, role.group, role.label) == (
        "previous word",
        "positional",
        "previous word 100%",
    )


def survey_statistics(share: float) -> dict[str, np.ndarray]:
    """The statistics of one self-attention head that puts its top weight on the previous
    position in ``share`` of rows and is neither a sink nor broad."""
    values = {"normalised_entropy": 0.4, "sink_share": 0.2, "same_share": 0.1, "next_share": 0.1}
    values |= {"previous_share": share, "entropy": 1.0}
    return {name: np.array([[value]]) for name, value in values.items()}


@pytest.mark.parametrize("share", [0.70, 0.76, 0.88])
def test_a_head_on_the_previous_word_in_most_rows_is_a_previous_word_head(share):
    # the shipped model's L2 H2: 76% of rows over the 200-sentence survey, 88% on one sentence
    [role] = head_roles(survey_statistics(share))
    assert role.label == f"previous word {share:.0%}"
    assert "Positional heads, 1 of 1 (L1 H1 previous word" in what_to_notice([role])


@pytest.mark.parametrize("share", [0.46, 0.60, 0.69])
def test_a_head_below_the_threshold_is_not_positional(share):
    # 46%, 60%: the survey's strongest heads after the two neighbour heads
    assert head_roles(survey_statistics(share))[0].role == "other"
    assert POSITIONAL_THRESHOLD == 0.7


def test_a_next_token_head_is_all_next_and_reaches_one_position():
    weights = heads(one_hot_rows([*range(1, N), N - 1]))
    assert positional_shares(weights)["next"][0, 0] == 1.0
    assert mean_distance(weights)[0, 0] == pytest.approx((N - 1) / N)


def test_sink_shares_split_by_kind():
    row = np.zeros(N)
    row[[EOS_POSITION, 0, 4]] = 0.5, 0.25, 0.25  # </s>, <2de>, "."
    statistics = statistics_per_head(heads(np.tile(row, (N, 1))), SOURCE, self_attention=False)
    assert statistics["sink_share_eos"][0, 0] == pytest.approx(0.5)
    assert statistics["sink_share_tag_bos"][0, 0] == pytest.approx(0.25)
    assert statistics["sink_share_punctuation"][0, 0] == pytest.approx(0.25)
    assert statistics["sink_share"][0, 0] == pytest.approx(1.0)


def test_sink_keys_are_eos_tag_bos_and_punctuation():
    assert [sink_kind(label) for label in ["</s>", "<s>", "<2fr>", "▁,", "▁The", "▁"]] == [
        "eos",
        "tag_bos",
        "tag_bos",
        "punctuation",
        None,
        None,
    ]
    assert is_punctuation("?!") and is_punctuation("▁«")
    assert not is_punctuation("<0x2E>")


def test_self_attention_sink_share_counts_only_rows_of_ordinary_positions():
    # every row reads the tag; the rows of the three sinks (tag, ".", "</s>") are left out
    only_ordinary_rows = one_hot_rows([0] * N)
    only_ordinary_rows[[1, 2, 3]] = np.eye(N)[[1, 2, 3]]
    self_shares = sink_shares(heads(only_ordinary_rows), SOURCE, self_attention=True)
    cross_shares = sink_shares(heads(only_ordinary_rows), SOURCE, self_attention=False)
    assert self_shares["tag_bos"][0, 0] == 0.0
    assert cross_shares["tag_bos"][0, 0] == pytest.approx(3 / N)


def test_a_sink_head_that_looks_positional_is_called_sink():
    # each row keeps 0.45 on itself, its top key, parks 0.25 on the tag and 0.28 on </s>, and
    # spreads 0.02 over every key (no weight is exactly 0: that would mean masked)
    parked = 0.45 * np.eye(N) + 0.02 / N
    parked[:, 0] += 0.25
    parked[:, EOS_POSITION] += 0.28
    statistics = statistics_per_head(heads(parked), SOURCE, self_attention=True)
    assert statistics["same_share"][0, 0] >= POSITIONAL_THRESHOLD
    assert head_roles(statistics)[0].role == "sink"


def test_a_diagonal_cross_head_is_the_most_diagonal_and_a_reversed_one_the_least():
    reversed_diagonal = DIAGONAL[::-1]
    weights = heads(DIAGONAL, UNIFORM, reversed_diagonal)
    scores = diagonality(weights)[0]
    assert scores[0] == pytest.approx(1.0)
    assert scores[0] > scores[1] > scores[2]
    assert scores[2] == pytest.approx(0.5)
    np.testing.assert_allclose(monotonicity(weights)[0, [0, 2]], [1.0, -1.0])
    assert monotonicity(heads(ON_EOS))[0, 0] == 0.0  # one top key for every row: no order


def test_a_shifted_alignment_between_sentences_of_different_lengths_is_alignment_like():
    # 5 target rows over 6 source keys: target word i reads source word i + 1, after the tag
    aligned = one_hot_rows([1, 2, 3, 4, 5], keys=N)
    statistics = statistics_per_head(heads(aligned), SOURCE, self_attention=False)
    assert statistics["diagonality"][0, 0] >= ALIGNMENT_THRESHOLD
    assert statistics["monotonicity"][0, 0] == pytest.approx(1.0)
    assert head_roles(statistics)[0].role == "alignment-like"


def test_self_attention_statistics_need_square_attention():
    with pytest.raises(ValueError, match="as many queries as keys"):
        statistics_per_head(np.ones((1, 1, 2, N)) / N, SOURCE, self_attention=True)


def test_the_mean_over_sentences_is_the_mean_of_each_sentence():
    rng = np.random.default_rng(0)
    sentences = []
    for length in (4, 7, 11):
        weights = rng.dirichlet(np.ones(length), size=(2, 3, length))  # (L, H, Q, K)
        labels = ["<2de>", *(f"▁w{i}" for i in range(length - 3)), ".", "</s>"]
        sentences.append((weights, labels))
    mean = mean_over_sentences(iter(sentences), self_attention=True)
    each = [statistics_per_head(w, labels, self_attention=True) for w, labels in sentences]
    assert set(mean) == set(each[0])
    for name, value in mean.items():
        assert value.shape == (2, 3)
        np.testing.assert_allclose(value, np.mean([s[name] for s in each], axis=0))
    with pytest.raises(ValueError, match="no sentences"):
        mean_over_sentences([], self_attention=True)


def test_roles_come_layer_by_layer_with_a_caption_naming_the_heads():
    statistics = statistics_per_head(heads(ON_EOS, DIAGONAL, UNIFORM), SOURCE, self_attention=True)
    roles = head_roles(statistics)
    assert [(r.layer, r.head, r.role) for r in roles] == [
        (0, 0, "sink"),
        (0, 1, "own word"),
        (0, 2, "broad"),
    ]
    caption = what_to_notice(roles)
    assert caption.startswith("Sink heads, 1 of 3 (L1 H1)")
    assert "Positional heads, 1 of 3 (L1 H2 own word 100%)" in caption
    assert "Broad heads, 1 of 3 (L1 H3)" in caption
    assert "Other" not in caption
