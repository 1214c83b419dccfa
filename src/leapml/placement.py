"""From a fitted model to a placement: train on a window, score candidates, rank.

These are the two calls a scheduler integration makes: :func:`fit_window`
every night, and :func:`place` at every submission.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._frames import cached_index, column_values, frame_of_arrays, taken
from .features import (
    HistoryIndex,
    build_features,
    candidate_rows,
    feature_names,
    outcome_known_time,
)
from .ranking import _rank_arrays, rank_candidates
from .schema import validate_attempts, validate_hardware

__all__ = ["completed_between", "fit_window", "place", "predict_candidates", "same_families"]

_PREDICTION_COLUMNS = pd.Index(["job_id", "hardware_type", "trainer_count", "predicted_throughput"])
_RANKED_COLUMNS = pd.Index([*_PREDICTION_COLUMNS, "cost_per_hour", "throughput_per_cost",
                            "rankable", "rank"])
_FEATURE_NAMES = feature_names()
_FEATURE_INDEX = pd.Index(_FEATURE_NAMES)


def completed_between(
    attempts: pd.DataFrame, *, start, end, outcome_known: str | None = None
) -> np.ndarray:
    """Which attempts completed (``ok``) with an outcome known in ``[start, end)``.

    These are the rows a fit at ``end`` may train on: a run still going at
    ``end`` has no measured throughput yet, whenever it was submitted.

    Parameters
    ----------
    attempts : DataFrame
        The attempt log.
    start, end : timestamp
        The window (``end`` exclusive).
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an outcome becomes known (:func:`leapml.features.outcome_known_time`).

    Returns
    -------
    ndarray of bool
        One value per row of ``attempts``.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"status": ["ok", "ok", "failed"],
    ...     "submit_time": pd.to_datetime(["2024-01-01 20:00", "2024-01-01 22:00", "2024-01-01 23:00"]),
    ...     "end_time": pd.to_datetime(["2024-01-01 21:00", "2024-01-02 03:00", "2024-01-01 23:30"])})
    >>> completed_between(log, start="2024-01-01", end="2024-01-02").tolist()
    [True, False, False]
    """
    known = outcome_known_time(attempts, outcome_known=outcome_known)
    return (
        (attempts["status"].astype(str) == "ok")
        & (known >= pd.Timestamp(start))
        & (known < pd.Timestamp(end))
    ).to_numpy(dtype=bool)


def fit_window(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    window_days: int = 30,
    until: str | pd.Timestamp | None = None,
    model=None,
    outcome_known: str | None = None,
):
    """Fit a model on the attempts completed in the last ``window_days`` days.

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog.
    window_days : int, default=30
        Length of the training window: attempts whose outcome became known in
        it (:func:`completed_between`).
    until : timestamp, optional
        End of the window (exclusive); defaults to the end of the log's last
        day of submissions (runs still going then are not trained on).
    model : estimator, optional
        Unfitted model to clone and fit; defaults to :class:`~leapml.LeapRegressor`.
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an attempt's outcome becomes known, for the window and the
        history features (:func:`leapml.features.outcome_known_time`).

    Returns
    -------
    estimator
        The fitted model.

    Raises
    ------
    TypeError
        If ``attempts`` or ``hardware`` is not a DataFrame.
    SchemaError
        If the log or the catalog fails :func:`leapml.schema.validate_attempts`
        or :func:`leapml.schema.validate_hardware` (every problem is named).
    ValueError
        If the window holds no completed attempt.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> model = fit_window(fleet.attempts, fleet.hardware, window_days=3,
    ...                    model=LeapRegressor(n_estimators=10, random_state=0))
    >>> model.n_features_in_ > 10
    True
    """
    if window_days < 1:
        raise ValueError(f"window_days must be >= 1, got {window_days}")
    # refuse a bad log here, by name, before pandas or LightGBM trip over it
    validate_attempts(attempts, validate_hardware(hardware))
    if model is None:
        from .regressor import LeapRegressor

        model = LeapRegressor()
    attempts = attempts.reset_index(drop=True)
    t = attempts["submit_time"]
    end = t.max().floor("D") + pd.Timedelta(days=1) if until is None else pd.Timestamp(until)
    start = end - pd.Timedelta(days=window_days)
    window = completed_between(attempts, start=start, end=end, outcome_known=outcome_known)
    if not window.any():
        raise ValueError(f"no completed attempts between {start} and {end}: nothing to fit")
    X = build_features(attempts, hardware, outcome_known=outcome_known)
    return clone(model).fit(X[window], attempts.loc[window, "throughput"].to_numpy(float))


def predict_candidates(
    model,
    jobs: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    history: pd.DataFrame | HistoryIndex,
    at=None,
    hardware_types=None,
) -> pd.DataFrame:
    """Predict each job's throughput on every candidate hardware type.

    Parameters
    ----------
    model : fitted estimator
        Fitted on ``build_features`` output (such as :func:`fit_window` returns).
    jobs : DataFrame
        One row per submission: ``job_id`` and the launch configuration
        (:data:`leapml.schema.LAUNCH_COLUMNS`), optionally ``submit_time``.
    hardware : DataFrame
        The hardware catalog.
    history : DataFrame or HistoryIndex
        The attempt log to read earlier runs from, or a
        :class:`~leapml.features.HistoryIndex` of it built with the same
        catalog (the same features, without re-reading the log: the way to
        score submissions one at a time). A log's outcomes count from when
        they became known by the default rule of
        :func:`leapml.features.outcome_known_time`; for another rule, pass an
        index built with ``outcome_known``.
    at : timestamp, optional
        Submission time of every job when ``jobs`` has no ``submit_time``;
        defaults to just after the last attempt of ``history`` (its
        ``last_submit`` for an index).
    hardware_types : list of str, optional
        Candidates; defaults to every type in the catalog introduced by then.

    Returns
    -------
    DataFrame
        One row per (job, hardware type) with ``trainer_count`` and
        ``predicted_throughput``, ready for :func:`~leapml.rank_candidates`.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> model = fit_window(fleet.attempts, fleet.hardware, window_days=3,
    ...                    model=LeapRegressor(n_estimators=5, random_state=0))
    >>> out = predict_candidates(model, fleet.jobs.head(2), fleet.hardware,
    ...                          history=fleet.attempts, hardware_types=["H100-80GB-SXM5", "MI300X-192GB"])
    >>> out[["job_id", "hardware_type"]].shape
    (4, 2)

    With an index of the log, built once, the predictions are the same:

    >>> from leapml.features import HistoryIndex
    >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
    >>> again = predict_candidates(model, fleet.jobs.head(2), fleet.hardware, history=index,
    ...                            hardware_types=["H100-80GB-SXM5", "MI300X-192GB"])
    >>> again.equals(out)
    True
    """
    return _predictions(model, jobs, hardware, history, at, hardware_types).frame()


class _Predictions(NamedTuple):
    """The predictions of :func:`predict_candidates`, job by job, before they become a frame."""

    job_id: object  # NumPy or pandas array
    #: each row's hardware type, as a position in ``type_names``
    type_codes: np.ndarray
    type_names: pd.Index
    trainer_count: object
    predicted: np.ndarray

    def columns(self, order=None) -> list:
        """The columns of the frame (at the rows ``order``), types as text."""
        codes = self.type_codes if order is None else self.type_codes[order]
        columns = [self.job_id, self.trainer_count, self.predicted]
        if order is not None:
            columns = [taken(values, order) for values in columns]
        return [columns[0], self.type_names.array.take(codes), *columns[1:]]

    def frame(self) -> pd.DataFrame:
        # one frame built from arrays: copying, casting and re-indexing a
        # sub-frame cost more than the model on one submission
        return frame_of_arrays(self.columns(), _PREDICTION_COLUMNS,
                               pd.RangeIndex(len(self.predicted)))


def _predictions(model, jobs, hardware, history, at, hardware_types) -> _Predictions:
    if isinstance(jobs, pd.DataFrame) and len(jobs) == 0:
        raise ValueError("jobs is empty: give at least one submission to score")
    indexed = isinstance(history, HistoryIndex)
    own_times = at is None and "submit_time" in jobs
    if at is None and not own_times:
        latest = history.last_submit if indexed else history["submit_time"].max()
        at = pd.Timestamp(latest) + pd.Timedelta(seconds=1)
    if hardware_types is None:
        times = jobs["submit_time"] if own_times else at
        latest = pd.Series(times).max() if not np.isscalar(times) else pd.Timestamp(times)
        hardware_types = hardware.loc[hardware["introduced"] <= latest, "hardware_type"].astype(str).tolist()
    if indexed:
        found = history._candidate_columns(jobs, list(hardware_types), at)
        if found is not None:
            return _indexed_predictions(model, jobs, *found)
    candidates = candidate_rows(jobs, list(hardware_types), at=at)
    if indexed:
        X = history.features(candidates)
    else:
        X = build_features(candidates, hardware, history=same_families(history, candidates))
    types = candidates["hardware_type"].array
    return _Predictions(column_values(candidates["job_id"]), types.codes, types.categories,
                        column_values(candidates["trainer_count"]),
                        np.asarray(model.predict(X), dtype=float))


def _indexed_predictions(model, jobs, names, columns) -> _Predictions:
    """The predictions from the feature columns of a HistoryIndex, as the frame path makes them.

    A :class:`~leapml.LeapRegressor` reads the columns as they are; any
    other model gets them as the feature frame.
    """
    n_jobs, n_types = len(jobs), len(names)
    predict_columns = getattr(model, "_predict_columns", None)
    predicted = predict_columns(_FEATURE_NAMES, columns) if callable(predict_columns) else None
    if predicted is None:
        predicted = model.predict(
            frame_of_arrays(columns, _FEATURE_INDEX, pd.RangeIndex(n_jobs * n_types))
        )
    repeat = np.repeat(np.arange(n_jobs), n_types)
    return _Predictions(column_values(jobs["job_id"], repeat),
                        np.tile(np.arange(n_types), n_jobs), cached_index(tuple(names)),
                        column_values(jobs["trainer_count"], repeat),
                        np.asarray(predicted, dtype=float))


def same_families(history: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """The history rows of the candidates' model families.

    Every history feature is keyed on the job, its model type or its model
    family, all inside one family, so the other families' rows cannot change
    a feature; dropping them first spares re-reading the whole log at every
    submission.

    Examples
    --------
    >>> import pandas as pd
    >>> history = pd.DataFrame({"model_family": ["llm-pretrain", "vit", "vit"]})
    >>> len(same_families(history, pd.DataFrame({"model_family": ["vit"]})))
    2
    """
    if "model_family" not in history or "model_family" not in candidates:
        return history  # let build_features name the missing column
    families = pd.unique(candidates["model_family"].astype(object))
    keep = history["model_family"].astype(object).isin(families).to_numpy()
    return history if keep.all() else history[keep]


def place(
    model,
    jobs: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    history: pd.DataFrame | HistoryIndex,
    at=None,
    hardware_types=None,
    top_k: int | None = None,
) -> pd.DataFrame:
    """Rank every candidate hardware type of each job by predicted throughput per cost.

    :func:`predict_candidates` followed by :func:`~leapml.rank_candidates`
    with the catalog's cost per device-hour (times the job's trainer count).
    ``history`` is the attempt log or a :class:`~leapml.features.HistoryIndex`
    of it, as for :func:`predict_candidates`.

    Returns
    -------
    DataFrame
        The ranked candidates, best first within each job.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> model = fit_window(fleet.attempts, fleet.hardware, window_days=3,
    ...                    model=LeapRegressor(n_estimators=5, random_state=0))
    >>> ranked = place(model, fleet.jobs.head(1), fleet.hardware, history=fleet.attempts, top_k=3)
    >>> ranked["rank"].tolist()
    [1, 2, 3]
    """
    predictions = _predictions(model, jobs, hardware, history, at, hardware_types)
    cost = dict(zip(_as_text(hardware["hardware_type"]), hardware["cost_per_device_hour"].tolist(),
                    strict=True))
    ranked = _ranked(predictions, cost, len(jobs), top_k)
    if ranked is not None:
        return ranked
    return rank_candidates(predictions.frame(), cost=cost, top_k=top_k)


def _as_text(column: pd.Series) -> list[str]:
    """``[str(value) for value in column]``, converting a categorical's categories only once."""
    values = column.array
    if isinstance(values, pd.Categorical):
        names = [str(name) for name in values.categories.tolist()] + [str(np.nan)]  # code -1: NaN
        return [names[code] for code in values.codes.tolist()]
    return [str(value) for value in column.to_numpy(dtype=object)]


