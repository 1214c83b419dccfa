"""Backtest of placements a scheduler would act on: learned feasibility, failed launches.

:func:`leapml.evaluation.backtest.nightly` ranks with the simulator's true feasibility,
which no scheduler has. :func:`placement_backtest` replays the same nightly
schedule, but each night also fits a feasibility model on the window's ``ok``
and ``oom`` attempts (:func:`~leapml.placement.fit_feasibility`) and ranks
with it, as :func:`~leapml.placement.place` does.

The rule for a pick: a job placed on a type where it cannot run (the truth
says infeasible) is a failed launch and counts as regret 1 (100%); so does a
job left without any rankable candidate. Otherwise the regret is
``1 - (true throughput per cost of the pick) / (best true throughput per
cost among the feasible types)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._candidate_columns import intervals as candidate_intervals
from .._candidate_columns import mean_throughput
from ..features import PeakLog, build_features, candidate_rows, outcome_known_time
from ..placement import predict_by_job, same_families
from ..ranking import (
    DEFAULT_OBJECTIVE,
    IF_NONE_FIT,
    NEEDS_INTERVAL,
    OBJECTIVES,
    READS_MEAN,
    rank_candidates,
)
from ..schema import validate_attempts, validate_hardware
from ..schema.rules import (
    absent_from_catalog,
    require_at_least,
    require_function,
    require_models,
    require_whole,
)
from ..training import (
    completed_between,
    fit_calibrated,
    fit_feasibility,
    history_groups,
    with_measured_peaks,
)

__all__ = ["JOB_HISTORY", "PlacementBacktest", "placement_backtest"]

_DAY = pd.Timedelta(days=1)
#: What the log knew of a placed job at its submission, the ``job_history`` of a pick: it never
#: completed a run (``"new"``); it did, but not in the launch configuration it is
#: submitted with (``"other_configuration"``); it completed a run in that configuration
#: on some type (``"this_configuration"``).
JOB_HISTORY = ("new", "other_configuration", "this_configuration")


@dataclass
class PlacementBacktest:
    """What :func:`placement_backtest` measured.

    Attributes
    ----------
    picks : DataFrame
        One row per (night, job, policy, feasibility source): ``picked``
        type, ``infeasible`` (the truth says it cannot run there, or no
        candidate was rankable), ``no_candidate`` (no candidate was
        rankable) and ``regret`` (1 for an infeasible pick).
        ``feasibility`` is ``"learned"``, ``"none"`` (every type taken to
        fit), ``"true"`` (the simulator's answer, a bound no scheduler has)
        or, with ``fit_at_submission``, ``"submission"`` (see there).
        ``objective`` is the ranking objective (with learned feasibility
        every one of :data:`~leapml.ranking.OBJECTIVES` a model can answer:
        those of :data:`~leapml.ranking.NEEDS_INTERVAL` and
        :data:`~leapml.ranking.READS_MEAN` for a calibrated one only;
        ``"throughput_per_cost"`` otherwise), and
        ``min_fit_probability`` the threshold of a learned-feasibility pick
        (NaN for the other sources, which no threshold changes).
        ``job_history`` is what the log knew of the job at its submission
        (see :data:`JOB_HISTORY`).
    feasibility_scores : DataFrame
        Per night and threshold (``min_fit_probability``), the learned
        feasibility model against the truth on every candidate:
        ``precision`` and ``recall`` of "fits", ``recall_infeasible`` (share
        of infeasible candidates it kept out) and the counts.
    intervals : DataFrame
        Per night, policy and slice of the next day's completed attempts
        (``all``, ``job_new``, ``job_seen_before``, ``job_new_on_type``, ``decile_01`` ...
        ``decile_10`` of measured throughput, ``predicted_decile_01`` ...
        ``predicted_decile_10`` of predicted throughput, and ``held_out_hardware``):
        ``attempts``, ``coverage`` (share inside the interval) and
        ``median_width`` (high / low).
    """

    picks: pd.DataFrame
    feasibility_scores: pd.DataFrame
    intervals: pd.DataFrame | None = None

    def summary(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        """Mean and p90 regret and the infeasible-pick rate per policy and feasibility source.

        ``by`` names more columns of :attr:`picks` to split by (e.g.
        ``"job_history"``).

        Examples
        --------
        >>> picks = pd.DataFrame({"policy": ["leap"] * 2, "feasibility": ["learned"] * 2,
        ...                       "objective": ["throughput_per_cost"] * 2,
        ...                       "regret": [0.0, 1.0], "infeasible": [False, True]})
        >>> PlacementBacktest(picks, pd.DataFrame()).summary()["infeasible_pick_rate"].tolist()
        [0.5]
        """
        extra = [by] if isinstance(by, str) else list(by)
        missing = [key for key in extra if key not in self.picks]
        if missing:
            raise ValueError(f"picks has no column {missing[0]!r} to split by; it has "
                             f"{list(self.picks.columns)}")
        keys = [key for key in ("policy", "feasibility", "min_fit_probability", "objective")
                if key in self.picks] + extra
        grouped = self.picks.groupby(keys, sort=True, dropna=False)
        summary = pd.DataFrame({
            "jobs": grouped.size(),
            "mean_regret": grouped["regret"].mean(),
            "p90_regret": grouped["regret"].quantile(0.9),
            "infeasible_pick_rate": grouped["infeasible"].mean(),
        })
        if "no_candidate" in self.picks:
            # the failed launches where no candidate was rankable at all
            summary["no_candidate_rate"] = grouped["no_candidate"].mean()
        return summary.reset_index()


def placement_backtest(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    oracle: Callable[[pd.DataFrame, list], pd.DataFrame],
    models: Mapping[str, object],
    feasibility=None,
    window_days: int = 30,
    nights: int = 3,
    jobs_per_night: int = 300,
    min_fit_probability: float | Sequence[float] = 0.5,
    coverage: float = 0.8,
    held_out_hardware: str | None = None,
    random_state: int = 0,
    if_none_fit: str = "skip",
    fit_at_submission: Callable[[pd.DataFrame, list], pd.DataFrame] | None = None,
) -> PlacementBacktest:
    """Replay nightly placement with a feasibility model learned from the log.

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog.
    oracle : callable
        ``oracle(jobs, hardware_types)`` giving ``expected_throughput`` and
        ``feasible`` per (job, type), such as
        :meth:`leapml.fleet.Fleet.expected_throughput`; read only to score.
    models : mapping of str to estimator
        Throughput models (policies), unfitted; each is cloned and fitted
        every night on the window's completed attempts. A model with a
        ``calibrate`` method (:class:`~leapml.LeapRegressor`) is fitted on
        the window less its last day and calibrated on the attempts whose
        outcome became known that day (:func:`~leapml.training.fit_calibrated`,
        new jobs apart), and ranked with every objective.
    feasibility : classifier, optional
        Unfitted feasibility model for :func:`~leapml.placement.fit_feasibility`
        (its default when None).
    window_days : int, default=30
        Days of attempts each night trains on.
    nights : int, default=3
        Consecutive nights to score, from the log's first day plus ``window_days``.
    jobs_per_night : int, default=300
        Jobs of the next day placed each night (a seeded sample).
    min_fit_probability : float or sequence of float, default=0.5
        Threshold of :func:`~leapml.rank_candidates`; with several, learned
        feasibility is scored at each (the models are fitted once).
    coverage : float, default=0.8
        Coverage of the prediction intervals.
    held_out_hardware : str, optional
        A hardware type whose attempts no model (throughput or feasibility)
        trains or calibrates on and no feature reads, as if it had just
        arrived; it stays a candidate, and its next-day attempts form the
        interval slice ``held_out_hardware``.
    random_state : int, default=0
        Seed of the job sample.
    if_none_fit : {"skip", "most_likely"}, default="skip"
        What a job with no candidate likely enough to fit gets
        (:func:`~leapml.rank_candidates`): with ``"skip"`` it is a failed
        launch; with ``"most_likely"`` its pick is the candidate most likely
        to fit, a failed launch only where it does not.
    fit_at_submission : callable, optional
        ``fit_at_submission(jobs, hardware_types)`` giving ``fit_probability``
        per (job, type) as far as a job's launch configuration can tell, such
        as :meth:`leapml.fleet.Fleet.fit_probability_at_submission`; read only
        to score. When given, each policy is also placed with feasibility
        ``"submission"``, a bound: that probability for a job new to the log,
        the truth for a job with runs (which measured its memory), ranked by
        the default objective at each threshold. Against ``"true"`` it
        shows what no feasibility model can know of a new job; against
        ``"learned"`` what the learned one misses.

    Returns
    -------
    PlacementBacktest

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> from leapml.feasibility import FeasibilityClassifier
    >>> fleet = simulate("tiny", days=6, seed=0)
    >>> result = placement_backtest(
    ...     fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput,
    ...     models={"leap": LeapRegressor(n_estimators=5, random_state=0)},
    ...     feasibility=FeasibilityClassifier(n_estimators=5, random_state=0),
    ...     window_days=4, nights=1, jobs_per_night=20)
    >>> sorted(set(result.summary()["feasibility"]))
    ['learned', 'none', 'true']
    >>> objectives = sorted(result.summary().query("feasibility == 'learned'")["objective"])
    >>> len(objectives), objectives[:2]
    (5, ['expected_throughput_per_cost', 'expected_utility'])
    """
    require_at_least("window_days", window_days, 1)
    nights, jobs_per_night = require_whole("nights", nights), require_whole("jobs_per_night",
                                                                           jobs_per_night)
    validate_attempts(attempts, validate_hardware(hardware))
    models = require_models(models)
    if not models:
        raise ValueError("models is empty: give at least one throughput model")
    require_function("oracle", oracle, optional=False, of="(jobs, hardware_types)")
    require_function("fit_at_submission", fit_at_submission, of="(jobs, hardware_types)")
    if if_none_fit not in IF_NONE_FIT:  # before the first night's fits, not after them
        raise ValueError(f"if_none_fit must be one of {list(IF_NONE_FIT)}, got {if_none_fit!r}")
    thresholds = np.atleast_1d(np.asarray(min_fit_probability, dtype=float))
    if thresholds.ndim != 1 or not len(thresholds) or not ((thresholds >= 0) & (thresholds <= 1)).all():
        raise ValueError("min_fit_probability must be a number in [0, 1] or a non-empty sequence "
                         f"of them, got {min_fit_probability!r}")
    attempts = attempts.reset_index(drop=True)
    history = attempts
    if held_out_hardware is not None:
        catalog = hardware["hardware_type"].astype(str)
        if held_out_hardware not in set(catalog):  # else a held-out run quietly holds out nothing
            raise ValueError(absent_from_catalog([str(held_out_hardware)], catalog_names=catalog)
                             + " (held_out_hardware)")
        # the type has just arrived: no feature reads a run on it either
        history = attempts[(attempts["hardware_type"].astype(str) != held_out_hardware).to_numpy()]
    features = build_features(attempts, hardware, history=history)
    peaks = PeakLog.of(history, hardware)
    known = outcome_known_time(attempts)
    first = attempts["submit_time"].dt.floor("D").min() + window_days * _DAY
    last = attempts["submit_time"].dt.floor("D").max()
    count = max(0, min(nights, (last - first) // _DAY + 1))  # no night past the log's last day
    if count < nights:
        warnings.warn(f"the log ends on {last.date()}: {count} of the {nights} nights asked for "
                      "are placed", UserWarning, stacklevel=2)
    picks, scores, intervals = [], [], []
    for i in range(count):
        night = first + i * _DAY
        result = _night(attempts, history, peaks, hardware, features, known, night, oracle=oracle,
                        models=models, feasibility=feasibility, window_days=window_days,
                        jobs_per_night=jobs_per_night, thresholds=thresholds.tolist(),
                        coverage=coverage, held_out=held_out_hardware, seed=random_state + i,
                        if_none_fit=if_none_fit, fit_at_submission=fit_at_submission)
        if result is not None:
            picks.append(result[0])
            scores.extend(result[1])
            intervals.append(result[2])
    if not picks:
        raise ValueError("no night had both a training window and jobs to place")
    return PlacementBacktest(pd.concat(picks, ignore_index=True), pd.DataFrame(scores),
                             pd.concat(intervals, ignore_index=True))


def _night(attempts, history, peaks, hardware, features, known, night, *, oracle, models,
           feasibility, window_days, jobs_per_night, thresholds, coverage, held_out, seed,
           if_none_fit, fit_at_submission):
    """One night: fit the models and the feasibility model, place the next day's jobs."""
    t = attempts["submit_time"]
    status = attempts["status"].astype(str)
    # the training rows: outcomes known in the window (fit_feasibility applies the same rule)
    in_window = (t < night).to_numpy()
    if held_out is not None:
        in_window = in_window & (attempts["hardware_type"].astype(str) != held_out).to_numpy()
    ok = in_window & completed_between(attempts, start=night - window_days * _DAY, end=night)
    tomorrow = ((t >= night) & (t < night + _DAY)).to_numpy()
    if not ok.any() or not tomorrow.any():
        return None
    jobs = attempts[tomorrow].drop_duplicates("job_id")
    if len(jobs) > jobs_per_night:
        jobs = jobs.sample(jobs_per_night, random_state=seed)
    classifier = fit_feasibility(attempts[in_window], hardware, window_days=window_days,
                                 until=night, model=feasibility)
    candidates, truth = _candidates(attempts, hardware, jobs, night, oracle, fit_at_submission)
    X = build_features(candidates, hardware, history=same_families(history, candidates))
    learned = classifier.fit_probability(
        with_measured_peaks(X, classifier, candidates, peaks, hardware)[
            list(classifier.feature_names_in_)])
    sources = {"learned": learned, "none": np.full(len(X), np.nan),
               "true": truth["feasible"].to_numpy(float)}
    scored = tomorrow & (status == "ok").to_numpy()
    known_of = _job_history(candidates, X)
    if fit_at_submission is not None:
        new = (truth["job_id"].map(known_of) == JOB_HISTORY[0]).to_numpy()
        sources["submission"] = np.where(new, truth["fit_at_submission"],
                                         truth["feasible"].to_numpy(float))
    frames, intervals = [], []
    job_codes = pd.factorize(candidates["job_id"])[0]
    for name, model in models.items():
        fitted = _fitted(model, features, attempts, known, ok, night)
        predicted, shift = predict_by_job(fitted, X, job_codes)
        frame = truth.assign(predicted_throughput=predicted)
        calibrated = hasattr(fitted, "calibration_")
        if calibrated:
            # the intervals and mean place gives (an infinite interval none; the mean at 80%)
            interval = candidate_intervals(fitted, X, coverage, shift)
            frame = frame.assign(throughput_low=interval[:, 0], throughput_mean=mean_throughput(
                fitted, X, predicted, interval, coverage, shift))
            intervals.append(_interval_scores(fitted, features[scored], attempts[scored],
                                              coverage, held_out).assign(night=night, policy=name))
        for source, probability in sources.items():
            # with learned feasibility every objective (those of an interval for a calibrated
            # model); the others give every candidate probability 0, 1 or unknown: one objective
            objectives = {"learned": [o for o in OBJECTIVES
                                      if calibrated or o not in (*NEEDS_INTERVAL, *READS_MEAN)],
                          "submission": [DEFAULT_OBJECTIVE]}.get(source, OBJECTIVES[:1])
            # a probability of 0 or 1 (true) or NaN (none) is on the same side of every threshold
            levels = thresholds if source in ("learned", "submission") else [np.nan]
            for objective in objectives:
                for level in levels:
                    picked = _scored_picks(frame.assign(fit_probability=probability), hardware,
                                           0.5 if np.isnan(level) else level, objective,
                                           if_none_fit)
                    frames.append(picked.assign(night=night, policy=name, feasibility=source,
                                                min_fit_probability=level, objective=objective,
                                                job_history=picked["job_id"].map(known_of)))
    scores = [{**_feasibility_scores(night, learned >= level, truth), "min_fit_probability": level}
              for level in thresholds]
    return pd.concat(frames, ignore_index=True), scores, pd.concat(intervals or [pd.DataFrame()])


def _fitted(model, features, attempts, known, ok, night):
    """The model fitted on the window; one that calibrates holds its last day back for that."""
    return fit_calibrated(model, features, attempts["throughput"].to_numpy(float), rows=ok,
                          known=known, end=night,
                          calibration_days=1 if hasattr(model, "calibrate") else 0)


def _interval_scores(model, X, scored, coverage, held_out) -> pd.DataFrame:
    """Coverage and median width (high / low) of the intervals on the next day's attempts."""
    y = scored["throughput"].to_numpy(float)
    interval = model.predict_interval(X, coverage=coverage, groups=history_groups(X))
    inside = (interval[:, 0] <= y) & (y <= interval[:, 1])
    width = interval[:, 1] / interval[:, 0]
    groups = history_groups(X)
    slices = {"all": np.ones(len(y), dtype=bool), "job_new": groups == "new",
              "job_seen_before": groups != "new", "job_new_on_type": groups == "new_on_type"}
    # deciles of the measured throughput, and of the predicted one (what the
    # per-bin calibration can answer for: a row's bin comes from its prediction)
    decile = _deciles(y)
    slices.update({f"decile_{d:02d}": decile == d for d in range(1, 11)})
    predicted = _deciles(np.sqrt(interval[:, 0] * interval[:, 1]))
    slices.update({f"predicted_decile_{d:02d}": predicted == d for d in range(1, 11)})
    if held_out is not None:
        slices["held_out_hardware"] = (scored["hardware_type"].astype(str) == held_out).to_numpy()
    return pd.DataFrame([{"slice": name, "attempts": int(mask.sum()),
                          "coverage": float(inside[mask].mean()),
                          "median_width": float(np.median(width[mask]))}
                         for name, mask in slices.items() if mask.any()])


def _job_history(candidates, X) -> pd.Series:
    """Each job's :data:`JOB_HISTORY` entry, from its candidates' :func:`history_groups`."""
    groups = pd.Series(history_groups(X)).groupby(candidates["job_id"].to_numpy())
    ran, here = groups.agg(lambda g: (g != "new").any()), groups.agg(lambda g: (g == "rerun").any())
    return pd.Series(np.where(here, JOB_HISTORY[2], np.where(ran, JOB_HISTORY[1], JOB_HISTORY[0])),
                     index=ran.index)


def _deciles(values: np.ndarray) -> np.ndarray:
    """Each value's decile, 1 to 10 (ties broken by position)."""
    return np.ceil(pd.Series(values).rank(method="first").to_numpy() * 10 / max(len(values), 1))


def _candidates(attempts, hardware, jobs, night, oracle, fit_at_submission=None):
    """Candidate rows of every type introduced by ``night``, and the truth on them (with
    ``fit_at_submission``'s probability as ``fit_at_submission``)."""
    available = hardware.loc[hardware["introduced"] <= night, "hardware_type"].astype(str).tolist()
    candidates = candidate_rows(jobs, available, at=jobs["submit_time"])
    truth = oracle(jobs, available)[["job_id", "hardware_type", "expected_throughput", "feasible"]]
    base = candidates[["job_id", "hardware_type", "trainer_count"]].assign(
        hardware_type=candidates["hardware_type"].astype(str))
    truth = base.merge(truth.assign(hardware_type=truth["hardware_type"].astype(str)),
                       on=["job_id", "hardware_type"], how="left", validate="one_to_one")
    truth["feasible"] = truth["feasible"].fillna(False).astype(bool)
    if fit_at_submission is not None:
        prior = fit_at_submission(jobs, available)[["job_id", "hardware_type", "fit_probability"]]
        prior = prior.assign(hardware_type=prior["hardware_type"].astype(str)).rename(
            columns={"fit_probability": "fit_at_submission"})
        truth = truth.merge(prior, on=["job_id", "hardware_type"], how="left", validate="one_to_one")
        truth["fit_at_submission"] = truth["fit_at_submission"].fillna(0.0)
    return candidates, truth


def _scored_picks(frame, hardware, min_fit_probability, objective, if_none_fit):
    """Each job's top pick, whether it can run there, and its regret (1 for a failed launch)."""
    cost = dict(zip(hardware["hardware_type"].astype(str), hardware["cost_per_device_hour"],
                    strict=True))
    true_per_cost = frame["expected_throughput"] / (frame["hardware_type"].map(cost)
                                                    * frame["trainer_count"])
    best = true_per_cost.where(frame["feasible"]).groupby(frame["job_id"]).max()
    ranked = rank_candidates(frame.assign(true_per_cost=true_per_cost), cost=cost, top_k=1,
                             min_fit_probability=min_fit_probability, objective=objective,
                             if_none_fit=if_none_fit)
    ranked = ranked[ranked["job_id"].isin(best.dropna().index)]
    none = ~ranked["rankable"].to_numpy()
    failed = ~ranked["feasible"].to_numpy() | none
    ratio = ranked["true_per_cost"].to_numpy(float) / best.reindex(ranked["job_id"]).to_numpy()
    regret = np.where(failed, 1.0, np.clip(1.0 - np.nan_to_num(ratio), 0.0, 1.0))
    return pd.DataFrame({"job_id": ranked["job_id"].to_numpy(),
                         "picked": ranked["hardware_type"].to_numpy(),
                         "infeasible": failed, "no_candidate": none, "regret": regret})


def _feasibility_scores(night, predicted, truth) -> dict:
    """Precision and recall of the learned "fits" against the truth, on every candidate."""
    actual = truth["feasible"].to_numpy(bool)
    hits = int((predicted & actual).sum())
    return {
        "night": night,
        "candidates": len(actual),
        "infeasible_share": float(1 - actual.mean()),
        "precision": hits / max(int(predicted.sum()), 1),
        "recall": hits / max(int(actual.sum()), 1),
        "recall_infeasible": float((~predicted & ~actual).sum() / max(int((~actual).sum()), 1)),
    }
