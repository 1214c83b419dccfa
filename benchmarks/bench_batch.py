"""Benchmark: batch scoring, one day's submissions x every candidate type, in candidate rows/s.

Simulates ``days=31`` of a preset and scores every job submitted on day 31,
each at its own submit time, on every hardware type of the catalog, against
the log before that day, with ``LeapRegressor`` models fitted on a sample of
the 30-day window (as in ``bench_submission.py``): one per router
(``--routers``, named as in ``bench_submission.MODELS``: ``default`` and
``published`` unless told otherwise). Stages, each timed on the whole batch:

``features``
    ``candidate_rows`` + ``build_features(..., history=log)``.
``features (index)``
    ``candidate_rows`` + ``HistoryIndex.features``, the index built once
    beforehand from the same log (its build time is printed apart); the
    frames are checked equal.
``predict (<router>)``
    ``leapml.placement.predict_by_job`` of each model: ``predict`` with a job's
    miss on the types it ran on carried to its other candidates, as ``place``
    ranks them.
``rank``
    ``rank_candidates`` with the catalog's cost.

``total (<router>)`` adds ``features (index)``, that model's ``predict`` and
``rank``. ``place (<router>)`` is the same work as one call,
``leapml.placement.place(model, jobs, hardware, history=index,
hardware_types=types)``, which keeps the candidates in arrays from the index
to the ranking (checked equal to ``rank_candidates`` of the staged
predictions). The reference, timed in the same run on the same rows, is one
``Booster.predict`` of a single 100-tree LightGBM regressor.

``--parts`` then times each model's boosters alone on the batch's encoded
rows (the shared expert, the router, and the bin experts together, each
expert on every row, where ``predict`` gives each row its two nearest) and
prints their mean depth: the splits from root to leaf, averaged over the
leaves weighted by the training rows each holds (what a tree costs a row).

``--repeat N`` times every stage N times, the stages in turn on each round
(so a slow spell of the machine falls on all of them), and prints the
median of each; single timings on a shared machine can move by a factor of
two from one run to the next.

Run::

    python benchmarks/bench_batch.py                  # production
    python benchmarks/bench_batch.py --preset small
    python benchmarks/bench_batch.py --repeat 5       # medians of five rounds
    python benchmarks/bench_batch.py --parts          # and each model's boosters alone
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import lightgbm as lgb
import numpy as np
import pandas as pd
from bench_nightly import RESULTS, machine
from bench_submission import add_scoring_arguments, scored_day

from leapml.features import HistoryIndex, build_features, candidate_rows
from leapml.placement import place, predict_by_job
from leapml.ranking import rank_candidates


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scoring_arguments(parser)
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of every stage; the median of each is printed (default 1)")
    parser.add_argument("--parts", action="store_true",
                        help="also time each model's shared expert, router and experts alone")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    day = scored_day(args)
    hardware, models, reference, history = day.hardware, day.models, day.reference, day.history
    jobs, types, cost = day.jobs, day.types, day.cost
    routers = list(models)

    rounds = []
    for _ in range(args.repeat):
        seconds = {}
        started = time.perf_counter()
        rows = candidate_rows(jobs, types)
        X_full = build_features(rows, hardware, history=history)
        seconds["features"] = time.perf_counter() - started
        started = time.perf_counter()
        index = HistoryIndex(history, hardware)
        index_build_s = time.perf_counter() - started
        started = time.perf_counter()
        rows = candidate_rows(jobs, types)
        X = index.features(rows)
        seconds["features (index)"] = time.perf_counter() - started
        pd.testing.assert_frame_equal(X, X_full, check_exact=True)
        predicted = {}
        job_codes = pd.factorize(rows["job_id"])[0]
        for router, model in models.items():
            started = time.perf_counter()
            predicted[router] = predict_by_job(model, X, job_codes)[0]
            seconds[f"predict ({router})"] = time.perf_counter() - started
        candidates = rows[["job_id", "hardware_type", "trainer_count"]].assign(
            hardware_type=rows["hardware_type"].astype(str))
        started = time.perf_counter()
        ranked = rank_candidates(candidates.assign(predicted_throughput=predicted[routers[0]]),
                                 cost=cost)
        seconds["rank"] = time.perf_counter() - started
        for router in routers:
            seconds[f"total ({router})"] = (seconds["features (index)"]
                                            + seconds[f"predict ({router})"] + seconds["rank"])
        for router, model in models.items():
            started = time.perf_counter()
            placed = place(model, jobs, hardware, history=index, hardware_types=types)
            seconds[f"place ({router})"] = time.perf_counter() - started
            if router == routers[0]:
                # place adds the feasibility and interval columns, empty without those models
                pd.testing.assert_frame_equal(placed[ranked.columns], ranked, check_exact=True)
        encoded = models[routers[0]]._validate_X(X, reset=False)
        started = time.perf_counter()
        reference.predict(encoded, num_threads=args.threads)
        seconds["reference"] = time.perf_counter() - started
        rounds.append(seconds)
    seconds = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}

    n = len(X)
    print(f"{args.preset}: {len(jobs):,} submissions x {len(types)} types = {n:,} candidate rows, "
          f"history {len(history):,} attempts (index built in {index_build_s:.2f} s); "
          f"{args.threads} threads; {machine()}"
          + (f"; medians of {args.repeat} rounds" if args.repeat > 1 else ""))
    print(f"\n{'stage':28s} {'seconds':>8s} {'rows/s':>11s} {'x reference':>11s}")
    for name, s in seconds.items():
        label = "reference Booster.predict" if name == "reference" else name
        print(f"{label:28s} {s:8.2f} {n / s:11,.0f} {s / seconds['reference']:11.1f}")
    print("target: place (or total) >= 100,000 candidate rows/s")
    parts = {}
    if args.parts:
        parts = {router: booster_parts(model, X, args.threads) for router, model in models.items()}
        print(f"\n{'booster':36s} {'trees':>6s} {'mean depth':>10s} {'seconds':>8s}")
        for router, boosters in parts.items():
            for name, part in boosters.items():
                print(f"{name + ' (' + router + ')':36s} {part['trees']:6d} "
                      f"{part['mean_depth']:10.1f} {part['seconds']:8.2f}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"batch_{args.preset}.json"
    out.write_text(json.dumps({"preset": args.preset, "machine": machine(), "rows": n,
                               "jobs": len(jobs), "types": len(types),
                               "index_build_s": index_build_s, "seconds": seconds,
                               "rounds": rounds,
                               "rows_per_s": {k: n / v for k, v in seconds.items()},
                               **({"parts": parts} if parts else {})}, indent=2))
    print(f"wrote {out}")
    return 0


def mean_depth(booster) -> float:
    """Splits from root to leaf, averaged over the leaves weighted by the training rows in each."""
    total = rows = 0
    stack = [(tree["tree_structure"], 0) for tree in booster.dump_model()["tree_info"]]
    while stack:
        node, depth = stack.pop()
        if "leaf_value" in node:
            total += node.get("leaf_count", 1) * depth
            rows += node.get("leaf_count", 1)
        else:
            stack += [(node["left_child"], depth + 1), (node["right_child"], depth + 1)]
    return total / rows


def booster_parts(model, X, threads: int) -> dict:
    """Each LightGBM booster group of ``model`` timed alone on the encoded rows of ``X``."""
    encoded = np.ascontiguousarray(model._validate_X(X, reset=False))
    groups = {"shared expert": [getattr(model, "base_", None)],
              "router": [model.classifier_], "bin experts": list(model.regressors_)}
    parts = {}
    for name, boosters in groups.items():
        boosters = [b for b in boosters if isinstance(b, lgb.Booster)]
        if not boosters:
            continue
        started = time.perf_counter()
        for booster in boosters:
            booster.predict(encoded, num_threads=threads)
        parts[name] = {"seconds": time.perf_counter() - started,
                       "trees": sum(b.num_trees() for b in boosters),
                       "mean_depth": float(np.mean([mean_depth(b) for b in boosters]))}
    return parts


if __name__ == "__main__":
    raise SystemExit(main())