def _ranked(predictions: _Predictions, cost: dict, n_jobs: int, top_k) -> pd.DataFrame | None:
    """``rank_candidates`` of the predictions, or None unless the case is plain.

    Plain: each job once, with the same types in the same order, every type
    costed above zero, every trainer count above zero, every prediction
    finite and >= 0 (or NaN). :func:`rank_candidates` checks and answers
    the rest.
    """
    predicted, codes = predictions.predicted, predictions.type_codes
    n_types = len(predictions.type_names)
    if not (top_k is None or (type(top_k) is int and top_k >= 1)) or len(codes) != n_jobs * n_types:
        return None
    names = predictions.type_names.tolist()
    unit_cost = np.array([cost.get(name, np.nan) for name in names], dtype=np.float64)
    trainers = np.asarray(predictions.trainer_count, dtype=np.float64)
    if (
        not (unit_cost > 0).all()
        or not (trainers > 0).all()
        or np.isinf(predicted).any()
        or (predicted < 0).any()
        or not np.array_equal(codes, np.tile(np.arange(n_types), n_jobs))
        or (n_jobs > 1
            and pd.unique(np.asarray(predictions.job_id[::n_types], dtype=object)).size != n_jobs)
    ):
        return None
    order, added = _rank_arrays(
        np.repeat(np.arange(n_jobs), n_types), codes, names, predicted,
        unit_cost[codes] * trainers, np.ones(len(codes), dtype=bool), top_k,
    )
    return frame_of_arrays([*predictions.columns(order), *added.values()], _RANKED_COLUMNS,
                           pd.RangeIndex(len(order)))
