"""What placement gives each candidate beside its prediction: its prediction interval, the
mean throughput that interval implies, and its probability of fitting."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .ranking import lognormal_mean
from .schema.rules import text_values
from .training import history_groups

#: The coverage of the interval whose width gives the mean throughput's spread
#: (:func:`leapml.ranking.lognormal_mean`), whatever coverage the intervals are shown at: a
#: conformal interval's width is no normal's at every coverage, and the mean must not move
#: with how the intervals are shown.
MEAN_COVERAGE = 0.8


def intervals(model, X, coverage, shift) -> np.ndarray:
    """Prediction intervals of a calibrated model (groups: :func:`history_groups`), moved by the
    log ``shift`` of each row; NaN without a calibration, and where an interval is infinite
    (no calibration row answers that coverage): such an interval says nothing to rank by."""
    if not hasattr(model, "calibration_"):
        return np.full((len(shift), 2), np.nan)
    interval = model.predict_interval(X, coverage=coverage, groups=history_groups(X))
    interval = interval * np.exp(shift)[:, None]
    interval[~np.isfinite(interval).all(axis=1) | (interval[:, 0] <= 0)] = np.nan
    return interval


def mean_throughput(model, X, predicted, interval, coverage, shift) -> np.ndarray:
    """The mean throughput of each row: :func:`lognormal_mean` of its :data:`MEAN_COVERAGE`
    interval (``interval`` itself when shown at that coverage)."""
    if not hasattr(model, "calibration_"):  # no interval, no mean (and nothing to compute)
        return np.full(len(predicted), np.nan)
    if coverage != MEAN_COVERAGE:
        interval = intervals(model, X, MEAN_COVERAGE, shift)
    return lognormal_mean(predicted, interval[:, 0], interval[:, 1], MEAN_COVERAGE)


def fit_probability(feasibility, X, job_id, hardware_type) -> np.ndarray:
    """Each candidate's probability of fitting: from a fitted classifier, or from known answers.

    ``feasibility`` is None (unknown: NaN), a classifier with
    ``fit_probability`` (such as :func:`leapml.placement.fit_feasibility`
    returns), or a DataFrame of ``job_id``, ``hardware_type`` and a boolean
    ``feasible`` (or a ``fit_probability``) covering every candidate.
    """
    if feasibility is None:
        return np.full(len(job_id), np.nan)
    if not isinstance(feasibility, pd.DataFrame):
        if not callable(getattr(feasibility, "fit_probability", None)):
            raise TypeError(
                "feasibility must be None, a fitted classifier with fit_probability (see "
                "fit_feasibility) or a DataFrame of job_id, hardware_type and feasible, got "
                f"{type(feasibility).__name__}"
            )
        names = getattr(feasibility, "feature_names_in_", None)
        if names is not None:
            X = X[list(names)]  # the columns it was fitted on, e.g. FEASIBILITY_FEATURES
        return np.asarray(feasibility.fit_probability(X), dtype=float)
    known = _known_probability(feasibility)
    keys = pd.MultiIndex.from_arrays([pd.Index(text_values(job_id)),
                                      pd.Index(np.asarray(hardware_type, dtype=str))])
    where = known.index.get_indexer(keys)
    if (where < 0).any():
        missing = keys[where < 0][:5].tolist()
        raise ValueError(
            f"feasibility has no row for {int((where < 0).sum())} candidate(s), e.g. "
            f"{missing}; give one row per (job_id, hardware_type) candidate"
        )
    return known.to_numpy(float)[where]  # a row's NaN or <NA>: fitting unknown, as in ranking


def known_infeasible(feasibility, probability) -> np.ndarray | None:
    """Candidates known answers mark as not fitting (``feasible`` False), which no threshold
    makes rankable; None where the answers are not a ``feasible`` column."""
    if isinstance(feasibility, pd.DataFrame) and "feasible" in feasibility:
        return probability == 0
    return None


def _known_probability(feasibility: pd.DataFrame) -> pd.Series:
    """Known feasibility as a probability of fitting, indexed by (job_id, hardware_type)."""
    if "fit_probability" in feasibility and "feasible" in feasibility:
        raise ValueError("feasibility has both 'feasible' and 'fit_probability': give one (which "
                         "would be read is ambiguous)")
    value = "fit_probability" if "fit_probability" in feasibility else "feasible"
    missing = [c for c in ("job_id", "hardware_type", value) if c not in feasibility]
    if missing:
        raise ValueError(
            f"feasibility lacks column(s) {missing}; it needs job_id, hardware_type and "
            "feasible (boolean) or fit_probability"
        )
    values = feasibility[value]
    if value == "feasible" and not pd.api.types.is_bool_dtype(values.dtype):
        raise ValueError(f"feasibility column 'feasible' must be boolean, got dtype {values.dtype}")
    if value == "fit_probability" and values.dtype.kind not in "fiu":
        try:
            values = pd.to_numeric(values, errors="raise")
        except (TypeError, ValueError) as err:
            raise ValueError(f"feasibility column 'fit_probability' must be numeric: {err}") from None
    index = pd.MultiIndex.from_arrays([pd.Index(text_values(feasibility["job_id"])),
                                       pd.Index(feasibility["hardware_type"].astype(str))])
    known = pd.Series(values.to_numpy(dtype=float, na_value=np.nan), index=index)
    if not known.index.is_unique:
        raise ValueError("feasibility has several rows for one (job_id, hardware_type) pair")
    return known
