"""Benchmark: ways to make the multiclass router cheaper at predict time, against the ordinal router.

Simulates ``days=31`` of a preset, fits a default ``LeapRegressor``
(multiclass router) and one with ``router="ordinal"`` on the 30-day window,
and scores day 31's candidate rows (every job x every catalog type) and
completed attempts. For each way of routing it prints the router's time on
the candidate rows, the share of candidate rows and next-day attempts routed
to the same bin as the plain multiclass router, and the next-day accuracy
within +-20 % of the hard prediction:

``multiclass``
    The default router, ``Booster.predict`` (the reference).
``early stop f/m``
    LightGBM's prediction early stopping (``pred_early_stop=True``): every
    ``f`` rounds a row stops once the margin between its two best bins
    exceeds ``m``.
``lleaves``
    The router compiled to machine code by the ``lleaves`` package, when it
    is installed (it is not a dependency of leapml); its compile time is
    printed.
``ordinal``
    The ordinal router of the second model (other experts, so its agreement
    with the first model's bins is not shown).

Run::

    python benchmarks/bench_router_levers.py --preset small
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_nightly import RESULTS, machine, night

from leapml import LeapRegressor
from leapml._router import nearest_bin, router_scores
from leapml.evaluation.metrics import within_tolerance
from leapml.features import HistoryIndex, build_features, candidate_rows
from leapml.schema import LAUNCH_COLUMNS


def hard_predict(model, encoded, bins):
    log_pred = np.empty(len(encoded))
    for k in np.unique(bins):
        rows = bins == k
        log_pred[rows] = model.regressors_[k].predict(encoded[rows])
    return np.exp(log_pred)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    fleet, attempts, train, test = night(args.preset, args.seed)
    hardware = fleet.hardware
    X = build_features(attempts, hardware)
    y = attempts["throughput"].to_numpy(float)
    models = {router: LeapRegressor(router=router, random_state=args.seed, n_jobs=args.threads)
              .fit(X[train], y[train]) for router in ("multiclass", "ordinal")}
    last_day = attempts["submit_time"].max().floor("D")
    index = HistoryIndex(attempts[attempts["submit_time"] < last_day], hardware)
    jobs = (attempts[attempts["submit_time"] >= last_day].drop_duplicates("job_id")
            [["job_id", "submit_time", *LAUNCH_COLUMNS]])
    candidates = index.features(candidate_rows(jobs, hardware))
    model = models["multiclass"]
    rows = {"candidates": model._validate_X(candidates, reset=False),
            "next day": model._validate_X(X[test], reset=False)}
    router = model.classifier_

    def multiclass_bins(encoded, **options):
        return router.predict(encoded, num_threads=args.threads, **options).argmax(axis=1)

    ways = {"multiclass": multiclass_bins}
    for freq, margin in ((5, 1.0), (5, 2.0), (10, 2.0)):
        ways[f"early stop {freq}/{margin:g}"] = (
            lambda encoded, f=freq, m=margin: multiclass_bins(
                encoded, pred_early_stop=True, pred_early_stop_freq=f, pred_early_stop_margin=m))
    try:
        import lleaves
    except ImportError:
        print("lleaves is not installed: skipped")
    else:
        folder = Path(tempfile.mkdtemp())
        router.save_model(folder / "router.txt")
        started = time.perf_counter()
        compiled = lleaves.Model(model_file=str(folder / "router.txt"))
        compiled.compile(cache=str(folder / "router.so"))
        print(f"lleaves compiled the router ({router.num_trees()} trees) in "
              f"{time.perf_counter() - started:.0f} s")
        ways["lleaves"] = lambda encoded: compiled.predict(encoded, n_jobs=args.threads).argmax(1)
    ordinal = models["ordinal"]
    ordinal_rows = {name: ordinal._validate_X(frame, reset=False)
                    for name, frame in (("candidates", candidates), ("next day", X[test]))}

    results = []
    reference_bins = {name: multiclass_bins(encoded) for name, encoded in rows.items()}
    for name, way in [*ways.items(), ("ordinal", None)]:
        if way is None:
            encoded = ordinal_rows
            route = lambda e: nearest_bin(router_scores(ordinal.classifier_, e,  # noqa: E731
                                                        num_threads=args.threads), ordinal.n_bins_)
            owner = ordinal
        else:
            encoded, route, owner = rows, way, model
        started = time.perf_counter()
        bins = route(encoded["candidates"])
        seconds = time.perf_counter() - started
        test_bins = route(encoded["next day"])
        same = (None if way is None else
                (float(np.mean(bins == reference_bins["candidates"])),
                 float(np.mean(test_bins == reference_bins["next day"]))))
        accuracy = within_tolerance(y[test], hard_predict(owner, encoded["next day"], test_bins))
        results.append({"way": name, "router_s": seconds, "same_bin": same, "within_20": accuracy})

    n = len(candidates)
    base = results[0]["router_s"]
    print(f"\n{args.preset}: router on {n:,} candidate rows; next day {int(test.sum()):,} "
          f"attempts; {machine()}")
    print(f"{'way':18s} {'router s':>9s} {'x faster':>9s} {'same bin':>14s} {'within 20%':>10s}")
    for r in results:
        same = "-" if r["same_bin"] is None else f"{r['same_bin'][0]:.3f}/{r['same_bin'][1]:.3f}"
        print(f"{r['way']:18s} {r['router_s']:9.2f} {base / r['router_s']:9.1f} {same:>14s} "
              f"{r['within_20']:10.4f}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"router_levers_{args.preset}.json"
    out.write_text(json.dumps({"preset": args.preset, "machine": machine(), "rows": n,
                               "results": results}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
