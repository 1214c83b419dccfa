"""What each night trains on: the completed attempts of a window, the model and the feasibility model.

:func:`completed_between` is the one rule for "the attempts whose outcome
became known in a window"; :func:`fit_window` fits the throughput model on
them and :func:`fit_feasibility` the model of where a job fits. Both are
also importable from :mod:`leapml.placement`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._calendar import add_days, on_clock
from .features import FEATURE_GROUPS, MEASURED_PEAK, PeakLog, build_features, outcome_known_time
from .schema import validate_attempts, validate_hardware
from .schema.rules import require_at_least

__all__ = ["EVIDENCE_COLUMNS", "FEASIBILITY_FEATURES", "MEMORY_FLOOR_COLUMNS",
           "MEMORY_FLOOR_LOAD", "MEMORY_FLOOR_OVERRIDE", "MEMORY_OVERRIDE_COLUMNS",
           "MEMORY_NEED_FEATURES", "MEMORY_OVERRIDE_LOAD", "MONOTONE_FEATURES", "RULE_FACTOR",
           "completed_between",
           "feasibility_model",
           "fit_calibrated", "fit_feasibility", "fit_window", "history_groups", "window_counts",
           "with_measured_peaks"]

#: Pairs a type must have completed before :func:`fit_feasibility`'s model lets a job fit there
#: (a family or precision the log never saw complete is left to the classifier on every type).
EVIDENCE_COLUMNS = [("model_family", "hardware_type"), ("precision", "hardware_type")]
#: Keys below whose smallest completed device memory :func:`fit_feasibility`'s model lets
#: no job fit: a model type at a precision and parallelism is not let onto less memory
#: than the log ever saw it complete on (the log rarely shows an ``oom`` there).
MEMORY_FLOOR_COLUMNS = [("model_type", "precision", "parallelism")]
#: Launch columns along which a configuration needs more memory (1: when larger; -1: when
#: smaller, as trainers shard state): a completed run counts toward a job's memory floor
#: only if it needed at least as much by each.
MEMORY_FLOOR_LOAD = {"batch_size": 1, "seq_len": 1, "trainer_count": -1}
#: Below a memory floor, :func:`fit_feasibility`'s model keeps the classifier's own probability
#: where it is at least this, and where the job's family at its precision and parallelism
#: (:data:`MEMORY_OVERRIDE_COLUMNS`) completed a configuration needing as much by
#: :data:`MEMORY_OVERRIDE_LOAD` (the floors' load and the model state) on as little memory.
MEMORY_FLOOR_OVERRIDE = 0.999
#: The keys that back :data:`MEMORY_FLOOR_OVERRIDE`: the job's family at its precision and
#: parallelism must have completed a configuration needing as much on as little memory.
MEMORY_OVERRIDE_COLUMNS = [("model_family", "precision", "parallelism")]
#: What "needing as much" reads for :data:`MEMORY_OVERRIDE_COLUMNS`: the floors' load and
#: the model's training state per device (model types of a family differ in size).
MEMORY_OVERRIDE_LOAD = {**MEMORY_FLOOR_LOAD, "model_state_gb_per_device": 1}
#: The columns from which the default feasibility model learns the memory one trainer needs,
#: where the log records runs' ``peak_memory_gb``: the launch configuration, the model's
#: sizes and the devices a host holds (tensor parallelism shards within a host), none of
#: which depends on the device's memory.
MEMORY_NEED_FEATURES = ["model_type", "model_family", "precision", "parallelism",
                        "trainer_count", "batch_size", "seq_len", "param_count", "embedding_gb",
                        "model_state_gb_per_device", "devices_per_host"]
#: The columns of ``build_features`` the default feasibility model reads: the launch
#: configuration, the hardware's specifications and whether the job ran there before;
#: not the hardware's age or other clocks, which say nothing of memory and drift past
#: the training window.
FEASIBILITY_FEATURES = [
    *(name for group in ("launch", "hardware", "derived") for name in FEATURE_GROUPS[group]
      if name != "hardware_age_days"),
    "param_count", "embedding_gb", "embedding_gb_per_memory_gb", "model_state_gb_per_device",
    "model_state_gb_per_memory_gb",
    "job_runs_same_hardware",
]
#: What each memory rule of :func:`fit_feasibility`'s model (floor, ceiling) multiplies a
#: candidate's probability of fitting by: far below any threshold, but not 0, so that a job
#: every candidate of which breaks one still has them in order (fewest rules broken, then the
#: classifier's probability) for ``if_none_fit="most_likely"``; the evidence rule gives 0.
RULE_FACTOR = 1e-6
#: Features along which fitting only gets likelier (1) or less likely (-1), all else equal.
MONOTONE_FEATURES = {"memory_gb": 1, "total_memory_gb": 1, "batch_size": -1, "seq_len": -1,
                     "batch_tokens_per_memory_gb": -1, "model_state_gb_per_memory_gb": -1,
                     "embedding_gb_per_memory_gb": -1}


def completed_between(
    attempts: pd.DataFrame, *, start, end, outcome_known: str | None = None,
    statuses: tuple[str, ...] = ("ok",),
) -> np.ndarray:
    """Which attempts completed (``ok``) with an outcome known in ``[start, end)``.

    These are the rows a fit at ``end`` may train on: a run still going at
    ``end`` has no measured throughput yet, whenever it was submitted. This
    is the one rule for a training window: the nightly backtest, the held-out
    experiments, the placement backtest, :func:`fit_window` and
    :func:`fit_feasibility` all select their rows with it.

    Parameters
    ----------
    attempts : DataFrame
        The attempt log.
    start, end : timestamp
        The window (``end`` exclusive).
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an outcome becomes known (:func:`leapml.features.outcome_known_time`).
    statuses : tuple of str, default=("ok",)
        The outcomes that count (the feasibility model also learns from ``oom``).

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
    return (attempts["status"].astype(str).isin(statuses)
            & (known >= pd.Timestamp(start)) & (known < pd.Timestamp(end))).to_numpy(dtype=bool)


