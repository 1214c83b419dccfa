"""Benchmark: the backtest and the nightly retrain on a Dask LocalCluster, against a local run.

Two parts, each on this one machine:

``backtest``
    :func:`leapml.evaluation.backtest.nightly` run locally (one process) and with
    :func:`leapml.distributed.nightly` on a ``LocalCluster`` of ``--workers``
    one-thread worker processes. Prints both wall times, their ratio, and
    whether the score, prediction and regret tables are identical (they must be).
``scale``
    A log of ``--scale`` fleets' worth: fleets simulated with seeds
    ``0 .. scale-1`` (job ids made distinct per fleet; the model and hardware
    catalogs are shared, as between regions of one platform), each simulated
    inside a worker task so that the whole log never sits in one process.
    Features are built by family on the cluster
    (:func:`leapml.distributed.build_features`) and a
    :class:`~leapml.LeapRegressor` is fitted with
    :func:`leapml.distributed.fit_regressor` on the first ``--window-days``
    days; it then scores the next day's completed attempts (accuracy within
    +-20 %) on pandas. Each worker has a memory limit (``--memory-limit``),
    beyond which Dask spills to disk; the peak resident memory of every worker
    process (``getrusage``) and of this process is printed. With
    ``--compare-local`` the same training rows are also fitted in this
    process, for the local accuracy and how far the cluster's predictions
    are from the local model's (median absolute log ratio).

Run::

    python benchmarks/bench_distributed.py --preset small --scale 10
    python benchmarks/bench_distributed.py --preset small --scale 1 --parts scale --compare-local
    python benchmarks/bench_distributed.py --preset production --parts backtest

Results go to ``benchmarks/results/distributed_<preset>_x<scale>.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster

from leapml import LeapRegressor
from leapml import distributed as leap_dask
from leapml.evaluation.backtest import default_models, nightly
from leapml.evaluation.metrics import within_tolerance
from leapml.fleet import simulate

RESULTS = Path(__file__).resolve().parent / "results"
_MIB = 2**20


def _peak_rss_mib() -> float:
    """Peak resident memory of the calling process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / _MIB


def _backtest(args, client) -> dict:
    fleet = simulate(args.preset, days=args.window_days + args.nights, seed=0)
    options = {
        "window_days": args.window_days,
        "nights": args.nights,
        "progress": False,
        "models": default_models(random_state=0, n_estimators=args.trees),
        "oracle": fleet.expected_throughput,
        "regret_jobs": 200,
    }
    start = time.perf_counter()
    local = nightly(fleet.attempts, fleet.hardware, **options)
    local_seconds = time.perf_counter() - start
    start = time.perf_counter()
    remote = leap_dask.nightly(fleet.attempts, fleet.hardware, client=client, **options)
    cluster_seconds = time.perf_counter() - start
    same = all(
        getattr(local, name).equals(getattr(remote, name))
        for name in ("scores", "predictions", "regret")
    )
    return {
        "attempts": len(fleet.attempts),
        "nights": args.nights,
        "local_seconds": round(local_seconds, 1),
        "cluster_seconds": round(cluster_seconds, 1),
        "cluster_over_local": round(cluster_seconds / local_seconds, 2),
        "tables_identical": bool(same),
    }


def _fleet_log(preset: str, days: int, seed: int) -> pd.DataFrame:
    """One fleet's attempt log, its job ids made distinct from the other fleets'."""
    attempts = simulate(preset, days=days, seed=seed).attempts
    attempts = attempts.drop(columns=["expected_throughput"])
    attempts["job_id"] = attempts["job_id"] + seed * 10**9
    attempts["attempt_id"] = attempts["attempt_id"] + seed * 10**9
    # indexed by attempt id: each fleet numbers its rows from 0
    attempts.index = pd.Index(attempts["attempt_id"].to_numpy())
    return attempts


