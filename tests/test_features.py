"""Tests of leapml.features: columns, hardware specs, as-of history, candidate rows."""

from __future__ import annotations

import datetime
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapml.features import (
    FEATURE_GROUPS,
    build_features,
    candidate_rows,
    feature_names,
    outcome_known_time,
)
from leapml.schema import LAUNCH_COLUMNS, SchemaError, validate_attempts

NAN = float("nan")
DAY = pd.Timedelta(days=1)
START = pd.Timestamp("2024-03-01")

# ---------------------------------------------------------------------------
# small random logs, built here so these tests need no simulator
# ---------------------------------------------------------------------------

_CATALOG = {
    # type: vendor, fp32, tf32, bf16, fp16, fp8, memory GB, memory GB/s, intra, inter, per host
    "V100": ("NVIDIA", 15.7, NAN, NAN, 125.0, NAN, 32.0, 900.0, 150.0, 12.5, 8),
    "A100": ("NVIDIA", 19.5, 156.0, 312.0, 312.0, NAN, 80.0, 2039.0, 300.0, 25.0, 8),
    "H100": ("NVIDIA", 67.0, 495.0, 989.0, 989.0, 1979.0, 80.0, 3350.0, 450.0, 50.0, 8),
    "MI250X": ("AMD", 47.9, NAN, 383.0, 383.0, NAN, 128.0, 3277.0, 100.0, 25.0, 4),
    "Gaudi2": ("Intel", NAN, NAN, 432.0, 432.0, 865.0, 96.0, 2460.0, 300.0, 37.5, 8),
}


