"""Benchmark: one LightGBM prediction call on one thread or two, by number of rows.

LeapRegressor predicts each batch of rows with one expert, so a batch is
split into many calls of a few hundred or thousand rows, while one
submission makes calls of a few dozen. Below ``leapml._cascade._SMALL_BATCH``
rows the experts and the router predict on one thread; above it, on the
model's ``n_jobs``. This script measures where a second thread starts to
pay: one 100-tree L1 regressor (the settings of one expert, fitted on the
features of a ``small`` fleet) predicts ``n`` rows, one thread (the
reference) against ``--threads``.

Run::

    python benchmarks/bench_predict_threads.py
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from bench_nightly import RESULTS, machine, night, reference_fit

from leapml import LeapRegressor
from leapml._cascade import _SMALL_BATCH
from leapml.features import build_features

ROWS = (24, 48, 64, 96, 128, 256, 1_000, 4_000, 20_000)


def seconds_per_call(booster, X, threads: int, repeats: int = 7) -> float:
    """The best of ``repeats`` timings of a loop of calls, per call."""
    calls = max(1, 2_000 // max(len(X) // 24, 1))
    best = np.inf
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            booster.predict(X, num_threads=threads)
        best = min(best, (time.perf_counter() - started) / calls)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    fleet, attempts, train, _ = night("small", args.seed)
    X = build_features(attempts[train], fleet.hardware)
    encoded = LeapRegressor()._encode(X, reset=True)  # categories as codes, as the experts see them
    y = attempts.loc[train, "throughput"].to_numpy(float)
    booster = reference_fit(encoded, y, args.threads, args.seed).booster_
    rng = np.random.default_rng(args.seed)
    print(f"one 100-tree expert, 1 thread vs {args.threads}; "
          f"_SMALL_BATCH = {_SMALL_BATCH}; {machine()}")
    print(f"\n{'rows':>7s} {'1 thread ms':>12s} {f'{args.threads} threads ms':>13s} {'ratio':>6s}")
    results = []
    for n in ROWS:
        rows = np.ascontiguousarray(encoded[rng.choice(len(encoded), n, replace=False)])
        one = seconds_per_call(booster, rows, 1)
        many = seconds_per_call(booster, rows, args.threads)
        results.append({"rows": n, "one_thread_ms": one * 1e3, "threads_ms": many * 1e3,
                        "ratio": many / one})
        print(f"{n:7,d} {one * 1e3:12.3f} {many * 1e3:13.3f} {many / one:6.2f}")
    print("ratio < 1: the extra threads pay")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "predict_threads.json"
    out.write_text(json.dumps({"machine": machine(), "threads": args.threads,
                               "small_batch": _SMALL_BATCH, "results": results}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
