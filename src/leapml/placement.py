"""From a fitted model to a placement: score candidates, rank, explain.

These are the two calls a scheduler integration makes: :func:`fit_window`
every night (it lives in :mod:`leapml.training` and is importable from here),
and :func:`place` at every submission.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import pandas as pd

from ._calendar import numpy_times, on_or_before, read_time, utc_ns
from ._candidate_columns import (
    MEAN_COVERAGE,
    fit_probability,
    intervals,
    known_infeasible,
    mean_throughput,
)
from ._frames import cached_index, column_values, frame_of_arrays, require_unique_columns, taken
from ._job_miss import HISTORY_TRANSFER, predict_by_job
from .features import (
    FeatureColumns,
    HistoryIndex,
    ModelSizes,
    PeakLog,
    build_features,
    candidate_rows,
    check_jobs,
    hardware_type_names,
)
from .features.sizes import lacking_sizes
from .ranking import DEFAULT_OBJECTIVE, NEEDS_INTERVAL, rank_arrays
from .regressor import HISTORY_COLUMNS, LeapRegressor
from .schema import HARDWARE_COLUMNS, RowsSchemaError
from .schema.rules import absent_from_catalog, describe_rows, text_values
from .training import (
    EVIDENCE_COLUMNS,
    FEASIBILITY_FEATURES,
    MEMORY_FLOOR_COLUMNS,
    MEMORY_FLOOR_LOAD,
    MEMORY_FLOOR_OVERRIDE,
    MEMORY_OVERRIDE_COLUMNS,
    MEMORY_OVERRIDE_LOAD,
    MONOTONE_FEATURES,
    completed_between,
    fit_feasibility,
    fit_window,
    history_groups,
    with_measured_peaks,
)

# the window and feasibility names live in leapml.training and stay importable from here
__all__ = ["CARRIED_MISS", "EVIDENCE_COLUMNS", "FEASIBILITY_FEATURES", "HISTORY_TRANSFER",
           "MEAN_COVERAGE", "MEMORY_FLOOR_COLUMNS", "MEMORY_FLOOR_LOAD", "MEMORY_FLOOR_OVERRIDE",
           "MEMORY_OVERRIDE_COLUMNS", "MEMORY_OVERRIDE_LOAD", "MONOTONE_FEATURES", "completed_between", "explain_picks", "fit_feasibility",
           "fit_window", "history_groups", "place", "predict_by_job", "predict_candidates",
           "same_families"]

_PREDICTION_COLUMNS = pd.Index(["job_id", "hardware_type", "trainer_count", "predicted_throughput",
                                "fit_probability", "throughput_low", "throughput_high",
                                "throughput_mean"])
_RANKED_COLUMNS = pd.Index([*_PREDICTION_COLUMNS, "cost_per_hour", "throughput_per_cost",
                            "rankable", "rank", "reason", "score"])
def predict_candidates(
    model,
    jobs: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    history: pd.DataFrame | HistoryIndex,
    at=None,
    hardware_types=None,
    feasibility=None,
    coverage: float = 0.8,
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
    feasibility : classifier or DataFrame, optional
        Where each job fits: a fitted classifier such as
        :func:`fit_feasibility` returns (learned from the log), or known
        answers as a DataFrame of ``job_id``, ``hardware_type`` and a boolean
        ``feasible`` (or a ``fit_probability``) with a row per candidate.
        ``None``: unknown.
    coverage : float, default=0.8
        Coverage of the prediction intervals, for a calibrated model (see
        :func:`fit_window`'s ``calibration_days``).

    Returns
    -------
    DataFrame
        One row per (job, hardware type) with ``trainer_count``,
        ``predicted_throughput``, ``fit_probability`` (NaN when
        ``feasibility`` is None), and ``throughput_low`` and
        ``throughput_high``, the prediction interval (NaN where it is
        infinite), and ``throughput_mean``, the mean throughput
        (:func:`~leapml.ranking.lognormal_mean` of the interval of
        :data:`MEAN_COVERAGE`, whatever ``coverage`` is; all three NaN unless
        the model was calibrated), ready for :func:`~leapml.rank_candidates`.

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
    return _predictions(model, jobs, hardware, history, at, hardware_types, feasibility,
                        coverage).frame()


class _Predictions(NamedTuple):
    """The predictions of :func:`predict_candidates`, job by job, before they become a frame."""

    job_id: object  # NumPy or pandas array
    #: each row's hardware type, as a position in ``type_names``
    type_codes: np.ndarray
    #: the candidate hardware types, as text
    type_names: list
    trainer_count: object
    predicted: np.ndarray
    #: probability of fitting of each row (NaN: unknown)
    fit_probability: np.ndarray
    #: low and high ends of each row's prediction interval (NaN: not calibrated)
    interval: np.ndarray
    #: the mean throughput the interval implies (NaN: not calibrated)
    mean: np.ndarray

    def columns(self, order=None) -> list:
        """The columns of the frame (at the rows ``order``), types as text."""
        codes = self.type_codes if order is None else self.type_codes[order]
        columns = [self.job_id, self.trainer_count, self.predicted, self.fit_probability,
                   self.interval[:, 0], self.interval[:, 1], self.mean]
        if order is not None:
            columns = [taken(values, order) for values in columns]
        return [columns[0], cached_index(tuple(self.type_names)).array.take(codes), *columns[1:]]

    def frame(self) -> pd.DataFrame:
        # one frame built from arrays: copying, casting and re-indexing a
        # sub-frame cost more than the model on one submission
        return frame_of_arrays(self.columns(), _PREDICTION_COLUMNS,
                               pd.RangeIndex(len(self.predicted)))


def _predictions(model, jobs, hardware, history, at, hardware_types,
                 feasibility=None, coverage=0.8, priced=False) -> _Predictions:
    if isinstance(jobs, pd.DataFrame) and len(jobs) == 0:
        raise ValueError("jobs is empty: give at least one submission to score")
    if not isinstance(history, (pd.DataFrame, HistoryIndex)):
        raise TypeError("history must be the attempt log (a DataFrame) or a HistoryIndex of it, "
                        f"got {type(history).__name__}")
    # checked whether or not the model gives intervals: a bad value is a bad call either way
    if not (isinstance(coverage, Real) and not isinstance(coverage, bool) and 0 < coverage < 1):
        raise ValueError(f"coverage must be a number in (0, 1), got {coverage!r}")
    jobs = with_model_sizes(jobs, history)
    for frame, name in ((jobs, "jobs"), (hardware, "hardware"), (history, "history"),
                        (feasibility, "feasibility")):
        require_unique_columns(frame, name)
    if at is not None and pd.api.types.is_scalar(at):
        at = read_time(at)
    own_times = at is None and "submit_time" in jobs
    if own_times and not pd.api.types.is_datetime64_any_dtype(numpy_times(jobs["submit_time"]).dtype):
        # before the catalog is read at the latest of them ("garbage" sorts after any date)
        raise ValueError(f"jobs' column 'submit_time' must hold times (datetime64), got dtype "
                         f"{jobs['submit_time'].dtype}: read it as times first (pandas.to_datetime)")
    if at is None and not own_times:
        at = _just_after(history)
    not_yet = None
    if hardware_types is None:
        if (twice := hardware["hardware_type"].astype(str).duplicated()).any():
            raise ValueError(f"the catalog (hardware) gives hardware_type "
                             f"{sorted(set(hardware['hardware_type'].astype(str)[twice]))[:5]} "
                             "more than once: keep one row per type")
        times = jobs["submit_time"] if own_times else at
        latest = pd.Series(times).max() if not np.isscalar(times) else read_time(times)
        introduced = on_or_before(hardware["introduced"], latest)
        if not introduced.any():
            raise ValueError(
                f"no hardware type of the catalog was introduced by {latest} (the first on "
                f"{hardware['introduced'].min()}): give a later time, or hardware_types")
        if priced and "cost_per_device_hour" in hardware.columns:
            # ranking divides by the cost: a type without one is left out, and said so (a
            # cost of 0 or below is an error of the catalog, named when ranking)
            cost = hardware["cost_per_device_hour"].to_numpy(dtype=float, na_value=np.nan)
            unpriced = introduced & np.isnan(cost)
            if unpriced.any() and (introduced & ~unpriced).any():
                warnings.warn(f"{int(unpriced.sum())} hardware type(s) have no "
                              f"cost_per_device_hour and are not ranked: "
                              f"{sorted(map(str, hardware.loc[unpriced, 'hardware_type']))[:10]}",
                              UserWarning, stacklevel=3)
                introduced = introduced & ~unpriced
        hardware_types = hardware.loc[introduced, "hardware_type"]
        if not pd.api.types.is_scalar(times):  # each job is offered what existed at its own time
            not_yet = _not_introduced(hardware, hardware_types, times)
    names = hardware_type_names(hardware_types)
    catalog = [str(name) for name in hardware["hardware_type"].tolist()]  # astype: 0.2 ms more
    if unknown := sorted(set(names) - set(catalog)):  # named as the argument
        raise RowsSchemaError("hardware_types, the candidate types",
                              [absent_from_catalog(unknown, catalog_names=catalog)])
    if isinstance(history, HistoryIndex):
        if hardware is not history.hardware:
            _same_specs(hardware, history.hardware)
        X = history.candidate_features(jobs, names, at=at)
    else:
        candidates = candidate_rows(jobs, names, at=at)
        X = build_features(candidates, hardware, history=same_families(history, candidates))
    # a LeapRegressor reads the feature columns as they are; other models get a frame
    frame = X.to_frame() if isinstance(X, FeatureColumns) and (
        not isinstance(model, LeapRegressor) or feasibility is not None) else X
    n_jobs, n_types = len(jobs), len(names)
    repeat = np.repeat(np.arange(n_jobs), n_types)
    job_id = column_values(jobs["job_id"], repeat)
    if not isinstance(feasibility, pd.DataFrame) and getattr(
            feasibility, "measured_need_column", None) is not None:
        frame = _with_peaks(frame, feasibility, jobs, names, at, history, hardware)
    read = X if isinstance(model, LeapRegressor) else frame
    # a job's candidates are predicted together: its miss where it ran carries to the rest
    predicted, shift = predict_by_job(model, read, repeat)
    interval = intervals(model, read, coverage, shift)
    mean = mean_throughput(model, read, predicted, interval, coverage, shift)
    if not_yet is not None and not_yet.any():  # no prediction for a type not there yet
        predicted, interval = predicted.copy(), np.array(interval, dtype=float)
        predicted[not_yet], interval[not_yet], mean[not_yet] = np.nan, np.nan, np.nan
    return _Predictions(job_id, np.tile(np.arange(n_types), n_jobs), names,
                        column_values(jobs["trainer_count"], repeat), predicted,
                        fit_probability(feasibility, frame, job_id, np.tile(names, n_jobs)),
                        interval, mean)


def with_model_sizes(jobs, history):
    """``jobs`` with the model sizes they lack read from ``history`` (:class:`ModelSizes`),
    once the jobs are checked: a bad value is named before anything is read for it."""
    if not isinstance(jobs, pd.DataFrame):
        return jobs
    if isinstance(history, HistoryIndex):
        sizes = history.model_sizes
    elif isinstance(history, pd.DataFrame) and lacking_sizes(jobs, history.columns):
        sizes = ModelSizes.of(history)  # read only when some size is lacking: a pass over the log
    else:
        return jobs
    if sizes.by_job is None or not lacking_sizes(jobs, sizes.by_job.columns):
        return jobs  # nothing to read (what fill would find again)
    check_jobs(jobs)
    return sizes.fill(jobs)


def _same_specs(hardware, built_with) -> None:
    """Refuse a catalog whose specs differ from those a HistoryIndex was built with: its
    features read its own catalog (a price may differ: features do not read it)."""
    specs = [c.name for c in HARDWARE_COLUMNS if c.name != "cost_per_device_hour"]
    given, built = ([c for c in specs if c in frame.columns] for frame in (hardware, built_with))
    if given != built or not hardware[given].astype(str).reset_index(drop=True).equals(
            built_with[built].astype(str).reset_index(drop=True)):  # values, whatever the dtypes
        raise ValueError("hardware's specs are not those of the catalog the HistoryIndex was "
                         "built with, which its features read: build the index with this catalog")


def _not_introduced(hardware, hardware_types, times) -> np.ndarray:
    """For each (job, type) pair, job after job: whether the type came after the job's time."""
    introduced = utc_ns(hardware.loc[hardware_types.index, "introduced"])
    return (utc_ns(times)[:, None] < introduced[None, :]).ravel()


