"""Time ``build_features`` on a production-size attempt log.

Uses ``leapml.fleet.simulate("production")`` when the simulator is available,
otherwise (or with ``--synthetic``) a random log of the same size generated
here: ~25,000 attempts a day for 60 days, 700 model types, 24 hardware types.

It prints the wall time and the peak resident memory of ``build_features``,
and a reference measured in the same run on the same rows: the plain pandas
way of attaching one as-of count per (job, hardware type) key
(``groupby().cumcount()`` + ``merge_asof(..., allow_exact_matches=False)``).
The ratio says how many such plain joins one ``build_features`` costs; it
computes five keys' worth of history plus ~35 other columns. Last, it times
scoring a batch of submissions on every hardware type against the whole log
(``candidate_rows`` + ``build_features(..., history=log)``), as a nightly
ranking does.

Run::

    python benchmarks/bench_features.py               # simulator if present
    python benchmarks/bench_features.py --synthetic   # the generated log
    python benchmarks/bench_features.py --synthetic --rows 200000
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from leapml.features import build_features, candidate_rows
from leapml.schema import LAUNCH_COLUMNS

PRECISIONS = ["fp32", "tf32", "bf16", "fp16", "fp8"]


def _status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset the process's peak RSS (Linux), so that the next reading covers one call."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float:
    peak = _status_mb("VmHWM")
    # ru_maxrss (kilobytes on Linux) cannot be reset: a fallback only
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic_fleet(n_rows: int, *, days: int = 60, seed: int = 0):
    """A random attempt log and hardware catalog of production size (no physics)."""
    rng = np.random.default_rng(seed)
    n_types = 24
    types = [f"accel-{i:02d}" for i in range(n_types)]
    fp32 = rng.uniform(10, 80, n_types)
    peaks = {
        "fp32": fp32,
        "tf32": np.where(rng.random(n_types) < 0.7, fp32 * 8, np.nan),
        "bf16": np.where(rng.random(n_types) < 0.85, fp32 * 16, np.nan),
        "fp16": fp32 * 16,
        "fp8": np.where(rng.random(n_types) < 0.4, fp32 * 32, np.nan),
    }
    start = pd.Timestamp("2026-01-01")
    hardware = pd.DataFrame(
        {
            "hardware_type": types,
            "vendor": rng.choice(["NVIDIA", "AMD", "Intel", "in-house"], n_types),
            **{f"peak_{p}_tflops": peaks[p] for p in PRECISIONS},
            "memory_gb": rng.choice([16.0, 32.0, 80.0, 141.0, 192.0], n_types),
            "memory_bw_gbps": rng.uniform(300, 8000, n_types),
            "intra_node_bw_gbps": rng.uniform(32, 900, n_types),
            "inter_node_bw_gbps": rng.uniform(12.5, 100, n_types),
            "devices_per_host": rng.choice([4, 8], n_types).astype(np.int64),
            "cost_per_device_hour": rng.uniform(0.5, 8.0, n_types),
            "introduced": start - pd.to_timedelta(rng.integers(0, 2000, n_types), unit="D"),
        }
    )
    n_models, n_jobs = 700, max(1, n_rows // 12)
    families = np.array([f"family-{i:02d}" for i in range(25)], dtype=object)
    model_family = families[rng.integers(0, 25, n_models)]
    # Zipf-like popularity: few model types run most jobs
    weights = 1.0 / np.arange(1, n_models + 1) ** 0.9
    job_model = rng.choice(n_models, n_jobs, p=weights / weights.sum())
    job_trainers = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], n_jobs)
    job_batch = rng.choice([1, 4, 16, 64, 256, 1024, 4096], n_jobs)
    job_precision = rng.choice(PRECISIONS, n_jobs)
    job_hw = rng.integers(0, n_types, n_jobs)
    job = rng.integers(0, n_jobs, n_rows)
    # sticky hardware: most attempts stay on the job's usual type
    hw = np.where(rng.random(n_rows) < 0.8, job_hw[job], rng.integers(0, n_types, n_rows))
    status = rng.choice(["ok", "oom", "failed"], n_rows, p=[0.9, 0.05, 0.05])
    model_names = np.array([f"model-{i:03d}" for i in range(n_models)], dtype=object)
    seconds = np.sort(rng.integers(0, days * 86_400, n_rows))
    attempts = pd.DataFrame(
        {
            "attempt_id": np.arange(n_rows, dtype=np.int64),
            "job_id": job.astype(np.int64),
            "submit_time": start + pd.to_timedelta(seconds, unit="s"),
            "model_type": pd.Categorical(model_names[job_model[job]]),
            "model_family": pd.Categorical(model_family[job_model[job]]),
            "trainer_count": job_trainers[job].astype(np.int64),
            "batch_size": job_batch[job].astype(np.int64),
            "precision": pd.Categorical(job_precision[job], categories=PRECISIONS),
            "seq_len": pd.array(np.where(job % 3 == 0, 2048, 0), dtype="Int64"),
            "parallelism": pd.Categorical(rng.choice(["data", "fsdp", "tensor"], n_rows)),
            "hardware_type": pd.Categorical(np.array(types)[hw], categories=types),
            "status": pd.Categorical(status, categories=["ok", "oom", "failed"]),
            "throughput": np.where(status == "ok", np.exp(rng.normal(5, 3, n_rows)), np.nan),
            "device_hours": rng.uniform(0.1, 100, n_rows),
        }
    )
    attempts.loc[attempts["seq_len"] == 0, "seq_len"] = pd.NA
    return attempts, hardware


def plain_as_of_count(attempts: pd.DataFrame) -> pd.Series:
    """Reference: completed runs per (job, hardware type) whose outcome was known before each
    submission (:func:`leapml.features.outcome_known_time`), the plain pandas way."""
    from leapml.features import outcome_known_time

    keys = ["job_id", "hardware_type"]
    query = attempts[[*keys, "submit_time"]].assign(
        hardware_type=attempts["hardware_type"].astype(str), row=np.arange(len(attempts))
    )
    ok = (attempts["status"] == "ok").to_numpy()
    # a run counts from when its outcome is known: its time on the join is that time
    known = outcome_known_time(attempts).to_numpy()
    done = query[ok].assign(submit_time=known[ok]).sort_values([*keys, "submit_time"])
    done = done.assign(runs=done.groupby(keys).cumcount() + 1).drop(columns="row")
    joined = pd.merge_asof(
        query.sort_values("submit_time"),
        done.sort_values("submit_time"),
        on="submit_time",
        by=keys,
        allow_exact_matches=False,
    )
    return joined.set_index("row")["runs"].fillna(0).sort_index()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", action="store_true", help="use the generated log")
    parser.add_argument("--rows", type=int, default=1_500_000, help="rows of the generated log")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score-jobs", type=int, default=2000, help="jobs in the scoring batch")
    args = parser.parse_args(argv)

    source = "synthetic"
    started = time.perf_counter()
    if not args.synthetic:
        try:
            from leapml.fleet import simulate

            fleet = simulate("production", seed=args.seed)
            attempts, hardware, source = fleet.attempts, fleet.hardware, "simulate('production')"
        except ImportError:
            print("leapml.fleet.simulate is not available; using the generated log")
    if source == "synthetic":
        attempts, hardware = synthetic_fleet(args.rows, seed=args.seed)
    print(
        f"log: {source}, {len(attempts):,} attempts, {len(hardware)} hardware types "
        f"(made in {time.perf_counter() - started:.1f} s)"
    )
    rss_before = _status_mb("VmRSS") or _peak_rss_mb()
    if not _reset_peak_rss():
        print("(cannot reset the peak RSS here: the peak below may predate the call)")

    started = time.perf_counter()
    X = build_features(attempts, hardware)
    features_s = time.perf_counter() - started
    rss_after = _peak_rss_mb()

    started = time.perf_counter()
    runs = plain_as_of_count(attempts)
    reference_s = time.perf_counter() - started
    # the reference computes one of our columns: they must agree
    assert np.array_equal(runs.to_numpy(), X["job_runs_same_hardware"].to_numpy())

    print(
        f"build_features: {features_s:.2f} s, {X.shape[1]} columns, "
        f"peak RSS during the call {rss_after:,.0f} MB (RSS before it {rss_before:,.0f} MB)"
    )
    print(f"reference (groupby.cumcount + merge_asof, one key, one column): {reference_s:.2f} s")
    print(f"ratio build_features / reference: {features_s / reference_s:.1f}")

    # scoring: a batch of submissions on every type, against the whole log
    launch = ["job_id", *LAUNCH_COLUMNS]
    jobs = attempts.drop_duplicates("job_id").tail(args.score_jobs)[launch]
    at = attempts["submit_time"].max() + pd.Timedelta(seconds=1)
    started = time.perf_counter()
    rows = candidate_rows(jobs, hardware, at=at)
    X_new = build_features(rows, hardware, history=attempts)
    scoring_s = time.perf_counter() - started
    print(
        f"scoring {len(jobs):,} jobs x {len(hardware)} types ({len(X_new):,} rows) "
        f"against the whole log: {scoring_s:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
