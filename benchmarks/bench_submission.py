"""Benchmark: one submission ranked over every catalog type (features + predict + rank), warm.

Simulates ``days=31`` of a preset. The history is the log before day 31;
the models are ``LeapRegressor`` fitted on the 30-day window, as a night
fits them (``--fit-rows N``: on a sample of N rows instead, quicker; a
sample under 250,000 rows gets the default's small-log settings, and its
trees were measured about 10% faster to evaluate: benchmarks/README.md), one per
name of ``--routers`` (``MODELS``): ``default`` (a shared expert of 200
trees, 13 experts of 50 trees behind one 50-tree ordinal regressor of the
bin index, the two nearest experts blended), ``published``
(``leapml.PUBLISHED``: 13 experts of 100 trees behind a multiclass router of
13 x 100 trees, one expert per row), ``ordinal_soft`` (the default before
the shared expert: 100-tree experts and router), ``ordinal_hard``,
``multiclass_soft``, ``default_100``, ``no_cold_start``,
``no_hardware_copies`` and ``no_roofline_anchor``. Each
submission is one job of day 31 at its own submit time, scored on every
hardware type of the catalog, in one process that has already run a few
submissions (warm). Per submission it times:

``features (rows + build_features)``
    ``candidate_rows`` + ``build_features(..., history=log)`` on the whole
    window log: the history re-read on every call (first ``--full-history``
    submissions only).
``features (rows + index)``
    ``candidate_rows`` + ``HistoryIndex.features``, the index built once
    beforehand from the same log (the nightly step; its build time is
    printed); checked equal to the above on the first submissions.
``predict (<router>)``
    ``leapml.placement.predict_by_job`` on those feature rows: ``predict``
    with the job's miss on the types it ran on carried to its other types,
    as ``place`` ranks them.
``trees (<router>)``
    The part of that predict spent in LightGBM: the router and the experts
    the rows go to, on rows encoded beforehand.
``rank``
    ``rank_candidates`` of the predictions with the catalog's cost.
``place (<router>)``
    The whole submission as a scheduler makes it, one call:
    ``leapml.placement.place(model, job, hardware, history=index,
    hardware_types=types)``. This is the figure the target applies to. It
    does the work of the rows above without their frames (the candidates
    stay in arrays from the index to the ranking), so it costs less than
    their sum; it is checked equal to ``rank_candidates`` of the staged
    predictions on the first submissions.

The reference, timed in the same run on the same rows, is one
``Booster.predict`` of a single LightGBM regressor of 100 trees (one expert's
size): the floor any tree model pays per call.

Run::

    python benchmarks/bench_submission.py                  # production, 1,000 submissions
    python benchmarks/bench_submission.py --preset small --submissions 200
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from bench_method_levers import NAMED
from bench_nightly import BEFORE_PRIORS, CONFIGS, RESULTS, machine, night, reference_fit

from leapml import PUBLISHED, LeapRegressor
from leapml.features import HistoryIndex, build_features, candidate_rows
from leapml.placement import place, predict_by_job
from leapml.ranking import rank_candidates
from leapml.schema import LAUNCH_COLUMNS, MODEL_SIZE_COLUMNS

#: The models ``--routers`` names: the default, the published configuration, and single levers.
MODELS = {
    "default": {},
    "published": dict(PUBLISHED),
    "ordinal_hard": {"router": "ordinal", "combine": "hard", **BEFORE_PRIORS},
    "multiclass_soft": {"router": "multiclass", "combine": "soft", **BEFORE_PRIORS},
    # the default before the shared expert, the history blend, 50-tree experts and copies
    "ordinal_soft": BEFORE_PRIORS,
    "default_100": {"n_estimators": 100},
    # the default's bin experts and router at 30 trees, and at 50: on a log as large as
    # production's, the default gives them 30 since n_estimators="auto" (50 before)
    "default_30": {"n_estimators": 30},
    "default_50": {"n_estimators": 50},
    # the default before its shared expert sampled half the columns at each split
    "base_all_columns": NAMED["base_all_columns"](),
    # the default without its cold-start copies (fitted rows once, as published)
    "no_cold_start": CONFIGS["no_cold_start"],
    # the default without the copies as if the hardware type were new
    "no_hardware_copies": CONFIGS["no_hardware_copies"],
    # the default before its experts learned the share of the roofline
    "no_roofline_anchor": CONFIGS["no_roofline_anchor"],
}


def fitted_models(attempts, hardware, train, fit_rows, threads: int, seed: int,
                  routers=("default",)):
    """One LeapRegressor per router and the reference regressor, fitted on the window (or on a
    sample of ``fit_rows`` of its rows)."""
    X = build_features(attempts, hardware)
    rows = np.flatnonzero(train)
    if fit_rows is not None and len(rows) > fit_rows:
        rows = np.sort(np.random.default_rng(seed).choice(rows, fit_rows, replace=False))
    y = attempts["throughput"].to_numpy(float)[rows]
    unknown = sorted(set(routers) - set(MODELS))
    if unknown:
        raise SystemExit(f"unknown model(s) {unknown}; choose from {sorted(MODELS)}")
    models = {name: LeapRegressor(random_state=seed, n_jobs=threads, **MODELS[name])
              .fit(X.iloc[rows], y) for name in routers}
    return models, reference_fit(X.iloc[rows], y, threads, seed).booster_


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    """The options the scoring benchmarks share."""
    parser.add_argument("--preset", default="production")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fit-rows", type=int, default=None,
                        help="fit on a sample of this many rows of the window (default: all of "
                             "them, the model a night fits)")
    parser.add_argument("--routers", default="default,published",
                        help=f"comma-separated, from {', '.join(MODELS)}")


@dataclass
class ScoredDay:
    """Day 31 of a night to score: models fitted before it, its history and its submissions."""

    hardware: pd.DataFrame
    models: dict
    reference: object
    history: pd.DataFrame
    jobs: pd.DataFrame
    types: list
    cost: dict


def scored_day(args) -> ScoredDay:
    """Simulate the night, fit one model per router and pick out the last day's submissions."""
    routers = [r.strip() for r in args.routers.split(",") if r.strip()]
    fleet, attempts, train, _ = night(args.preset, args.seed)
    hardware = fleet.hardware
    models, reference = fitted_models(attempts, hardware, train, args.fit_rows, args.threads,
                                      args.seed, routers)
    last_day = attempts["submit_time"].max().floor("D")
    # the log as the fleet has it at midnight: the runs that have ended
    history = attempts[attempts["end_time"] < last_day].drop(columns="expected_throughput")
    jobs = (attempts[attempts["submit_time"] >= last_day].drop_duplicates("job_id")
            [["job_id", "submit_time", *LAUNCH_COLUMNS,
              *(c for c in MODEL_SIZE_COLUMNS if c in attempts.columns)]])
    types = hardware["hardware_type"].astype(str).tolist()
    cost = dict(zip(types, hardware["cost_per_device_hour"], strict=True))
    return ScoredDay(hardware, models, reference, history, jobs, types, cost)