def make_catalog(n_types: int = 5) -> pd.DataFrame:
    """A hardware catalog of the first ``n_types`` types above (3 to 5)."""
    names = list(_CATALOG)[:n_types]
    rows = [_CATALOG[n] for n in names]
    columns = [
        "vendor",
        "peak_fp32_tflops",
        "peak_tf32_tflops",
        "peak_bf16_tflops",
        "peak_fp16_tflops",
        "peak_fp8_tflops",
        "memory_gb",
        "memory_bw_gbps",
        "intra_node_bw_gbps",
        "inter_node_bw_gbps",
        "devices_per_host",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame.insert(0, "hardware_type", names)
    frame["devices_per_host"] = frame["devices_per_host"].astype("int64")
    frame["cost_per_device_hour"] = np.linspace(1.0, 5.0, len(names))
    frame["introduced"] = START - pd.to_timedelta(np.arange(len(names)) * 300, unit="D")
    return frame


_FAMILIES = {"llm": "fsdp", "ranking": "data", "vision": "data"}
_PRECISIONS = ["fp32", "tf32", "bf16", "fp16", "fp8"]


def make_log(
    seed: int = 0,
    n_attempts: int = 200,
    *,
    n_jobs: int | None = None,
    n_times: int | None = None,
    n_types: int = 5,
    catalog: pd.DataFrame | None = None,
    reused_ids: bool = False,
) -> pd.DataFrame:
    """A random, schema-valid attempt log; few distinct times so that ties are common.

    ``reused_ids``: a job id is given again for other models (each attempt draws its
    model type), as a log whose ids are per user or per script can hold.
    """
    rng = np.random.default_rng(seed)
    catalog = make_catalog(n_types) if catalog is None else catalog
    types = catalog["hardware_type"].tolist()
    n_jobs = n_jobs or max(1, n_attempts // 6)
    n_times = n_times or max(1, n_attempts // 3)
    model_types = [f"{fam}-{i:02d}" for fam in _FAMILIES for i in range(3)]
    job_model = rng.integers(0, len(model_types), n_jobs)
    job_trainers = rng.choice([1, 2, 4, 8, 16, 64], n_jobs)
    job_batch = rng.choice([1, 8, 32, 256], n_jobs)
    job_precision = rng.choice(_PRECISIONS, n_jobs)
    job = rng.integers(0, n_jobs, n_attempts)
    model = np.array(model_types, dtype=object)[job_model[job]]
    if reused_ids:
        model = np.array(model_types, dtype=object)[rng.integers(0, 3, n_attempts)]
    family = np.array([m.split("-")[0] for m in model], dtype=object)
    status = rng.choice(["ok", "ok", "ok", "ok", "oom", "failed"], n_attempts)
    throughput = np.where(status == "ok", np.exp(rng.normal(3.0, 2.0, n_attempts)), NAN)
    minutes = rng.integers(0, n_times, n_attempts) * 37
    seq_len = np.where(family == "llm", 2048, -1)
    # owners change a job's configuration now and then: one attempt in five doubles its batch
    batch = job_batch[job] * np.where(rng.uniform(size=n_attempts) < 0.2, 2, 1)
    log = pd.DataFrame(
        {
            "attempt_id": np.arange(n_attempts, dtype=np.int64) + 1000,
            "job_id": pd.Series([f"job-{j}" for j in job], dtype="str"),
            "submit_time": START + pd.to_timedelta(minutes, unit="min"),
            "model_type": pd.Categorical(model, categories=model_types),
            "model_family": pd.Categorical(family, categories=list(_FAMILIES)),
            "trainer_count": job_trainers[job].astype(np.int64),
            "batch_size": batch.astype(np.int64),
            "precision": pd.Categorical(job_precision[job], categories=_PRECISIONS),
            "seq_len": pd.array(np.where(seq_len > 0, seq_len, 0), dtype="Int64"),
            "parallelism": pd.Categorical([_FAMILIES[f] for f in family]),
            "hardware_type": pd.Categorical(rng.choice(types, n_attempts), categories=types),
            "status": pd.Categorical(status, categories=["ok", "oom", "failed"]),
            "throughput": throughput,
            "device_hours": rng.uniform(0.1, 10.0, n_attempts),
        }
    )
    log.loc[seq_len < 0, "seq_len"] = pd.NA
    return log


def reference_peak(catalog_row: pd.Series, precision: str) -> float:
    """Peak TFLOP/s by the documented fallback, written out independently."""
    chains = {
        "fp32": ["fp32", "tf32", "bf16", "fp16", "fp8"],
        "tf32": ["tf32", "fp32", "bf16", "fp16", "fp8"],
        "bf16": ["bf16", "fp16", "fp32", "tf32", "fp8"],
        "fp16": ["fp16", "bf16", "fp32", "tf32", "fp8"],
        "fp8": ["fp8", "bf16", "fp16", "fp32", "tf32"],
    }
    for candidate in chains[precision]:
        value = catalog_row[f"peak_{candidate}_tflops"]
        if not math.isnan(value):
            return float(value)
    raise AssertionError("catalog type with no peak")


HISTORY_COLUMNS = [
    *FEATURE_GROUPS["job_history"],
    *FEATURE_GROUPS["model_history"],
    *FEATURE_GROUPS["summary"],
]


def configuration(row) -> tuple:
    """A row's launch configuration, by value (a missing sequence length is one value)."""
    seq_len = None if pd.isna(row.seq_len) else float(row.seq_len)
    return (float(row.trainer_count), float(row.batch_size), seq_len, str(row.precision),
            str(row.parallelism))


def reference_history(query: pd.DataFrame, history: pd.DataFrame, catalog: pd.DataFrame):
    """The history features by a plain loop over rows, straight from their definitions.

    A history row counts from the time its outcome is known (by the default rule).
    """
    specs = catalog.set_index("hardware_type")
    known = outcome_known_time(history).tolist()
    past = [
        {
            "position": position,
            "time": known[position],
            "job": row.job_id,
            "hw": str(row.hardware_type),
            "model": str(row.model_type),
            "family": str(row.model_family),
            "trainers": float(row.trainer_count),
            "batch": float(row.batch_size),
            "throughput": float(row.throughput),
            "peak": reference_peak(specs.loc[str(row.hardware_type)], str(row.precision)),
            "config": configuration(row),
        }
        for position, row in enumerate(history.itertuples(index=False))
        if row.status == "ok"
    ]
    out = []
    for row in query.itertuples(index=False):
        hw = str(row.hardware_type)
        trainers = float(row.trainer_count)
        peak = reference_peak(specs.loc[hw], str(row.precision))
        earlier = [r for r in past if r["time"] < row.submit_time]

        def latest(rows):
            best = None
            for r in rows:  # history order breaks ties in time: the later row wins
                if best is None or r["time"] >= best["time"]:
                    best = r
            return best

        def mean(rows, value):
            return sum(value(r) for r in rows) / len(rows) if rows else NAN

        def log_per_peak(r):
            return math.log(r["throughput"] / (r["trainers"] * r["peak"]))

        def days(r, now=row.submit_time):
            return (now - r["time"]) / DAY if r else NAN

        # a job is its id and its model: an id given again for another model is another job
        job_any = [r for r in earlier
                   if r["job"] == row.job_id and r["model"] == str(row.model_type)]
        job_same = [r for r in job_any if r["hw"] == hw]
        config_same = [r for r in job_same if r["config"] == configuration(row)]
        model_same = [r for r in earlier if r["model"] == str(row.model_type) and r["hw"] == hw]
        model_any = [r for r in earlier if r["model"] == str(row.model_type)]
        family_same = [r for r in earlier if r["family"] == str(row.model_family) and r["hw"] == hw]
        last_same, last_any = latest(job_same), latest(job_any)
        f = {
            "job_config_runs_same_hardware": len(config_same),
            "job_config_mean_log_throughput_same_hardware": mean(
                config_same, lambda r: math.log(r["throughput"])
            ),
            "job_runs_same_hardware": len(job_same),
            "job_last_throughput_same_hardware": last_same["throughput"] if last_same else NAN,
            "job_mean_log_throughput_same_hardware": mean(
                job_same, lambda r: math.log(r["throughput"])
            ),
            "job_days_since_last_run_same_hardware": days(last_same),
            "job_runs_any_hardware": len(job_any),
        }
        if last_any:
            last_bw = specs.loc[last_any["hw"], "memory_bw_gbps"]
            per_trainer = last_any["throughput"] / last_any["trainers"]
            f |= {
                "job_last_throughput_any_hardware": last_any["throughput"],
                "job_last_throughput_per_trainer_any_hardware": per_trainer,
                "job_last_hardware_type": last_any["hw"],
                "job_last_hardware_peak_tflops": last_any["peak"],
                "log_peak_tflops_ratio_to_last_hardware": math.log(peak / last_any["peak"]),
                "log_memory_bw_ratio_to_last_hardware": math.log(
                    specs.loc[hw, "memory_bw_gbps"] / last_bw
                ),
                "job_last_throughput_scaled_by_peak": per_trainer
                * trainers
                * peak
                / last_any["peak"],
            }
        else:
            f |= dict.fromkeys(
                [
                    "job_last_throughput_any_hardware",
                    "job_last_throughput_per_trainer_any_hardware",
                    "job_last_hardware_peak_tflops",
                    "log_peak_tflops_ratio_to_last_hardware",
                    "log_memory_bw_ratio_to_last_hardware",
                    "job_last_throughput_scaled_by_peak",
                ],
                NAN,
            )
            f["job_last_hardware_type"] = NAN
        f["job_mean_log_throughput_any_hardware"] = mean(
            job_any, lambda r: math.log(r["throughput"])
        )
        f["job_days_since_last_run_any_hardware"] = days(last_any)
        log_total_peak = math.log(peak * trainers)
        f["model_type_runs_same_hardware"] = len(model_same)
        f["model_type_mean_log_samples_per_peak_tflop_same_hardware"] = mean(
            model_same, log_per_peak
        )
        f["model_type_mean_log_steps_per_second_same_hardware"] = mean(
            model_same, lambda r: math.log(r["throughput"] / (r["trainers"] * r["batch"]))
        )
        f["model_type_log_throughput_estimate_same_hardware"] = (
            f["model_type_mean_log_samples_per_peak_tflop_same_hardware"] + log_total_peak
        )
        f["model_type_runs_any_hardware"] = len(model_any)
        f["model_type_mean_log_samples_per_peak_tflop_any_hardware"] = mean(model_any, log_per_peak)
        f["model_type_log_throughput_estimate_any_hardware"] = (
            f["model_type_mean_log_samples_per_peak_tflop_any_hardware"] + log_total_peak
        )
        f["model_family_runs_same_hardware"] = len(family_same)
        f["model_family_mean_log_samples_per_peak_tflop_same_hardware"] = mean(
            family_same, log_per_peak
        )
        scaled = f["job_last_throughput_scaled_by_peak"]
        levels = [
            f["job_config_mean_log_throughput_same_hardware"],
            f["job_mean_log_throughput_same_hardware"],
            f["model_type_log_throughput_estimate_same_hardware"],
            math.log(scaled) if not math.isnan(scaled) else NAN,
            f["model_type_log_throughput_estimate_any_hardware"],
        ]
        f["history_log_throughput_estimate"], f["history_estimate_source"] = NAN, 0
        for level, value in enumerate(levels, start=1):
            if not math.isnan(value):
                f["history_log_throughput_estimate"], f["history_estimate_source"] = value, level
                break
        out.append(f)
    return pd.DataFrame(out, columns=HISTORY_COLUMNS, index=query.index)


def assert_history_matches(X: pd.DataFrame, expected: pd.DataFrame) -> None:
    for name in HISTORY_COLUMNS:
        got, want = X[name], expected[name]
        if isinstance(got.dtype, pd.CategoricalDtype):

            def text(values):
                return ["-" if pd.isna(v) else str(v) for v in values]

            assert text(got) == text(want), name
        elif pd.api.types.is_integer_dtype(got.dtype):
            assert got.tolist() == want.astype("int64").tolist(), name
        else:
            # the latest run's time is kept as float nanoseconds (256 ns steps today): ~3e-12 days
            atol = 1e-11 if "days_since" in name else 1e-12
            np.testing.assert_allclose(
                got.to_numpy(float), want.to_numpy(float), rtol=1e-9, atol=atol, err_msg=name
            )


# ---------------------------------------------------------------------------
# the helpers themselves
# ---------------------------------------------------------------------------


def test_make_log_is_schema_valid():
    catalog = make_catalog()
    log = make_log(3, 120)
    assert validate_attempts(log, catalog) is log
    assert log["submit_time"].duplicated().any(), "the logs must contain ties in time"


# ---------------------------------------------------------------------------
# shape, columns, dtypes
# ---------------------------------------------------------------------------


def test_one_row_per_attempt_same_index_and_order():
    catalog = make_catalog()
    log = make_log(1, 150).sample(frac=1.0, random_state=0)
    # distinct times: ties in time are broken by history order, documented and tested apart
    log["submit_time"] = START + pd.to_timedelta(np.arange(150)[::-1], unit="min")
    log.index = [f"row{i}" for i in range(len(log))][::-1]
    X = build_features(log, catalog)
    assert X.index.equals(log.index)
    assert list(X.columns) == feature_names()
    assert 30 <= X.shape[1] <= 70
    # the same rows in another order give the same features per row
    X2 = build_features(log.iloc[::-1], catalog)
    pd.testing.assert_frame_equal(X2.loc[X.index], X)


def test_dtypes_and_names():
    log, catalog = make_log(2, 60), make_catalog()
    log_before, catalog_before = log.copy(), catalog.copy()
    X = build_features(log, catalog)
    # the inputs are left as they were
    pd.testing.assert_frame_equal(log, log_before)
    pd.testing.assert_frame_equal(catalog, catalog_before)
    categorical = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    assert categorical == [
        "model_type",
        "model_family",
        "precision",
        "parallelism",
        "hardware_type",
        "vendor",
        "job_last_hardware_type",
    ]
    others = X.drop(columns=categorical)
    assert all(pd.api.types.is_numeric_dtype(t) for t in others.dtypes)
    assert X["hardware_type"].cat.categories.tolist() == list(_CATALOG)
    assert len(set(feature_names())) == len(feature_names())


def test_history_without_completed_runs():
    catalog = make_catalog()
    log = make_log(9, 40)
    failed = log.assign(
        status=pd.Categorical(["failed"] * len(log), categories=["ok", "oom", "failed"]),
        throughput=np.nan,
    )
    for X in (build_features(failed, catalog), build_features(log, catalog, history=failed)):
        counts = [c for c in HISTORY_COLUMNS if "_runs_" in c]
        assert (X[counts] == 0).all().all()
        others = [c for c in HISTORY_COLUMNS if c not in counts and c != "history_estimate_source"]
        assert X[others].isna().all().all()
        assert (X["history_estimate_source"] == 0).all()


def test_empty_attempts_give_empty_frame():
    log = make_log(0, 30)
    X = build_features(log.iloc[:0], make_catalog(), history=log)
    assert len(X) == 0
    assert list(X.columns) == feature_names()


# ---------------------------------------------------------------------------
# hardware specs and derived quantities
# ---------------------------------------------------------------------------


def _one_job(**overrides) -> pd.DataFrame:
    row = {
        "attempt_id": [1],
        "job_id": ["j"],
        "submit_time": [START],
        "model_type": ["llm-00"],
        "model_family": ["llm"],
        "trainer_count": [16],
        "batch_size": [4],
        "precision": ["fp8"],
        "seq_len": pd.array([4096], dtype="Int64"),
        "parallelism": ["fsdp"],
        "hardware_type": ["A100"],
        "status": ["ok"],
        "throughput": [10.0],
        "device_hours": [1.0],
    }
    row.update({k: [v] for k, v in overrides.items()})
    row["seq_len"] = pd.array(row["seq_len"], dtype="Int64")
    return pd.DataFrame(row)


@pytest.mark.parametrize(
    ("hardware_type", "precision", "peak", "native"),
    [
        ("A100", "fp8", 312.0, 0),  # fp8 -> bf16
        ("H100", "fp8", 1979.0, 1),
        ("V100", "bf16", 125.0, 0),  # bf16 -> fp16
        ("V100", "tf32", 15.7, 0),  # tf32 -> fp32
        ("Gaudi2", "fp32", 432.0, 0),  # no fp32/tf32 -> bf16
        ("MI250X", "fp32", 47.9, 1),
    ],
)
def test_peak_at_precision_with_fallback(hardware_type, precision, peak, native):
    X = build_features(_one_job(hardware_type=hardware_type, precision=precision), make_catalog())
    assert X["peak_tflops"].iloc[0] == peak
    assert X["precision_native"].iloc[0] == native
    assert X["total_peak_tflops"].iloc[0] == pytest.approx(16 * peak)


@pytest.mark.parametrize(
    ("hardware_type", "trainers", "hosts", "crosses", "link"),
    [
        ("A100", 8, 1, 0, 300.0),
        ("A100", 9, 2, 1, 25.0),
        ("MI250X", 16, 4, 1, 25.0),
        ("MI250X", 1, 1, 0, 100.0),
    ],
)
def test_hosts_and_links(hardware_type, trainers, hosts, crosses, link):
    X = build_features(
        _one_job(hardware_type=hardware_type, trainer_count=trainers), make_catalog()
    )
    row = X.iloc[0]
    assert row["hosts_used"] == hosts
    assert row["crosses_hosts"] == crosses
    assert row["communication_bw_gbps"] == link
    assert row["global_batch_size"] == 4 * trainers


def test_specs_and_derived_values():
    catalog = make_catalog()
    X = build_features(_one_job(hardware_type="MI250X", trainer_count=8), catalog)
    row = X.iloc[0]
    assert row["memory_gb"] == 128.0
    assert row["memory_bw_gbps"] == 3277.0
    assert row["devices_per_host"] == 4
    assert row["vendor"] == "AMD"
    assert row["total_memory_bw_gbps"] == 8 * 3277.0
    assert row["total_memory_gb"] == 8 * 128.0
    assert row["batch_tokens_per_memory_gb"] == pytest.approx(4 * 4096 / 128.0)
    assert row["hardware_age_days"] == 900.0  # introduced 3 * 300 days before START
    assert row["seq_len"] == 4096.0
    no_seq = build_features(_one_job(seq_len=pd.NA), catalog).iloc[0]
    assert math.isnan(no_seq["seq_len"])
    assert no_seq["batch_tokens_per_memory_gb"] == pytest.approx(4 / 80.0)


# ---------------------------------------------------------------------------
# history as of submission
# ---------------------------------------------------------------------------


def _runs(times_hw_status_thr) -> pd.DataFrame:
    rows = [
        _one_job(
            attempt_id=i,
            submit_time=START + pd.Timedelta(hours=h),
            hardware_type=hw,
            status=status,
            throughput=thr,
        )
        for i, (h, hw, status, thr) in enumerate(times_hw_status_thr)
    ]
    return pd.concat(rows, ignore_index=True)


def test_history_of_a_job_by_hand():
    log = _runs(
        [
            (0, "A100", "ok", 100.0),
            (24, "A100", "failed", NAN),
            (48, "A100", "ok", 400.0),
            (48, "H100", "ok", 900.0),  # same time as the row above: neither sees the other
            (72, "H100", "ok", 1000.0),
        ]
    )
    # outcomes known at submission: the as-of join by hand (known later: test_features_leakage.py)
    X = build_features(log, make_catalog(), outcome_known="submit_time")
    assert X["job_runs_same_hardware"].tolist() == [0, 1, 1, 0, 1]
    assert X["job_runs_any_hardware"].tolist() == [0, 1, 1, 1, 3]
    np.testing.assert_allclose(
        X["job_last_throughput_same_hardware"], [NAN, 100.0, 100.0, NAN, 900.0]
    )
    np.testing.assert_allclose(
        X["job_mean_log_throughput_same_hardware"],
        [NAN, math.log(100), math.log(100), NAN, math.log(900)],
    )
    np.testing.assert_allclose(
        X["job_days_since_last_run_same_hardware"], [NAN, 1.0, 2.0, NAN, 1.0]
    )
    np.testing.assert_allclose(X["job_days_since_last_run_any_hardware"], [NAN, 1.0, 2.0, 2.0, 1.0])
    # at hour 72 the latest runs are the two at hour 48; the later history row wins the tie
    assert X["job_last_hardware_type"].astype(object).tolist()[3:] == ["A100", "H100"]
    assert X["job_last_throughput_any_hardware"].iloc[4] == 900.0
    # H100 row at 48h transfers the A100 measurement: fp8 on A100 runs at bf16 peak
    row = X.iloc[3]
    assert row["job_last_throughput_per_trainer_any_hardware"] == 100.0 / 16
    assert row["log_peak_tflops_ratio_to_last_hardware"] == pytest.approx(math.log(1979 / 312))
    assert row["log_memory_bw_ratio_to_last_hardware"] == pytest.approx(math.log(3350 / 2039))
    assert row["job_last_throughput_scaled_by_peak"] == pytest.approx(100.0 * 1979 / 312)
    # one configuration throughout: its runs are the job's runs on the hardware type
    assert X["job_config_runs_same_hardware"].tolist() == X["job_runs_same_hardware"].tolist()
    np.testing.assert_allclose(X["job_config_mean_log_throughput_same_hardware"],
                               X["job_mean_log_throughput_same_hardware"])
    # sources: 1 the configuration's runs here, 4 the job's run elsewhere scaled by peak
    assert X["history_estimate_source"].tolist() == [0, 1, 1, 4, 1]
    assert row["history_log_throughput_estimate"] == pytest.approx(math.log(100.0 * 1979 / 312))


def test_configuration_history_starts_again_when_the_configuration_changes():
    log = _runs([(0, "A100", "ok", 100.0), (24, "A100", "ok", 120.0), (48, "A100", "ok", 400.0),
                 (72, "A100", "ok", 420.0), (96, "A100", "ok", 130.0)])
    # the owner doubles the batch for the runs at 48h and 72h, then goes back
    log.loc[[2, 3], "batch_size"] = 8
    X = build_features(log, make_catalog(), outcome_known="submit_time")
    assert X["job_runs_same_hardware"].tolist() == [0, 1, 2, 3, 4]
    assert X["job_config_runs_same_hardware"].tolist() == [0, 1, 0, 1, 2]
    np.testing.assert_allclose(
        X["job_config_mean_log_throughput_same_hardware"],
        [NAN, math.log(100), NAN, math.log(400), (math.log(100) + math.log(120)) / 2],
    )
    # where the configuration is new here, the job's own runs on the type come next (source 2)
    assert X["history_estimate_source"].tolist() == [0, 1, 2, 1, 1]
    # the parallelism and the precision are part of the configuration too
    for column, value in (("parallelism", "tensor"), ("precision", "bf16"), ("seq_len", 2048)):
        changed = log.copy()
        changed.loc[4, column] = value
        runs = build_features(changed, make_catalog(), outcome_known="submit_time")
        assert runs["job_config_runs_same_hardware"].iloc[4] == 0, column


def test_model_type_history_transfers_to_a_new_job():
    log = _runs([(0, "A100", "ok", 312.0), (1, "H100", "ok", 989.0)])
    new_job = _one_job(job_id="other", submit_time=START + DAY, hardware_type="A100")
    new_job = new_job.drop(columns=["status", "throughput", "device_hours", "attempt_id"])
    row = build_features(new_job, make_catalog(), history=log).iloc[0]
    assert row["job_runs_any_hardware"] == 0
    assert row["model_type_runs_same_hardware"] == 1
    assert row["model_type_runs_any_hardware"] == 2
    assert row["model_family_runs_same_hardware"] == 1
    # 312 samples/s on 16 x 312 TFLOP/s: log(1/16) samples per peak TFLOP per device
    assert row["model_type_mean_log_samples_per_peak_tflop_same_hardware"] == pytest.approx(
        math.log(1 / 16)
    )
    assert row["model_type_mean_log_steps_per_second_same_hardware"] == pytest.approx(
        math.log(312.0 / 64)
    )
    assert row["model_type_log_throughput_estimate_same_hardware"] == pytest.approx(math.log(312))
    assert row["history_estimate_source"] == 3


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**31),
    n_attempts=st.integers(1, 50),
    n_times=st.integers(1, 12),
    n_jobs=st.integers(1, 8),
    reused_ids=st.booleans(),
)
def test_as_of_matches_reference_loop(seed, n_attempts, n_times, n_jobs, reused_ids):
    catalog = make_catalog(4)
    log = make_log(seed, n_attempts, n_jobs=n_jobs, n_times=n_times, n_types=4,
                   reused_ids=reused_ids)
    X = build_features(log, catalog)
    assert_history_matches(X, reference_history(log, log, catalog))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**31),
    n_attempts=st.integers(0, 40),
    n_times=st.integers(1, 8),
    query_minutes=st.lists(st.integers(-40, 400), min_size=1, max_size=4),
    reused_ids=st.booleans(),
)
def test_scoring_as_of_matches_reference_loop(seed, n_attempts, n_times, query_minutes, reused_ids):
    catalog = make_catalog(3)
    log = make_log(seed, max(n_attempts, 1), n_jobs=4, n_times=n_times, n_types=3,
                   reused_ids=reused_ids)
    log = log.iloc[:n_attempts]
    jobs = make_log(seed + 1, len(query_minutes), n_jobs=4, n_times=1, n_types=3,
                    reused_ids=reused_ids)
    jobs["submit_time"] = START + pd.to_timedelta(query_minutes, unit="min")
    rows = candidate_rows(jobs[["job_id", "submit_time", *LAUNCH_COLUMNS]], catalog)
    X = build_features(rows, catalog, history=log)
    assert_history_matches(X, reference_history(rows, log, catalog))


