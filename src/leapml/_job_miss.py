"""What a job's own runs say the model misses, carried to the job's other candidate types.

A job that ran in its launch configuration on some hardware types is predicted
there by the model blended with those runs (``LeapRegressor``'s
``history_prior``). On the types it never ran on in that configuration the model
alone predicts it, from features that carry the job's history only in part: a
job that runs faster than its model type on the types it ran on reads as a more
average one elsewhere, and a ranking then prefers the types it ran on, or the
reverse for a slow one. Ranking a job's candidates together, the placement
functions shift those other candidates by :data:`HISTORY_TRANSFER` of the
model's miss on the types the job ran on (``docs/results.md``, "Placements a
scheduler can act on"). A single prediction (``model.predict``) is not shifted:
it does not see the job's other types.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from leapml.regressor import HISTORY_COLUMNS

__all__ = ["HISTORY_TRANSFER", "job_shift", "predict_by_job"]

#: Share of a job's miss on the types it ran on (in its launch configuration) that the
#: ranking adds to its other candidates, in log throughput.
HISTORY_TRANSFER = 0.5


def predict_by_job(model, X, job_codes, *, transfer=HISTORY_TRANSFER):
    """``model.predict(X)`` with each job's miss carried to its other types, and the log shift.

    ``job_codes`` numbers each row's job (rows of one job share a code). Returns the
    shifted predictions and the shift per row (0 where nothing was carried), by which a
    caller moves the rows' intervals too.
    """
    predicted = np.asarray(model.predict(X), dtype=float)
    shift = job_shift(model, X, job_codes, predicted, transfer=transfer)
    return predicted * np.exp(shift), shift


def job_shift(model, X, job_codes, predicted, *, transfer=HISTORY_TRANSFER) -> np.ndarray:
    """The log shift of each row: ``transfer`` times its job's miss on the types it ran on.

    The miss on a row whose job ran in its configuration on its type is the runs'
    mean log throughput less the model's own log prediction there (before a
    ``LeapRegressor`` blends it with the runs: the blend's weight is undone); a
    job's miss is the mean over such rows, weighted by their runs. Rows of the
    job without runs get ``transfer`` times it; every other row 0.

    Examples
    --------
    A job ran on its first type and measured twice the model's prediction there:

    >>> import pandas as pd
    >>> class Model:
    ...     pass
    >>> X = pd.DataFrame({"job_config_mean_log_throughput_same_hardware": [np.log(200.0), np.nan],
    ...                   "job_config_runs_same_hardware": [1, 0]})
    >>> shift = job_shift(Model(), X, [0, 0], np.array([100.0, 100.0]), transfer=0.5)
    >>> np.round(np.exp(shift), 3).tolist()
    [1.0, 1.414]
    """
    codes = np.asarray(job_codes)
    if codes.ndim != 1 or len(codes) != len(predicted):
        raise ValueError(f"job_codes must number each of the {len(predicted)} rows' job, got "
                         f"{'a scalar' if codes.ndim == 0 else f'{len(codes)} entries'}")
    if not (isinstance(transfer, Real) and 0 <= transfer <= 1):
        raise ValueError(f"transfer must be a share in [0, 1], got {transfer!r}")
    shift = np.zeros(len(predicted))
    columns = getattr(model, "history_columns", None) or HISTORY_COLUMNS
    if transfer == 0 or len(predicted) == 0 or not all(_has(X, c) for c in columns):
        return shift
    mean = np.asarray(X[columns[0]], dtype=float)
    runs = np.asarray(X[columns[1]], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ran = np.isfinite(mean) & np.isfinite(runs) & (runs > 0) & (predicted > 0)
        if not ran.any():
            return shift
        weight = _blend_weight(model, runs)
        # the model before the blend; a row that is all runs (weight 1) tells nothing of it
        own = (np.log(predicted) - weight * mean) / (1.0 - weight)
        told = ran & np.isfinite(own)
        miss = np.where(told, mean - own, 0.0)
    _, job = np.unique(codes, return_inverse=True)
    runs_of_job = np.bincount(job, weights=np.where(told, runs, 0.0))
    miss_of_job = np.bincount(job, weights=miss * np.where(told, runs, 0.0))
    has_runs = runs_of_job > 0
    per_job = np.divide(miss_of_job, runs_of_job, out=np.zeros_like(miss_of_job), where=has_runs)
    return np.where(ran, 0.0, transfer * per_job[job])


def _has(X, name) -> bool:
    try:
        X[name]
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return True


def _blend_weight(model, runs) -> np.ndarray:
    """The weight ``model`` gave the job's runs in each row's log prediction (0: none)."""
    prior = getattr(model, "history_prior", None)
    if prior is None or getattr(model, "history_columns_in_", None) is None:
        return np.zeros(len(runs))
    return np.where(runs > 0, runs / (np.where(runs > 0, runs, 0.0) + float(prior)), 0.0)
