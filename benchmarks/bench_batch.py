"""Benchmark: batch scoring, one day's submissions x every candidate type, in candidate rows/s.

Simulates ``days=31`` of a preset and scores every job submitted on day 31,
each at its own submit time, on every hardware type of the catalog, against
the log before that day, with a default ``LeapRegressor`` fitted on a sample
of the 30-day window (as in ``bench_submission.py``). Stages, each timed on
the whole batch: ``candidate_rows`` + ``build_features``, ``predict`` and
``rank_candidates``. The reference, timed in the same run on the same rows,
is one ``Booster.predict`` of a single 100-tree LightGBM regressor.

Run::

    python benchmarks/bench_batch.py                  # production
    python benchmarks/bench_batch.py --preset small
"""

from __future__ import annotations

import argparse
import json
import time

from bench_nightly import RESULTS, machine, night
from bench_submission import fitted_model

from leapml.features import build_features, candidate_rows
from leapml.ranking import rank_candidates
from leapml.schema import LAUNCH_COLUMNS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fit-rows", type=int, default=60_000)
    args = parser.parse_args(argv)

    fleet, attempts, train, _ = night(args.preset, args.seed)
    hardware = fleet.hardware
    model, reference = fitted_model(attempts, hardware, train, args.fit_rows, args.threads,
                                    args.seed)
    last_day = attempts["submit_time"].max().floor("D")
    history = attempts[attempts["submit_time"] < last_day]
    jobs = (attempts[attempts["submit_time"] >= last_day].drop_duplicates("job_id")
            [["job_id", "submit_time", *LAUNCH_COLUMNS]])
    types = hardware["hardware_type"].astype(str).tolist()
    cost = dict(zip(types, hardware["cost_per_device_hour"], strict=True))

    seconds = {}
    started = time.perf_counter()
    rows = candidate_rows(jobs, types)
    X = build_features(rows, hardware, history=history)
    seconds["features"] = time.perf_counter() - started
    started = time.perf_counter()
    predicted = model.predict(X)
    seconds["predict"] = time.perf_counter() - started
    started = time.perf_counter()
    rank_candidates(rows[["job_id", "hardware_type", "trainer_count"]]
                    .assign(predicted_throughput=predicted), cost=cost)
    seconds["rank"] = time.perf_counter() - started
    seconds["total"] = seconds["features"] + seconds["predict"] + seconds["rank"]
    encoded = model._validate_X(X, reset=False)
    started = time.perf_counter()
    reference.predict(encoded, num_threads=args.threads)
    seconds["reference"] = time.perf_counter() - started

    n = len(X)
    print(f"{args.preset}: {len(jobs):,} submissions x {len(types)} types = {n:,} candidate rows, "
          f"history {len(history):,} attempts; {args.threads} threads; {machine()}")
    print(f"\n{'stage':28s} {'seconds':>8s} {'rows/s':>11s} {'x reference':>11s}")
    for name, s in seconds.items():
        label = "reference Booster.predict" if name == "reference" else name
        print(f"{label:28s} {s:8.2f} {n / s:11,.0f} {s / seconds['reference']:11.1f}")
    print("target: total >= 100,000 candidate rows/s")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"batch_{args.preset}.json"
    out.write_text(json.dumps({"preset": args.preset, "machine": machine(), "rows": n,
                               "jobs": len(jobs), "types": len(types), "seconds": seconds,
                               "rows_per_s": {k: n / v for k, v in seconds.items()}}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
