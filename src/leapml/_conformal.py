"""Split-conformal prediction intervals per category (Mondrian), computed with ``crepes``.

A category is the bin a row is routed to crossed with its group (such as
whether its job ran before); one with fewer than :data:`MIN_CATEGORY_ROWS`
calibration rows, or fewer than its coverage needs, falls back to its group,
then to all rows.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

__all__ = ["MIN_CATEGORY_ROWS", "MondrianIntervals", "group_labels", "rows_for_coverage"]

#: Fewest calibration rows a Mondrian category needs before it gets its own interval width.
MIN_CATEGORY_ROWS = 20


def group_labels(groups, n) -> list:
    """Group labels as a list of text (one group when None).

    Examples
    --------
    A whole number is one label however it is typed: ``1``, ``1.0``,
    ``np.int64(1)`` and ``True`` are all ``"1"``.

    >>> group_labels(None, 2), group_labels([1, "new"], 2), group_labels([True, 0.0], 2)
    (['all', 'all'], ['1', 'new'], ['1', '0'])
    """
    if groups is None:
        return ["all"] * n
    labels = [_label(g) for g in np.asarray(groups, dtype=object).ravel().tolist()]
    if len(labels) != n:
        raise ValueError(f"groups has {len(labels)} labels for {n} rows")
    return labels


def _label(value) -> str:
    """One group label as text, a whole number written as an int."""
    if isinstance(value, (bool, np.bool_, Real)) and not isinstance(value, str):
        number = float(value)
        if number.is_integer():
            return str(int(number))
    return str(value)


class MondrianIntervals:
    """The conformal quantiles of calibration residuals (absolute log errors), per category.

    Built once from a calibration (``calibrate``, or a model file); answering
    writes nothing, so threads may share it.

    Parameters
    ----------
    calibration : dict
        ``residuals`` (absolute log errors), ``bins`` (routed bins) and
        ``groups`` (text labels), one entry per calibration row.
    """

    def __init__(self, calibration: dict):
        try:
            from crepes import ConformalRegressor
        except ImportError as err:  # pragma: no cover - a declared dependency
            raise ImportError("predict_interval needs the 'crepes' package: "
                              "pip install crepes") from err
        residuals = np.asarray(calibration["residuals"], dtype=np.float64)
        bins = np.asarray(calibration["bins"])
        groups = list(calibration["groups"])
        pairs = list(zip(bins.tolist(), groups, strict=True))
        self.counts = pd.Series(pairs, dtype=object).value_counts().to_dict() if pairs else {}
        self.group_counts = pd.Series(groups, dtype=object).value_counts().to_dict()
        # every calibration row joins its own category, its group's and the pooled one
        labels = np.concatenate([self.categories(bins, groups),
                                 np.array([f"*|{g}" for g in groups], dtype=object),
                                 np.full(len(residuals), "*|*", dtype=object)])
        own = np.array([self.counts.get(pair, 0) >= MIN_CATEGORY_ROWS for pair in pairs],
                       dtype=bool)
        keep = np.concatenate([own, np.ones(2 * len(residuals), dtype=bool)])
        self.model = ConformalRegressor().fit(np.tile(residuals, 3)[keep], bins=labels[keep])

    def categories(self, bins, groups, coverage: float | None = None) -> np.ndarray:
        """Each row's category: (bin, group) with enough calibration rows, else the group, else
        all. Enough is :data:`MIN_CATEGORY_ROWS`, and with ``coverage`` also as many as a
        conformal quantile at that coverage needs (99 at 0.99): a category too small for it
        would answer an infinite interval where its group can answer a finite one."""
        needed = max(MIN_CATEGORY_ROWS, 0 if coverage is None else rows_for_coverage(coverage))
        codes = np.empty(len(bins), dtype=object)
        for i, (b, g) in enumerate(zip(np.asarray(bins).tolist(), groups, strict=True)):
            if self.counts.get((b, g), 0) >= needed:
                codes[i] = f"{b}|{g}"
            elif self.group_counts.get(g, 0) >= needed:
                codes[i] = f"*|{g}"
            else:
                codes[i] = "*|*"
        return codes

    def half_widths(self, bins, groups, coverage: float) -> np.ndarray:
        """Half the width, in log throughput, of each row's interval at ``coverage``."""
        named = [g for g in self.group_counts if g != "all"]
        given = set(groups) - {"all"}  # "all": no groups given, the pooled interval asked for
        if named and given and not any(g in self.group_counts for g in given):
            warnings.warn(f"no group label given was calibrated (calibrated: {sorted(named)[:5]}; "
                          f"given: {sorted(given)[:5]}): every row gets the pooled "
                          "interval", UserWarning, stacklevel=3)
        with warnings.catch_warnings():
            # crepes speaks of every category it holds; the ones asked for are said below
            warnings.filterwarnings("ignore", message="the no. of calibration examples")
            half = self.model.predict_int(np.zeros(len(bins)),
                                          bins=self.categories(bins, groups, coverage),
                                          confidence=float(coverage))[:, 1]
        if np.isinf(half).any():
            warnings.warn(
                f"{int(np.isinf(half).sum())} row(s) get an infinite interval: coverage "
                f"{coverage} needs {rows_for_coverage(coverage)} calibration rows, and their "
                "group and the whole calibration have fewer", UserWarning, stacklevel=3)
        return half


