"""Jobs, attempts and the simulated fleet.

:func:`simulate` draws recurring jobs (daily retrains, ad-hoc iterations,
hyper-parameter sweeps) from a model catalog whose popularity drifts and
grows new model types, lets owners change a job's configuration between runs,
places every attempt on a hardware type as a capacity-weighted, sticky
scheduler leaning on what it believes would, and measures its throughput from
:mod:`leapml.fleet.physics` with run-to-run noise, degraded runs, day-level
shocks and software releases; each attempt's outcome is known when its run
ends (``end_time``). Everything is vectorised over jobs and attempts.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

from .._calendar import read_time
from .._moved import forward
from ..schema import ATTEMPT_COLUMNS, PRECISIONS, STATUSES, TRUTH_COLUMNS
from ..schema.rules import require_whole
from .fleet import Fleet
from .hardware import hardware_catalog
from .models import _PARALLELISM_CODES, FAMILIES, check_seed, model_catalog
from .physics import MEMORY_FACTOR_SIGMA, _seq_scale
from .scheduler import (
    _MAX_TRAINERS,
    _pick,
    configuration_changes,
    placement_choices,
    run_with_retries,
    scheduler_candidates,
)
from .throughput import _RELEASE_STACKS, evaluate_pairs, physics_arrays, release_factor

__all__ = ["CALIBRATION", "PRESETS", "simulate"]

# moved out of this module; the old import path warns for one release
__getattr__ = forward(__name__, {
    "load_fleet": "leapml.fleet.fleet",
    "describe": "leapml.fleet.describe",
    "format_description": "leapml.fleet.describe",
    "lookup_table_score": "leapml.evaluation.table_score",
})

#: Attempts a day of each preset; every preset shares the same catalogs.
PRESETS = {"tiny": 300, "small": 2_500, "production": 25_000}

#: Calibration status of each preset, in one sentence (docs/simulator.md; the ranges of
#: ``small`` and ``tiny`` are from ``python docs/scripts/simulator_table.py --preset small
#: --days 31``, and ``--preset tiny``).
CALIBRATION = {
    "production": "calibrated: lookup-table coverage and accuracy within +-20% sit in the "
                  "published bands (0.10-0.16 and 0.45-0.60)",
    "small": "outside calibration: with a tenth of the production attempts, the lookup table "
             "is within +-20% on 0.63-0.71 of the attempts it covers (seeds 0-2) against the "
             "0.45-0.60 band, so figures from it are not comparable with published ones",
    "tiny": "outside calibration: a test-sized fleet, whose lookup table is within +-20% on "
            "0.81-0.92 of the attempts it covers (seeds 0-2) against the 0.45-0.60 band; for "
            "tests, not for comparisons",
}

_HOUR = np.timedelta64(3_600_000_000_000, "ns")


def _draw_jobs(rng, models, n, start_ns, days, *, recurring_share, sweep_share, sweep_config_spread):
    """A pool of ``n`` job seeds: model type, kind, timing and launch configuration."""
    span_days = days
    kind = rng.choice(3, size=n, p=[recurring_share, 1 - recurring_share - sweep_share, sweep_share])
    # sweeps: members of one sweep share the model type and start time
    leader = np.arange(n)
    is_sweep = kind == 2
    sweep_idx = np.flatnonzero(is_sweep)
    if len(sweep_idx):
        size = rng.integers(3, 9, len(sweep_idx))
        starts = np.cumsum(size) - size
        group_first = np.repeat(sweep_idx[np.minimum(starts, len(sweep_idx) - 1)], size)[: len(sweep_idx)]
        leader[sweep_idx] = group_first
    period_h = _pick(rng, [6, 12, 24, 48, 168], [0.08, 0.12, 0.6, 0.1, 0.1], n).astype(float)
    lifetime = np.minimum(1 + rng.geometric(1 / 30, n), 400)
    runs = np.where(kind == 0, lifetime, 1 + rng.geometric(0.6, n) - 1)
    runs = np.where(kind == 2, 1 + rng.geometric(0.7, n) - 1, runs)
    runs = np.maximum(runs, 1)
    span_h = np.where(kind == 0, lifetime * period_h, 48.0)
    lo = start_ns - (span_h * _HOUR.astype(np.int64)).astype(np.int64)
    hi = start_ns + int(span_days * 24 * 3600 * 1e9)
    t0 = lo + (rng.uniform(size=n) * (hi - lo)).astype(np.int64)
    t0[sweep_idx] = t0[leader[sweep_idx]] + (rng.uniform(0, 1, len(sweep_idx)) * 3600e9).astype(np.int64)
    model = _draw_model_types(rng, models, t0, start_ns, days)
    model[sweep_idx] = model[leader[sweep_idx]]
    return {"model": model, "kind": kind, "period_h": period_h, "runs": runs.astype(np.int64), "t0": t0,
            "spread": np.where(is_sweep, sweep_config_spread, 1).astype(np.int64)}


def _popularity_at(models: pd.DataFrame, when_ns: int, start_ns: int, days: int) -> np.ndarray:
    """Each model type's share of new jobs at ``when_ns``: drifting families, types not yet out at 0."""
    elapsed = (when_ns - start_ns) / (days * 86400e9) - 0.5  # -0.5 at the start, +0.5 at the end
    weight = models["_popularity"].to_numpy(float) * np.exp(models["_popularity_trend"].to_numpy(float) * elapsed)
    weight = np.where(models["_first_job"].to_numpy("datetime64[ns]").view(np.int64) <= when_ns, weight, 0.0)
    return weight / weight.sum()