def percentiles(seconds) -> dict:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
            "mean_ms": float(ms.mean()), "n": int(ms.size)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scoring_arguments(parser)
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--full-history", type=int, default=100,
                        help="submissions also timed with the whole log re-read")
    args = parser.parse_args(argv)
    day = scored_day(args)
    hardware, models, reference, history = day.hardware, day.models, day.reference, day.history
    jobs, types, cost = day.jobs, day.types, day.cost
    routers = list(models)
    started = time.perf_counter()
    index = HistoryIndex(history, hardware)
    index_build_s = time.perf_counter() - started
    n = min(args.submissions, len(jobs))
    print(f"{args.preset}: history {len(history):,} attempts (index built in "
          f"{index_build_s:.2f} s), {n:,} submissions x {len(types)} types; {machine()}")

    keys = ["features (rows + build_features)", "features (rows + index)",
            *[f"predict ({r})" for r in routers], *[f"trees ({r})" for r in routers], "rank",
            *[f"place ({r})" for r in routers], "reference"]
    timings = {k: [] for k in keys}
    warm = 5
    for i in range(n + warm):
        job = jobs.iloc[[i % len(jobs)]]
        step = {}
        if i < warm + args.full_history:
            started = time.perf_counter()
            X_full = build_features(candidate_rows(job, types), hardware, history=history)
            step["features (rows + build_features)"] = time.perf_counter() - started
        started = time.perf_counter()
        rows = candidate_rows(job, types)
        X = index.features(rows)
        step["features (rows + index)"] = time.perf_counter() - started
        if i < warm + args.full_history:
            pd.testing.assert_frame_equal(X, X_full, check_exact=True)
        for router, model in models.items():
            started = time.perf_counter()
            predicted = predict_by_job(model, X, np.zeros(len(X), dtype=np.intp))[0]
            step[f"predict ({router})"] = time.perf_counter() - started
            encoded = model._validate_X(X, reset=False)
            started = time.perf_counter()
            model._predict_encoded(encoded)
            step[f"trees ({router})"] = time.perf_counter() - started
        predictions = pd.DataFrame({"job_id": rows["job_id"].array,
                                    "hardware_type": rows["hardware_type"].array,
                                    "trainer_count": rows["trainer_count"].array,
                                    "predicted_throughput": predicted})
        started = time.perf_counter()
        ranked = rank_candidates(predictions, cost=cost)
        step["rank"] = time.perf_counter() - started
        for router, model in models.items():
            started = time.perf_counter()
            placed = place(model, job, hardware, history=index, hardware_types=types)
            step[f"place ({router})"] = time.perf_counter() - started
            if router == routers[-1] and i < warm + args.full_history:
                as_text = ranked.assign(hardware_type=ranked["hardware_type"].astype(str))
                # place adds the feasibility and interval columns, empty without those models
                pd.testing.assert_frame_equal(placed[as_text.columns], as_text, check_exact=True)
        encoded = models[routers[0]]._validate_X(X, reset=False)
        started = time.perf_counter()
        reference.predict(encoded, num_threads=1)
        step["reference"] = time.perf_counter() - started
        if i >= warm:
            for name, seconds in step.items():
                timings[name].append(seconds)

    stats = {k: percentiles(v) for k, v in timings.items() if v}
    ref_p50 = stats["reference"]["p50_ms"]
    print(f"\n{'step':36s} {'p50 ms':>8s} {'p99 ms':>8s} {'p50 / ref':>10s} {'n':>6s}")
    for name, s in stats.items():
        label = "reference Booster.predict" if name == "reference" else name
        print(f"{label:36s} {s['p50_ms']:8.2f} {s['p99_ms']:8.2f} {s['p50_ms'] / ref_p50:10.1f} "
              f"{s['n']:6d}")
    print("target: place p99 <= 10 ms")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"submission_{args.preset}.json"
    out.write_text(json.dumps({"preset": args.preset, "machine": machine(),
                               "history_rows": len(history), "index_build_s": index_build_s,
                               "types": len(types), "timings": stats}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