def test_training_and_scoring_paths_agree():
    """A row's features are the same built from the log or scored as a new submission."""
    catalog = make_catalog()
    log = make_log(7, 150)
    X_train = build_features(log, catalog)
    jobs = log[["job_id", "submit_time", *LAUNCH_COLUMNS]]
    rows = candidate_rows(jobs, catalog)
    X_score = build_features(rows, catalog, history=log)
    picked = np.arange(len(log)) * len(catalog) + log["hardware_type"].cat.codes.to_numpy()
    got = X_score.iloc[picked].reset_index(drop=True)
    want = X_train.reset_index(drop=True)
    for name in feature_names():
        if isinstance(want[name].dtype, pd.CategoricalDtype):
            assert got[name].astype(object).tolist() == want[name].astype(object).tolist()
        else:
            np.testing.assert_array_equal(got[name].to_numpy(), want[name].to_numpy(), name)


def test_query_rows_need_no_outcome_columns():
    catalog = make_catalog()
    log = make_log(4, 80)
    query = log.drop(columns=["status", "throughput", "device_hours", "attempt_id"])
    X = build_features(query, catalog, history=log)
    pd.testing.assert_frame_equal(X, build_features(log, catalog), check_categorical=False)


def test_job_ids_of_other_dtypes():
    catalog = make_catalog()
    log = make_log(5, 80)
    as_int = log.assign(job_id=log["job_id"].str.slice(4).astype("int64"))
    as_category = log.assign(job_id=log["job_id"].astype("category"))
    X = build_features(log, catalog)
    pd.testing.assert_frame_equal(build_features(as_int, catalog), X)
    pd.testing.assert_frame_equal(build_features(as_category, catalog), X)
    query = as_category.iloc[40:]
    pd.testing.assert_frame_equal(build_features(query, catalog, history=as_category), X.iloc[40:])