def rows_for_coverage(coverage: float) -> int:
    """The fewest calibration rows whose conformal quantile at ``coverage`` is finite:
    the ``ceil((n + 1) * coverage)``-th smallest of ``n`` residuals must exist.

    Examples
    --------
    >>> rows_for_coverage(0.8), rows_for_coverage(0.9), rows_for_coverage(0.99)
    (4, 9, 99)
    """
    n = max(1, int(np.floor(coverage / (1 - coverage))) - 1)
    while np.ceil((n + 1) * coverage - 1e-9) > n:
        n += 1
    return n


class IntervalsMixin:
    """:class:`~leapml.LeapRegressor`'s prediction intervals: calibrate on held-back rows, then predict."""

    def calibrate(self, X, y, *, groups=None):
        """Calibrate :meth:`predict_interval` on held-back rows (split conformal, per bin).

        The absolute log errors of :meth:`predict` on rows the model was not
        fitted on are kept per category: the bin each row is routed to,
        crossed with ``groups`` (e.g. whether the job ran before: new jobs
        err more). This is Mondrian conformal prediction, computed by the
        ``crepes`` library; a category with fewer than 20 rows (or than the
        coverage asked needs) falls back
        to its group, then to all rows. Calibrate on data the model did not
        see (e.g. the last day of the training window, held back from
        ``fit``: :func:`leapml.placement.fit_window` does so with
        ``calibration_days``); calibrating again replaces the previous one.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Held-back rows.
        y : array-like of shape (n_samples,)
            Their measured throughput (> 0).
        groups : array-like of shape (n_samples,), default=None
            Labels of groups calibrated apart; give the same kind of labels
            to :meth:`predict_interval`.

        Returns
        -------
        self : LeapRegressor
        """
        check_is_fitted(self)
        y = column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64, input_name="y"))
        encoded = self._validate_X(X, reset=False)
        check_consistent_length(encoded, y)
        if not (np.isfinite(y) & (y > 0)).all():
            raise ValueError("y must be a strictly positive, finite throughput to calibrate on")
        groups = group_labels(groups, len(y))
        residuals = np.abs(np.log(y) - np.log(self._predict_encoded(encoded)))
        self.calibration_ = {
            "residuals": residuals.tolist(),
            "bins": self._route(encoded).tolist(),
            "groups": groups,
        }
        self.intervals_ = MondrianIntervals(self.calibration_)
        if len(y) < MIN_CATEGORY_ROWS:
            warnings.warn(
                f"{len(y)} calibration row(s) give finite intervals only up to coverage "
                f"{len(y) / (len(y) + 1):.3g} (infinite above); calibrate on at least "
                f"{MIN_CATEGORY_ROWS} rows", UserWarning, stacklevel=2)
        return self

    def predict_interval(self, X, *, coverage=0.8, groups=None):
        """Prediction intervals of throughput, shape ``(n_samples, 2)``: low and high.

        Each interval holds the measured throughput with probability
        ``coverage`` on rows like the calibration rows of the same category
        (see :meth:`calibrate`): the prediction times and divided by the
        category's conformal quantile of ``exp(|log error|)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
        coverage : float, default=0.8
            Share of measurements the intervals should hold, in (0, 1).
        groups : array-like of shape (n_samples,), default=None
            Group labels, of the kind given to :meth:`calibrate`.

        Raises
        ------
        NotFittedError
            If the model was not calibrated.

        Examples
        --------
        >>> import numpy as np
        >>> from leapml import LeapRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(800, 2))
        >>> y = np.exp(4 * X[:, 0] + rng.normal(0, 0.2, 800))
        >>> model = LeapRegressor(n_bins=3, n_estimators=20, random_state=0).fit(X[:400], y[:400])
        >>> interval = model.calibrate(X[400:600], y[400:600]).predict_interval(X[600:])
        >>> inside = (interval[:, 0] <= y[600:]) & (y[600:] <= interval[:, 1])
        >>> bool(0.7 < inside.mean() < 0.9)
        True
        """
        check_is_fitted(self, "regressors_")
        check_is_fitted(self, "calibration_", msg=(
            "This %(name)s is fitted but not calibrated: call calibrate(X, y) on rows held back "
            "from fit (or leapml.training.fit_calibrated) before predict_interval"))
        if not (isinstance(coverage, Real) and 0 < coverage < 1):
            raise ValueError(f"coverage must be a number in (0, 1), got {coverage!r}")
        encoded = self._validate_X(X, reset=False)
        predicted = self._predict_encoded(encoded)
        half = self.intervals_.half_widths(self._route(encoded), group_labels(groups, len(encoded)),
                                           coverage)
        return np.column_stack([predicted * np.exp(-half), predicted * np.exp(half)])