def _draw_model_types(rng, models: pd.DataFrame, t0: np.ndarray, start_ns: int, days: int) -> np.ndarray:
    """Each job's model type, by the popularity of the day its first run is submitted."""
    day = np.clip((t0 - start_ns) // int(86400e9), 0, days - 1)
    model = np.empty(len(t0), dtype=np.int64)
    for d in np.unique(day):
        jobs = np.flatnonzero(day == d)
        model[jobs] = rng.choice(len(models), size=len(jobs), p=_popularity_at(models, start_ns + int(d * 86400e9), start_ns, days))
    return model


def _popularity_drift(rng, models: pd.DataFrame, start: pd.Timestamp, days: int, *, family_drift_sigma: float,
                      new_families: int, new_model_share: float) -> pd.DataFrame:
    """Hidden ``_popularity_trend`` (log change over the period, per family) and ``_first_job`` per model type.

    ``new_families`` families and a share ``new_model_share`` of the other
    model types first appear part-way through the period (between 20% and 80%
    of it); every other type is there from the start.
    """
    models = models.copy()
    families = models["model_family"].astype(str).to_numpy()
    names = sorted(set(families))
    trend = dict(zip(names, rng.normal(0, family_drift_sigma, len(names)), strict=True))
    models["_popularity_trend"] = [trend[f] for f in families]
    first = np.full(len(models), np.datetime64(start, "ns"))
    late_family = rng.choice(names, size=min(new_families, len(names) - 1), replace=False)
    for family in late_family:
        first[families == family] = np.datetime64(start + pd.Timedelta(days=float(rng.uniform(0.2, 0.8) * days)), "ns")
    late_type = (rng.uniform(size=len(models)) < new_model_share) & ~np.isin(families, late_family)
    offsets = rng.uniform(0.2, 0.8, late_type.sum()) * days * 86400e9
    first[late_type] = np.datetime64(start, "ns") + offsets.astype(np.int64).astype("timedelta64[ns]")
    models["_first_job"] = first
    return models


def _launch_config(rng, models, model, spread):
    """Each job's launch configuration near its model type's usual one."""
    n = len(model)
    fam_names = models["model_family"].astype(str).to_numpy()[model]
    shift_t = np.where(spread > 1, rng.integers(-2, 3, n), _pick(rng, [-1, 0, 1], [0.2, 0.6, 0.2], n))
    shift_b = np.where(spread > 1, rng.integers(-2, 3, n), _pick(rng, [-1, 0, 1], [0.2, 0.6, 0.2], n))
    trainers = np.clip(models["_base_trainers"].to_numpy()[model] * 2.0**shift_t, 1, _MAX_TRAINERS).astype(np.int64)
    batch = np.maximum(1, (models["_base_batch"].to_numpy()[model] * 2.0 ** shift_b)).astype(np.int64)
    precision = models["_base_precision"].astype(str).to_numpy()[model].copy()
    parallelism = models["_base_parallelism"].astype(str).to_numpy()[model].copy()
    seq = models["_base_seq"].to_numpy(float)[model].copy()
    redraw_p = rng.uniform(size=n) < 0.15
    redraw_s = rng.uniform(size=n) < 0.3
    for name, fam in FAMILIES.items():
        idx = np.flatnonzero(fam_names == name)
        if not len(idx):
            continue
        sub = idx[redraw_p[idx]]
        precision[sub] = _pick(rng, list(fam.precisions), list(fam.precisions.values()), len(sub))
        if fam.seq:
            sub = idx[redraw_s[idx]]
            seq[sub] = _pick(rng, fam.seq, np.ones(len(fam.seq)), len(sub))
    parallelism = np.where((trainers == 1) & (parallelism != "hybrid"), "data", parallelism)
    return trainers, batch, precision, parallelism, seq


def simulate(
    preset: str = "small",
    *,
    days: int = 60,
    seed: int = 0,
    start="2026-01-01",
    attempts_per_day: int | None = None,
    n_model_types: int = 700,
    zipf_exponent: float = 0.5,
    recurring_share: float = 0.25,
    sweep_share: float = 0.25,
    variant_sigma: float = 0.32,
    interaction_sigma: float = 0.15,
    run_noise: float = 0.06,
    straggler_rate: float = 0.04,
    failure_rate: float = 0.03,
    retry_rate: float = 0.6,
    stickiness: float = 0.82,
    releases_per_stack: int = 2,
    release_sigma: float = 0.06,
    day_shock_sigma: float = 0.04,
    hardware_day_shock_sigma: float = 0.05,
    family_drift_sigma: float = 0.7,
    new_families: int = 2,
    new_model_share: float = 0.05,
    config_change_rate: float = 0.08,
    selection_strength: float = 1.0,
    belief_sigma: float = 0.25,
    model_sizes: bool = True,
    peak_memory: bool = True,
    peak_memory_noise: float = 0.03,
) -> Fleet:
    """Simulate a training fleet: jobs, their attempts and the throughput each measured.

    Parameters
    ----------
    preset : {"tiny", "small", "production"}, default="small"
        Sets the default attempts a day (:data:`PRESETS`: 300, 2,500 and
        25,000); catalogs are the same for every preset.
    days : int, default=60
        Length of the simulated period, in days.
    seed : int, default=0
        Seed of every draw: the same arguments give the same fleet.
    start : str or Timestamp, default="2026-01-01"
        First day of the period.
    attempts_per_day : int, optional
        Overrides the preset's attempts a day (before retries, which add a few percent).
    n_model_types : int, default=700
        Model types in the catalog.
    zipf_exponent : float, default=0.5
        Popularity of the model type of rank ``r`` is proportional to ``r**-zipf_exponent``.
    recurring_share, sweep_share : float, default=0.25, 0.25
        Shares of jobs that recur on a period (hours to a week, ~30 runs) and
        that belong to a hyper-parameter sweep (3-8 jobs of one model type
        submitted together, with launch configurations spread wider); the
        rest are ad-hoc jobs of one to a few runs.
    variant_sigma : float, default=0.32
        Log-sd of the hidden job factor (layer widths, feature sets...) that
        scales a job's FLOPs, memory traffic, activations, host input cost
        and per-step overhead inside its model type.
    interaction_sigma : float, default=0.15
        Log-sd of the hidden per-(model type, hardware type) efficiency.
    run_noise : float, default=0.06
        Log-sd of run-to-run noise of measured throughput.
    straggler_rate : float, default=0.04
        Share of completed runs degraded by a straggler or contention (they
        reach 30-85% of their throughput).
    failure_rate : float, default=0.03
        Share of attempts that fail for reasons other than memory.
    retry_rate : float, default=0.6
        Chance that a failed or out-of-memory attempt is retried within hours.
    stickiness : float, default=0.82
        Chance that an attempt runs on its job's usual hardware type; the
        others go to one of two alternatives the scheduler picked for the job.
    releases_per_stack : int, default=2
        Software releases of each accelerator stack during the period; each
        moves every family's throughput on that stack by a lognormal factor.
    release_sigma : float, default=0.06
        Log-sd of a release's factor per family (mean +2%).
    day_shock_sigma, hardware_day_shock_sigma : float, default=0.04, 0.05
        Log-sd of a day's throughput factor across the fleet, and of each
        hardware type's on top of it (rollouts, a degraded rack, load). They
        move measured throughput only: no submission-time information, and
        not ``expected_throughput``, knows them.
    family_drift_sigma : float, default=0.7
        Log-sd of each model family's change of popularity over the period
        (a family with +0.7 draws twice as many new jobs at the end as at the start).
    new_families : int, default=2
        Families whose model types all first appear part-way through the
        period (between 20% and 80% of it).
    new_model_share : float, default=0.05
        Share of the other model types that first appear part-way through.
    config_change_rate : float, default=0.08
        Chance that a run (after a job's first) changes the job's batch size,
        trainer count or precision, for this run and the later ones.
    selection_strength : float, default=1.0
        How strongly the scheduler leans toward the candidate it believes
        runs the job best per cost (0: placement ignores it).
    belief_sigma : float, default=0.25
        Log-sd of the scheduler's error about a job's throughput on a candidate.
    model_sizes : bool, default=True
        Write the model-size columns a model registry knows at submission
        (``param_count``, ``flops_per_sample`` at the job's sequence length,
        ``embedding_gb``: the model type's nominal figures, without the
        job's hidden factor) into the jobs and the attempts. ``False`` leaves
        them out, as in a log that does not record them; nothing else changes.
    peak_memory : bool, default=True
        Write ``peak_memory_gb``, the device memory one trainer of a completed
        run held at its peak (null on other rows), as a fleet's monitoring
        records it. ``False`` leaves the column out; nothing else changes.
    peak_memory_noise : float, default=0.03
        Log-sd of the measured peak around the memory the run needs (allocator
        caching, fragmentation), capped at the device's memory. Drawn apart
        from every other draw, so that neither option moves the rest of the fleet.

    Returns
    -------
    Fleet

    Examples
    --------
    >>> fleet = simulate("tiny", days=2, seed=0)
    >>> from leapml.schema import validate_attempts
    >>> _ = validate_attempts(fleet.attempts, fleet.hardware)
    >>> bool(fleet.attempts["submit_time"].is_monotonic_increasing)
    True
    """
    params = dict(locals())  # the arguments, before any local is defined
    _check_options(preset, days, locals())
    days = int(days)  # a whole number: _check_options saw to it
    per_day = (PRESETS[preset] if attempts_per_day is None
               else require_whole("attempts_per_day", attempts_per_day))
    params["attempts_per_day"] = per_day
    start_ts = read_time(start)
    params["start"] = str(start_ts)
    start_ns = start_ts.value
    try:
        end_ns = (start_ts + pd.Timedelta(days=days)).as_unit("ns").value
    except (OverflowError, ValueError) as err:  # pandas' out-of-bounds errors are ValueErrors
        raise ValueError(f"days={days} from {start_ts} runs past {pd.Timestamp.max.date()}, "
                         "the last day a log's times can hold") from err
    rng = np.random.default_rng([seed, 11])
    hardware = hardware_catalog(start=start_ts, days=days)
    models = model_catalog(seed, n_types=n_model_types, zipf_exponent=zipf_exponent)
    models = _popularity_drift(rng, models, start_ts, days, family_drift_sigma=family_drift_sigma,
                               new_families=int(new_families), new_model_share=new_model_share)
    n_hw = len(hardware)

    interactions, releases = _hidden_tables(rng, models, hardware, start_ts, days,
                                            interaction_sigma=interaction_sigma,
                                            releases_per_stack=releases_per_stack,
                                            release_sigma=release_sigma)
    ctx = physics_arrays(models, hardware, interactions, releases)

    target = per_day * days / (1 + 0.05 * retry_rate)
    seeds, keep_jobs, att_job, att_time = _submissions(rng, models, start_ns, end_ns, days, target,
                                                       recurring_share=recurring_share,
                                                       sweep_share=sweep_share)
    n_jobs = len(keep_jobs)

    model = seeds["model"][keep_jobs]
    trainers, batch, precision, parallelism, seq = _launch_config(rng, models, model, seeds["spread"][keep_jobs])
    variant = np.exp(rng.normal(0, variant_sigma, n_jobs))
    memory_factor = np.exp(rng.normal(0, MEMORY_FACTOR_SIGMA, n_jobs))
    job_hours = models["_hours"].to_numpy(float)[model] * np.exp(rng.normal(0, 0.5, n_jobs))
    job_t0 = seeds["t0"][keep_jobs]

    candidates, drop, launch_rows = scheduler_candidates(
        ctx, rng, hardware, model, job_t0, trainers=trainers, batch=batch, precision=precision,
        parallelism=parallelism, seq=seq, variant=variant, memory_factor=memory_factor)

    # expected throughput of each job on its candidates (hidden factors included)
    c_model = np.repeat(model, 3)
    c_hw = candidates.ravel()
    c_launch = {k: np.repeat(v[::n_hw], 3) for k, v in launch_rows.items()}
    truth = evaluate_pairs(ctx, c_model, c_hw, c_launch)
    cand_thr = truth["throughput"].reshape(n_jobs, 3)

    # attempts: their own configuration and hardware, then retries of failures
    keep = ~drop[att_job]
    att_job, att_time = att_job[keep], att_time[keep]
    family_of_job = models["model_family"].astype(str).to_numpy()[model]
    config = configuration_changes(rng, ctx, family_of_job, att_job, att_time, candidates, rate=config_change_rate,
                                    trainers=trainers, batch=batch, precision=precision, parallelism=parallelism)
    config["seq"] = seq[att_job]
    config["variant"] = variant[att_job]
    config["memory_factor"] = memory_factor[att_job]
    cost = hardware["cost_per_device_hour"].to_numpy(float)
    choice = placement_choices(rng, att_job, cand_thr / cost[candidates], stickiness=stickiness,
                                selection_strength=selection_strength, belief_sigma=belief_sigma)
    att_job, att_time, choice, status, config, step_throughput, memory_needed = run_with_retries(
        rng, ctx, model, candidates, att_job, att_time, choice, config,
        failure_rate=failure_rate, retry_rate=retry_rate, end_ns=end_ns)
    att_hw = candidates[att_job, choice]
    family_code = ctx["family_code"][model[att_job]]
    expected = step_throughput * release_factor(ctx, att_hw, family_code, att_time.astype("datetime64[ns]"))
    throughput, hours = _measured(rng, expected, status, att_job, att_hw, att_time, cand_thr[att_job, 0],
                                  job_hours, n_hw=n_hw, start_ns=start_ns, days=days, run_noise=run_noise,
                                  straggler_rate=straggler_rate, day_shock_sigma=day_shock_sigma,
                                  hardware_day_shock_sigma=hardware_day_shock_sigma)
    jobs = _job_table(models, hardware, seeds, keep_jobs, candidates, job_hours,
                      launch={"trainers": trainers, "batch": batch, "precision": precision,
                              "seq": seq, "parallelism": parallelism, "variant": variant,
                              "memory_factor": memory_factor})
    attempts = _attempt_table(jobs, hardware, att_job, att_time, att_hw, status, config, throughput,
                              hours, expected)
    if model_sizes:
        jobs, attempts = _with_model_sizes(models, model, seq, jobs, attempts, att_job)
    if peak_memory:
        device_memory = hardware["memory_gb"].to_numpy(float)[att_hw]
        measured = memory_needed * np.exp(np.random.default_rng([seed, 13]).normal(
            0, peak_memory_noise, len(memory_needed)))
        attempts.insert(len(attempts.columns) - len(TRUTH_COLUMNS), "peak_memory_gb",
                        np.where(status == 0, np.minimum(measured, device_memory), np.nan))
    assert [c.name for c in ATTEMPT_COLUMNS] == list(attempts.columns[: len(ATTEMPT_COLUMNS)])
    return Fleet(attempts=attempts, hardware=hardware, models=models, jobs=jobs,
                 interactions=interactions, releases=releases, params=params)


_SHARES = ("recurring_share", "sweep_share", "straggler_rate", "failure_rate", "retry_rate",
           "stickiness", "new_model_share", "config_change_rate")
_SCALES = ("variant_sigma", "interaction_sigma", "run_noise", "release_sigma", "day_shock_sigma",
           "hardware_day_shock_sigma", "family_drift_sigma", "selection_strength",
           "belief_sigma", "peak_memory_noise", "zipf_exponent")
_COUNTS = ("new_families", "releases_per_stack")
_SWITCHES = ("model_sizes", "peak_memory")


def _check_options(preset, days, options: dict) -> None:
    """Refuse options out of range, each by name: shares in [0, 1], scales finite and
    >= 0, counts whole, switches True or False (NaN, infinity and text are refused)."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    check_seed(options["seed"])
    require_whole("days", days)
    for name in _SHARES + _SCALES:
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        if name in _SHARES and not 0 <= value <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {value}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if options["recurring_share"] + options["sweep_share"] > 1:
        raise ValueError("recurring_share + sweep_share must be at most 1")
    for name in _COUNTS:
        require_whole(name, options[name], minimum=0)
    require_whole("n_model_types", options["n_model_types"], minimum=len(FAMILIES))  # one a family
    for name in _SWITCHES:
        if not isinstance(options[name], bool | np.bool_):
            raise TypeError(f"{name} must be True or False, got {options[name]!r}")


def _hidden_tables(rng, models, hardware, start_ts, days, *, interaction_sigma, releases_per_stack,
                   release_sigma):
    """The hidden per-(model type, hardware type) interaction and the software releases."""
    n_hw = len(hardware)
    # hidden tables: per-(type, hardware) interaction and software releases
    inter = np.exp(rng.normal(0, interaction_sigma, (len(models), n_hw)))
    interactions = pd.DataFrame({
        "model_type": pd.Categorical.from_codes(np.repeat(np.arange(len(models)), n_hw), categories=models["model_type"].cat.categories),
        "hardware_type": pd.Categorical.from_codes(np.tile(np.arange(n_hw), len(models)), categories=hardware["hardware_type"].cat.categories),
        "_interaction": inter.ravel(),
    })
    rel_rows = []
    for software in _RELEASE_STACKS:
        for _ in range(releases_per_stack):
            when = start_ts + pd.Timedelta(days=float(rng.uniform(0.05, 0.95) * days)).round("h")
            factors = np.exp(rng.normal(0.02, release_sigma, len(FAMILIES)))
            rel_rows += [(software, when, fam, f) for fam, f in zip(FAMILIES, factors, strict=True)]
    releases = pd.DataFrame(rel_rows, columns=["software", "time", "model_family", "factor"])
    releases["time"] = releases["time"].astype("datetime64[ns]")
    releases["software"] = releases["software"].astype("category")
    releases["model_family"] = pd.Categorical(releases["model_family"], categories=list(FAMILIES))
    return interactions, releases


def _submissions(rng, models, start_ns, end_ns, days, target, *, recurring_share, sweep_share):
    """Jobs and the submission time of each of their runs in the period.

    The job pool is drawn generously, then jobs are kept in random order until
    the target of attempts is met. Returns the drawn jobs, the kept ones, and
    each kept run's job (position among the kept) and submission time.
    """
    # job pool: draw generously, then keep jobs in random order until the target is met
    pool_size = int(target / 3) + 200
    while True:
        seeds = _draw_jobs(rng, models, pool_size, start_ns, days, recurring_share=recurring_share,
                           sweep_share=sweep_share, sweep_config_spread=2)
        runs = seeds["runs"]
        job_of_run = np.repeat(np.arange(pool_size), runs)
        first = np.cumsum(runs) - runs
        run_index = np.arange(runs.sum()) - np.repeat(first, runs)
        gaps = np.where(run_index == 0, 0.0, rng.uniform(0.5, 30.0, runs.sum()))
        cum = np.cumsum(gaps)
        adhoc_offset = cum - np.repeat(cum[first], runs)
        period = seeds["period_h"][job_of_run]
        offset_h = np.where(seeds["kind"][job_of_run] == 0,
                            run_index * period + rng.normal(0, 0.04, runs.sum()) * period, adhoc_offset)
        t = seeds["t0"][job_of_run] + (offset_h * 3600e9).astype(np.int64)
        inside = (t >= start_ns) & (t < end_ns)
        in_window = np.bincount(job_of_run[inside], minlength=pool_size)
        if in_window.sum() >= target or pool_size > 50 * target:
            break
        pool_size = int(pool_size * 1.6 * target / max(in_window.sum(), 1)) + 100
    order = rng.permutation(pool_size)
    cum_attempts = np.cumsum(in_window[order])
    keep_jobs = np.sort(order[: int(np.searchsorted(cum_attempts, target)) + 1])
    keep_jobs = keep_jobs[in_window[keep_jobs] > 0]
    job_pos = np.full(pool_size, -1)
    job_pos[keep_jobs] = np.arange(len(keep_jobs))
    sel = inside & (job_pos[job_of_run] >= 0)
    att_job = job_pos[job_of_run[sel]]
    att_time = t[sel]
    return seeds, keep_jobs, att_job, att_time


def _measured(rng, expected, status, att_job, att_hw, att_time, home, job_hours, *, n_hw, start_ns, days,
              run_noise, straggler_rate, day_shock_sigma, hardware_day_shock_sigma):
    """What each attempt measured (run noise, stragglers, day shocks) and how long it ran."""
    n_att = len(att_job)
    noise = np.exp(rng.normal(0, run_noise, n_att))
    degraded = rng.uniform(size=n_att) < straggler_rate
    noise = np.where(degraded, noise * rng.uniform(0.3, 0.85, n_att), noise)
    day = np.clip((att_time - start_ns) // int(86400e9), 0, days - 1)
    noise = noise * _day_shocks(rng, days, n_hw, day_shock_sigma, hardware_day_shock_sigma)[att_hw, day]
    ok = status == 0
    throughput = np.where(ok, expected * noise, np.nan)
    # runs train a fixed amount of work: slower hardware runs longer
    slowdown = np.clip(home / np.where(expected > 0, expected, home), 0.2, 5.0)
    hours = job_hours[att_job] * slowdown * np.exp(rng.normal(0, 0.2, n_att))
    hours = np.where(status == 2, hours * rng.uniform(0.01, 1.0, n_att), hours)
    hours = np.where(status == 1, rng.uniform(0.02, 0.25, n_att), hours)
    return throughput, hours


def _job_table(models, hardware, seeds, keep_jobs, candidates, job_hours, *, launch: dict):
    """One row per job: its launch configuration and its hidden factors."""
    trainers, batch, precision, seq = launch["trainers"], launch["batch"], launch["precision"], launch["seq"]
    parallelism, variant, memory_factor = launch["parallelism"], launch["variant"], launch["memory_factor"]
    model = seeds["model"][keep_jobs]
    job_t0 = seeds["t0"][keep_jobs]
    n_jobs = len(keep_jobs)
    job_ids = np.arange(n_jobs, dtype=np.int64) + 1
    type_cats = models["model_type"].cat.categories
    fam_cats = models["model_family"].cat.categories
    seq_col = pd.array(np.where(np.isfinite(seq), seq, 0).astype(np.int64), dtype="Int64")
    seq_col[~np.isfinite(seq)] = pd.NA
    model_codes_in_cats = type_cats.get_indexer(models["model_type"].astype(str))
    fam_codes_in_cats = fam_cats.get_indexer(models["model_family"].astype(str))
    hw_cats = hardware["hardware_type"].cat.categories
    hw_codes_in_cats = hw_cats.get_indexer(hardware["hardware_type"].astype(str))
    jobs = pd.DataFrame({
        "job_id": job_ids,
        "model_type": pd.Categorical.from_codes(model_codes_in_cats[model], categories=type_cats),
        "model_family": pd.Categorical.from_codes(fam_codes_in_cats[model], categories=fam_cats),
        "trainer_count": trainers,
        "batch_size": batch,
        "precision": pd.Categorical(precision, categories=list(PRECISIONS)),
        "seq_len": seq_col,
        "parallelism": pd.Categorical(parallelism, categories=list(_PARALLELISM_CODES)),
        "_variant": variant,
        "_memory_factor": memory_factor,
        "_kind": pd.Categorical(np.array(["recurring", "adhoc", "sweep"])[seeds["kind"][keep_jobs]],
                                categories=["recurring", "adhoc", "sweep"]),
        "_period_h": np.where(seeds["kind"][keep_jobs] == 0, seeds["period_h"][keep_jobs], np.nan),
        "_first_submit": job_t0.astype("datetime64[ns]"),
        "_hours": job_hours,
        "_home_hardware": pd.Categorical.from_codes(hw_codes_in_cats[candidates[:, 0]], categories=hw_cats),
        "_alternative_1": pd.Categorical.from_codes(hw_codes_in_cats[candidates[:, 1]], categories=hw_cats),
        "_alternative_2": pd.Categorical.from_codes(hw_codes_in_cats[candidates[:, 2]], categories=hw_cats),
    })
    return jobs


def _with_model_sizes(models, model, seq, jobs, attempts, att_job):
    """The jobs and attempts with the model-size columns, after the launch ones.

    The model type's nominal figures (what its definition gives, without the
    job's hidden factor): dense parameters, training FLOPs per sample at the
    job's sequence length, embedding tables in GB.
    """
    def column(name):
        return models[name].to_numpy(float)[model]

    flops = column("_gflops") * 1e9 * _seq_scale(seq, column("_seq_ref"), column("_attention"))
    sizes = {"param_count": column("_params_m") * 1e6, "flops_per_sample": flops,
             "embedding_gb": column("_embedding_gb")}
    at = jobs.columns.get_loc("parallelism") + 1
    for offset, (name, values) in enumerate(sizes.items()):
        jobs.insert(at + offset, name, values)
    at = attempts.columns.get_loc("end_time") + 1
    for offset, (name, values) in enumerate(sizes.items()):
        attempts.insert(at + offset, name, values[att_job])
    return jobs, attempts


def _attempt_table(jobs, hardware, att_job, att_time, att_hw, status, config, throughput, hours, expected):
    """One row per attempt, in the schema's columns, plus the noiseless truth."""
    n_att = len(att_job)
    hw_cats = hardware["hardware_type"].cat.categories
    hw_codes_in_cats = hw_cats.get_indexer(hardware["hardware_type"].astype(str))
    attempts = pd.DataFrame({
        "attempt_id": np.arange(1, n_att + 1, dtype=np.int64),
        "job_id": jobs["job_id"].to_numpy()[att_job],
        "submit_time": att_time.astype("datetime64[ns]"),
        "model_type": jobs["model_type"].array.take(att_job),
        "model_family": jobs["model_family"].array.take(att_job),
        "trainer_count": config["trainers"],
        "batch_size": config["batch"],
        "precision": pd.Categorical(config["precision"], categories=list(PRECISIONS)),
        "seq_len": jobs["seq_len"].array.take(att_job),
        "parallelism": pd.Categorical(config["parallelism"], categories=list(_PARALLELISM_CODES)),
        "hardware_type": pd.Categorical.from_codes(hw_codes_in_cats[att_hw], categories=hw_cats),
        "status": pd.Categorical.from_codes(status, categories=list(STATUSES)),
        "throughput": throughput,
        "device_hours": config["trainers"] * hours,
        # the outcome (throughput, or the failure) is known when the run ends
        "end_time": (att_time + (hours * 3600e9).astype(np.int64)).astype("datetime64[ns]"),
        "expected_throughput": np.where(status == 1, np.nan, expected),
    })
    return attempts



def _day_shocks(rng, days: int, n_hw: int, fleet_sigma: float, hardware_sigma: float) -> np.ndarray:
    """Throughput factor of each (hardware type, day): the fleet's day times the type's day.

    Software rollouts, a degraded rack, load: conditions of a day that no
    submission-time information reveals (lognormal, centred on 1).
    """
    fleet = rng.normal(0, fleet_sigma, days)
    by_type = rng.normal(0, hardware_sigma, (n_hw, days))
    return np.exp(fleet[None, :] + by_type)