def _with_peaks(frame, feasibility, jobs, names, at, history, hardware):
    """The candidates' frame with the job's earlier measured peaks the classifier reads."""
    if isinstance(history, HistoryIndex):
        peaks = history.peaks
    else:  # only the jobs' own runs can have measured their peaks
        # ids as text, as PeakLog keys them: a job given with "3" is the log's job 3
        ids = set(jobs["job_id"].astype(str))
        peaks = PeakLog.of(history[history["job_id"].astype(str).isin(ids).to_numpy()], hardware)
    return with_measured_peaks(frame, feasibility, candidate_rows(jobs, names, at=at), peaks,
                               hardware)


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
    feasibility=None,
    min_fit_probability: float = 0.5,
    coverage: float = 0.8,
    objective: str = DEFAULT_OBJECTIVE,
    if_none_fit: str = "skip",
) -> pd.DataFrame:
    """Rank every candidate hardware type of each job by expected throughput per cost.

    :func:`predict_candidates` followed by :func:`~leapml.rank_candidates`
    with the catalog's cost per device-hour (times the job's trainer count).
    ``history`` is the attempt log or a :class:`~leapml.features.HistoryIndex`
    of it, and ``feasibility`` a fitted classifier (:func:`fit_feasibility`)
    or known answers, as for :func:`predict_candidates`; candidates whose
    probability of fitting is below ``min_fit_probability`` are not
    rankable (``reason`` says why). Without ``feasibility`` every candidate
    is taken to fit, and the top pick may not run: pass one. ``coverage``
    is that of the prediction intervals (a calibrated model) and
    ``objective`` what orders the candidates, and ``if_none_fit`` what a
    job none of whose candidates is likely enough to fit gets (see
    :func:`~leapml.rank_candidates`).

    Returns
    -------
    DataFrame
        The ranked candidates, best first within each job.

    Raises
    ------
    ValueError
        Naming the candidate hardware types whose ``cost_per_device_hour``
        the catalog lacks (the column may be absent or null: prediction
        needs no cost, ranking does), besides the errors of
        :func:`predict_candidates`.

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
    _refuse_repeated_jobs(jobs)
    predictions = _predictions(model, jobs, hardware, history, at, hardware_types, feasibility,
                               coverage, priced=True)
    if objective in NEEDS_INTERVAL and hasattr(model, "calibration_") and np.isnan(
            predictions.interval).all():
        raise ValueError(f"objective {objective!r} needs prediction intervals, and none is finite "
                         f"at coverage {coverage} (too few calibration rows): give a lower coverage")
    names = predictions.type_names
    unit_cost = _unit_costs(hardware, names)
    codes = predictions.type_codes
    n_types = len(names)
    # jobs in order of first appearance: a job given twice shares its (job, type) pairs
    job_codes = pd.factorize(np.asarray(predictions.job_id[::n_types], dtype=object))[0]
    order, added = rank_arrays(
        np.repeat(job_codes, n_types), codes, names,
        predictions.predicted,
        unit_cost[codes] * np.asarray(predictions.trainer_count, dtype=np.float64),
        fit_probability=predictions.fit_probability, min_fit_probability=min_fit_probability,
        feasible=None if (marked := known_infeasible(feasibility, predictions.fit_probability))
        is None else ~marked, top_k=top_k, objective=objective, throughput_low=predictions.interval[:, 0],
        if_none_fit=if_none_fit, throughput_mean=predictions.mean,
    )
    return frame_of_arrays([*predictions.columns(order), *added.values()], _RANKED_COLUMNS,
                           pd.RangeIndex(len(order)))


def _refuse_repeated_jobs(jobs) -> None:
    """A job given twice would rank its candidates twice: named by the jobs' own rows."""
    if not isinstance(jobs, pd.DataFrame) or "job_id" not in jobs.columns or len(jobs) < 2:
        return  # named by the checks of the jobs; one job is given once
    ids = text_values(jobs["job_id"])
    twice = pd.Series(ids).duplicated(keep=False).to_numpy()
    if twice.any():
        raise ValueError(f"jobs gives job_id {sorted(set(ids[twice]))[:5]} more than once, in "
                         f"{describe_rows(twice, jobs)}: rank each job once")