# ---------------------------------------------------------------------------
# candidate rows
# ---------------------------------------------------------------------------


def test_candidate_rows_cross_product():
    log = make_log(6, 10)
    log["_hidden"] = 1.0
    log["expected_throughput"] = 2.0
    jobs = log.drop(columns=["submit_time"]).iloc[:3]
    rows = candidate_rows(jobs, ["H100", "A100"], at="2024-04-01 12:00")
    assert len(rows) == 6
    assert rows["job_id"].tolist() == np.repeat(jobs["job_id"].to_numpy(), 2).tolist()
    assert rows["hardware_type"].astype(str).tolist() == ["H100", "A100"] * 3
    assert (rows["submit_time"] == pd.Timestamp("2024-04-01 12:00")).all()
    for name in ["status", "throughput", "device_hours", "expected_throughput", "_hidden"]:
        assert name not in rows.columns
    assert rows["attempt_id"].tolist() == np.repeat(jobs["attempt_id"].to_numpy(), 2).tolist()
    assert rows.index.equals(pd.RangeIndex(6))
    for name in LAUNCH_COLUMNS:
        assert (
            rows[name].astype(object).tolist() == np.repeat(jobs[name].astype(object), 2).tolist()
        )


def test_candidate_rows_from_catalog_and_per_job_times():
    catalog = make_catalog(3)
    log = make_log(6, 10, n_types=3)
    rows = candidate_rows(log[["job_id", "submit_time", *LAUNCH_COLUMNS]], catalog)
    assert len(rows) == 30
    assert rows["submit_time"].tolist() == np.repeat(log["submit_time"].to_numpy(), 3).tolist()
    X = build_features(rows, catalog, history=log)
    assert len(X) == 30


