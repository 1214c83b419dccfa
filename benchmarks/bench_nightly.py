"""Benchmark: the nightly retrain (``build_features`` + ``LeapRegressor.fit``) on a 30-day window.

Simulates ``days=31`` of a preset, trains on the completed attempts of the
first 30 days and scores the completed attempts of day 31 (accuracy within
+-20 %). For each configuration it prints the wall time of features + fit,
the peak RSS of the process after it, the number of EM iterations and the
next-day accuracy. The reference, measured in the same run on the same ``X``,
is one LightGBM median (L1) regressor on ``log(y)`` with the per-model
settings of one expert (100 trees, 31 leaves); the table gives each
configuration's time as a multiple of it.

Configurations (``--configs``, comma separated):

``default``
    ``LeapRegressor(random_state=0, n_jobs=threads)`` as shipped.
``multiclass``
    ``router="multiclass", combine="hard"``: the default when the levers
    below were measured, and the base every lever configuration changes.
``unoptimised``
    The settings before the speed-up: ``max_iter=10``, every expert scores
    every row at reassignment (``reassign_window=None``), the router on every
    row (``router_max_rows=None``). Experts of one iteration are fitted
    concurrently whenever ``--threads`` is above 1 (the models do not depend
    on it); ``--threads 1`` fits them one after the other.
``iter10``, ``window_all``, ``router_all``
    ``multiclass`` with one lever undone, to measure that lever alone.
``iter1``, ``router_100k``, ``router_50k``
    Levers pushed further.
``router_50r``, ``router_25r``
    A cheaper router: 50 rounds at learning rate 0.25, or 25 at 0.4 (the
    router is most of the cost of ``predict``).
``ordinal``
    ``router="ordinal", combine="hard"``: one least-squares regressor of the
    bin index (100 trees) instead of the multiclass router's 1,300.
``ordinal_soft``, ``base_all_columns``, ``no_cold_start``, ``no_hardware_copies``, ``no_roofline_anchor``
    Earlier defaults: before the shared expert and the blend with the job's
    own runs; before the shared expert sampled its columns; before
    cold-start copies of the rows (``cold_start=0, cold_start_hardware=0``);
    before the copies as if the hardware type were new (``cold_start_hardware=0``);
    before the experts learned the share of the roofline (``anchor=None``).

Run::

    python benchmarks/bench_nightly.py                    # production, default only
    python benchmarks/bench_nightly.py --preset small \
        --configs multiclass,unoptimised,iter10,window_all,router_50k,router_50r
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
from bench_method_levers import NAMED

from leapml import LeapRegressor
from leapml.evaluation.metrics import within_tolerance
from leapml.features import build_features
from leapml.fleet import simulate

RESULTS = Path(__file__).resolve().parent / "results"
#: What the defaults were when the levers of ``benchmarks/README.md`` were measured: no
#: shared expert, no blend with the job's own runs, experts and router of 100 trees, no
#: cold-start copies.
BEFORE_PRIORS = {"base": None, "history_prior": None, "n_estimators": 100, "cold_start": 0.0,
                 "cold_start_hardware": 0.0}
#: The multiclass router with hard routing: the default when the levers of
#: ``benchmarks/README.md`` were measured, and the base of those configurations.
MULTICLASS = {"router": "multiclass", "combine": "hard", **BEFORE_PRIORS}


def _router(rounds: int, rate: float) -> lgb.LGBMClassifier:
    return lgb.LGBMClassifier(n_estimators=rounds, learning_rate=rate, num_leaves=31,
                              min_child_samples=20, subsample=0.5, subsample_freq=1, verbose=-1)


#: Each configuration's LeapRegressor parameters.
CONFIGS = {
    "default": {},
    "multiclass": MULTICLASS,
    "unoptimised": {**MULTICLASS, "max_iter": 10, "reassign_window": None,
                    "router_max_rows": None},
    "iter10": {**MULTICLASS, "max_iter": 10},
    "iter1": {**MULTICLASS, "max_iter": 1},
    "window_all": {**MULTICLASS, "reassign_window": None},
    "router_all": {**MULTICLASS, "router_max_rows": None},
    "router_100k": {**MULTICLASS, "router_max_rows": 100_000},
    "router_50k": {**MULTICLASS, "router_max_rows": 50_000},
    "router_50r": {**MULTICLASS, "classifier": _router(50, 0.25)},
    "router_25r": {**MULTICLASS, "classifier": _router(25, 0.4)},
    "ordinal": {"router": "ordinal", "combine": "hard", **BEFORE_PRIORS},
    # the default before the shared expert and the blend with the job's own runs
    "ordinal_soft": BEFORE_PRIORS,
    # the default before its shared expert sampled half the columns at each split
    "base_all_columns": NAMED["base_all_columns"](),
    # the default before it fitted cold-start copies of its rows
    "no_cold_start": {"cold_start": 0.0, "cold_start_hardware": 0.0},
    # the default before it fitted copies of its rows as if their hardware type were new
    "no_hardware_copies": {"cold_start_hardware": 0.0},
    # the default before its experts learned log(y) minus the roofline
    "no_roofline_anchor": {"anchor": None},
    # the default before n_estimators="auto" gave its bin experts and router 30 rounds on a
    # log this large
    "default_50": {"n_estimators": 50},
}


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict:
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import os

    return {"cpu": model, "cores": os.cpu_count()}


def night(preset: str, seed: int):
    """The attempt log of ``days=31`` and the masks of the training window and the next day."""
    fleet = simulate(preset, days=31, seed=seed)
    attempts = fleet.attempts.reset_index(drop=True)
    last_day = attempts["submit_time"].max().floor("D")
    ok = (attempts["status"].astype(str) == "ok").to_numpy()
    before = (attempts["submit_time"] < last_day).to_numpy()
    return fleet, attempts, ok & before, ok & ~before


def reference_fit(X, y, threads: int, seed: int):
    """One LightGBM L1 regressor on log(y), the settings of one default expert."""
    model = lgb.LGBMRegressor(objective="l1", n_estimators=100, learning_rate=0.1, num_leaves=31,
                              min_child_samples=20, n_jobs=threads, random_state=seed,
                              verbose=-1)
    return model.fit(X, np.log(y))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--configs", default="default",
                        help=f"comma-separated, from {', '.join(CONFIGS)}")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}")
    width = max([12, *map(len, names)])  # the name column of the printed tables

    fleet, attempts, train, test = night(args.preset, args.seed)
    print(f"{args.preset}: {int(train.sum()):,} completed attempts in the 30-day window, "
          f"{int(test.sum()):,} on the next day; {args.threads} threads; {machine()}")

    rows = []
    y_train = attempts.loc[train, "throughput"].to_numpy(float)
    y_test = attempts.loc[test, "throughput"].to_numpy(float)
    X_ref = None
    for name in names:
        params = CONFIGS[name]
        started = time.perf_counter()
        X = build_features(attempts, fleet.hardware)
        features_s = time.perf_counter() - started
        X_train, X_test = X[train], X[test]
        model = LeapRegressor(random_state=args.seed, n_jobs=args.threads, **params)
        started = time.perf_counter()
        model.fit(X_train, y_train)
        fit_s = time.perf_counter() - started
        accuracy = within_tolerance(y_test, model.predict(X_test))
        rows.append({"config": name, "features_s": features_s, "fit_s": fit_s,
                     "total_s": features_s + fit_s, "n_iter": int(model.n_iter_),
                     "moved": [round(float(m), 4) for m in model.moved_],
                     "within_20": accuracy, "peak_rss_mb": peak_rss_mb()})
        print(f"  {name:{width}s} features {features_s:6.1f} s  fit {fit_s:7.1f} s  "
              f"iterations {model.n_iter_}  within 20% {accuracy:.4f}  "
              f"peak RSS {peak_rss_mb():7.0f} MB", flush=True)
        X_ref = (X_train, X_test)

    started = time.perf_counter()
    reference = reference_fit(X_ref[0], y_train, args.threads, args.seed)
    reference_s = time.perf_counter() - started
    reference_accuracy = within_tolerance(y_test, np.exp(reference.predict(X_ref[1])))

    print()
    print(f"{'config':{width}s} {'features+fit s':>14s} {'x reference':>11s} {'iters':>5s} "
          f"{'within 20%':>10s} {'peak RSS MB':>11s}")
    for row in rows:
        print(f"{row['config']:{width}s} {row['total_s']:14.1f} {row['total_s'] / reference_s:11.1f} "
              f"{row['n_iter']:5d} {row['within_20']:10.4f} {row['peak_rss_mb']:11.0f}")
    print(f"{'reference':{width}s} {reference_s:14.1f} {1.0:11.1f} {'':5s} {reference_accuracy:10.4f}"
          "   (one LightGBM L1 regressor, 100 trees, fit only)")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"nightly_{args.preset}_seed{args.seed}.json"
    out.write_text(json.dumps({
        "preset": args.preset, "seed": args.seed, "threads": args.threads, "machine": machine(),
        "train_rows": int(train.sum()), "test_rows": int(test.sum()), "runs": rows,
        "reference": {"fit_s": reference_s, "within_20": reference_accuracy},
    }, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
