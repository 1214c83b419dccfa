"""Nightly retrain-and-score backtest (held-out experiments: :mod:`leapml.evaluation.held_out`).

The fleet retrains every night on the last ``window_days`` days of completed
attempts and predicts the next day's. :func:`nightly` replays that schedule
over a log, for several models side by side, and returns every score in one
tidy table (night x model x slice) plus the placement regret of each model's
ranking when a truth oracle (the simulator) is at hand.

Features are built once for the whole log, each row as of its own submission
(:func:`leapml.features.build_features` reads only outcomes known strictly
before it), so slicing them by night leaks nothing; each night trains only on
the attempts whose outcome was known before the night
(:func:`leapml.placement.completed_between`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from tqdm.auto import tqdm

from .._calendar import add_days, day_start, days_between, on_clock
from ..features import build_features
from ..schema import validate_attempts, validate_hardware
from ..schema.rules import require_at_least, require_function, require_models, require_whole
from ..training import completed_between
from .metrics import coverage, median_absolute_percentage_error, within_tolerance
from .regret import CEILING, REGRET_CANDIDATES, SUBMISSION_CEILING, night_regret

__all__ = [
    "CEILING",
    "SUBMISSION_CEILING",
    "PUBLISHED",
    "BacktestResult",
    "default_models",
    "nightly",
]

#: Figures published for the production fleet (LEAP paper), for comparison.
PUBLISHED = {
    "median_accuracy_20": 0.77,
    "accuracy_20_range": (0.735, 0.806),
    "table_covered_leap_20": 0.851,
    "table_covered_table_20": 0.532,
    "table_covered_leap_10": 0.721,
    "table_covered_table_10": 0.334,
    "table_coverage": 0.13,
    "held_out_hardware_drop_points": 37.0,
    "held_out_family_drop_points": 49.7,
}


def default_models(
    *, random_state: int = 0, n_estimators: int | None = None, n_jobs: int | None = None
) -> dict:
    """The models :func:`nightly` compares unless told otherwise.

    ``leap`` (:class:`~leapml.LeapRegressor`), ``single_lightgbm`` (one LightGBM
    median regressor on log throughput with the same features), ``lookup_table``
    (the fleet's old table), ``persistence`` (the job's last measured throughput
    on the same hardware) and ``ceiling`` (the simulator's noiseless expected
    throughput: what a perfect model of the expectation would score).

    Parameters
    ----------
    random_state : int
        Seed of every model that draws random numbers.
    n_estimators : int, optional
        Trees per LightGBM model, to make quick runs (tests, demos) cheaper.
    n_jobs : int, optional
        Threads each LightGBM model fits and predicts with (-1: every core;
        None: one). Leave it None when nights run in parallel.

    Examples
    --------
    >>> sorted(default_models())
    ['ceiling', 'leap', 'lookup_table', 'persistence', 'single_lightgbm']
    """
    from ..regressor import LeapRegressor
    from .baselines import LastMeasuredRegressor, LookupTableRegressor, single_model_reference

    leap = LeapRegressor(random_state=random_state, n_jobs=n_jobs)
    single = single_model_reference(random_state=random_state, n_jobs=1 if n_jobs is None else n_jobs)
    if n_estimators is not None:
        leap.set_params(n_estimators=n_estimators)
        single.set_params(regressor__n_estimators=n_estimators)
    return {
        "leap": leap,
        "single_lightgbm": single,
        "lookup_table": LookupTableRegressor(),
        "persistence": LastMeasuredRegressor(),
        CEILING: CEILING,
    }


@dataclass
class BacktestResult:
    """Everything a nightly backtest measured.

    Attributes
    ----------
    scores : DataFrame
        One row per (night, model, slice): ``n_attempts``, ``device_hours``,
        ``within_20`` and ``within_10`` (weighted by attempts),
        ``within_20_by_device_hours`` and ``within_10_by_device_hours``,
        ``coverage`` and ``median_ape``.
    predictions : DataFrame
        One row per (night, scored attempt): measured and predicted throughput
        of every model, for plots and further analysis.
    regret : DataFrame or None
        One row per (night, job, policy, candidates): the hardware picked and
        the regret against the truly best feasible type; ``candidates`` says
        which types the policy ranked: ``"known_feasible"`` (only those that
        truly fit: feasibility as an oracle knows it) or ``"considered"``
        (those the policy itself would consider; a pick that does not fit
        loses everything). None when no oracle was given.
    fit_seconds : DataFrame
        Seconds each model took to fit, per night.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=5, seed=0)
    >>> result = nightly(fleet.attempts, fleet.hardware, window_days=4, nights=1,
    ...                  models=default_models(n_estimators=5), progress=False)
    >>> summary = result.summary()
    >>> bool(summary.loc["ceiling", "median"] > summary.loc["lookup_table", "median"])
    True
    """

    scores: pd.DataFrame
    predictions: pd.DataFrame
    regret: pd.DataFrame | None = None
    fit_seconds: pd.DataFrame = field(default_factory=pd.DataFrame)

    def summary(self, *, slice: str = "all", metric: str = "within_20") -> pd.DataFrame:
        """Median, min and max of ``metric`` over nights, per model, on one slice."""
        frame = self.scores[self.scores["slice"] == slice]
        out = frame.groupby("model", sort=False, observed=True)[metric].agg(
            ["median", "min", "max", "count"]
        )
        return out.rename(columns={"count": "nights"}).sort_values("median", ascending=False)

    def published_comparison(self, *, model: str = "leap", table: str = "lookup_table") -> pd.DataFrame:
        """Our medians over nights next to the published production figures."""
        scores = self.scores

        def med(name: str, slice_: str, metric: str) -> float:
            rows = scores[(scores["model"] == name) & (scores["slice"] == slice_)]
            return float(rows[metric].median()) if len(rows) else float("nan")

        all_rows = scores[(scores["model"] == table) & (scores["slice"] == "all")]
        table_coverage = float(all_rows["coverage"].median()) if len(all_rows) else float("nan")
        rows = [
            ("accuracy +-20%, all attempts (median over nights)", med(model, "all", "within_20"),
             PUBLISHED["median_accuracy_20"]),
            ("accuracy +-20%, worst night", float(scores[(scores["model"] == model) & (scores["slice"] == "all")]["within_20"].min()),
             PUBLISHED["accuracy_20_range"][0]),
            ("accuracy +-20%, best night", float(scores[(scores["model"] == model) & (scores["slice"] == "all")]["within_20"].max()),
             PUBLISHED["accuracy_20_range"][1]),
            ("lookup-table coverage", table_coverage, PUBLISHED["table_coverage"]),
            ("table-covered attempts: LEAP within +-20%", med(model, "table_covered", "within_20"),
             PUBLISHED["table_covered_leap_20"]),
            ("table-covered attempts: table within +-20%", med(table, "table_covered", "within_20"),
             PUBLISHED["table_covered_table_20"]),
            ("table-covered attempts: LEAP within +-10%", med(model, "table_covered", "within_10"),
             PUBLISHED["table_covered_leap_10"]),
            ("table-covered attempts: table within +-10%", med(table, "table_covered", "within_10"),
             PUBLISHED["table_covered_table_10"]),
        ]
        return pd.DataFrame(rows, columns=["figure", "ours", "published"])

    def slice_summary(self, *, metric: str = "within_20") -> pd.DataFrame:
        """Median of ``metric`` over nights: one row per slice, one column per model."""
        medians = self.scores.groupby(["slice", "model"], sort=False, observed=True)[metric].median()
        return medians.unstack("model")

    def gap_to(self, reference: str = SUBMISSION_CEILING, *, metric: str = "within_20") -> pd.DataFrame:
        """Median over nights of each model's ``metric`` minus ``reference``'s, per slice.

        Negative: the model falls short of the reference by that much (a share:
        -0.05 is five points). Raises ``ValueError`` if ``reference`` was not scored.
        """
        scores = self.scores
        if reference not in set(scores["model"]):
            raise ValueError(f"{reference!r} was not scored; models: {sorted(set(scores['model']))}")
        wide = scores.pivot_table(index=["night", "slice"], columns="model", values=metric,
                                  observed=True)
        gaps = wide.sub(wide[reference], axis=0).drop(columns=reference)
        return gaps.groupby(level="slice", sort=False).median()

    def regret_summary(self, *, candidates: str = "known_feasible") -> pd.DataFrame:
        """Mean and p90 regret and the share of optimal picks, per policy.

        ``candidates``: ``"known_feasible"`` (ranked among the types that truly
        fit) or ``"considered"`` (among the types each policy would consider).
        """
        if candidates not in REGRET_CANDIDATES:
            raise ValueError(f"candidates must be one of {list(REGRET_CANDIDATES)}, got {candidates!r}")
        if self.regret is None or self.regret.empty:
            return pd.DataFrame(columns=["mean_regret", "p90_regret", "optimal_share", "jobs"])
        regret = self.regret
        if "candidates" in regret.columns:
            regret = regret[regret["candidates"] == candidates]
        grouped = regret.groupby("policy", sort=False, observed=True)["regret"]
        out = pd.DataFrame(
            {
                "mean_regret": grouped.mean(),
                "p90_regret": grouped.quantile(0.9),
                "optimal_share": grouped.apply(lambda r: float((r <= 1e-12).mean())),
                "jobs": grouped.size(),
            }
        )
        return out.sort_values("mean_regret")


def nightly(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    models: Mapping[str, object] | None = None,
    window_days: int = 30,
    nights: int = 30,
    first_night: str | pd.Timestamp | None = None,
    oracle: Callable[[pd.DataFrame, list], pd.DataFrame] | None = None,
    submission_oracle: Callable[[pd.DataFrame], np.ndarray] | None = None,
    feasibility: Callable[[pd.DataFrame, pd.DataFrame], np.ndarray] | None = None,
    regret_jobs: int | None = 2000,
    features: pd.DataFrame | None = None,
    outcome_known: str | None = None,
    n_jobs: int = 1,
    random_state: int = 0,
    progress: bool = True,
) -> BacktestResult:
    """Replay nightly retraining: fit on the last ``window_days``, score the next day.

    Parameters
    ----------
    attempts : DataFrame
        The attempt log (schema of :mod:`leapml.schema`). An
        ``expected_throughput`` column, when present, serves only the
        ``ceiling`` model; features never read it.
    hardware : DataFrame
        The hardware catalog.
    models : mapping of str to estimator, optional
        Models to compare, unfitted; each is cloned every night. The string
        ``"ceiling"`` stands for the noiseless truth. Defaults to
        :func:`default_models`.
    window_days : int, default=30
        Days of completed attempts each night trains on: the ``ok`` attempts
        whose outcome became known in the ``window_days`` before the night.
    nights : int, default=30
        Number of consecutive nights to score (fewer if the log ends first).
    first_night : timestamp, optional
        The first night (midnight of the first scored day). Defaults to the
        log's first day plus ``window_days``.
    oracle : callable, optional
        ``oracle(jobs, hardware_types)`` returning, per (job, hardware type),
        ``expected_throughput`` and ``feasible`` (such as
        :meth:`leapml.fleet.Fleet.expected_throughput`). When given, every
        model's ranking is scored by its regret, twice: among the types that
        truly fit, and among the types the policy would consider.
    submission_oracle : callable, optional
        ``submission_oracle(attempts)`` returning one expected throughput per
        row with the job's hidden factors estimated as of its submission (such
        as :meth:`leapml.fleet.Fleet.expected_at_submission`). When given, it
        is scored as the model ``"submission_ceiling"`` on every slice.
    feasibility : callable, optional
        ``feasibility(candidates, X)``: for each candidate row (with its
        feature row), True or a probability that the job runs there; a
        candidate is considered when the value is >= 0.5. The default
        considers every catalog type available at the submission.
    regret_jobs : int or None, default=2000
        At most this many jobs a night are ranked for the regret (a seeded
        sample); None ranks every job.
    features : DataFrame, optional
        Precomputed ``build_features(attempts, hardware)``, to share between
        runs.
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an attempt's outcome becomes known, for the features and the
        training windows (:func:`leapml.features.outcome_known_time`).
    n_jobs : int, default=1
        Nights run in parallel with joblib.
    random_state : int, default=0
        Seed for the regret sample.
    progress : bool, default=True
        Show a progress bar of nights done and time left.

    Returns
    -------
    BacktestResult

    Raises
    ------
    SchemaError
        If the log or the catalog fails :func:`leapml.schema.validate_attempts`
        or :func:`leapml.schema.validate_hardware` (every problem is named).
    ValueError
        For bad windows, no models, or no night with rows to train and score.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml.evaluation.backtest import nightly, default_models
    >>> fleet = simulate("tiny", days=6, seed=0)
    >>> result = nightly(fleet.attempts, fleet.hardware, window_days=4, nights=1,
    ...                  models=default_models(n_estimators=10), progress=False)
    >>> sorted(result.scores["model"].unique())
    ['ceiling', 'leap', 'lookup_table', 'persistence', 'single_lightgbm']
    """
    require_at_least("window_days", window_days, 1)
    nights = require_whole("nights", nights)
    if regret_jobs is not None:
        regret_jobs = require_whole("regret_jobs", regret_jobs)  # None: every job
    require_function("oracle", oracle)
    require_function("submission_oracle", submission_oracle)
    # duplicate ids, bad statuses or costs are named here rather than skewing the scores
    validate_attempts(attempts, validate_hardware(hardware))
    models = dict(default_models(random_state=random_state) if models is None
                  else require_models(models))
    if not models:
        raise ValueError("models is empty: give at least one model to score")
    if CEILING in models and "expected_throughput" not in attempts.columns:
        warnings.warn(
            "the log has no expected_throughput column: the ceiling model is skipped",
            stacklevel=2,
        )
        del models[CEILING]

    attempts = attempts.reset_index(drop=True)
    if features is None:
        features = build_features(attempts, hardware, outcome_known=outcome_known)
    else:
        features = features.reset_index(drop=True)
        if len(features) != len(attempts):
            raise ValueError(
                f"features has {len(features)} rows but the log has {len(attempts)}: "
                "pass build_features(attempts, hardware) for this same log"
            )

    t = attempts["submit_time"]
    if first_night is None:
        first = add_days(t.min(), window_days)
    else:
        first = day_start(on_clock(first_night, t.dt.tz))
    last_day = day_start(t.max())
    # the nights until the log's last day, however many were asked for
    count = min(nights, days_between(first, last_day) + 1)
    night_list = [add_days(first, i) for i in range(count)]
    if not night_list:
        raise ValueError(
            f"the log ends on {last_day.date()}, before the first night {first.date()}: "
            "give a longer log or a smaller window_days"
        )
    if count < nights:
        warnings.warn(f"the log ends on {last_day.date()}: {count} of the {nights} nights asked "
                      "for are scored", UserWarning, stacklevel=2)

    context = _Context(attempts, hardware, features, models, window_days, oracle, regret_jobs,
                       submission_oracle, feasibility, outcome_known)
    run = _run_night if n_jobs == 1 else _run_night_in_worker
    tasks = (delayed(run)(context, night, random_state + i) for i, night in enumerate(night_list))
    results = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    if n_jobs == 1:
        # in one process the bar moves per model fitted, naming the night and the model
        steps = sum(not isinstance(m, str) for m in models.values()) + (oracle is not None)
        context.bar = tqdm(total=len(night_list) * steps, unit="step", disable=not progress)
        context.nights = night_list
        with context.bar:
            parts = list(results)
    else:
        parts = []
        for part, caught in tqdm(results, total=len(night_list), desc="nights", unit="night",
                                 disable=not progress):
            parts.append(part)
            for category, message in caught:  # a worker's warnings, said here as the user's
                warnings.warn(message, category, stacklevel=2)
    parts = [p for p in parts if p is not None]
    if not parts:
        raise ValueError(
            "no night had both training rows and completed attempts to score; "
            "check window_days and the log's dates"
        )
    scores = pd.concat([p[0] for p in parts], ignore_index=True)
    predictions = pd.concat([p[1] for p in parts], ignore_index=True)
    regret = pd.concat([p[2] for p in parts], ignore_index=True) if oracle is not None else None
    fit_seconds = pd.concat([p[3] for p in parts], ignore_index=True)
    return BacktestResult(scores, predictions, regret, fit_seconds)


@dataclass
class _Context:
    attempts: pd.DataFrame
    hardware: pd.DataFrame
    features: pd.DataFrame
    models: dict
    window_days: int
    oracle: Callable | None
    regret_jobs: int | None
    submission_oracle: Callable | None = None
    feasibility: Callable | None = None
    outcome_known: str | None = None
    bar: tqdm | None = None
    nights: list = field(default_factory=list)

    def announce(self, night: pd.Timestamp, step: str) -> None:
        """Name the step about to run on the progress bar (one process only)."""
        if self.bar is not None:
            number = self.nights.index(night) + 1
            self.bar.set_description(f"night {number}/{len(self.nights)} ({night.date()}): {step}")

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.update()


def _run_night_in_worker(ctx: _Context, night: pd.Timestamp, seed: int):
    """:func:`_run_night` and the warnings it raised, for the calling process to raise: a
    worker process would print them on its own, file and line included."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        part = _run_night(ctx, night, seed)
    return part, [(w.category, str(w.message)) for w in caught]


