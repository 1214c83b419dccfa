"""Benchmark: one submission ranked over every catalog type (features + predict + rank), warm.

Simulates ``days=31`` of a preset. The history is the log before day 31; the
model is a default ``LeapRegressor`` fitted on a sample of the 30-day window
(``--fit-rows``; its size, 13 experts of 100 trees and a 13 x 100-tree router,
does not depend on the rows it saw). Each submission is one job of day 31 at
its own submit time, scored on every hardware type of the catalog in one
process that has already run a few submissions (warm). Per submission it
times:

``features``
    ``candidate_rows`` + ``build_features(..., history=log)`` on the whole
    window log (the API as it stands: the history is re-read on every call).
``features (family)``
    The same with ``history=`` the log rows of the job's model family only,
    split once beforehand: a job's history features read only its own
    family's rows, so the features are identical (checked on the first
    submissions) and the cost falls with the family's share of the log.
``predict``
    ``LeapRegressor.predict`` on the candidate rows.
``rank``
    ``rank_candidates`` with the catalog's cost.

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

import numpy as np
import pandas as pd
from bench_nightly import RESULTS, machine, night, reference_fit

from leapml import LeapRegressor
from leapml.features import build_features, candidate_rows
from leapml.ranking import rank_candidates
from leapml.schema import LAUNCH_COLUMNS


def fitted_model(attempts, hardware, train, fit_rows: int, threads: int, seed: int):
    """A default LeapRegressor and the reference regressor, fitted on a sample of the window."""
    X = build_features(attempts, hardware)
    rows = np.flatnonzero(train)
    if len(rows) > fit_rows:
        rows = np.sort(np.random.default_rng(seed).choice(rows, fit_rows, replace=False))
    y = attempts["throughput"].to_numpy(float)[rows]
    model = LeapRegressor(random_state=seed, n_jobs=threads).fit(X.iloc[rows], y)
    return model, reference_fit(X.iloc[rows], y, threads, seed).booster_


def percentiles(seconds) -> dict:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
            "mean_ms": float(ms.mean()), "n": int(ms.size)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--full-history", type=int, default=100,
                        help="submissions also timed with the whole log as history")
    parser.add_argument("--fit-rows", type=int, default=60_000)
    args = parser.parse_args(argv)

    fleet, attempts, train, _ = night(args.preset, args.seed)
    hardware = fleet.hardware
    model, reference = fitted_model(attempts, hardware, train, args.fit_rows, args.threads,
                                    args.seed)
    last_day = attempts["submit_time"].max().floor("D")
    history = attempts[attempts["submit_time"] < last_day].drop(columns="expected_throughput")
    by_family = dict(list(history.groupby("model_family", observed=True)))
    empty = history.iloc[:0]
    jobs = (attempts[attempts["submit_time"] >= last_day].drop_duplicates("job_id")
            [["job_id", "submit_time", *LAUNCH_COLUMNS]])
    n = min(args.submissions, len(jobs))
    types = hardware["hardware_type"].astype(str).tolist()
    cost = dict(zip(types, hardware["cost_per_device_hour"], strict=True))
    print(f"{args.preset}: history {len(history):,} attempts, {n:,} submissions x {len(types)} "
          f"types; {machine()}")

    timings = {k: [] for k in ("features", "features (family)", "predict", "rank", "total",
                               "reference")}
    warm = 5
    for i in range(n + warm):
        job = jobs.iloc[[i % len(jobs)]]
        family_history = by_family.get(job["model_family"].iloc[0], empty)
        if i < warm + args.full_history:
            started = time.perf_counter()
            X_full = build_features(candidate_rows(job, types), hardware, history=history)
            full_s = time.perf_counter() - started
        started = time.perf_counter()
        rows = candidate_rows(job, types)
        X = build_features(rows, hardware, history=family_history)
        features_s = time.perf_counter() - started
        if i < warm + 3:
            pd.testing.assert_frame_equal(X, X_full)  # the family split changes nothing
        started = time.perf_counter()
        predicted = model.predict(X)
        predict_s = time.perf_counter() - started
        started = time.perf_counter()
        rank_candidates(rows[["job_id", "hardware_type", "trainer_count"]]
                        .assign(predicted_throughput=predicted), cost=cost)
        rank_s = time.perf_counter() - started
        encoded = model._validate_X(X, reset=False)
        started = time.perf_counter()
        reference.predict(encoded, num_threads=1)
        reference_s = time.perf_counter() - started
        if i < warm:
            continue
        if i < warm + args.full_history:
            timings["features"].append(full_s)
        timings["features (family)"].append(features_s)
        timings["predict"].append(predict_s)
        timings["rank"].append(rank_s)
        timings["total"].append(features_s + predict_s + rank_s)
        timings["reference"].append(reference_s)

    stats = {k: percentiles(v) for k, v in timings.items() if v}
    ref_p50 = stats["reference"]["p50_ms"]
    print(f"\n{'step':34s} {'p50 ms':>8s} {'p99 ms':>8s} {'p50 / ref':>10s} {'n':>6s}")
    for name, s in stats.items():
        label = {"total": "total (family history)",
                 "reference": "reference Booster.predict"}.get(name, name)
        print(f"{label:34s} {s['p50_ms']:8.2f} {s['p99_ms']:8.2f} {s['p50_ms'] / ref_p50:10.1f} "
              f"{s['n']:6d}")
    print("target: total p99 <= 10 ms")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"submission_{args.preset}.json"
    out.write_text(json.dumps({"preset": args.preset, "machine": machine(),
                               "history_rows": len(history), "types": len(types),
                               "timings": stats}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
