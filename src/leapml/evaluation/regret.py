"""Placement regret: how much throughput per cost each policy's pick loses against the best.

For a night's jobs, every policy (each model's ranking, the cheapest feasible
type, staying on the job's last hardware) picks a hardware type among the
candidates that truly fit, or among those the policy itself considers; the
regret is the share of the best true throughput per cost that the pick loses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._calendar import on_or_before
from ..features import build_features, candidate_rows, outcome_known_time
from ..placement import predict_by_job, same_families
from ..ranking import rank_candidates

__all__ = ["CEILING", "REGRET_CANDIDATES", "SUBMISSION_CEILING", "night_regret"]

#: Name under which a model is replaced by the simulator's noiseless truth.
CEILING = "ceiling"

#: Name of the submission-time ceiling: the truth with the job's hidden factors
#: estimated from its runs finished before the submission (``submission_oracle``).
SUBMISSION_CEILING = "submission_ceiling"

#: The candidate sets regret is measured over: those that truly fit (an
#: oracle's), and those each policy itself would consider.
REGRET_CANDIDATES = ("known_feasible", "considered")


def night_regret(ctx, night, scored: pd.DataFrame, fitted: dict, seed: int) -> pd.DataFrame:
    """Rank the night's jobs' candidates with each policy, among known-feasible and considered types."""
    jobs = scored.drop_duplicates("job_id", keep="first")
    if ctx.regret_jobs is not None and len(jobs) > ctx.regret_jobs:
        jobs = jobs.sample(ctx.regret_jobs, random_state=seed)
    hardware = ctx.hardware
    available = hardware.loc[on_or_before(hardware["introduced"], night), "hardware_type"].astype(str).tolist()
    truth = ctx.oracle(jobs, available)
    truth = truth[["job_id", "hardware_type", "expected_throughput", "feasible"]].copy()
    truth["hardware_type"] = truth["hardware_type"].astype(str)

    candidates = candidate_rows(jobs, available, at=jobs["submit_time"])
    X = build_features(candidates, hardware, history=same_families(ctx.attempts, candidates),
                       outcome_known=ctx.outcome_known)
    base = candidates[["job_id", "hardware_type", "trainer_count"]].copy()
    base["hardware_type"] = base["hardware_type"].astype(str)
    base = base.merge(truth, on=["job_id", "hardware_type"], how="left", validate="one_to_one")
    base["feasible"] = base["feasible"].fillna(False).astype(bool)
    base["considered"] = _considered(ctx.feasibility, candidates, X)
    cost = dict(zip(hardware["hardware_type"].astype(str), hardware["cost_per_device_hour"], strict=True))
    base["true_per_cost"] = base["expected_throughput"] / (
        base["hardware_type"].map(cost) * base["trainer_count"]
    )
    best = base[base["feasible"]].groupby("job_id")["true_per_cost"].max()
    job_codes = pd.factorize(candidates["job_id"])[0]  # a job's candidates ranked together
    predicted = {name: predict_by_job(estimator, X, job_codes)[0] for name, estimator in fitted.items()}
    if CEILING in ctx.models:
        predicted[CEILING] = base["expected_throughput"].to_numpy(float)
    last_hardware = _last_hardware(ctx.attempts, jobs, ctx.outcome_known)
    true_lookup = base.set_index(["job_id", "hardware_type"])["true_per_cost"]
    rows = []
    for candidates_name, column in zip(REGRET_CANDIDATES, ("feasible", "considered"), strict=True):
        picks = _picks(base, predicted, cost, column)
        picks["stay_on_last_hardware"] = last_hardware
        for policy, pick in picks.items():
            pick = pick.reindex(best.index)
            keys = list(zip(pick.index, pick.astype(str), strict=True))
            # a pick that does not fit (or no pick) runs nothing: all is lost
            value = true_lookup.reindex(keys).to_numpy(float)
            regret = 1.0 - np.nan_to_num(value, nan=0.0) / best.to_numpy(float)
            rows.append(
                pd.DataFrame(
                    {
                        "night": night,
                        "job_id": best.index.to_numpy(),
                        "policy": policy,
                        "candidates": candidates_name,
                        "picked": pick.astype(str).to_numpy(),
                        "regret": np.clip(regret, 0.0, 1.0),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def _considered(feasibility, candidates: pd.DataFrame, X: pd.DataFrame) -> np.ndarray:
    """Which candidates a policy considers: every one, or those ``feasibility`` gives >= 0.5."""
    if feasibility is None:
        return np.ones(len(candidates), dtype=bool)
    values = np.asarray(feasibility(candidates, X), dtype=float)
    if values.shape != (len(candidates),) or not np.isfinite(values).all():
        raise ValueError(
            f"feasibility must return one finite value per candidate ({len(candidates)}), "
            f"got shape {values.shape}"
        )
    return values >= 0.5


def _picks(base: pd.DataFrame, predicted: dict, cost: dict, column: str) -> dict:
    """Each policy's pick per job among the candidates where ``column`` holds."""
    picks = {}
    for name, values in predicted.items():
        frame = base.assign(predicted_throughput=values)
        ranked = rank_candidates(frame, cost=cost, feasible_col=column, top_k=1)
        ranked = ranked[ranked[column].to_numpy(bool)]  # a job with no candidate left gets no pick
        picks[name] = ranked.set_index("job_id")["hardware_type"]
    allowed = base[base[column]]
    cheapest = allowed.assign(c=allowed["hardware_type"].map(cost)).sort_values(
        ["job_id", "c", "hardware_type"]
    )
    picks["cheapest_feasible"] = cheapest.drop_duplicates("job_id").set_index("job_id")["hardware_type"]
    return picks


def _last_hardware(attempts: pd.DataFrame, jobs: pd.DataFrame, outcome_known=None) -> pd.Series:
    """The hardware of each job's last run completed (outcome known) before its submission.

    Jobs with no such run stay where the fleet placed this attempt.
    """
    ok = attempts["status"].astype(str) == "ok"
    history = attempts.loc[ok, ["job_id", "hardware_type"]].assign(
        submit_time=outcome_known_time(attempts[ok], outcome_known=outcome_known).dt.as_unit("ns")
    )
    history = history.sort_values("submit_time")
    query = jobs[["job_id", "submit_time", "hardware_type"]].sort_values("submit_time")
    query["submit_time"] = query["submit_time"].dt.as_unit("ns")
    merged = pd.merge_asof(
        query.rename(columns={"hardware_type": "placed"}),
        history.rename(columns={"hardware_type": "last"}),
        on="submit_time",
        by="job_id",
        allow_exact_matches=False,
    )
    last = merged["last"].astype(object).where(merged["last"].notna(), merged["placed"].astype(object))
    return pd.Series(last.astype(str).to_numpy(), index=merged["job_id"].to_numpy())
