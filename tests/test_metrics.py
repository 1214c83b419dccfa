"""within_tolerance, its scorer, coverage and the median absolute percentage error."""

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.model_selection import cross_val_score

from leapml.evaluation.metrics import (
    coverage,
    median_absolute_percentage_error,
    within_tolerance,
    within_tolerance_scorer,
)


def test_within_tolerance_boundaries_and_abstentions():
    y = np.full(5, 100.0)
    pred = np.array([120.0, 80.0, 121.0, 79.0, np.nan])
    assert within_tolerance(y, pred) == pytest.approx(0.4)
    assert within_tolerance(y, pred, tol=0.25) == pytest.approx(0.8)
    assert within_tolerance(y, pred, tol=0.0) == 0.0


def test_within_tolerance_is_relative_across_magnitudes():
    y = np.array([0.1, 1e3, 1e6])
    assert within_tolerance(y, y * 1.15) == 1.0
    assert within_tolerance(y, y * 1.25) == 0.0


def test_within_tolerance_weights():
    y = np.array([1.0, 1.0, 1.0])
    pred = np.array([1.0, 2.0, 2.0])
    assert within_tolerance(y, pred, sample_weight=[2.0, 1.0, 1.0]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "kwargs", "match"),
    [
        ([1.0, 2.0], [1.0], {}, "different lengths"),
        ([1.0, 0.0], [1.0, 1.0], {}, "1 of 2 rows"),
        ([1.0, np.nan], [1.0, 1.0], {}, "strictly positive"),
        ([], [], {}, "empty"),
        ([1.0, 2.0], [1.0, 2.0], {"sample_weight": [1.0]}, "sample_weight"),
        ([1.0, 2.0], [1.0, 2.0], {"sample_weight": [0.0, 0.0]}, "sums to zero"),
        ([1.0, 2.0], [1.0, 2.0], {"tol": -0.1}, "tol"),
    ],
)
def test_within_tolerance_refuses_bad_input(y_true, y_pred, kwargs, match):
    with pytest.raises(ValueError, match=match):
        within_tolerance(y_true, y_pred, **kwargs)


def test_coverage_counts_non_nan():
    assert coverage([1.0, np.nan, np.nan, 2.0]) == 0.5
    with pytest.raises(ValueError, match="empty"):
        coverage([])


def test_median_ape_ignores_abstentions_and_honours_weights():
    y = np.full(4, 10.0)
    assert median_absolute_percentage_error(y, [11.0, 13.0, 5.0, np.nan]) == pytest.approx(0.3)
    weighted = median_absolute_percentage_error(y, [11.0, 13.0, 5.0, 10.0],
                                                sample_weight=[10.0, 1.0, 1.0, 1.0])
    assert weighted == pytest.approx(0.1)
    assert np.isnan(median_absolute_percentage_error([1.0], [np.nan]))


def test_scorer_works_in_cross_validation():
    X = np.zeros((30, 1))
    y = np.full(30, 50.0)
    scores = cross_val_score(DummyRegressor(), X, y, cv=3, scoring=within_tolerance_scorer)
    np.testing.assert_array_equal(scores, 1.0)
    off = cross_val_score(DummyRegressor(strategy="constant", constant=70.0), X, y, cv=3,
                          scoring=within_tolerance_scorer)
    np.testing.assert_array_equal(off, 0.0)
