"""The submission-time ceiling: the truth as far as a job's own finished runs reveal it.

The noiseless expected throughput of an attempt knows the job's hidden factor
(``_variant``: layer widths, feature sets... that no launch field reveals).
Nothing at submission knows it for a new job, and for a job seen before only
its finished runs hint at it. :func:`expected_at_submission` replaces the
factor by its best estimate from those runs: the maximum a posteriori value
under the simulator's own lognormal prior (log-sd ``variant_sigma``) and
run-to-run noise (log-sd ``run_noise``, residuals clipped at three of them so
that a degraded run does not drag the estimate), found on a grid of the log
factor. A job with no finished run gets the prior's centre, a factor of 1.
Everything else (the model type's physics, the per-(model type, hardware
type) interaction, software releases) stays as the simulator knows it: a
fleet's history of the model type reveals those across jobs.

:func:`fit_probability_at_submission` is the same bound for where a new job
fits: the share of draws of its hidden factors (``_variant`` and
``_memory_factor``, from the simulator's own priors) with which it fits on a
type. A job with no finished run can be known no better.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..features import outcome_known_time
from .physics import MEMORY_FACTOR_SIGMA
from .throughput import expected_pairs, launch_arrays, physics_arrays

__all__ = ["expected_at_submission", "fit_probability_at_submission"]

# grid of the log factor: a coarse pass over +-4 prior sd, then a fine one around its best point
_GRID_POINTS = 17
_PAIRS_PER_BLOCK = 1 << 16


def expected_at_submission(fleet, attempts: pd.DataFrame, *, max_runs: int = 8) -> np.ndarray:
    """Expected throughput of each attempt with the job's hidden factor estimated at submission.

    Parameters
    ----------
    fleet : Fleet
        The simulated fleet whose attempts log holds the earlier runs.
    attempts : DataFrame
        Rows with ``job_id``, ``submit_time``, the launch columns and
        ``hardware_type``.
    max_runs : int, default=8
        The job's latest runs (by when their outcome became known) read.

    Returns
    -------
    ndarray
        One expected throughput per row (software releases in force at its
        submission), feasible or not.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> ok = fleet.attempts[fleet.attempts["status"] == "ok"]
    >>> estimate = expected_at_submission(fleet, ok)
    >>> estimate.shape == (len(ok),)
    True
    """
    if max_runs < 1:
        raise ValueError(f"max_runs must be >= 1, got {max_runs}")
    query = attempts.reset_index(drop=True)
    ctx = physics_arrays(fleet.models, fleet.hardware, fleet.interactions, fleet.releases)
    log_variant = np.zeros(len(query))
    query_row, run_row, runs = _earlier_runs(fleet.attempts, query, max_runs)
    if len(query_row):
        prior_sd = float(fleet.params.get("variant_sigma", 0.4)) or 1e-6
        noise_sd = max(float(fleet.params.get("run_noise", 0.06)), 1e-3)
        model_code, launch = launch_arrays(fleet.models, runs)
        hardware = _hardware_codes(fleet, runs)
        times = runs["submit_time"].to_numpy("datetime64[ns]")
        measured = np.log(runs["throughput"].to_numpy(float))
        centre = np.zeros(len(query))
        step = 8 * prior_sd / (_GRID_POINTS - 1)
        for half_width in (4 * prior_sd, step):
            grid = np.linspace(-half_width, half_width, _GRID_POINTS)
            loss = np.zeros((len(query), _GRID_POINTS))
            for lo in range(0, len(query_row), _PAIRS_PER_BLOCK):
                part = slice(lo, lo + _PAIRS_PER_BLOCK)
                q, r = query_row[part], run_row[part]
                candidate = centre[q][:, None] + grid[None, :]
                log_expected = _logexpected_pairs(ctx, model_code[r], hardware[r], launch, r, times[r], candidate)
                residual = np.clip((measured[r][:, None] - log_expected) / noise_sd, -3.0, 3.0)
                np.add.at(loss, q, residual**2)
            candidates = centre[:, None] + grid[None, :]
            loss += (candidates / prior_sd) ** 2
            has_runs = np.bincount(query_row, minlength=len(query)) > 0
            best = candidates[np.arange(len(query)), loss.argmin(axis=1)]
            centre = np.where(has_runs, best, 0.0)
        log_variant = centre
    model_code, launch = launch_arrays(fleet.models, query)
    launch["variant"] = np.exp(log_variant)
    launch["memory_factor"] = np.ones(len(query))
    thr, _ = expected_pairs(ctx, model_code, _hardware_codes(fleet, query), launch,
                       query["submit_time"].to_numpy("datetime64[ns]"))
    return thr


def fit_probability_at_submission(fleet, jobs: pd.DataFrame, hardware_types, *, draws: int = 64,
                                  random_state: int = 0, at=None) -> pd.DataFrame:
    """Probability that each job fits on each hardware type when its hidden factors are unknown.

    A new job's memory need carries the factors no launch field reveals (its
    variant inside its model type, its memory overheads). This draws them
    ``draws`` times from the simulator's priors (log-sd ``variant_sigma`` and
    :data:`~leapml.fleet.physics.MEMORY_FACTOR_SIGMA`) and counts the share of
    draws with which the job fits: the best answer a scheduler can have for a
    job that never ran, against which a learned feasibility model is measured.

    Parameters
    ----------
    fleet : Fleet
        The simulated fleet (its catalogs and priors).
    jobs : DataFrame
        Rows with the launch columns, and usually ``job_id``.
    hardware_types : sequence of str
        Hardware types of the catalog.
    draws : int, default=64
        Draws of the hidden factors per job.
    random_state : int, default=0
        Seed of the draws.
    at : Timestamp or array-like, optional
        As in :meth:`~leapml.fleet.Fleet.expected_throughput`.

    Returns
    -------
    DataFrame
        One row per (job, hardware type), jobs outer: ``job_id`` (when
        given), ``hardware_type`` and ``fit_probability`` (0 where the
        family's software does not run, the precision has no peak or the
        type is not yet introduced, whatever the draws).

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> jobs = fleet.jobs.head(5)
    >>> p = fit_probability_at_submission(fleet, jobs, ["A100-80GB-SXM4"], draws=16)
    >>> bool(p["fit_probability"].between(0, 1).all()), len(p)
    (True, 5)
    """
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be an integer >= 1, got {draws!r}")
    frame = jobs.reset_index(drop=True).drop(columns=["_variant", "_memory_factor"], errors="ignore")
    hardware_types = [str(h) for h in hardware_types]
    n, k = len(frame), len(hardware_types)
    rng = np.random.default_rng(random_state)
    variant_sd = float(fleet.params.get("variant_sigma", 0.32))
    repeated = frame.iloc[np.tile(np.arange(n), draws)].assign(
        _variant=np.exp(rng.normal(0.0, variant_sd, n * draws)),
        _memory_factor=np.exp(rng.normal(0.0, MEMORY_FACTOR_SIGMA, n * draws)))
    if at is not None and np.ndim(at):
        at = np.tile(np.asarray(at), draws)
    fits = fleet.expected_throughput(repeated, hardware_types, at=at)["feasible"].to_numpy(float)
    share = fits.reshape(draws, n * k).mean(axis=0)  # rows come jobs outer, types inner
    result = {}
    if "job_id" in frame.columns:
        result["job_id"] = np.repeat(frame["job_id"].to_numpy(), k)
    result["hardware_type"] = pd.Categorical(np.tile(hardware_types, n),
                                             categories=fleet.hardware["hardware_type"].astype(str).tolist())
    result["fit_probability"] = share
    return pd.DataFrame(result)


def _hardware_codes(fleet, frame: pd.DataFrame) -> np.ndarray:
    names = pd.Index(fleet.hardware["hardware_type"].astype(str))
    codes = names.get_indexer(frame["hardware_type"].astype(str))
    if (codes < 0).any():
        raise ValueError("hardware types not in the catalog: "
                         f"{sorted(set(frame['hardware_type'].astype(str)[codes < 0]))[:5]}")
    return codes


def _logexpected_pairs(ctx, model_code, hardware, launch, rows, times, log_variant) -> np.ndarray:
    """Log expected throughput of runs ``rows`` at each of several log factors (one column each)."""
    n, k = log_variant.shape
    repeat = np.repeat(np.arange(n), k)
    pairs = {name: array[rows][repeat] for name, array in launch.items()}
    pairs["variant"] = np.exp(log_variant.ravel())
    pairs["memory_factor"] = np.ones(n * k)
    thr, _ = expected_pairs(ctx, model_code[repeat], hardware[repeat], pairs, times[repeat])
    return np.log(thr).reshape(n, k)


def _earlier_runs(log: pd.DataFrame, query: pd.DataFrame, max_runs: int):
    """Pairs (query row, earlier run) of each query's job, at most ``max_runs`` latest each.

    Runs are the job's completed attempts whose outcome was known strictly
    before the query's submission. Returns the query positions, the run
    positions (into the returned runs frame) and the runs frame.
    """
    runs = log[(log["status"].astype(str) == "ok").to_numpy()].reset_index(drop=True)
    known = outcome_known_time(runs).to_numpy("datetime64[ns]").view("int64")
    submitted = query["submit_time"].to_numpy("datetime64[ns]").view("int64")
    jobs, inverse = np.unique(
        np.concatenate([runs["job_id"].to_numpy(), query["job_id"].to_numpy()]).astype(str),
        return_inverse=True,
    )
    run_job, query_job = inverse[: len(runs)], inverse[len(runs):]
    # one time axis for both sides: ranks compare like the timestamps
    times = np.unique(np.concatenate([known, submitted]))
    span = np.int64(len(times) + 1)
    run_key = run_job * span + np.searchsorted(times, known)
    order = np.argsort(run_key, kind="stable")
    sorted_key = run_key[order]
    end = np.searchsorted(sorted_key, query_job * span + np.searchsorted(times, submitted), side="left")
    start = np.searchsorted(sorted_key, query_job * span, side="left")
    count = np.minimum(end - start, max_runs)
    query_row = np.repeat(np.arange(len(query)), count)
    back = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    run_row = order[np.repeat(end, count) - 1 - back]
    used, run_row = np.unique(run_row, return_inverse=True)
    return query_row, run_row, runs.iloc[used].reset_index(drop=True)
