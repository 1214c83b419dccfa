"""Accuracy measures for throughput predictions.

The fleet judges a throughput prediction by whether it lands within a
relative tolerance of the measured value (``|pred / true - 1| <= tol``), not
by squared error: a 20 % miss matters the same at 1 sample/s and at 10^6.
Predictors may abstain by returning NaN; an abstention counts as a miss in
:func:`within_tolerance` and :func:`coverage` reports how often it happens.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.metrics import make_scorer

__all__ = [
    "coverage",
    "median_absolute_percentage_error",
    "within_tolerance",
    "within_tolerance_scorer",
]


def _check_pair(y_true, y_pred, sample_weight):
    y_true, y_pred = (np.asarray(y, dtype=np.float64) for y in (y_true, y_pred))
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if y.ndim > 1 and max(y.shape) != y.size:  # a column or a row is one vector; a matrix is not
            raise ValueError(f"{name} must be one value per row, got shape {y.shape}")
    y_true, y_pred = y_true.ravel(), y_pred.ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred have different lengths: {y_true.size} and {y_pred.size}"
        )
    if y_true.size == 0:
        raise ValueError("y_true is empty: nothing to score")
    bad = ~np.isfinite(y_true) | (y_true <= 0)
    if bad.any():
        raise ValueError(
            f"y_true must be a strictly positive, finite throughput: {int(bad.sum())} of "
            f"{y_true.size} rows are not"
        )
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64).ravel()
        if sample_weight.shape != y_true.shape:
            raise ValueError(
                f"sample_weight has {sample_weight.size} entries but y_true has {y_true.size}"
            )
        if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
            raise ValueError("sample_weight must be finite and non-negative")
        if sample_weight.sum() <= 0:
            raise ValueError("sample_weight sums to zero: nothing to score")
    return y_true, y_pred, sample_weight


def within_tolerance(y_true, y_pred, *, tol=0.2, sample_weight=None):
    """Share of rows whose prediction is within ``tol`` of the truth, relatively.

    A row counts as a hit when ``|y_pred / y_true - 1| <= tol``. A NaN
    prediction (the predictor abstained) counts as a miss, so abstaining never
    raises the score; see :func:`coverage` for the abstention rate.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Measured throughput, strictly positive.
    y_pred : array-like of shape (n_samples,)
        Predicted throughput; NaN means no prediction.
    tol : float, default=0.2
        Relative tolerance (0.2 means +-20 %).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights (e.g. device-hours).

    Returns
    -------
    float
        Weighted share of hits, in [0, 1].

    Examples
    --------
    >>> within_tolerance([100, 100, 100, 100], [110, 125, 80, float("nan")])
    0.5
    """
    if isinstance(tol, bool) or not isinstance(tol, Real) or not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    y_true, y_pred, sample_weight = _check_pair(y_true, y_pred, sample_weight)
    with np.errstate(invalid="ignore"):
        # NaN compares False, so an abstention is a miss; the 1e-12 slack keeps
        # a prediction of exactly 120 for 100 a hit at tol=0.2 despite rounding
        hit = np.abs(y_pred / y_true - 1.0) <= tol + 1e-12
    return float(np.average(hit, weights=sample_weight))


def _within_tolerance_score(y_true, y_pred, sample_weight=None, tol=0.2):
    return within_tolerance(y_true, y_pred, tol=tol, sample_weight=sample_weight)


#: A scikit-learn scorer for :func:`within_tolerance` at +-20 % (greater is better),
#: usable as ``scoring=within_tolerance_scorer`` in ``GridSearchCV`` or
#: ``cross_val_score``. Build another tolerance with
#: ``make_scorer(within_tolerance, tol=0.1)``.
within_tolerance_scorer = make_scorer(_within_tolerance_score, greater_is_better=True)


def coverage(y_pred):
    """Share of rows that received a prediction (not NaN).

    Examples
    --------
    >>> coverage([1.0, float("nan"), 3.0, 4.0])
    0.75
    """
    y_pred = np.asarray(y_pred, dtype=np.float64).ravel()
    if y_pred.size == 0:
        raise ValueError("y_pred is empty: nothing to measure")
    return float(np.mean(~np.isnan(y_pred)))


def median_absolute_percentage_error(y_true, y_pred, *, sample_weight=None):
    """Median of ``|y_pred / y_true - 1|`` over the rows with a prediction.

    NaN predictions are left out (use :func:`coverage` alongside); if every
    prediction is NaN the result is NaN. With ``sample_weight`` the weighted
    median is returned (the smallest error whose cumulative weight reaches
    half the total).

    Examples
    --------
    >>> median_absolute_percentage_error([100, 100, 100], [200, 50, 100])
    0.5
    """
    y_true, y_pred, sample_weight = _check_pair(y_true, y_pred, sample_weight)
    keep = ~np.isnan(y_pred)
    if not keep.any():
        return float("nan")
    errors = np.abs(y_pred[keep] / y_true[keep] - 1.0)
    if sample_weight is None:
        return float(np.median(errors))
    weight = sample_weight[keep]
    order = np.argsort(errors, kind="stable")
    cumulative = np.cumsum(weight[order])
    if cumulative[-1] <= 0:
        return float("nan")
    return float(errors[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)])
