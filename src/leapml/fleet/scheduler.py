"""Where the fleet's attempts run: the scheduler's candidates, its choices, owners' changes, retries.

The scheduler estimates where a job fits from its nominal physics (no hidden
job factor), keeps up to three candidate hardware types weighted by capacity,
and places each attempt on one of them, sticky to the job's usual type and
leaning on what it believes runs the job best per cost. Owners change a
job's configuration between runs; failed and out-of-memory attempts are
retried within hours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema import PRECISIONS
from .models import FAMILIES
from .throughput import evaluate_in_blocks, evaluate_pairs

__all__ = ["configuration_changes", "placement_choices", "run_with_retries", "scheduler_candidates"]

#: Most trainers a job asks for.
_MAX_TRAINERS = 1024


def _pick(rng, options, weights, size):
    """Draw ``size`` values from ``options`` with ``weights``."""
    weights = np.asarray(weights, float)
    return np.asarray(options)[rng.choice(len(options), size=size, p=weights / weights.sum())]


def scheduler_candidates(ctx: dict, rng, hardware: pd.DataFrame, model, job_t0, *, trainers, batch,
                         precision, parallelism, seq, variant, memory_factor):
    """Each job's three candidate hardware types (its usual one first), by the scheduler's estimate.

    Users shrink a configuration that fits nowhere (``trainers`` and
    ``batch`` change in place). Returns the candidates (jobs x 3 hardware
    codes), the jobs no stack runs (never submitted) and the launch arrays of
    every (job, hardware type) pair.
    """
    n_hw = len(hardware)
    n_jobs = len(model)
    # the scheduler's candidates: feasible by its nominal estimate, weighted by capacity
    launch_rows = {
        "trainers": np.repeat(trainers, n_hw), "batch": np.repeat(batch, n_hw),
        "precision": np.repeat(precision, n_hw), "parallelism": np.repeat(parallelism, n_hw),
        "seq": np.repeat(seq, n_hw), "variant": np.repeat(variant, n_hw),
        "memory_factor": np.repeat(memory_factor, n_hw),
    }
    all_model = np.repeat(model, n_hw)
    all_hw = np.tile(np.arange(n_hw), n_jobs)
    prec_code = pd.Index(PRECISIONS).get_indexer(precision)
    peak_ok = np.isfinite(ctx["peaks"][:, prec_code].T)
    supported = (ctx["maturity"][:, ctx["kind_code"][model]].T > 0) & peak_ok
    introduced = ctx["introduced"].astype(np.int64)
    age_days = (job_t0[:, None] - introduced[None, :]) / 86400e9
    capacity = hardware["capacity_weight"].to_numpy(float)[None, :] * np.clip(age_days / 10, 0, 1)
    usable = supported & (capacity > 0)
    fits = evaluate_in_blocks(ctx, all_model, all_hw, launch_rows, nominal=True)["feasible"].reshape(n_jobs, n_hw) & usable
    # users shrink a configuration that fits nowhere: halve the batch, else add trainers
    for _ in range(8):
        stuck = np.flatnonzero(~fits.any(axis=1) & usable.any(axis=1))
        if not len(stuck):
            break
        halve = batch[stuck] > 1
        batch[stuck] = np.where(halve, batch[stuck] // 2, batch[stuck])
        trainers[stuck] = np.where(halve, trainers[stuck], trainers[stuck] * 2)
        rows = (stuck[:, None] * n_hw + np.arange(n_hw)[None, :]).ravel()
        sub = {k: v[rows] for k, v in launch_rows.items()}
        sub["trainers"] = np.repeat(trainers[stuck], n_hw)
        sub["batch"] = np.repeat(batch[stuck], n_hw)
        again = evaluate_pairs(ctx, all_model[rows], all_hw[rows], sub, nominal=True)
        fits[stuck] = again["feasible"].reshape(len(stuck), n_hw) & usable[stuck]
    launch_rows["trainers"] = np.repeat(trainers, n_hw)
    launch_rows["batch"] = np.repeat(batch, n_hw)
    # jobs that fit nowhere (by the estimate) land on the largest memory that runs them
    no_fit = ~fits.any(axis=1)
    largest = np.where(usable, hardware["memory_gb"].to_numpy(float)[None, :], -1).argmax(axis=1)
    keys = np.where(fits, np.log(np.where(capacity > 0, capacity, 1)) + rng.gumbel(size=fits.shape), -np.inf)
    ranked = np.argsort(-keys, axis=1)[:, :3]
    n_ok = fits.sum(axis=1)
    for j in (1, 2):
        ranked[:, j] = np.where(n_ok > j, ranked[:, j], ranked[:, 0])
    ranked[no_fit] = largest[no_fit, None]
    drop = ~usable.any(axis=1)  # no stack runs this family at this precision: never submitted
    candidates = ranked
    return candidates, drop, launch_rows


def configuration_changes(rng, ctx: dict, family_of_job, att_job, att_time, candidates, *, rate: float,
                           trainers, batch, precision, parallelism) -> dict:
    """Each attempt's launch configuration: its job's, changed by its owner between runs.

    From the second run of a job on, each run changes with chance ``rate``
    one of: the batch size (halved or doubled), the trainer count (halved or
    doubled), the precision (to another the family uses and every candidate
    of the job runs; the next change of precision goes back). Changes stay
    for the job's later runs; sizes stay within a factor of four of the
    first run's.
    """
    n = len(att_job)
    order = np.lexsort((att_time, att_job))
    sorted_job = att_job[order]
    first = np.r_[True, sorted_job[1:] != sorted_job[:-1]] if n else np.zeros(0, dtype=bool)
    change = (rng.uniform(size=n) < rate) & ~first
    what = rng.integers(0, 3, n)
    step = rng.choice([-1, 1], n)
    # running sums within each job (rows sorted by job, then time)
    segment = np.maximum.accumulate(np.where(first, np.arange(n), 0))

    def per_job_sum(values):
        total = np.cumsum(values)
        return total - total[segment] + values[segment]

    shift_b = np.clip(per_job_sum(np.where(change & (what == 0), step, 0)), -2, 2)
    shift_t = np.clip(per_job_sum(np.where(change & (what == 1), step, 0)), -2, 2)
    flips = per_job_sum((change & (what == 2)).astype(np.int64))
    jobs = sorted_job
    out = {
        "trainers": np.where(shift_t == 0, trainers[jobs],
                             np.clip(trainers[jobs] * 2.0**shift_t, 1, _MAX_TRAINERS)).astype(np.int64),
        "batch": np.maximum(1, batch[jobs] * 2.0**shift_b).astype(np.int64),
        "precision": np.where(flips % 2 == 1, _other_precision(rng, ctx, family_of_job, candidates, precision)[jobs],
                              precision[jobs]),
    }
    out["parallelism"] = np.where((out["trainers"] == 1) & (parallelism[jobs] != "hybrid"), "data", parallelism[jobs])
    back = np.empty(n, dtype=np.int64)
    back[order] = np.arange(n)
    return {k: v[back] for k, v in out.items()}


def _other_precision(rng, ctx: dict, family_of_job: np.ndarray, candidates, precision) -> np.ndarray:
    """Per job, the precision its owner would switch to (its own where it runs on not every candidate)."""
    other = precision.copy()
    for name, fam in FAMILIES.items():
        jobs = np.flatnonzero(family_of_job == name)
        if len(jobs):
            other[jobs] = _pick(rng, list(fam.precisions), list(fam.precisions.values()), len(jobs))
    code = pd.Index(PRECISIONS).get_indexer(other)
    runs_everywhere = np.isfinite(ctx["peaks"][candidates, code[:, None]]).all(axis=1)
    return np.where(runs_everywhere, other, precision)


def placement_choices(rng, att_job, per_cost, *, stickiness: float, selection_strength: float,
                       belief_sigma: float) -> np.ndarray:
    """Which of its job's three candidates each attempt runs on (0: the usual type).

    The scheduler keeps a job on its usual type with chance ``stickiness``
    and otherwise tries the two alternatives (72:28), but leans, by
    ``selection_strength``, toward the candidate it believes gives the job
    the most throughput per cost: the truth, seen through a lognormal error
    of log-sd ``belief_sigma``. So jobs are seen more on the types where
    they run well: the selection bias of a real log.
    """
    n_jobs = len(per_cost)
    alt = 1 - stickiness
    base = np.log(np.array([stickiness, alt * 0.72, alt * 0.28]) + 1e-12)
    belief = np.log(np.where(np.isfinite(per_cost) & (per_cost > 0), per_cost, np.nan))
    belief = belief + rng.normal(0, belief_sigma, (n_jobs, 3))
    lean = np.clip(np.nan_to_num(belief - belief[:, :1], nan=-5.0), -5.0, 5.0)
    logits = base[None, :] + selection_strength * lean
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    draw = rng.uniform(size=len(att_job))
    return np.minimum((draw[:, None] > cumulative[att_job]).sum(axis=1), 2)


def run_with_retries(rng, ctx: dict, model, candidates, att_job, att_time, choice, config: dict, *,
                      failure_rate: float, retry_rate: float, end_ns: int):
    """Run each attempt (status, step throughput), retry a share of failures within hours, sort by time.

    A retry keeps its attempt's configuration; after an ``oom`` it moves to
    the job's next candidate. Returns the attempts' jobs, times, candidate
    choices, statuses, configurations, expected step throughput (before
    software releases) and the memory one trainer needs, in order of submission.
    """
    truth = evaluate_in_blocks(ctx, model[att_job], candidates[att_job, choice], config)
    status = _status(rng, truth["feasible"], failure_rate)
    retry = np.flatnonzero((status != 0) & (rng.uniform(size=len(status)) < retry_rate))
    r_choice = np.where(status[retry] == 1, (choice[retry] + 1) % 3, choice[retry])
    r_time = att_time[retry] + (rng.uniform(0.1, 3.0, len(retry)) * 3600e9).astype(np.int64)
    r_config = {k: v[retry] for k, v in config.items()}
    r_truth = evaluate_in_blocks(ctx, model[att_job[retry]], candidates[att_job[retry], r_choice], r_config)
    r_status = _status(rng, r_truth["feasible"], failure_rate)
    in_time = r_time < end_ns
    source = np.concatenate([np.arange(len(att_job)), retry[in_time]])  # the attempt each row runs as
    att_time = np.concatenate([att_time, r_time[in_time]])
    choice = np.concatenate([choice, r_choice[in_time]])
    status = np.concatenate([status, r_status[in_time]])
    step_throughput = np.concatenate([truth["throughput"], r_truth["throughput"][in_time]])
    memory = np.concatenate([truth["memory_gb"], r_truth["memory_gb"][in_time]])
    order = np.lexsort((att_job[source], att_time))
    source = source[order]
    config = {k: v[source] for k, v in config.items()}
    return (att_job[source], att_time[order], choice[order], status[order], config,
            step_throughput[order], memory[order])


def _status(rng, fits: np.ndarray, failure_rate: float) -> np.ndarray:
    """0 ok, 1 oom (does not fit), 2 failed for another reason."""
    failed = rng.uniform(size=len(fits)) < failure_rate
    return np.where(~fits, 1, np.where(failed, 2, 0)).astype(np.int8)