def test_candidate_rows_times_per_job():
    log = make_log(6, 4)
    jobs = log[["job_id", "submit_time", *LAUNCH_COLUMNS]].set_index(pd.Index([9, 7, 5, 3]))
    times = START + pd.to_timedelta([1, 2, 3, 4], unit="D")
    expected = np.repeat(times.to_numpy(), 2).tolist()
    # at= replaces the column; a Series or a list is read in the order of the jobs
    for at in (times, pd.Series(times, index=[0, 1, 2, 3]), list(times)):
        rows = candidate_rows(jobs, ["A100", "H100"], at=at)
        assert rows["submit_time"].tolist() == expected
    for at in (pd.Timestamp("2024-05-01"), "2024-05-01", datetime.datetime(2024, 5, 1)):
        rows = candidate_rows(jobs, ["A100", "H100"], at=at)
        assert (rows["submit_time"] == pd.Timestamp("2024-05-01")).all()
    rows = candidate_rows(jobs, ["A100", "H100"])
    assert rows["submit_time"].tolist() == np.repeat(jobs["submit_time"].to_numpy(), 2).tolist()


def test_candidate_rows_errors():
    log = make_log(6, 10)
    jobs = log[["job_id", *LAUNCH_COLUMNS]]
    with pytest.raises(SchemaError, match="batch_size"):
        candidate_rows(jobs.drop(columns=["batch_size"]), ["A100"], at=START)
    with pytest.raises(ValueError, match="empty"):
        candidate_rows(jobs, [], at=START)
    with pytest.raises(ValueError, match="repeats"):
        candidate_rows(jobs, ["A100", "A100"], at=START)
    with pytest.raises(ValueError, match="submission time"):
        candidate_rows(jobs, ["A100"])
    with pytest.raises(ValueError, match="one per job"):
        candidate_rows(jobs, ["A100"], at=[START, START])
    with pytest.raises(ValueError, match="null"):
        candidate_rows(jobs.assign(submit_time=pd.NaT), ["A100"])
    with pytest.raises(TypeError):
        candidate_rows(jobs.to_numpy(), ["A100"], at=START)
    assert candidate_rows(jobs, "A100", at=START)["hardware_type"].astype(
        str
    ).unique().tolist() == ["A100"]


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def test_missing_columns_are_named():
    catalog = make_catalog()
    log = make_log(0, 20)
    with pytest.raises(SchemaError, match=r"missing column\(s\): \['batch_size', 'parallelism'\]"):
        build_features(log.drop(columns=["batch_size", "parallelism"]), catalog)
    with pytest.raises(SchemaError, match=r"history log.*\n.*\['status'\]"):
        build_features(log, catalog, history=log.drop(columns=["status"]))


