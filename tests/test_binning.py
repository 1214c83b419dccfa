"""Equal-frequency binning on log throughput: ties, tiny inputs, weights, invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from leapml._binning import assign_bins, equal_frequency_edges


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [13, 100, 1001, 5000])
def test_continuous_values_give_equal_bins_and_increasing_edges(seed, n):
    values = np.random.default_rng(seed).normal(size=n) * 5
    edges = equal_frequency_edges(values, 13)
    assert len(edges) == 14
    assert np.all(np.diff(edges) > 0)
    counts = np.bincount(assign_bins(values, edges), minlength=13)
    assert counts.max() - counts.min() <= 1
    assert counts.sum() == n


def test_ties_merge_bins_and_stay_together():
    values = np.array([1.0] * 50 + [2.0] * 30 + [3.0] * 20)
    edges = equal_frequency_edges(values, 13)
    bins = assign_bins(values, edges)
    assert len(edges) - 1 == 3
    # every tied value lands in a single bin
    for v in np.unique(values):
        assert np.unique(bins[values == v]).size == 1


def test_all_equal_values_give_one_bin():
    edges = equal_frequency_edges(np.full(10, 4.2), 13)
    np.testing.assert_array_equal(edges, [4.2, 4.2])
    np.testing.assert_array_equal(assign_bins(np.full(10, 4.2), edges), np.zeros(10))


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_fewer_rows_than_bins_gives_one_bin_per_row(n):
    values = np.arange(n, dtype=float)
    edges = equal_frequency_edges(values, 13)
    assert len(edges) - 1 == n
    np.testing.assert_array_equal(assign_bins(values, edges), np.arange(n))


def test_weights_balance_total_weight_not_counts():
    values = np.arange(100, dtype=float)
    weight = np.where(values < 50, 3.0, 1.0)  # the lower half carries 3/4 of the weight
    edges = equal_frequency_edges(values, 4, sample_weight=weight)
    bins = assign_bins(values, edges)
    totals = np.bincount(bins, weights=weight)
    np.testing.assert_allclose(totals, weight.sum() / 4, rtol=0.05)
    assert np.bincount(bins)[0] < np.bincount(bins)[3]


def test_row_order_does_not_change_edges():
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=500)
    np.testing.assert_array_equal(
        equal_frequency_edges(values, 13), equal_frequency_edges(rng.permutation(values), 13)
    )


@pytest.mark.parametrize(
    ("values", "kwargs", "match"),
    [
        ([], {}, "empty"),
        ([1.0, np.nan], {}, "finite"),
        ([1.0, 2.0], {"n_bins": 0}, "n_bins"),
        ([1.0, 2.0], {"sample_weight": [1.0]}, "sample_weight"),
        ([1.0, 2.0], {"sample_weight": [1.0, -1.0]}, "non-negative"),
    ],
)
def test_bad_input_is_refused(values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        equal_frequency_edges(values, **kwargs)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    values=arrays(np.float64, st.integers(1, 300),
                  elements=st.floats(-30, 30, allow_nan=False).map(lambda v: round(v, 1))),
    n_bins=st.integers(1, 20),
)
def test_property_edges_bins_and_ties(values, n_bins):
    edges = equal_frequency_edges(values, n_bins)
    n_used = len(edges) - 1
    n_distinct = np.unique(values).size
    assert 1 <= n_used <= min(n_bins, n_distinct)
    if n_distinct >= 2:
        assert np.all(np.diff(edges) > 0)
    assert edges[0] == values.min() and edges[-1] == values.max()
    bins = assign_bins(values, edges)
    # every bin holds a row, and tied values never straddle two bins
    assert np.array_equal(np.unique(bins), np.arange(n_used))
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(bins[order]) >= 0)
    for v in np.unique(values):
        assert np.unique(bins[values == v]).size == 1
