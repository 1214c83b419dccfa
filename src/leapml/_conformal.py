"""Split-conformal prediction intervals per category (Mondrian), computed with ``crepes``.

A category is the bin a row is routed to crossed with its group (such as
whether its job ran before); one with fewer than :data:`MIN_CATEGORY_ROWS`
calibration rows falls back to its group, then to all rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MIN_CATEGORY_ROWS", "MondrianIntervals", "group_labels"]

#: Fewest calibration rows a Mondrian category needs before it gets its own interval width.
MIN_CATEGORY_ROWS = 20


def group_labels(groups, n) -> list:
    """Group labels as a list of text (one group when None).

    Examples
    --------
    >>> group_labels(None, 2), group_labels([1, "new"], 2)
    (['all', 'all'], ['1', 'new'])
    """
    if groups is None:
        return ["all"] * n
    labels = [str(g) for g in np.asarray(groups, dtype=object).ravel().tolist()]
    if len(labels) != n:
        raise ValueError(f"groups has {len(labels)} labels for {n} rows")
    return labels


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

    def categories(self, bins, groups) -> np.ndarray:
        """Each row's category: (bin, group) with enough calibration rows, else the group, else all."""
        codes = np.empty(len(bins), dtype=object)
        for i, (b, g) in enumerate(zip(np.asarray(bins).tolist(), groups, strict=True)):
            if self.counts.get((b, g), 0) >= MIN_CATEGORY_ROWS:
                codes[i] = f"{b}|{g}"
            elif self.group_counts.get(g, 0) >= MIN_CATEGORY_ROWS:
                codes[i] = f"*|{g}"
            else:
                codes[i] = "*|*"
        return codes

    def half_widths(self, bins, groups, coverage: float) -> np.ndarray:
        """Half the width, in log throughput, of each row's interval at ``coverage``."""
        return self.model.predict_int(np.zeros(len(bins)), bins=self.categories(bins, groups),
                                      confidence=float(coverage))[:, 1]