def _run_night(ctx: _Context, night: pd.Timestamp, seed: int):
    attempts, features = ctx.attempts, ctx.features
    t = attempts["submit_time"]
    ok = (attempts["status"].astype(str) == "ok").to_numpy()
    train = completed_between(attempts, start=add_days(night, -ctx.window_days), end=night,
                              outcome_known=ctx.outcome_known)
    test = ok & (t >= night).to_numpy() & (t < add_days(night, 1)).to_numpy()
    if not train.any() or not test.any():
        return None
    X_train, y_train = features[train], attempts.loc[train, "throughput"].to_numpy(float)
    X_test = features[test]
    scored = attempts.loc[test]
    y_test = scored["throughput"].to_numpy(float)

    predictions, fitted, seconds = {}, {}, []
    for name, model in ctx.models.items():
        if isinstance(model, str) and model == CEILING:
            predictions[name] = scored["expected_throughput"].to_numpy(float)
            continue
        ctx.announce(night, f"fitting {name} on {len(y_train):,} rows")
        start = time.perf_counter()
        estimator = clone(model).fit(X_train, y_train)
        seconds.append((night, name, time.perf_counter() - start))
        ctx.advance()
        fitted[name] = estimator
        predictions[name] = np.asarray(estimator.predict(X_test), dtype=float)
    if ctx.submission_oracle is not None:
        predictions[SUBMISSION_CEILING] = np.asarray(ctx.submission_oracle(scored), dtype=float)

    slices = _slices(scored, X_test, predictions)
    weights = scored["device_hours"].to_numpy(float)
    rows = []
    for name, pred in predictions.items():
        for slice_name, mask in slices.items():
            if not mask.any():
                continue
            rows.append(_score_row(night, name, slice_name, y_test[mask], pred[mask], weights[mask]))
    scores = pd.DataFrame(rows)

    pred_frame = pd.DataFrame(
        {
            "night": night,
            "attempt_id": scored["attempt_id"].to_numpy(),
            "job_id": scored["job_id"].to_numpy(),
            "hardware_type": scored["hardware_type"].astype(str).to_numpy(),
            "device_hours": weights,
            "throughput": y_test,
            **{f"predicted_{name}": pred for name, pred in predictions.items()},
        }
    )
    regret = None
    if ctx.oracle is not None:
        ctx.announce(night, "ranking hardware for the regret")
        regret = night_regret(ctx, night, scored, fitted, seed)
        ctx.advance()
    fit_seconds = pd.DataFrame(seconds, columns=["night", "model", "seconds"])
    return scores, pred_frame, regret, fit_seconds


