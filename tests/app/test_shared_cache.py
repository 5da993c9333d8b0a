"""The cache every session shares: bounded by bytes, never copies, values read-only."""

from dataclasses import dataclass

import numpy as np
import pytest

from app.shared_cache import freeze, shared, size_in_bytes


@dataclass
class Holder:
    weights: np.ndarray
    more: list


def test_a_hit_returns_the_same_object_and_does_not_compute_again():
    calls = []

    @shared(max_bytes=10**6)
    def compute(n: int) -> Holder:
        calls.append(n)
        return Holder(np.zeros(n), [np.ones(2)])

    first = compute(3)
    assert compute(3) is first and calls == [3]
    assert compute(4) is not first and calls == [3, 4]


def test_values_are_read_only_all_the_way_down():
    holder = Holder(np.zeros(3), [np.ones(2), {"inner": np.ones(1)}])
    freeze(holder)
    for array in (holder.weights, holder.more[0], holder.more[1]["inner"]):
        with pytest.raises(ValueError, match="read-only"):
            array += 1


def test_arrays_beside_scalars_and_inside_nested_dataclasses_are_read_only_too():
    inner = Holder(np.zeros(2), [1, 2.5, "piece", None, True])
    outer = Holder(np.ones(1), [3, "text", (inner, 0.5)])
    freeze(outer)
    for array in (outer.weights, inner.weights):
        with pytest.raises(ValueError, match="read-only"):
            array += 1
    assert inner.more == [1, 2.5, "piece", None, True]


def test_the_least_recently_used_leave_when_the_bytes_pass_the_budget():
    one = size_in_bytes(np.zeros(1000))
    calls = []

    @shared(max_bytes=int(2.5 * one))  # room for two
    def compute(n: int) -> np.ndarray:
        calls.append(n)
        return np.full(1000, float(n))

    compute(1), compute(2), compute(1)  # 1 is now the most recent
    compute(3)  # evicts 2
    compute(1)
    assert calls == [1, 2, 3]
    compute(2)
    assert calls == [1, 2, 3, 2]


def test_a_value_larger_than_the_budget_is_returned_but_not_kept():
    calls = []

    @shared(max_bytes=100)
    def compute(n: int) -> np.ndarray:
        calls.append(n)
        return np.zeros(1000)

    assert compute(1).shape == (1000,)
    compute(1)
    assert calls == [1, 1]


def test_two_functions_keep_their_own_values():
    @shared(max_bytes=10**6)
    def double(n: int) -> int:
        return 2 * n

    @shared(max_bytes=10**6)
    def square(n: int) -> int:
        return n * n

    assert (double(3), square(3)) == (6, 9)