def _scale(args, client) -> dict:
    days = args.window_days + 1
    hardware = simulate("tiny", days=1, seed=0).hardware
    meta = _fleet_log("tiny", 1, 0).iloc[:0]
    parts = [dask.delayed(_fleet_log)(args.preset, days, seed) for seed in range(args.scale)]
    attempts = dd.from_delayed(parts, meta=meta, verify_meta=False)
    start = time.perf_counter()
    features = leap_dask.build_features(attempts, hardware)
    # the features carry each attempt's index: join the columns the fit needs back on it
    outcome = attempts[["submit_time", "status", "throughput"]]
    frame = client.persist(features.join(outcome))
    n_rows = int(frame.shape[0].compute())
    features_seconds = time.perf_counter() - start
    last_day = frame["submit_time"].max().compute().floor("D")
    ok = frame["status"].astype(str) == "ok"
    train = frame[ok & (frame["submit_time"] < last_day)]
    test = frame[ok & (frame["submit_time"] >= last_day)].compute()
    columns = list(features.columns)
    start = time.perf_counter()
    model = leap_dask.fit_regressor(
        LeapRegressor(random_state=0, n_estimators=args.trees),
        train[columns],
        train["throughput"],
        client=client,
    )
    fit_seconds = time.perf_counter() - start
    accuracy = within_tolerance(test["throughput"].to_numpy(float), model.predict(test[columns]))
    worker_peaks = client.run(_peak_rss_mib)
    out = {
        "fleets": args.scale,
        "attempts": n_rows,
        "training_rows": int(train.shape[0].compute()),
        "features_seconds": round(features_seconds, 1),
        "fit_seconds": round(fit_seconds, 1),
        "next_day_within_20": round(float(accuracy), 4),
        "em_iterations": int(model.n_iter_),
        "memory_limit_per_worker": args.memory_limit,
        "peak_worker_rss_mib": sorted(round(v) for v in worker_peaks.values()),
        "peak_client_rss_mib": round(_peak_rss_mib()),
    }
    if args.compare_local:
        out["local"] = _local_fit(args, train[columns + ["throughput"]].compute(), test, model)
    return out


def _local_fit(args, train: pd.DataFrame, test: pd.DataFrame, remote) -> dict:
    """The same rows fitted in this process, and how far the cluster's model is from it."""
    columns = list(train.columns[:-1])
    start = time.perf_counter()
    local = LeapRegressor(random_state=0, n_estimators=args.trees)
    local.fit(train[columns], train["throughput"])
    seconds = time.perf_counter() - start
    y = test["throughput"].to_numpy(float)
    local_prediction = local.predict(test[columns])
    ratio = np.abs(np.log(remote.predict(test[columns]) / local_prediction))
    return {
        "fit_seconds": round(seconds, 1),
        "next_day_within_20": round(float(within_tolerance(y, local_prediction)), 4),
        "median_abs_log_ratio_cluster_to_local": round(float(np.median(ratio)), 4),
        "same_bin_edges": bool(np.array_equal(local.bin_edges_, remote.bin_edges_)),
        "peak_client_rss_mib_after_local_fit": round(_peak_rss_mib()),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=["tiny", "small", "production"], default="small")
    parser.add_argument("--scale", type=int, default=10, help="fleets' worth of attempts")
    parser.add_argument("--parts", default="backtest,scale", help="backtest, scale or both")
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--nights", type=int, default=2, help="nights of the backtest part")
    parser.add_argument("--trees", type=int, default=100, help="trees per LightGBM model")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GiB", help="per worker, e.g. 2GiB")
    parser.add_argument(
        "--compare-local",
        action="store_true",
        help="also fit the scale part's rows in this process (small scales)",
    )
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    out = {
        "preset": args.preset,
        "scale": args.scale,
        "window_days": args.window_days,
        "trees": args.trees,
        "workers": args.workers,
        "machine": platform.processor(),
    }
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            memory_limit=args.memory_limit,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        if "backtest" in parts:
            out["backtest"] = _backtest(args, client)
            print("backtest:", json.dumps(out["backtest"]), flush=True)
        if "scale" in parts:
            out["scale_run"] = _scale(args, client)
            print("scale:", json.dumps(out["scale_run"]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"distributed_{args.preset}_x{args.scale}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