def fit_window(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    window_days: int = 30,
    until: str | pd.Timestamp | None = None,
    model=None,
    calibration_days: int = 0,
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
    calibration_days : int, default=0
        Hold the window's last ``calibration_days`` days back from the fit
        and calibrate the model's prediction intervals on them
        (:meth:`~leapml.LeapRegressor.calibrate`, grouped by how much of the
        job the log has seen: :func:`history_groups`). 0: no intervals.
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
    if model is None:
        from .regressor import LeapRegressor

        model = LeapRegressor()
    _check_window_days(window_days)
    if not 0 <= calibration_days < window_days:
        raise ValueError(f"calibration_days must be in [0, window_days), got {calibration_days}")
    attempts, window, end, known = _window(attempts, hardware, window_days, until, "completed",
                                           ("ok",), outcome_known)
    X = build_features(attempts, hardware, outcome_known=outcome_known)
    y = attempts["throughput"].to_numpy(float)
    return fit_calibrated(model, X, y, rows=window, known=known, end=end,
                          calibration_days=calibration_days)


def fit_calibrated(model, X, y, *, rows, known, end, calibration_days: int):
    """Clone and fit ``model`` on ``rows``, holding back the last days' outcomes to calibrate it.

    The one rule for calibration rows: the rows whose outcome became known in
    the last ``calibration_days`` days before ``end`` (by ``known``, as the
    window itself is chosen), not the rows submitted then, which would keep
    only the runs short enough to have ended. The fit reads the other rows;
    the calibration is grouped by :func:`history_groups`.

    Parameters
    ----------
    model : estimator
        Unfitted; one with ``calibrate`` when ``calibration_days > 0``.
    X, y : features and throughput of the log's rows.
    rows : ndarray of bool
        The training window (:func:`completed_between`).
    known : Series
        When each row's outcome became known (:func:`~leapml.features.outcome_known_time`).
    end : Timestamp
        End of the window.
    calibration_days : int
        Days held back; 0 fits on every row of the window and calibrates nothing.

    Returns
    -------
    estimator
        The fitted (and calibrated) clone.
    """
    if calibration_days and not callable(getattr(model, "calibrate", None)):  # before the fit
        raise TypeError(f"calibration_days={calibration_days} needs a model with calibrate (such "
                        f"as LeapRegressor); {type(model).__name__} has none: give 0")
    rows = np.asarray(rows, dtype=bool)
    held_back = _held_back(rows, known, end, calibration_days)
    if calibration_days and (not held_back.any() or held_back.sum() == rows.sum()):
        raise ValueError(f"the last {calibration_days} day(s) of the window hold no completed "
                         "attempt, or all of them: nothing to calibrate on, or to fit")
    fitted = clone(model).fit(X[rows & ~held_back], y[rows & ~held_back])
    if calibration_days:
        fitted.calibrate(X[held_back], y[held_back], groups=history_groups(X[held_back]))
    return fitted


def window_counts(attempts: pd.DataFrame, hardware: pd.DataFrame, *, window_days: int = 30,
                  calibration_days: int = 0, until=None, outcome_known: str | None = None
                  ) -> tuple[int, int]:
    """How many completed attempts :func:`fit_window` fits on, and how many it holds back.

    The same rows as ``fit_window`` with the same arguments: the window of
    :func:`completed_between`, less its last ``calibration_days`` days of
    outcomes.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> fit, held_back = window_counts(fleet.attempts, fleet.hardware, window_days=3, calibration_days=1)
    >>> fit > held_back > 0
    True
    """
    _, window, end, known = _window(attempts, hardware, window_days, until, "completed", ("ok",),
                                    outcome_known)
    held_back = _held_back(window, known, end, calibration_days)
    return int((window & ~held_back).sum()), int(held_back.sum())


def _held_back(rows, known, end, calibration_days: int) -> np.ndarray:
    """The rows of ``rows`` whose outcome became known in the last ``calibration_days`` days."""
    if not calibration_days:
        return np.zeros(len(rows), dtype=bool)
    return rows & (known >= add_days(end, -calibration_days, keep_time=True)).to_numpy()


def _check_window_days(window_days) -> None:
    """A window is a number of days, at least one (NaN and text are none)."""
    require_at_least("window_days", window_days, 1)


def _window(attempts, hardware, window_days, until, what, statuses, outcome_known):
    """The checked log (fresh index), its rows of ``statuses`` whose outcome became known in
    the training window, the window's end, and when each row's outcome became known."""
    _check_window_days(window_days)
    # refuse a bad log here, by name, before pandas or LightGBM trip over it
    validate_attempts(attempts, validate_hardware(hardware))
    attempts = attempts.reset_index(drop=True)
    t = attempts["submit_time"]
    # whole days of the log's clock, whatever its daylight-saving changes
    end = add_days(t.max(), 1) if until is None else on_clock(until, t.dt.tz)
    start = add_days(end, -window_days, keep_time=until is not None)
    known = outcome_known_time(attempts, outcome_known=outcome_known)
    window = completed_between(attempts, start=start, end=end, outcome_known=outcome_known,
                               statuses=statuses)
    if not window.any():
        raise ValueError(f"no {what} attempts between {start} and {end}: nothing to fit")
    return attempts, window, end, known


def feasibility_model(**params):
    """The unfitted classifier :func:`fit_feasibility` fits by default, ``params`` overriding its own.

    A :class:`~leapml.feasibility.FeasibilityClassifier` with the evidence
    rule (:data:`EVIDENCE_COLUMNS`), the monotone features, the memory floors
    and ceilings (:data:`MEMORY_FLOOR_COLUMNS`, :data:`MEMORY_FLOOR_LOAD`) and
    their override (:data:`MEMORY_FLOOR_OVERRIDE`, backed by
    :data:`MEMORY_OVERRIDE_COLUMNS`, or by the need learned from
    :data:`MEMORY_NEED_FEATURES` where the log records peak memory, and from the job's own
    earlier peak in its configuration, :data:`~leapml.features.MEASURED_PEAK`), each memory
    rule multiplying a probability by :data:`RULE_FACTOR`, seeded with 0.

    Examples
    --------
    >>> feasibility_model(memory_floor_override=None).memory_floor_override is None
    True
    """
    from .feasibility import FeasibilityClassifier

    defaults = {
        "evidence_columns": list(EVIDENCE_COLUMNS), "monotone": dict(MONOTONE_FEATURES),
        "memory_floor_columns": list(MEMORY_FLOOR_COLUMNS),
        "memory_floor_load": dict(MEMORY_FLOOR_LOAD),
        "memory_ceiling_columns": list(MEMORY_FLOOR_COLUMNS),
        "memory_floor_override": MEMORY_FLOOR_OVERRIDE,
        "memory_override_columns": list(MEMORY_OVERRIDE_COLUMNS),
        "memory_override_load": dict(MEMORY_OVERRIDE_LOAD),
        "memory_need_features": list(MEMORY_NEED_FEATURES), "measured_need_column": MEASURED_PEAK,
        "rule_factor": RULE_FACTOR, "random_state": 0,
    }
    return FeasibilityClassifier(**{**defaults, **params})


def fit_feasibility(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    window_days: int = 30,
    until: str | pd.Timestamp | None = None,
    model=None,
    outcome_known: str | None = None,
):
    """Fit a model of whether a job fits on a hardware type, from the log's outcomes alone.

    The labels are the attempts' statuses in the window: ``ok`` (it fitted)
    against ``oom`` (it ran out of memory); other failures say nothing about
    memory and are left out. The features are :func:`build_features`'
    columns of :data:`FEASIBILITY_FEATURES`, and those of the model's
    ``memory_need_products`` where it multiplies others.

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog.
    window_days : int, default=30
        Length of the training window.
    until : timestamp, optional
        End of the window (exclusive); defaults to the end of the log's last day.
    model : classifier, optional
        Unfitted classifier to clone and fit on labels ``True`` (fitted) and
        ``False``; defaults to a :class:`~leapml.feasibility.FeasibilityClassifier`
        that also needs a model family and a precision to have completed on a
        type before it lets a job fit there (:data:`EVIDENCE_COLUMNS`; one new
        to the log, which completed nowhere, is left to the classifier), and
        a model type at a precision and parallelism to have completed on as
        little device memory with a configuration needing as much
        (:data:`MEMORY_FLOOR_COLUMNS`, :data:`MEMORY_FLOOR_LOAD`): the log
        never shows what a scheduler did not try. Below a floor it keeps the
        classifier's probability where that is at least
        :data:`MEMORY_FLOOR_OVERRIDE` and the job's family completed as much
        on as little memory (:data:`MEMORY_OVERRIDE_COLUMNS`). Where the log
        has ``peak_memory_gb`` it learns the memory need instead
        (:data:`MEMORY_NEED_FEATURES`) and reads each job's own earlier peak
        in its configuration (:data:`~leapml.features.MEASURED_PEAK`, which
        this function fills from the log; without the column it reads none).
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an attempt's outcome becomes known, as for :func:`fit_window`.

    Returns
    -------
    classifier
        The fitted classifier, to pass to :func:`place` as ``feasibility``.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml.feasibility import FeasibilityClassifier
    >>> fleet = simulate("tiny", days=4, seed=1)
    >>> clf = fit_feasibility(fleet.attempts, fleet.hardware, window_days=3,
    ...                       model=FeasibilityClassifier(n_estimators=10, random_state=0))
    >>> clf.classes_.tolist()
    [False, True]
    """
    if model is None:
        model = feasibility_model()
    attempts, window, _, _ = _window(attempts, hardware, window_days, until, "ok or oom",
                                     ("ok", "oom"), outcome_known)
    X = build_features(attempts, hardware, outcome_known=outcome_known)
    fitted = (attempts.loc[window, "status"].astype(str) == "ok").to_numpy()
    extra = {}
    if "peak_memory_gb" in attempts.columns and "memory_need_features" in model.get_params():
        extra["peak_memory_gb"] = pd.to_numeric(attempts.loc[window, "peak_memory_gb"]).to_numpy(
            dtype=float, na_value=np.nan)
    model = clone(model)
    products = [c for key in model.get_params().get("memory_need_products") or [] for c in key]
    X = X.loc[window, list(dict.fromkeys([*FEASIBILITY_FEATURES, *products]))]
    if getattr(model, "measured_need_column", None) is not None:
        if "peak_memory_gb" in attempts.columns:
            X = with_measured_peaks(X, model, attempts.loc[window], PeakLog.of(
                attempts, hardware, outcome_known=outcome_known), hardware)
        else:
            model.set_params(measured_need_column=None)  # no run measured anything to read
    return model.fit(X, fitted, **extra)


def with_measured_peaks(X, classifier, rows, peaks, hardware, times=None):
    """``X`` with the measured-need column ``classifier`` reads (its ``measured_need_column``,
    e.g. :data:`~leapml.features.MEASURED_PEAK`), where it reads one that ``X`` lacks.

    Each row's value is the largest peak of its job in its launch configuration that
    ``peaks`` (a :class:`~leapml.features.PeakLog`) knew strictly before ``times`` (default:
    the rows' ``submit_time``); ``rows`` are the attempts or candidates ``X`` describes, in
    its order.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml.features import MEASURED_PEAK, PeakLog, build_features
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> X = build_features(fleet.attempts, fleet.hardware)
    >>> peaks = PeakLog.of(fleet.attempts, fleet.hardware)
    >>> X = with_measured_peaks(X, feasibility_model(), fleet.attempts, peaks, fleet.hardware)
    >>> bool(X[MEASURED_PEAK].notna().any())
    True
    """
    column = getattr(classifier, "measured_need_column", None)
    if column is None or column in X.columns:
        return X
    return X.assign(**{column: peaks.before(rows, hardware, times)})


def history_groups(X) -> np.ndarray:
    """How much of a row's job the log has seen: ``"new"``, ``"new_on_type"``, ``"seen"`` or ``"rerun"``.

    ``"new"``: the job never completed a run; ``"new_on_type"``: it did, but
    never on this hardware type; ``"seen"``: it ran on this type, but not in
    this configuration; ``"rerun"``: it ran in this very configuration on this
    type (the prediction then leans on those runs; without the column
    ``job_config_runs_same_hardware`` no row is a rerun). The groups
    :meth:`~leapml.LeapRegressor.calibrate` and
    :meth:`~leapml.LeapRegressor.predict_interval` get here: the less the log
    has seen, the more a prediction errs, so each group is calibrated apart.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"job_runs_any_hardware": [0, 3, 3, 3], "job_runs_same_hardware": [0, 0, 2, 2],
    ...                   "job_config_runs_same_hardware": [0, 0, 0, 1]})
    >>> history_groups(X).tolist()
    ['new', 'new_on_type', 'seen', 'rerun']
    """
    def counts(name):
        return pd.Series(X[name]).to_numpy(dtype=float, na_value=0.0)

    runs, here = counts("job_runs_any_hardware"), counts("job_runs_same_hardware")
    rerun = (counts("job_config_runs_same_hardware") > 0 if "job_config_runs_same_hardware" in X
             else np.zeros(len(runs), dtype=bool))
    seen = np.where(rerun, "rerun", "seen")
    return np.where(runs > 0, np.where(here > 0, seen, "new_on_type"), "new")