def test_unknown_hardware_is_named():
    catalog = make_catalog(3)  # V100, A100, H100
    log = make_log(0, 40, n_types=5)
    with pytest.raises(SchemaError, match=r"absent from the catalog: \['Gaudi2', 'MI250X'\]"):
        build_features(log, catalog)
    query = log[log["hardware_type"].isin(["A100"])]
    with pytest.raises(SchemaError, match="history log"):
        build_features(query, catalog, history=log)


def test_a_history_with_an_attempt_given_twice_is_refused():
    catalog = make_catalog()
    log = make_log(0, 40)
    twice = pd.concat([log, log.iloc[[3, 7]]], ignore_index=True)
    ids = log["attempt_id"].iloc[[3, 7]].tolist()
    # counted twice, its run would weigh double in every history feature
    with pytest.raises(SchemaError, match=re.escape(f"duplicate attempt_id {ids} in 4 row(s)")):
        build_features(log, catalog, history=twice)
    # ids are optional; missing ones are not duplicates of each other
    X = build_features(log, catalog, history=log.drop(columns="attempt_id"))
    pd.testing.assert_frame_equal(X, build_features(log, catalog, history=log))
    gaps = log.astype({"attempt_id": float}).assign(attempt_id=np.nan)
    pd.testing.assert_frame_equal(build_features(log, catalog, history=gaps), X)