def _unit_costs(hardware: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The catalog's cost per device-hour of each of ``names``; an error naming the types without one.

    The catalog may leave costs out (prediction needs none): ranking is where
    they are needed.
    """
    catalog = _as_text(hardware["hardware_type"])
    # a type listed twice takes its last row's cost; a type not listed reads the trailing NaN
    row = {name: position for position, name in enumerate(catalog)}
    costs = np.full(len(catalog) + 1, np.nan)
    if "cost_per_device_hour" in hardware.columns:
        costs[:-1] = hardware["cost_per_device_hour"].to_numpy(dtype=float, na_value=np.nan)
    unit = costs[[row.get(name, -1) for name in names]]
    usable = (unit > 0) & (unit < np.inf)
    if not usable.all():
        unknown = np.isnan(unit)
        if unknown.any():
            raise ValueError(
                f"ranking divides by cost_per_device_hour, which the hardware catalog lacks for "
                f"hardware type(s) {sorted({n for n, u in zip(names, unknown, strict=True) if u})}: add their "
                "costs, leave them out of hardware_types, or use predict_candidates (prediction "
                "needs no cost)"
            )
        unusable = sorted({n for n, ok in zip(names, usable, strict=True) if not ok})
        raise ValueError(f"cost_per_device_hour must be > 0 and finite; it is not for {unusable}")
    return unit


def _as_text(column: pd.Series) -> list[str]:
    """``[str(value) for value in column]``, converting a categorical's categories only once."""
    values = column.array
    if isinstance(values, pd.Categorical):
        names = [str(name) for name in values.categories.to_numpy(dtype=object).tolist()] + [
            str(np.nan)]  # code -1: NaN
        return [names[code] for code in values.codes.tolist()]
    return [str(value) for value in column.to_numpy(dtype=object)]


def _just_after(history) -> pd.Timestamp:
    """A second after the last attempt of ``history`` (a log or a HistoryIndex)."""
    latest = history.last_submit if isinstance(history, HistoryIndex) else history["submit_time"].max()
    if pd.isna(latest):
        raise ValueError(
            "history is empty, so the submission time cannot default to just after its "
            "last attempt: give at=<timestamp> or a submit_time column in jobs"
        )
    return pd.Timestamp(latest) + pd.Timedelta(seconds=1)


#: The reason :func:`explain_picks` names for the shift a job's runs on its other types gave a
#: pick (see :data:`leapml._job_miss.HISTORY_TRANSFER`).
CARRIED_MISS = "(the job's runs on other types)"


def _carried_miss(reasons, picks, rows, X):
    """Each pick's shift by its job's runs on other types, as explain rows (None: none).

    ``reasons`` is ``explain``'s output for ``rows``: a row's contributions, its baseline
    included, add up to the log of the model's own prediction."""
    if "predicted_throughput" not in picks.columns:
        return None
    ranked = picks.assign(job_id=picks["job_id"].astype(str),
                          hardware_type=picks["hardware_type"].astype(str))
    keys = pd.MultiIndex.from_arrays([rows["job_id"].astype(str), rows["hardware_type"].astype(str)])
    given = ranked.set_index(["job_id", "hardware_type"])["predicted_throughput"].reindex(keys)
    own = reasons.groupby("row")["contribution"].sum().reindex(range(len(rows))).to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.log(given.to_numpy(float)) - own
    moved = np.isfinite(shift) & (np.abs(shift) > 1e-9)
    runs = np.asarray(X[HISTORY_COLUMNS[1]], dtype=float) if HISTORY_COLUMNS[1] in X else 0.0
    if (moved & (runs > 0)).any():  # a type the job ran on carries nothing: other inputs ranked
        warnings.warn("ranked's predictions of some picks are not this model's at these inputs: "
                      "give explain_picks the model, history and at that place was given",
                      UserWarning, stacklevel=3)
    moved = np.flatnonzero(moved & ~(runs > 0))
    if not moved.size:
        return None
    return pd.DataFrame({"row": moved, "feature": CARRIED_MISS, "contribution": shift[moved]})


def explain_picks(model, ranked: pd.DataFrame, jobs: pd.DataFrame, hardware: pd.DataFrame, *,
                  history: pd.DataFrame | HistoryIndex, at=None, top: int = 3) -> pd.DataFrame:
    """The features that weighed most in the predicted throughput of each job's first pick.

    Parameters
    ----------
    model : LeapRegressor
        The fitted model that ranked (it needs :meth:`~leapml.LeapRegressor.explain`).
    ranked : DataFrame
        The output of :func:`place` for ``jobs``.
    jobs, hardware, history, at
        As given to :func:`place`.
    top : int, default=3
        Reasons kept per pick, largest absolute contribution first.

    Returns
    -------
    DataFrame
        ``job_id``, ``hardware_type``, ``feature``, its ``value`` (as text)
        and ``contribution`` to the log of the predicted throughput (+0.1:
        about 10% more), ``top`` rows per job. Where ``ranked``'s prediction
        of the pick was moved by the job's runs on its other types
        (:func:`predict_by_job`), the move is a reason too, the feature
        :data:`CARRIED_MISS`, its value the factor it moved the prediction by.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> model = fit_window(fleet.attempts, fleet.hardware, window_days=3,
    ...                    model=LeapRegressor(n_estimators=5, random_state=0))
    >>> jobs = fleet.jobs.head(2)
    >>> ranked = place(model, jobs, fleet.hardware, history=fleet.attempts)
    >>> reasons = explain_picks(model, ranked, jobs, fleet.hardware, history=fleet.attempts, top=2)
    >>> reasons.groupby("job_id").size().tolist()
    [2, 2]
    """
    if not (isinstance(top, Integral) and not isinstance(top, bool) and top >= 1):
        raise ValueError(f"top must be an int >= 1, got {top!r}")
    if lacking := [c for c in ("job_id", "hardware_type", "rank") if c not in ranked.columns]:
        raise ValueError(f"ranked lacks column(s) {lacking}: give the output of place")
    for frame, name in ((ranked, "ranked"), (jobs, "jobs"), (hardware, "hardware"),
                        (history, "history")):
        require_unique_columns(frame, name)
    jobs = with_model_sizes(jobs, history)
    picked = ranked["rank"] == 1
    if "rankable" in ranked.columns:  # a job no type is rankable for has no pick to explain
        picked &= ranked["rankable"].astype(bool)
    first = ranked.loc[picked, ["job_id", "hardware_type"]]
    ids = jobs["job_id"].astype(str)
    if ids.duplicated().any():
        raise ValueError(f"jobs gives job_id {sorted(set(ids[ids.duplicated()]))[:5]} more than "
                         "once: give each job once")
    if not ids.isin(first["job_id"].astype(str)).any():  # a job without a pick is left out
        raise ValueError(f"ranked has no pick (rank 1) for any job of jobs (job_id "
                         f"{ids.head(5).tolist()}...): give the jobs that were ranked")
    rows = jobs.drop(columns=["hardware_type"], errors="ignore").assign(_key=ids.to_numpy()).merge(
        first.astype(str).rename(columns={"job_id": "_key"}), on="_key", how="inner",
        validate="one_to_one").drop(columns="_key")  # ids matched as text, as place matches them
    if "submit_time" not in rows or at is not None:
        rows["submit_time"] = _just_after(history) if at is None else read_time(at)
    if isinstance(history, HistoryIndex):
        X = history.features(rows)
    else:
        X = build_features(rows, hardware, history=same_families(history, rows))
    reasons = model.explain(X)
    carried = _carried_miss(reasons, ranked.loc[picked], rows, X)
    reasons = reasons[reasons["feature"] != "(baseline)"]
    if carried is not None:  # what the job's runs on its other types moved the pick by
        reasons = pd.concat([reasons, carried], ignore_index=True)
    size = reasons["contribution"].abs()
    reasons = reasons.assign(size=size).sort_values(["row", "size"], ascending=[True, False],
                                                    kind="stable")
    reasons = reasons.groupby("row", sort=False).head(top)
    values = [f"x{np.exp(c):.3g}" if f == CARRIED_MISS else str(X.iloc[r][f])
              for r, f, c in zip(reasons["row"], reasons["feature"], reasons["contribution"],
                                 strict=True)]
    return pd.DataFrame({
        "job_id": rows["job_id"].to_numpy()[reasons["row"].to_numpy()],
        "hardware_type": rows["hardware_type"].to_numpy()[reasons["row"].to_numpy()],
        "feature": reasons["feature"].to_numpy(),
        "value": values,
        "contribution": reasons["contribution"].to_numpy(),
    })