def _slices(scored: pd.DataFrame, X_test: pd.DataFrame, predictions: dict) -> dict:
    n = len(scored)
    out = {"all": np.ones(n, dtype=bool)}
    if "lookup_table" in predictions:
        out["table_covered"] = ~np.isnan(predictions["lookup_table"])
    runs = X_test.get("job_runs_any_hardware")
    if runs is not None:
        seen = runs.to_numpy(float) > 0
        out["job_seen_before"] = seen
        out["job_new"] = ~seen
    y = scored["throughput"].to_numpy(float)
    if n >= 10:
        ranks = pd.Series(y).rank(method="first").to_numpy()
        decile = np.ceil(ranks * 10 / n).astype(int)
        for d in range(1, 11):
            out[f"decile_{d:02d}"] = decile == d
    return out


def _score_row(night, model, slice_name, y, pred, weights) -> dict:
    return {
        "night": night,
        "model": model,
        "slice": slice_name,
        "n_attempts": len(y),
        "device_hours": float(weights.sum()),
        "within_20": within_tolerance(y, pred, tol=0.2),
        "within_10": within_tolerance(y, pred, tol=0.1),
        "within_20_by_device_hours": within_tolerance(y, pred, tol=0.2, sample_weight=weights),
        "within_10_by_device_hours": within_tolerance(y, pred, tol=0.1, sample_weight=weights),
        "coverage": coverage(pred),
        "median_ape": median_absolute_percentage_error(y, pred),
    }