@pytest.mark.parametrize("spelling", [str.upper, lambda s: s.title() + " "])
def test_a_history_whose_statuses_are_spelled_otherwise_is_refused_not_ignored(spelling):
    """Read as "not ok", an "OK" would leave every job without history, and no word said."""
    from leapml import HistoryIndex
    from leapml.schema import coerce_attempts, validate_attempts

    catalog = make_catalog()
    log = make_log(0, 40)
    spelled = log.assign(status=log["status"].astype(str).map(spelling))
    message = r"status not in \['ok', 'oom', 'failed'\] in 40 row\(s\)"
    for refuse in (lambda: build_features(log, catalog, history=spelled),
                   lambda: build_features(spelled, catalog),
                   lambda: HistoryIndex(spelled, catalog),
                   lambda: validate_attempts(spelled, catalog)):
        with pytest.raises(SchemaError, match=message):
            refuse()
    # the coercer reads the spelling, and the history counts again
    pd.testing.assert_frame_equal(build_features(log, catalog, history=coerce_attempts(spelled)),
                                  build_features(log, catalog))


def test_the_validator_and_the_features_name_shared_rules_alike():
    """validate_attempts and build_features apply one set of row rules: same problems, same words."""
    catalog = make_catalog(3)
    log = make_log(0, 60, n_types=3)
    ok = log.index[log["status"] == "ok"]
    bad = log.astype({"precision": object, "hardware_type": object, "model_type": object})
    bad.loc[ok[0], "precision"] = " "
    bad.loc[ok[1], "batch_size"] = 0
    bad.loc[ok[2], "throughput"] = -1.0
    bad.loc[ok[3], "hardware_type"] = "TPU-v9"
    bad.loc[ok[4], "trainer_count"] = -8
    bad.loc[ok[5], "model_type"] = None
    with pytest.raises(SchemaError) as validated:
        validate_attempts(bad, catalog)
    with pytest.raises(SchemaError) as read:
        build_features(log, catalog, history=bad)
    assert sorted(read.value.problems) == sorted(validated.value.problems)
    starts = ["precision is blank in", "batch_size must be finite and > 0",
              "throughput must be finite and > 0 on ok rows",
              "hardware_type absent from the catalog: ['TPU-v9']",
              "trainer_count must be finite and > 0", "column 'model_type' is null"]
    assert len(read.value.problems) == len(starts)
    for start, label in zip(starts, ok[:6], strict=True):
        (line,) = [p for p in read.value.problems if p.startswith(start)]
        assert line.endswith(f"1 row(s) (index [{label}])")


def test_invalid_values_are_reported():
    catalog = make_catalog()
    log = make_log(0, 20)
    with pytest.raises(SchemaError, match="timestamp"):
        build_features(log.assign(submit_time=log["submit_time"].astype(str)), catalog)
    with pytest.raises(SchemaError, match="precision is blank"):
        build_features(log.assign(precision="  "), catalog)
    with pytest.raises(SchemaError, match="trainer_count must be finite and > 0"):
        build_features(log.assign(trainer_count=0), catalog)
    with pytest.raises(SchemaError, match="throughput must be finite and > 0 on ok rows"):
        build_features(log.assign(throughput=-1.0), catalog)
    with pytest.raises(SchemaError, match="hardware catalog"):
        build_features(log, catalog.drop(columns=["memory_gb"]))
    with pytest.raises(TypeError, match="DataFrame"):
        build_features(log.to_dict(), catalog)
    aware = log.assign(submit_time=log["submit_time"].dt.tz_localize("UTC"))
    with pytest.raises(SchemaError, match="time-zone"):
        build_features(aware, catalog, history=log)
    # failed rows are never read, so their throughput is not checked
    failed = log["status"] != "ok"
    relaxed = log.assign(throughput=np.where(failed, -5.0, log["throughput"]))
    pd.testing.assert_frame_equal(build_features(relaxed, catalog), build_features(log, catalog))


