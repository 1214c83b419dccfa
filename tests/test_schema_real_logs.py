"""Logs shaped like a real fleet's: open precisions, gaps, units, optional catalog columns.

The schema and the features must take them without hand-made fills, name
every problem in one pass, and leave a log of the old shape described as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_features import make_catalog, make_log

from leapml.features import HistoryIndex, build_features, candidate_rows
from leapml.schema import (
    PRECISION_ALIASES,
    PRECISIONS,
    SchemaError,
    coerce_attempts,
    coerce_hardware,
    normalize_precision,
    validate_attempts,
    validate_hardware,
)

# -- precision ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("AMP", "fp16"),
        ("amp_fp16", "fp16"),
        ("Mixed", "fp16"),
        ("amp-bf16", "bf16"),
        (" BFloat16 ", "bf16"),
        ("float32", "fp32"),
        ("TF32", "tf32"),
        ("FP8 E4M3", "fp8"),
        ("int8", "int8"),
        ("FP4", "fp4"),
        ("Unknown", "unknown"),
        ("", None),
        (None, None),
        (np.nan, None),
    ],
)
def test_precisions_normalise_to_a_family_or_stay_their_own(raw, normalised):
    assert normalize_precision(raw) == normalised


def test_every_alias_names_its_family_and_families_map_to_themselves():
    for family, aliases in PRECISION_ALIASES.items():
        assert family in PRECISIONS and family in aliases
        assert {normalize_precision(alias.upper()) for alias in aliases} == {family}


def test_unknown_precisions_validate_and_coerce_to_their_normalised_text():
    log = make_log(0, 30).assign(precision=["amp", "INT8", "fp4", "unknown", "bf16"] * 6)
    assert validate_attempts(log, make_catalog()) is log
    coerced = coerce_attempts(log)
    assert coerced["precision"].tolist() == ["fp16", "int8", "fp4", "unknown", "bf16"] * 6


def test_unknown_precision_is_its_own_category_reading_the_16_bit_peak():
    catalog = make_catalog()
    log = make_log(1, 60)
    log["precision"] = np.where(
        np.arange(60) % 3 == 0, "int8", np.where(np.arange(60) % 3 == 1, "AMP", "fp32")
    )
    X = build_features(log, catalog)
    assert X["precision"].cat.categories.tolist() == [*PRECISIONS, "int8"]
    assert X["precision"].astype(str).tolist()[:3] == ["int8", "fp16", "fp32"]
    fp16 = catalog.set_index("hardware_type")["peak_fp16_tflops"]
    bf16 = catalog.set_index("hardware_type")["peak_bf16_tflops"]
    expected = fp16.fillna(bf16)[log["hardware_type"].astype(str)].to_numpy()
    other = (log["precision"] == "int8").to_numpy()
    np.testing.assert_array_equal(X["peak_tflops"].to_numpy()[other], expected[other])
    assert (X["precision_native"].to_numpy()[other] == 0).all()
    # amp is fp16: the same peak and nativeness as a log that says fp16
    as_fp16 = build_features(log.assign(precision=log["precision"].replace("AMP", "fp16")), catalog)
    pd.testing.assert_series_equal(X["peak_tflops"], as_fp16["peak_tflops"])


# -- one pass ----------------------------------------------------------------------


def test_a_float_integer_column_with_gaps_gets_dtype_and_null_problems_in_one_pass():
    log = make_log(2, 20)
    log["trainer_count"] = log["trainer_count"].astype(float)
    log.loc[[3, 7], "trainer_count"] = np.nan
    with pytest.raises(SchemaError) as caught:
        validate_attempts(log)
    problems = caught.value.problems
    assert any(
        "'trainer_count' has dtype float64, expected int" in p and "Int64" in p for p in problems
    )
    assert any("'trainer_count' is null in 2 row(s) (index [3, 7])" in p for p in problems)


def test_batch_size_may_be_null_once_coerced():
    log = make_log(3, 20)
    log["batch_size"] = log["batch_size"].astype(float)
    log.loc[[2, 5], "batch_size"] = np.nan
    with pytest.raises(SchemaError, match="'batch_size' has dtype float64, expected int"):
        validate_attempts(log)
    coerced = coerce_attempts(log)
    assert str(coerced["batch_size"].dtype) == "Int64"
    validate_attempts(coerced)



@pytest.mark.parametrize("column", ["trainer_count", "batch_size"])
def test_a_fractional_count_is_refused_by_the_log_validator_and_at_scoring(column):
    # counts come as floats from some tables: 8.0 is fine, 8.5 trainers is not a launch
    log = make_log(4, 40)
    log[column] = log[column].astype(float)
    validate_attempts(coerce_attempts(log))  # whole floats pass once coerced
    log.loc[[5], column] = log.loc[5, column] + 0.5
    with pytest.raises(SchemaError) as caught:
        validate_attempts(log)
    assert any(f"{column} must be a whole number; it is not in 1 row(s) (index [5])" in p
               for p in caught.value.problems)
    catalog = make_catalog()
    index = HistoryIndex(make_log(4, 40), catalog)
    jobs = log.loc[[4, 5]]
    with pytest.raises(SchemaError, match=f"{column} must be a whole number; it is not in 1 row"):
        index.candidate_features(jobs, catalog["hardware_type"].tolist(), at=index.end)
    index.candidate_features(log.loc[[4]], catalog["hardware_type"].tolist(), at=index.end)


# -- optional columns --------------------------------------------------------------


def test_peak_memory_is_positive_and_only_on_completed_runs():
    log = make_log(4, 12)
    ok = (log["status"] == "ok").to_numpy()
    assert ok.any() and not ok.all()
    validate_attempts(log.assign(peak_memory_gb=np.where(ok, 12.5, np.nan)))
    with pytest.raises(SchemaError) as caught:
        validate_attempts(log.assign(peak_memory_gb=np.where(ok, -1.0, 3.0)))
    problems = " ".join(caught.value.problems)
    assert "peak_memory_gb must be finite and > 0" in problems
    assert "peak_memory_gb must be null on rows not ok" in problems
    with pytest.raises(SchemaError, match="peak_memory_gb"):
        validate_attempts(log.assign(peak_memory_gb="12 GB"))


def test_parallelism_and_unit_columns_are_optional_and_checked_when_present():
    log = make_log(4, 12)
    validate_attempts(log)
    extra = log.assign(
        throughput_unit="tokens/s",
        nodes=pd.array([1] * 12, dtype="Int64"),
        tensor_parallel_degree=pd.array([2] * 11 + [None], dtype="Int64"),
        pipeline_parallel_degree=0,
        data_parallel_degree=1.5,
    )
    with pytest.raises(SchemaError) as caught:
        validate_attempts(extra)
    text = "\n".join(caught.value.problems)
    assert "pipeline_parallel_degree must be finite and > 0; it is not in 12 row(s)" in text
    assert "'data_parallel_degree' has dtype float64, expected int" in text
    assert "tensor_parallel" not in text and "nodes" not in text and "throughput_unit" not in text


def test_catalog_without_topology_memory_or_cost_validates_and_reads_unknown():
    catalog = make_catalog().drop(
        columns=[
            "intra_node_bw_gbps",
            "inter_node_bw_gbps",
            "devices_per_host",
            "cost_per_device_hour",
        ]
    )
    catalog.loc[1, "memory_gb"] = np.nan
    assert validate_hardware(catalog) is catalog
    log = make_log(5, 40)
    X = build_features(log, catalog)
    for name in (
        "intra_node_bw_gbps",
        "devices_per_host",
        "hosts_used",
        "crosses_hosts",
        "communication_bw_gbps",
    ):
        assert X[name].isna().all(), name
    a100 = (log["hardware_type"] == "A100").to_numpy()
    assert X["memory_gb"][a100].isna().all() and X["memory_gb"][~a100].notna().all()
    # a catalog that knows them keeps integer columns, as before
    full = build_features(log, make_catalog())
    assert full["devices_per_host"].dtype == np.int64 and full["hosts_used"].dtype == np.int64
    pd.testing.assert_frame_equal(
        X.drop(
            columns=list(_TOPOLOGY) + ["memory_gb", "total_memory_gb", "batch_tokens_per_memory_gb"]
        ),
        full.drop(
            columns=list(_TOPOLOGY) + ["memory_gb", "total_memory_gb", "batch_tokens_per_memory_gb"]
        ),
    )


_TOPOLOGY = (
    "intra_node_bw_gbps",
    "inter_node_bw_gbps",
    "devices_per_host",
    "hosts_used",
    "crosses_hosts",
    "communication_bw_gbps",
)


def test_coerce_hardware_turns_a_gappy_devices_per_host_into_integers():
    catalog = make_catalog().astype({"devices_per_host": float})
    catalog.loc[0, "devices_per_host"] = np.nan
    assert str(coerce_hardware(catalog)["devices_per_host"].dtype) == "Int64"


# -- history: units and unknown batch sizes ----------------------------------------


def _two_jobs(units, batch=(8, 8)):
    """Two jobs of one model type on one type, the second submitted after the first."""
    return pd.DataFrame(
        {
            "attempt_id": [1, 2],
            "job_id": ["a", "b"],
            "submit_time": pd.to_datetime(["2026-01-01", "2026-01-02"]),
            "model_type": "m",
            "model_family": "f",
            "trainer_count": 2,
            "batch_size": pd.array(list(batch), dtype="Int64"),
            "precision": "bf16",
            "seq_len": pd.array([None, None], dtype="Int64"),
            "parallelism": "data",
            "hardware_type": "A100",
            "status": "ok",
            "throughput": [100.0, 300.0],
            "device_hours": 1.0,
            "throughput_unit": list(units),
        }
    )


def test_history_never_averages_across_throughput_units():
    catalog = make_catalog()
    same = build_features(_two_jobs(["images/s", "images/s"]), catalog)
    mixed = build_features(_two_jobs(["images/s", "tokens/s"]), catalog)
    assert same["model_type_runs_same_hardware"].tolist() == [0, 1]
    assert mixed["model_type_runs_same_hardware"].tolist() == [0, 0]
    assert mixed["model_family_runs_same_hardware"].tolist() == [0, 0]
    # samples/s, a null unit and no column at all are one unit
    default = build_features(_two_jobs(["samples/s", None]), catalog)
    plain = build_features(_two_jobs(["x", "x"]).drop(columns="throughput_unit"), catalog)
    pd.testing.assert_frame_equal(default, plain)


def test_mean_steps_per_second_skips_rows_without_a_batch_size():
    catalog = make_catalog()
    log = pd.concat(
        [
            _two_jobs(["s", "s"], batch=(8, None)),
            _two_jobs(["s", "s"])
            .iloc[[0]]
            .assign(attempt_id=3, job_id="c", submit_time=pd.Timestamp("2026-01-03")),
        ],
        ignore_index=True,
    )
    X = build_features(log, catalog)
    assert np.isnan(X["batch_size"].iloc[1]) and X["batch_size"].iloc[0] == 8
    steps = X["model_type_mean_log_steps_per_second_same_hardware"].tolist()
    # row 2 sees rows 0 and 1; only row 0 has a batch size: log(100 / (2 * 8))
    assert np.isnan(steps[0]) and steps[1] == pytest.approx(np.log(100 / 16))
    assert steps[2] == pytest.approx(np.log(100 / 16))
    assert X["model_type_runs_same_hardware"].tolist() == [0, 1, 2]


def test_history_index_matches_build_features_on_a_real_shaped_log():
    catalog = make_catalog().drop(columns=["devices_per_host", "cost_per_device_hour"])
    log = make_log(6, 300, n_times=80)
    rng = np.random.default_rng(0)
    log["precision"] = rng.choice(["amp", "fp32", "int8", "unknown", "bf16"], len(log))
    log["batch_size"] = pd.array(
        np.where(rng.random(len(log)) < 0.2, None, log["batch_size"]), dtype="Int64"
    )
    log["throughput_unit"] = rng.choice(["samples/s", "tokens/s", None], len(log))
    cut = log["submit_time"].sort_values().iloc[200]
    past = log[log["submit_time"] < cut]
    index = HistoryIndex(past.iloc[:150], catalog).update(past.iloc[150:])
    rows = log[log["submit_time"] >= cut]
    pd.testing.assert_frame_equal(index.features(rows), build_features(rows, catalog, history=past))
    jobs = rows.drop_duplicates("job_id").head(3)
    candidates = candidate_rows(jobs, catalog, at=log["submit_time"].max() + pd.Timedelta(hours=1))
    pd.testing.assert_frame_equal(
        index.features(candidates), build_features(candidates, catalog, history=past)
    )


def test_coerce_keeps_a_normalised_precision_column_as_it_is():
    log = make_log(7, 20)
    assert coerce_attempts(log)["precision"].dtype == log["precision"].dtype


# -- text as a CSV gives it: precisions, statuses, names, numbers, times -------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [("FP-16", "fp16"), ("BF-16", "bf16"), ("FP 32", "fp32"), ("fp_16", "fp16"), ("TF 32", "tf32"),
     ("fp 8 e4m3", "fp8"), ("Float 16", "fp16"), ("Mixed Precision", "fp16"),  # as "mixed" is
     ("AMP (FP16)", "fp16"), ("BF16 AMP", "bf16"), ("FP32 (TF32)", "fp32_(tf32)"),
     ("int_8", "int_8")],
)
def test_a_family_split_before_its_width_is_the_family(raw, normalised):
    assert normalize_precision(raw) == normalised


def _as_csv_text(log: pd.DataFrame) -> pd.DataFrame:
    """The log as a CSV reader gives it: times as text, categories as plain strings."""
    return log.astype({c: object for c in log.columns if isinstance(log[c].dtype, pd.CategoricalDtype)}).assign(
        submit_time=log["submit_time"].dt.strftime("%Y-%m-%d %H:%M:%S"))


def test_status_case_and_spaces_around_hardware_names_are_read_as_the_schema_spells_them():
    catalog = make_catalog()
    log = _as_csv_text(make_log(8, 20))
    log["status"] = log["status"].map({"ok": "OK", "oom": " Oom", "failed": "FAILED"})
    log["hardware_type"] = log["hardware_type"] + " "
    coerced = validate_attempts(coerce_attempts(log), coerce_hardware(catalog.assign(
        hardware_type=" " + catalog["hardware_type"])))
    assert set(coerced["status"].astype(str)) <= {"ok", "oom", "failed"}
    assert not coerced["hardware_type"].astype(str).str.contains(" ").any()
    with pytest.raises(SchemaError, match=r"status not in \['ok', 'oom', 'failed'\] in 1 row.*'done'"):
        validate_attempts(coerce_attempts(log.assign(status=["done"] + ["ok"] * 19)))


def test_numbers_grouped_in_thousands_are_read_and_other_text_is_named():
    log = _as_csv_text(make_log(9, 20)).assign(status="ok")
    log["throughput"] = [f"{1000 + i:,.1f}" for i in range(20)]
    log["batch_size"] = ["2,048"] * 20
    coerced = validate_attempts(coerce_attempts(log))
    assert coerced["throughput"].iloc[5] == 1005.0 and (coerced["batch_size"] == 2048).all()
    log["throughput"] = ["12 samples/s"] + ["1,5"] * 19
    with pytest.raises(SchemaError, match=r"'throughput' .*not a number in 20 row\(s\).*'12 samples/s'"):
        validate_attempts(coerce_attempts(log))


@pytest.mark.parametrize(
    ("times", "problem"),
    [
        ([1767225600, 1767225660], "holds numbers, not dates"),  # epoch seconds
        ([1767225600000.0, np.nan], "holds numbers, not dates"),  # epoch milliseconds
        (["1767225600", "2026-01-01"], "holds numbers, not dates"),
        (["01/02/2026 10:00", "03/04/2026 11:00"], "read both as day/month and as month/day"),
        (["13/01/2026", "01/13/2026"], "mixes day/month and month/day"),
        (["2026-01-01 10:00", "2026-01-01 11:00+01:00"], "mixes times with a UTC offset"),
        (["2026-01-01 10:00", "01/02/2026 11:00"], "mixes formats"),
        (["2026-01-01", "2026-02-30"], r"not a date in 1 row\(s\) \(index \[1\]\), such as '2026-02-30'"),
        # a date, but beyond the range of a column of nanosecond times
        (["2026-01-01 00:00:00.000000001", "3000-01-01"],
         r"outside 1677-09-21 .. 2262-04-11, the range of nanosecond times, in 1 row\(s\) \(index \[1\]\), "
         r"such as '3000-01-01'"),
    ],
)
def test_time_columns_that_would_need_a_guess_are_named(times, problem):
    log = make_log(10, 2).assign(submit_time=times, end_time=pd.NaT)
    coerced = coerce_attempts(log)
    assert not pd.api.types.is_datetime64_any_dtype(coerced["submit_time"].dtype)
    with pytest.raises(SchemaError, match=rf"column 'submit_time' has dtype .*{problem}"):
        validate_attempts(coerced)


@pytest.mark.parametrize(
    ("times", "read"),
    [
        (["13/01/2026 10:00", "01/02/2026"], ["2026-01-13 10:00", "2026-02-01"]),  # day first
        (["01/13/2026", "02/01/2026"], ["2026-01-13", "2026-02-01"]),  # month first
        (["05/05/2026", "06/06/2026"], ["2026-05-05", "2026-06-06"]),  # either way the same
        (["2026-01-01 00:00:00.250", "2026-01-01 00:00:01"], ["2026-01-01 00:00:00.250", "2026-01-01 00:00:01"]),
        (["2026-01-01T10:00", "2026-01-01 11:30:00"], ["2026-01-01 10:00", "2026-01-01 11:30"]),
    ],
)
def test_times_with_one_sure_reading_are_read(times, read):
    coerced = coerce_attempts(make_log(11, 2).assign(submit_time=times, end_time=pd.NaT))
    assert coerced["submit_time"].tolist() == [pd.Timestamp(t) for t in read]


def test_a_year_alone_is_no_introduction_date():
    catalog = make_catalog().assign(introduced=2020)
    with pytest.raises(SchemaError, match=r"'introduced' has dtype int64.*holds numbers, not dates"):
        validate_hardware(coerce_hardware(catalog))


def test_a_count_too_large_for_a_whole_number_is_named_not_cast():
    """1e30 trainers once failed as numpy's "cannot safely cast" in coerce_attempts and fit."""
    from leapml.fleet import simulate
    from leapml.schema import SchemaError, coerce_attempts, validate_attempts

    fleet = simulate("tiny", days=1, seed=0)
    log = fleet.attempts.astype({"trainer_count": float})
    log.loc[log.index[0], "trainer_count"] = 1e30
    with pytest.raises(SchemaError, match=r"trainer_count is beyond 9007199254740992 in 1 row"):
        validate_attempts(coerce_attempts(log), fleet.hardware)


@pytest.mark.parametrize("written, family", [("FP8 (E4M3)", "fp8"), ("fp8-e5m2", "fp8"),
                                             ("bf16-true", "bf16"), ("FP32 (TF32)", "fp32_(tf32)")])
def test_a_format_beside_a_family_s_name_is_that_family(written, family):
    """Before, "FP8 (E4M3)" was a category of its own, given the fp16 peak instead of fp8's."""
    from leapml.schema import normalize_precision

    assert normalize_precision(written) == family
