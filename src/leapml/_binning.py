"""Equal-frequency bins on log throughput.

The cascade starts from bins that each hold (nearly) the same number of rows,
or the same total sample weight. Cuts are placed halfway between two adjacent
*distinct* values, so tied values always share a bin; when ties leave fewer
distinct cut points than requested, bins are merged and the number of bins
actually used is returned. Pure numpy: this module knows nothing about models.
"""

from __future__ import annotations

import numpy as np

__all__ = ["assign_bins", "equal_frequency_edges"]


def equal_frequency_edges(values, n_bins=13, *, sample_weight=None):
    """Edges of up to ``n_bins`` equal-frequency bins over ``values``.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        Finite values to bin (the cascade passes ``log(throughput)``).
    n_bins : int, default=13
        Requested number of bins (>= 1).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; bins then hold (nearly) equal total weight.

    Returns
    -------
    edges : ndarray of shape (n_bins_ + 1,)
        ``edges[0]`` is the smallest value, ``edges[-1]`` the largest and the
        inner edges lie halfway between two adjacent distinct values. The
        number of bins used, ``n_bins_ = len(edges) - 1``, is at most
        ``min(n_bins, number of distinct values)``. Edges are strictly
        increasing whenever ``values`` holds two or more distinct values; when
        all values are equal there is one bin and ``edges == [v, v]``.

    Examples
    --------
    >>> import numpy as np
    >>> equal_frequency_edges(np.arange(8.0), n_bins=4)
    array([0. , 1.5, 3.5, 5.5, 7. ])
    >>> equal_frequency_edges([1.0, 1.0, 1.0, 2.0], n_bins=4)  # ties merge bins
    array([1. , 1.5, 2. ])
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("cannot bin an empty array")
    if not np.all(np.isfinite(values)):
        raise ValueError("values to bin must be finite")
    n_bins = int(n_bins)
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    if sample_weight is None:
        cumulative = np.arange(1, values.size + 1, dtype=np.float64)
    else:
        weight = np.asarray(sample_weight, dtype=np.float64).ravel()
        if weight.shape != values.shape:
            raise ValueError(
                f"sample_weight has {weight.size} entries but values has {values.size}"
            )
        if np.any(weight < 0) or not np.all(np.isfinite(weight)):
            raise ValueError("sample_weight must be finite and non-negative")
        cumulative = np.cumsum(weight[order])
    total = cumulative[-1]
    if total <= 0:
        # all-zero weights carry no frequency information: fall back to counts
        cumulative = np.arange(1, values.size + 1, dtype=np.float64)
        total = cumulative[-1]

    # A cut at position p separates sorted_values[:p] from sorted_values[p:];
    # only positions between two distinct values are allowed.
    allowed = np.flatnonzero(np.diff(sorted_values) > 0) + 1
    if allowed.size == 0:
        return np.array([sorted_values[0], sorted_values[-1]])
    # Mass to the left of each allowed cut, compared with the ideal quantiles.
    mass_left = cumulative[allowed - 1]
    targets = total * np.arange(1, n_bins) / n_bins
    nearest = np.searchsorted(mass_left, targets)
    lower = np.clip(nearest - 1, 0, allowed.size - 1)
    upper = np.clip(nearest, 0, allowed.size - 1)
    # Ties in distance go to the lower cut so the result does not depend on rounding.
    take_upper = np.abs(mass_left[upper] - targets) < np.abs(mass_left[lower] - targets)
    chosen = np.unique(np.where(take_upper, upper, lower))
    cuts = allowed[chosen]
    inner = (sorted_values[cuts - 1] + sorted_values[cuts]) / 2.0
    return np.concatenate(([sorted_values[0]], inner, [sorted_values[-1]]))


def assign_bins(values, edges):
    """Index of the bin each value falls in, given ``edges`` from :func:`equal_frequency_edges`.

    Values below the first edge go to bin 0 and values above the last edge to
    the last bin; a value equal to an inner edge goes to the upper bin.

    Examples
    --------
    >>> assign_bins([0.0, 1.6, 9.0], [0.0, 1.5, 3.5, 7.0])
    array([0, 1, 2])
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    inner = np.asarray(edges, dtype=np.float64)[1:-1]
    return np.searchsorted(inner, values, side="right").astype(np.intp)