def test_time_zone_aware_logs():
    catalog = make_catalog()
    log = make_log(8, 60)
    aware = log.assign(submit_time=log["submit_time"].dt.tz_localize("Europe/Paris"))
    X = build_features(aware, catalog)
    history_columns = [c for c in X.columns if c != "hardware_age_days"]
    pd.testing.assert_frame_equal(X[history_columns], build_features(log, catalog)[history_columns])


# ---------------------------------------------------------------------------
# integration with the simulator, once it exists
# ---------------------------------------------------------------------------


def test_on_the_simulated_tiny_fleet():
    fleet_module = pytest.importorskip("leapml.fleet")
    if not hasattr(fleet_module, "simulate"):
        pytest.skip("the fleet simulator is not available")
    fleet = fleet_module.simulate(preset="tiny", seed=0)
    X = build_features(fleet.attempts, fleet.hardware)
    assert X.index.equals(fleet.attempts.index)
    assert list(X.columns) == feature_names()
    ok = (fleet.attempts["status"] == "ok").to_numpy()
    # most attempts of a recurring fleet have history of their job
    assert (X["job_runs_any_hardware"] > 0).mean() > 0.3
    # the estimate from history tracks the measurement on rows that have one
    known = ok & X["history_log_throughput_estimate"].notna().to_numpy()
    measured = np.log(fleet.attempts["throughput"].to_numpy(float)[known])
    corr = np.corrcoef(X["history_log_throughput_estimate"].to_numpy()[known], measured)[0, 1]
    assert corr > 0.8


# ---------------------------------------------------------------------------
# model-size features, and the few-row paths of scoring
# ---------------------------------------------------------------------------

_SIZE_FEATURES = [
    "param_count", "flops_per_sample", "embedding_gb", "log_compute_seconds_per_step",
    "log_weight_seconds_per_step", "log_gradient_seconds_per_step", "log_roofline_throughput",
    "embedding_gb_per_memory_gb", "model_state_gb_per_device", "model_state_gb_per_memory_gb",
]


def test_model_size_features_by_hand():
    # 16 H100 trainers (two hosts of 8: the inter-node link), bf16, fsdp
    job = _one_job(hardware_type="H100", precision="bf16", param_count=1e9,
                   flops_per_sample=6e12, embedding_gb=8.0)
    X = build_features(job, make_catalog())
    row = X.iloc[0]
    compute = 6e12 * 4 / (989.0 * 1e12)
    weights = 1e9 * 2.0 / (3350.0 * 1e9)
    gradients = 1e9 * 2.0 * (2 * 15 / 16) / (50.0 * 1e9)
    state = 1e9 * 16.0 / 16 / 1e9 + 8.0 / 16
    assert row["log_compute_seconds_per_step"] == pytest.approx(math.log(compute))
    assert row["log_weight_seconds_per_step"] == pytest.approx(math.log(weights))
    assert row["log_gradient_seconds_per_step"] == pytest.approx(math.log(gradients))
    assert row["log_roofline_throughput"] == pytest.approx(
        math.log(16 * 4 / (compute + weights + gradients)))
    assert row["model_state_gb_per_device"] == pytest.approx(state)
    assert row["model_state_gb_per_memory_gb"] == pytest.approx(state / 80.0)
    assert row["embedding_gb_per_memory_gb"] == pytest.approx(8.0 / (80.0 * 16))


def test_model_size_features_are_unknown_without_sizes():
    log = make_log(seed=3, n_attempts=120)
    sized = log.assign(param_count=2e9, flops_per_sample=1.2e13, embedding_gb=0.0)
    with_sizes = build_features(sized, make_catalog())
    for unsized in (log, sized.assign(param_count=NAN, flops_per_sample=NAN, embedding_gb=NAN)):
        X = build_features(unsized, make_catalog())
        assert list(X.columns) == list(with_sizes.columns) == feature_names()
        assert X[_SIZE_FEATURES].isna().all().all()
        assert with_sizes["log_roofline_throughput"].notna().any()
        others = [c for c in X.columns if c not in _SIZE_FEATURES]
        pd.testing.assert_frame_equal(X[others], with_sizes[others])


def test_configuration_codes_of_a_few_rows_equal_those_of_many(monkeypatch):
    from leapml.features import inputs
    from leapml.schema.rules import precision_codes

    rng = np.random.default_rng(7)
    n = 60
    precision = pd.Series(rng.choice(["bf16", "fp32", "int8-custom", None], n), dtype=object)
    codes, dtype = precision_codes(precision)
    args = (rng.choice([1.0, 8.0, 64.0], n), rng.choice([1.0, 32.0, NAN], n),
            rng.choice([2048.0, NAN], n), codes, dtype,
            pd.Categorical(rng.choice(["ddp", "fsdp", None], n)),
            pd.Categorical(rng.choice(["bert", "gpt"], n)))
    few = [inputs._config_codes(*(a[i:i + 2] for a in args[:4]), dtype, args[5][i:i + 2],
                                args[6][i:i + 2])
           for i in range(0, n, 2)]
    monkeypatch.setattr(inputs, "FEW_ROWS", -1)  # every call takes the array path
    many = inputs._config_codes(*args)
    np.testing.assert_array_equal(np.concatenate(few), many)
    # equal configurations (the model type among them) share a code, others do not
    key = [tuple(map(str, row)) for row in zip(*args[:4], np.asarray(args[5]), np.asarray(args[6]),
                                               strict=True)]
    assert len(set(key)) == len(set(many.tolist()))
    assert (many >= 0).all()
