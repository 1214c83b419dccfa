"""Measurement tables become a valid attempt log and catalog, every assumption named."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leapml.datasets import from_measurements, read_measurements
from leapml.features import build_features
from leapml.schema import SchemaError


def _specs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "hardware": ["V100", "A100", "H100", "CPU"],
            "vendor": ["NVIDIA", "NVIDIA", "NVIDIA", "Intel"],
            "release_year": [2017, 2020, 2022, 2023],
            "peak_fp32_tflops": [15.7, 19.5, 67.0, np.nan],
            "peak_tf32_tensor_tflops": [np.nan, 156.0, 495.0, np.nan],
            "peak_fp16_tensor_tflops": [125.0, 312.0, 989.0, np.nan],
            "peak_bf16_tensor_tflops": [np.nan, 312.0, 989.0, np.nan],
            "memory_gb": [16.0, 40.0, 80.0, np.nan],
            "memory_bw_gbps": [900.0, 1555.0, 3350.0, 307.0],
            "cloud_usd_per_gpu_hour": [3.0, 4.0, np.nan, 1.0],
        }
    )


def _table() -> pd.DataFrame:
    """Two sources; ResNet-50 at one configuration on three types (newest first in the table)."""
    rows = [
        # source, model, task, devices, global batch, per-device batch, hardware, precision, throughput, unit
        ("lab", "ResNet-50", "vision", 1, 256, 256, "H100", "AMP", 3000.0, "images/s"),
        ("lab", "ResNet-50", "vision", 1, 256, 256, "A100", "amp_fp16", 2400.0, "images/s"),
        ("lab", "ResNet-50", "vision", 1, 256, 256, "V100", "mixed", 1100.0, "images/s"),
        ("lab", "ResNet-50", "vision", 1, 128, 128, "V100", "fp32", 400.0, "images/s"),
        ("lab", "ResNet-50", "vision", 8, 2048, np.nan, "V100", "fp32", 3100.0, "images/s"),
        ("lab", "ResNet-50", "vision", 8, 1001, np.nan, "V100", "fp32", 2900.0, "images/s"),
        ("bench", "BERT", None, 8, 64, 8, "A100", None, 900.0, "sequences/s"),
        ("bench", "BERT", "nlp", 8, 64, 8, "A100", "int8", np.nan, None),
        ("bench", "BERT", "nlp", 8, 64, 8, "TPU", "bf16", 50.0, "sequences/s"),
        ("bench", "BERT", "nlp", np.nan, 64, 8, "A100", "bf16", 50.0, "sequences/s"),
        ("bench", "BERT", "nlp", 8, 64, 8, "CPU", "bf16", 5.0, "sequences/s"),
    ]
    columns = [
        "source", "model", "task", "num_devices", "batch_size", "per_device_batch_size",
        "hardware", "precision", "throughput", "throughput_unit",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def test_one_attempt_per_measurement_and_every_drop_counted():
    # rows dropped are said, not only counted in the notes
    with pytest.warns(UserWarning, match=r"^2 measurement\(s\) dropped, no positive throughput: 1; "
                                         r"no whole, positive device count: 1$"):
        log = from_measurements(_table(), _specs())
    attempts = log.attempts
    assert len(attempts) == 7 and (attempts["status"] == "ok").all()
    assert attempts["attempt_id"].tolist() == list(range(7))
    notes = "\n".join(log.notes)
    assert "rows dropped, no positive throughput: 1" in notes
    assert "rows dropped, no whole, positive device count: 1" in notes
    assert "rows dropped, a hardware type the catalog lacks ['CPU', 'TPU']: 2" in notes
    assert "no peak FLOP/s at any precision: ['CPU']" in notes
    assert sorted(attempts["throughput"]) == sorted(
        [3000.0, 2400.0, 1100.0, 400.0, 3100.0, 2900.0, 900.0]
    )


def test_values_are_mapped_and_assumptions_named():
    log = from_measurements(_table(), _specs())
    attempts, notes = log.attempts.set_index("throughput"), "\n".join(log.notes)
    # AMP, amp_fp16 and mixed are the fp16 family
    assert (attempts.loc[[3000.0, 2400.0, 1100.0], "precision"] == "fp16").all()
    # the global batch over the devices where whole (2048 / 8), else unknown (1001 / 8)
    assert attempts.loc[3100.0, "batch_size"] == 256
    assert attempts.loc[2900.0, "batch_size"] is pd.NA
    assert attempts.loc[900.0, "batch_size"] == 8
    assert "global batch / devices for 1 row(s)" in notes and "unknown (null) for 1 row(s)" in notes
    assert (
        attempts.loc[900.0, "precision"] == "unknown"
        and "precision: none given for 1 row(s)" in notes
    )
    assert attempts.loc[900.0, "model_family"] == "unknown" and "'task' null in 1 row(s)" in notes
    assert (attempts["parallelism"] == "unknown").all() and attempts["device_hours"].isna().all()
    assert attempts.loc[900.0, "throughput_unit"] == "sequences/s"
    catalog = log.hardware.set_index("hardware_type")
    assert "devices_per_host" not in catalog and np.isnan(
        catalog.loc["H100", "cost_per_device_hour"]
    )
    assert catalog.loc["A100", "peak_fp16_tflops"] == 312.0
    assert catalog.loc["A100", "introduced"] == pd.Timestamp("2020-01-01")
    assert "1 of 3 hardware type(s) have none in 'cloud_usd_per_gpu_hour'" in notes


def test_jobs_are_launch_configurations_and_older_hardware_comes_first():
    attempts = from_measurements(_table(), _specs()).attempts.set_index("throughput")
    same = attempts.loc[[3000.0, 2400.0, 1100.0]]
    assert same["job_id"].nunique() == 1
    assert attempts.loc[400.0, "job_id"] != same["job_id"].iloc[0]
    order = same.sort_values("submit_time")["hardware_type"].tolist()
    assert order == ["V100", "A100", "H100"]
    assert attempts["submit_time"].is_unique


def test_job_columns_split_jobs_per_source():
    table = _table()
    table["xla"] = [True, False, True] + [False] * 8
    together = from_measurements(table, _specs()).attempts
    split = from_measurements(
        table, _specs(), job_columns={"lab": ["xla"], "other": ["nothing"]}
    ).attempts
    assert split["job_id"].nunique() == together["job_id"].nunique() + 1
    assert split["job_id"].str.startswith(("lab-", "bench-")).all()


def test_a_table_with_submit_times_keeps_them():
    table = _table().assign(submit_time=pd.date_range("2024-03-01", periods=11, freq="D"))
    attempts = from_measurements(table, _specs()).attempts
    assert attempts["submit_time"].min() == pd.Timestamp("2024-03-01")
    assert attempts["submit_time"].is_monotonic_increasing


def test_the_log_feeds_build_features_without_fills():
    log = from_measurements(_table(), _specs())
    X = build_features(log.attempts, log.hardware)
    rows = log.attempts.reset_index(drop=True)
    h100 = rows.index[rows["hardware_type"] == "H100"][0]
    # the H100 run sees the same job's earlier A100 and V100 runs, scaled by peak
    assert X.loc[h100, "job_runs_any_hardware"] == 2
    assert X.loc[h100, "job_last_hardware_type"] == "A100"
    assert X.loc[h100, "job_last_throughput_scaled_by_peak"] == pytest.approx(
        2400.0 * 989.0 / 312.0
    )
    assert X["devices_per_host"].isna().all()


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['throughput'\]"):
        from_measurements(_table().drop(columns="throughput"), _specs())
    with pytest.raises(ValueError, match="no measurement left"):
        from_measurements(_table().assign(throughput=0.0), _specs())
    with pytest.raises(TypeError, match="DataFrame"):
        from_measurements(_table().to_dict(), _specs())
    with pytest.raises(ValueError, match="has no rows"):
        from_measurements(_table().iloc[:0], _specs())
    # a column no spelling makes a measurement column: the error shows what the table has
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['source'\].*it has \['origin'"):
        from_measurements(_table().rename(columns={"source": "origin"}), _specs())
    # a column given twice: which one is meant is ambiguous
    with pytest.raises(ValueError, match=r"measurements has column\(s\) \['hardware'\] more than once"):
        from_measurements(_table().assign(Hardware="A100").rename(columns=str.lower), _specs())


def test_column_names_in_another_case_or_with_spaces_are_read_and_said_so(tmp_path):
    table = _table().rename(columns={"source": "Source", "num_devices": "Num Devices",
                                     "throughput": " throughput "})
    log = from_measurements(table, _specs())
    assert len(log.attempts) == len(from_measurements(_table(), _specs()).attempts)
    assert any(note.startswith("columns read under their usual names: {'Source': 'source'")
               for note in log.notes)
    table.to_csv(tmp_path / "lab.csv", index=False)  # and a folder's table is one
    assert read_measurements(tmp_path)["num_devices"].notna().any()


def test_hardware_names_spelled_otherwise_are_matched_or_pointed_to_the_catalog():
    table = _table().iloc[:4].copy()
    table["hardware"] = ["h100 ", "a_100", "V100", "Tesla-V100-SXM2"]
    log = from_measurements(table, _specs())
    # case, spaces, '-' and '_' aside: the catalog's own spelling, and the change is noted
    assert sorted(log.attempts["hardware_type"].astype(str)) == ["A100", "H100", "V100"]
    notes = "\n".join(log.notes)
    assert "{'a_100': 'A100', 'h100 ': 'H100'}" in notes
    # a name that is not one of the catalog's gets its closest catalog names
    assert "rows dropped, a hardware type the catalog lacks ['Tesla-V100-SXM2']: 1" in notes
    assert "'Tesla-V100-SXM2': ['V100']" in notes
    with pytest.raises(ValueError, match=r"no measurement left.*'V10O': \['V100'\]"):
        from_measurements(table.assign(hardware="V10O"), _specs())
    # two catalog names that differ only in case: neither is guessed
    specs = pd.concat([_specs(), _specs().iloc[[1]].assign(hardware="a100")], ignore_index=True)
    ambiguous = from_measurements(table.iloc[:2].assign(hardware=["H100", "A-100"]), specs)
    assert ambiguous.attempts["hardware_type"].astype(str).tolist() == ["H100"]
    # the words of a catalog name in another order, behind the maker's: what nvidia-smi prints
    specs = _specs().assign(hardware=["V100-16GB-SXM2", "A100-40GB-PCIe", "H100", "CPU"])
    smi = from_measurements(table.iloc[:2].assign(
        hardware=["Tesla V100-SXM2-16GB", "NVIDIA A100-PCIE-40GB"]), specs)
    assert smi.attempts["hardware_type"].astype(str).tolist() == ["V100-16GB-SXM2", "A100-40GB-PCIe"]


_BY_MEMORY_AND_FORM = ["A100-40GB-PCIe", "A100-80GB-SXM4", "B200-180GB-SXM", "MI250-GCD"]


@pytest.mark.parametrize("given, expected", [
    # memory and form factor spelled otherwise, or left out where one type has them
    ("NVIDIA A100-SXM-80GB", "A100-80GB-SXM4"),  # MLPerf's spelling: "SXM" is any SXM
    ("A100 SXM4 80 GB", "A100-80GB-SXM4"),
    ("A100 40G PCIe", "A100-40GB-PCIe"),
    ("NVIDIA B200", "B200-180GB-SXM"),
    ("B200 HBM3e", "B200-180GB-SXM"),  # the memory's kind is no other device,
    ("A100-SXM4-80GB (400W)", "A100-80GB-SXM4"),  # nor a power limit
    # a name that fits two types, or gives memory or a form the catalog's type lacks, or
    # other device words ("MI250" is two GCDs, not one): dropped, never guessed
    ("A100", None),
    ("A100 SXM 40GB", None),
    ("B200 192GB", None),
    ("MI250", None),
])
def test_a_hardware_name_without_the_catalog_s_memory_or_form_is_read_where_only_one_fits(
        given, expected):
    specs = _specs().assign(hardware=_BY_MEMORY_AND_FORM)
    table = _table().iloc[:2].assign(hardware=[given, "A100-40GB-PCIe"])
    if expected is None:
        with pytest.warns(UserWarning, match="hardware the catalog lacks"):
            log = from_measurements(table, specs)
        assert log.attempts["hardware_type"].astype(str).tolist() == ["A100-40GB-PCIe"]
    else:
        log = from_measurements(table, specs)
        assert sorted(log.attempts["hardware_type"].astype(str)) == sorted([expected, "A100-40GB-PCIe"])
        assert any(f"{given!r}: {expected!r}" in note for note in log.notes)


def test_read_measurements_stacks_the_tables_of_a_folder(tmp_path):
    _table().iloc[:3].to_csv(tmp_path / "a.csv", index=False)
    _table().iloc[3:].assign(extra=1).to_csv(tmp_path / "b.csv", index=False)
    stacked = read_measurements(tmp_path)
    assert len(stacked) == 11 and stacked["extra"].isna().sum() == 3
    assert len(read_measurements(tmp_path, sources=["b"])) == 8
    with pytest.raises(FileNotFoundError, match="c.csv"):
        read_measurements(tmp_path, sources=["c"])


PUBLIC = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.skipif(
    not (PUBLIC / "public").is_dir(), reason="the public tables are not on this machine"
)
def test_the_public_tables_validate_and_build_features_without_fills():
    from leapml.datasets import PUBLIC_JOB_COLUMNS

    specs = pd.read_csv(PUBLIC / "hardware_specs.csv")
    log = from_measurements(
        read_measurements(PUBLIC / "public"), specs, job_columns=PUBLIC_JOB_COLUMNS
    )
    X = build_features(log.attempts, log.hardware)
    assert len(X) == len(log.attempts) > 4000
    assert set(log.attempts["source"]) == {"lambda_tf", "gavel", "nvidia_dle", "mlperf_training"}
    # amp rows are fp16, MLPerf's missing precision its own category
    assert {"fp16", "unknown"} <= set(X["precision"].astype(str))
    assert X["peak_tflops"].notna().all()


def test_numbers_grouped_in_thousands_are_read_and_other_text_refused():
    table = _table().iloc[:6].astype({"throughput": object, "batch_size": object})
    table["throughput"] = [f"{v:,.1f}" for v in table["throughput"]]
    table["per_device_batch_size"] = np.nan
    table["batch_size"] = ["2,048"] * 6
    table["num_devices"] = 8
    table["seq_len"] = "1,024"
    attempts = from_measurements(table, _specs()).attempts
    assert sorted(attempts["throughput"]) == [400.0, 1100.0, 2400.0, 2900.0, 3000.0, 3100.0]
    assert (attempts["batch_size"] == 256).all() and (attempts["seq_len"] == 1024).all()
    with pytest.raises(ValueError, match=r"measurements column 'throughput' holds text that is not "
                                         r"a number in 1 row\(s\) \(index \[4\]\), such as \['3 k'\]"):
        from_measurements(table.assign(throughput=table["throughput"].where(table.index != 4, "3 k")),
                          _specs())
    with pytest.raises(ValueError, match=r"specs column 'memory_gb' .* such as \['16 GB', '40 GB'"):
        from_measurements(_table(), _specs().assign(memory_gb=["16 GB", "40 GB", "80", None]))
    specs = from_measurements(_table(), _specs().assign(
        cloud_usd_per_gpu_hour=["3", "4", "1,200.5", None])).hardware
    assert specs["cost_per_device_hour"].tolist()[:3] == [3.0, 4.0, 1200.5]


@pytest.mark.parametrize(("submit_time", "problem"), [
    ([1767225600 + i for i in range(11)], r"holds numbers, not dates, in 7 row\(s\)"),  # the kept rows
    (["garbage"] + ["2024-01-02"] * 10, r"not a date in 1 row\(s\) \(index \[0\]\), such as 'garbage'"),
    (["01/02/2024"] * 11, "holds dates such as '01/02/2024' that read both as day/month and as month/day"),
    (["2024-03-11 12:00"] + ["2024-03-09 12:00-05:00"] * 10, "mixes times with a UTC offset"),
])
def test_submit_times_that_are_not_sure_dates_are_refused(submit_time, problem):
    with pytest.raises(ValueError, match=r"measurements column 'submit_time': " + problem):
        from_measurements(_table().assign(submit_time=submit_time), _specs())


def test_submit_times_across_offsets_read_and_a_gap_is_named_by_the_tables_row():
    times = ["2024-03-09 12:00-05:00"] * 6 + ["2024-03-11 12:00-04:00"] * 5
    attempts = from_measurements(_table().assign(submit_time=times), _specs()).attempts
    assert str(attempts["submit_time"].dt.tz) == "UTC"
    table = _table().assign(submit_time=pd.date_range("2024-03-01", periods=11, freq="D")[::-1])
    table.loc[1, "submit_time"] = pd.NaT
    with pytest.raises(ValueError, match=r"'submit_time' is empty in 1 row\(s\) \(index \[1\]\), of source\(s\) \['lab'\]"):
        from_measurements(table, _specs())


@pytest.mark.parametrize("start", [1767225600, "01/02/2026", "soon"])
def test_a_start_that_is_not_a_sure_date_is_refused(start):
    with pytest.raises(ValueError, match="start="):
        from_measurements(_table(), _specs(), start=start)


def test_one_column_or_table_name_is_one_name_not_its_letters(tmp_path):
    table = _table()
    table["xla"] = [True, False, True] + [False] * 8
    as_list = from_measurements(table, _specs(), job_columns=["xla"]).attempts
    for columns in ("xla", {"lab": "xla"}):
        attempts = from_measurements(table, _specs(), job_columns=columns).attempts
        assert attempts["job_id"].tolist() == as_list["job_id"].tolist()
    with pytest.raises(TypeError, match="job_columns must be a name or a list of names"):
        from_measurements(table, _specs(), job_columns=3)
    table.to_csv(tmp_path / "lab.csv", index=False)
    assert len(read_measurements(tmp_path, sources="lab")) == 11


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda s: pd.concat([s, s.iloc[[1]]]), r"specs gives hardware \['A100'\] more than once, in 2 "
                                             r"row\(s\) \(index \[1, 1\]\)"),
    (lambda s: s.assign(release_year=[2017, np.nan, 2022, 2023]),
     r"'release_year' is not a whole year in 1 row\(s\) \(index \[1\]\), such as nan"),
    (lambda s: s.assign(release_year=["2017", "2014-11", "2022", "2023"]), "such as '2014-11'"),
    (lambda s: s.assign(hardware=["V100", None, "H100", "CPU"]),
     r"specs column 'hardware' is empty in 1 row\(s\) \(index \[1\]\)"),
    (lambda s: s.assign(peak_fp32_tflops=["$15", "19.5", "67", None]), r"'peak_fp32_tflops'.*\['\$15'\]"),
])
def test_bad_specs_are_named_by_column_row_and_value(edit, problem):
    with pytest.raises(ValueError, match=problem):
        from_measurements(_table(), edit(_specs()))


def test_empty_names_and_an_absent_cost_column_are_said_so():
    table = _table()
    table.loc[2, "model"] = None
    with pytest.raises(ValueError, match=r"measurements column 'model' is empty in 1 row\(s\) \(index \[2\]\)"):
        from_measurements(table, _specs())
    table = _table().assign(hardware=_table()["hardware"].where(_table().index != 0, None))
    assert "rows dropped, no hardware named: 1" in from_measurements(table, _specs()).notes
    notes = "\n".join(from_measurements(_table(), _specs(), cost_column="cloud_usd").notes)
    assert "specs has no column 'cloud_usd'" in notes and "of 3 hardware type(s)" not in notes
    padded = from_measurements(_table(), _specs().assign(hardware=lambda s: s["hardware"] + " "))
    assert sorted(padded.hardware["hardware_type"]) == ["A100", "H100", "V100"]


def test_read_measurements_skips_other_tables_and_names_files_it_cannot_decode(tmp_path):
    _table().to_csv(tmp_path / "lab.csv", index=False)
    _specs().to_csv(tmp_path / "hardware_specs.csv", index=False)
    with pytest.warns(UserWarning, match=r"skipped 1 file\(s\).*hardware_specs.csv \(lacks \['source'"):
        assert len(read_measurements(tmp_path)) == 11
    with pytest.raises(ValueError, match="hardware_specs.csv is not a measurement table"):
        read_measurements(tmp_path, sources=["lab", "hardware_specs"])
    (tmp_path / "lab.csv").write_bytes("source,model\nlab,Résumé\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"lab.csv is not UTF-8 text \(byte 0xe9 does not decode"):
        read_measurements(tmp_path, sources=["lab"])


def test_read_measurements_reads_rows_closed_by_a_comma_and_skips_files_that_are_no_table(tmp_path):
    """Rows ending in a comma under a header that does not once came back shifted by a column
    (source read as the model, ...); an empty file, a folder named .csv or a table named .CSV
    stopped or escaped the read of the folder."""
    table = _table()
    text = table.to_csv(index=False).splitlines()
    (tmp_path / "LAB.CSV").write_text("\n".join([text[0]] + [row + "," for row in text[1:]]) + "\n")
    (tmp_path / "notes.csv").write_text("")
    (tmp_path / "archive.csv").mkdir()
    with pytest.warns(UserWarning, match=r"skipped 1 file\(s\).*notes.csv \("):
        read = read_measurements(tmp_path)
    assert list(read.columns) == list(table.columns)
    assert read.index[0] == "LAB.CSV:0" and read.index[-1] == f"LAB.CSV:{len(table) - 1}"
    pd.testing.assert_frame_equal(read.reset_index(drop=True), table, check_dtype=False)
    (tmp_path / "odd.csv").write_text(text[0] + "\n" + text[1] + ",extra\n")
    with pytest.raises(ValueError, match="more fields than its header names"):
        read_measurements(tmp_path, sources=["odd"])


def test_measurements_whose_row_labels_repeat_are_read_by_position():
    """Two tables stacked without ignore_index once failed inside pandas with job_columns."""
    table = _table()
    twice = pd.concat([table, table.assign(source="other")])
    assert not twice.index.is_unique
    log = from_measurements(twice, _specs(), job_columns=["source", "model"])
    expected = from_measurements(twice.reset_index(drop=True), _specs(),
                                 job_columns=["source", "model"])
    pd.testing.assert_frame_equal(log.attempts, expected.attempts)
    assert any(note.startswith("index:") for note in log.notes)


def test_a_vendor_name_before_the_hardware_is_read_and_an_unknown_type_is_warned_of():
    """"NVIDIA A100" and "amd H100" are the catalog's A100 and H100; rows of a type the
    catalog lacks were dropped with a note only, which a caller reading no notes never saw."""
    table = _table()
    named = table.assign(hardware=table["hardware"].map({"A100": "NVIDIA A100",
                                                         "H100": "amd h100"}).fillna(table["hardware"]))
    expected = from_measurements(table, _specs()).attempts
    pd.testing.assert_frame_equal(from_measurements(named, _specs()).attempts, expected)
    unknown = table.assign(hardware=table["hardware"].where(table["hardware"] != "V100", "TPU9"))
    with pytest.warns(UserWarning, match=r"measurement\(s\) dropped: hardware the catalog lacks "
                                         r"\[.*'TPU9'\]"):
        from_measurements(unknown, _specs())


@pytest.mark.parametrize("column", ["per_device_batch_size", "seq_len"])
@pytest.mark.parametrize("value", [-1, 0.5, 2.0**60, 1e300, np.inf])
def test_a_count_out_of_range_is_read_as_unknown_and_named(column, value):
    table = _table().assign(seq_len=512.0)
    table.loc[1, column] = value
    if column == "per_device_batch_size":  # no global batch to fall back to (see below)
        table.loc[1, "batch_size"] = np.nan
    name = "batch_size" if column == "per_device_batch_size" else column
    with pytest.warns(UserWarning, match=f"1 measurement.s. give a {name} that is not a whole"):
        log = from_measurements(table, _specs())
    row = log.attempts[(log.attempts["hardware_type"] == "A100") & (log.attempts["trainer_count"] == 1)]
    assert row[name].isna().all()
    assert f"{name}: 1 value(s) not a whole number above 0 (at most 2**53) read as unknown" in "\n".join(log.notes)
    # the others keep their values
    assert log.attempts[name].notna().sum() >= 5


def test_a_log_the_schema_refuses_names_the_measurements_rows(monkeypatch):
    import leapml.datasets as datasets
    from leapml.schema import SchemaError, coerce_attempts

    def breaking(attempts):  # a value no reader refuses today, to reach the last check
        attempts = coerce_attempts(attempts)
        attempts.loc[attempts.index == 41, "trainer_count"] = 0
        return attempts

    monkeypatch.setattr(datasets, "coerce_attempts", breaking)
    table = _table().set_axis(np.arange(len(_table())) + 40)
    with pytest.raises(SchemaError, match=r"(?s)rows by the measurements' index; trainer_count is "
                                          r"num_devices.*index \[41\]"):
        from_measurements(table, _specs())


def test_rows_read_twice_are_dropped_and_said_so():
    # a table saved twice in the folder: each copy would read its twin's throughput as history
    table = pd.concat([_table(), _table()], ignore_index=True)
    with pytest.warns(UserWarning, match="11 measurement row.s. repeat an earlier row exactly"):
        log = from_measurements(table, _specs())
    assert len(log.attempts) == len(from_measurements(_table(), _specs()).attempts)


def test_job_columns_the_table_lacks_are_warned_of():
    table = _table().assign(framework="PyTorch")
    with pytest.warns(UserWarning, match=r"job_columns names what the measurements lack \(column 'framwork'\)"):
        log = from_measurements(table, _specs(), job_columns=["framework", "framwork"])
    assert any(note.startswith("job_columns: no column 'framwork'") for note in log.notes)
    # a source these tables lack asks for nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        measured = table["throughput"].notna() & table["num_devices"].notna()
        from_measurements(table[table["hardware"].isin(["V100", "A100", "H100"]) & measured],
                          _specs(), job_columns={"lab": ["framework"], "elsewhere": ["column"]})


def test_a_unit_or_task_left_empty_or_padded_keeps_the_job_together():
    table = _table().iloc[:3].copy()  # ResNet-50 on H100, A100, V100: one job
    table["task"] = ["vision", "vision ", "vision"]
    table["throughput_unit"] = ["samples/s", None, " samples/s"]  # none: read as samples/s
    log = from_measurements(table, _specs())
    assert log.attempts["job_id"].nunique() == 1 == log.attempts["model_family"].nunique()
    assert "throughput_unit: none for 1 row(s), read as samples/s" in log.notes


def test_tensor_peaks_win_over_plain_ones_and_plain_ones_fill_their_gaps():
    specs = _specs().assign(peak_fp16_tflops=[31.0, 78.0, np.nan, np.nan])
    specs.loc[1, "peak_fp16_tensor_tflops"] = np.nan
    hardware = from_measurements(_table(), specs).hardware.set_index("hardware_type")
    assert hardware.loc["V100", "peak_fp16_tflops"] == 125.0  # the tensor figure
    assert hardware.loc["A100", "peak_fp16_tflops"] == 78.0  # the plain one, where no other
    assert hardware.loc["H100", "peak_fp16_tflops"] == 989.0


def test_a_per_device_batch_that_disagrees_with_the_global_one_is_noted():
    table = _table().assign(per_device_batch_size=[64, 256, 256, 128, np.nan, np.nan, 8, 8, 8, 8, 8])
    log = from_measurements(table, _specs())
    assert ("batch_size: per_device_batch_size differs from batch_size / num_devices in 1 row(s); "
            "the per-device batch is used") in log.notes


def test_a_type_in_the_specs_without_a_peak_is_named_so():
    with pytest.warns(UserWarning, match=r"in the specs without any peak FLOP/s: \['CPU'\]"):
        from_measurements(_table(), _specs())


def test_one_table_may_be_read_as_a_file(tmp_path):
    path = tmp_path / "Lab.CSV"
    _table().to_csv(path, index=False)
    assert len(read_measurements(path)) == len(_table())


def test_a_bad_figure_in_the_specs_is_named_by_the_specs_row():
    # the CPU row (no peak) is dropped before the check: the H100 must still be row 2
    specs = _specs()
    specs.loc[2, "peak_bf16_tensor_tflops"] = -1.0
    with pytest.raises(SchemaError, match=r"(?s)rows by the specs' index.*peak_bf16_tflops must be "
                                          r"finite and > 0; it is not in 1 row\(s\) \(index \[2\]\)"):
        from_measurements(_table(), specs.iloc[[3, 0, 1, 2]])


def test_a_bad_value_in_a_folder_is_named_by_its_file_and_row(tmp_path):
    _table().to_csv(tmp_path / "a.csv", index=False)
    _table().assign(source="b", throughput=["12 it/s"] + [100.0] * 10).to_csv(tmp_path / "b.csv",
                                                                              index=False)
    with pytest.raises(ValueError, match=r"'throughput' holds text .* \(index \['b.csv:0'\]\)"):
        from_measurements(read_measurements(tmp_path), _specs())


def test_a_throughput_that_says_oom_or_no_value_is_a_row_without_one():
    # a published table marks runs that did not fit: the table is read, those rows are counted
    table = _table()
    table["throughput"] = table["throughput"].astype(object)
    table.loc[[0, 1, 2], "throughput"] = ["OOM", " - ", "n/a"]
    log = from_measurements(table, _specs())
    assert len(log.attempts) == len(from_measurements(_table(), _specs()).attempts) - 3
    assert ("throughput: 1 row(s) say the run ran out of memory ('OOM'); a measurement is a "
            "completed run, so they are rows without a throughput") in log.notes
    assert "throughput: 2 row(s) say there is no value (such as '-')" in log.notes
    table.loc[3, "throughput"] = "12 it/s"  # other text is still no number
    with pytest.raises(ValueError, match=r"'throughput' holds text that is not a number .* \['12 it/s'\]"):
        from_measurements(table, _specs())


def test_a_table_without_task_or_precision_reads_them_as_unknown(tmp_path):
    table = _table().drop(columns=["task", "precision"])
    log = from_measurements(table, _specs())
    assert (log.attempts["model_family"] == "unknown").all()
    assert (log.attempts["precision"].astype(str) == "unknown").all()
    assert "model_family: no 'task' column, set to 'unknown'" in log.notes
    table.to_csv(tmp_path / "lab.csv", index=False)  # still a measurement table of a folder
    assert len(read_measurements(tmp_path)) == len(table)


def _one_job(units, throughputs, devices=(1, 1, 1), hardware=("V100", "A100", "H100")):
    """One BERT configuration on three types, in the units given."""
    return pd.DataFrame({"source": "bench", "model": "BERT", "task": "nlp",
                         "num_devices": list(devices), "per_device_batch_size": 32,
                         "hardware": list(hardware), "precision": "fp16",
                         "throughput": list(throughputs), "throughput_unit": list(units)})


def test_a_time_per_unit_of_work_is_read_as_a_rate():
    """Before, ``ms/step`` was read as a throughput: the slowest type looked the fastest."""
    log = from_measurements(_one_job(["ms/step", "MS / step", "ms per step"], [200.0, 100.0, 50.0]),
                            _specs())
    by_type = log.attempts.set_index("hardware_type")
    assert by_type["throughput"].to_dict() == pytest.approx({"V100": 5.0, "A100": 10.0, "H100": 20.0})
    assert set(by_type["throughput_unit"]) == {"step/s"}
    assert log.attempts["job_id"].nunique() == 1  # one unit, however it was spelled
    assert any("time per unit of work" in note for note in log.notes)


def test_a_rate_per_device_is_read_as_the_whole_job_s():
    log = from_measurements(_one_job(["tokens/s/GPU", "tokens/s per GPU", "Tokens / sec / gpu"],
                                     [100.0, 150.0, 300.0], devices=(8, 8, 8)), _specs())
    assert sorted(log.attempts["throughput"]) == [800.0, 1200.0, 2400.0]
    assert set(log.attempts["throughput_unit"]) == {"tokens/s"}


def test_a_duration_as_the_unit_is_no_rate_and_dropped():
    with pytest.warns(UserWarning, match=r"1 measurement\(s\) give a time as their unit"):
        log = from_measurements(_one_job(["samples/s", "samples/s", "min"], [10.0, 20.0, 35.0]),
                                _specs())
    assert sorted(log.attempts["hardware_type"]) == ["A100", "V100"]
    assert any(note.startswith("rows dropped, a unit that is a time") for note in log.notes)


def test_a_number_as_the_unit_is_a_shifted_row_and_refused(tmp_path):
    """``12,345`` unquoted, the unit left empty: the 345 moved into the unit, 12 stayed."""
    path = tmp_path / "t.csv"
    path.write_text("source,model,task,batch_size,per_device_batch_size,num_devices,hardware,"
                    "precision,throughput,throughput_unit\n"
                    "x,M,nlp,32,32,1,V100,fp16,100,\nx,M,nlp,32,32,1,A100,fp16,12,345\n")
    with pytest.raises(ValueError, match=r"'throughput_unit' holds a number in .*t.csv:1.*such as 345"):
        from_measurements(read_measurements(path), _specs())


def test_rows_that_differ_only_in_spelling_are_one_measurement():
    """Before, the second row read the first's throughput as its own history (its target)."""
    table = _one_job(["samples/s", "samples/s", "samples/s"], [100.0, 100.0, 300.0],
                     hardware=("V100", "v100 ", "A100"))
    with pytest.warns(UserWarning, match=r"1 measurement row\(s\) repeat an earlier row in job_id"):
        log = from_measurements(table, _specs())
    assert sorted(log.attempts["hardware_type"]) == ["A100", "V100"]
    X = build_features(log.attempts, log.hardware)
    assert X["job_runs_same_hardware"].max() == 0


def test_job_columns_of_a_source_spelled_otherwise_still_tell_jobs_apart():
    table = _one_job(["samples/s"] * 3, [100.0, 300.0, 500.0], hardware=("V100", "V100", "A100"))
    table = table.assign(source=["Gavel ", "Gavel ", "Gavel "],
                         placement=["consolidated", "unconsolidated", "consolidated"])
    log = from_measurements(table, _specs(), job_columns={"gavel": ("placement",)})
    assert log.attempts["job_id"].nunique() == 2


def test_two_columns_read_as_one_name_are_refused():
    table = _one_job(["samples/s"] * 3, [1.0, 2.0, 3.0])
    both = table.assign(Throughput=[9.0, 9.0, 9.0])
    with pytest.raises(ValueError, match=r"2 columns read as 'throughput'"):
        from_measurements(both, _specs())


def test_a_table_named_with_its_extension_is_found(tmp_path):
    _one_job(["samples/s"] * 3, [1.0, 2.0, 3.0]).to_csv(tmp_path / "bench.csv", index=False)
    assert len(read_measurements(tmp_path, sources=["bench.csv"])) == 3


def test_another_table_s_words_for_known_columns_are_read_and_said():
    table = _one_job(["samples/s"] * 3, [100.0, 200.0, 300.0], devices=(2, 2, 2)).rename(
        columns={"num_devices": "num_gpus", "per_device_batch_size": "Micro Batch Size",
                 "throughput_unit": "unit"}).assign(**{"Sequence Length": 2048})
    log = from_measurements(table, _specs())
    assert set(log.attempts["trainer_count"]) == {2} and set(log.attempts["batch_size"]) == {32}
    assert set(log.attempts["seq_len"]) == {2048}
    assert any("'num_gpus': 'num_devices'" in note for note in log.notes)
    with pytest.raises(ValueError, match=r"2 columns that may be 'num_devices'"):
        from_measurements(table.assign(gpus=2), _specs())


def test_a_geforce_card_is_read_by_its_model_name():
    specs = _specs().assign(hardware=["RTX-3090", "RTX-4090", "H100", "CPU"])
    table = _one_job(["samples/s"] * 2, [1.0, 2.0], devices=(1, 1),
                     hardware=("NVIDIA GeForce RTX 3090", "GeForce RTX 4090"))
    assert sorted(from_measurements(table, specs).attempts["hardware_type"]) == ["RTX-3090", "RTX-4090"]


def test_a_measurement_table_that_cannot_be_read_is_refused_not_skipped(tmp_path):
    """Before, a latin-1 measurement table beside readable ones was skipped with a warning
    that called it no measurement table: its rows were lost."""
    header = b"source,model,task,num_devices,batch_size,hardware,precision,throughput\n"
    (tmp_path / "a.csv").write_bytes(header + b"a,x,vision,1,32,V100,fp32,10\n")
    (tmp_path / "b.csv").write_bytes(header + b"b,caf\xe9,vision,1,32,V100,fp32,10\n")
    with pytest.raises(ValueError, match=r"b.csv is not UTF-8 text .*not skipped"):
        read_measurements(tmp_path)
    (tmp_path / "b.csv").write_bytes(b"hardware,price\n\xe9,1\n")  # not a measurement table
    with pytest.warns(UserWarning, match="skipped 1 file"):
        assert len(read_measurements(tmp_path)) == 1


def test_read_measurements_says_what_it_was_given(tmp_path):
    (tmp_path / "a.csv").write_text("source;model;num_devices;batch_size;hardware;throughput\n"
                                    "a;x;1;32;V100;10\n")
    (tmp_path / "t.tsv").write_text("source\tmodel\n")
    with pytest.raises(ValueError, match=r"it has \['source;model.*write the table comma-separated"):
        read_measurements(tmp_path / "a.csv")
    with pytest.raises(FileNotFoundError, match="no file .*missing.csv"):
        read_measurements(tmp_path / "missing.csv")
    with pytest.raises(FileNotFoundError, match=r"t.tsv is not a .csv file"):
        read_measurements(tmp_path / "t.tsv")


def test_a_per_device_batch_that_cannot_be_falls_back_to_the_global_one():
    table = _one_job(["samples/s"] * 3, [1.0, 2.0, 3.0], devices=(2, 2, 2)).assign(
        per_device_batch_size=[0, 32.5, 16], batch_size=[64, 64, 32])
    log = from_measurements(table, _specs())
    assert log.attempts["batch_size"].tolist() == [32, 32, 16]


# -- tables of other benchmarks: their units, node counts, comments and empty cells ----------


def test_time_units_of_every_size_are_inverted_or_dropped():
    """``us/step`` kept as a rate made the slowest type the fastest; a time to train in days or
    in words was kept as a throughput of 100."""
    log = from_measurements(_one_job(["us/step", "µs / iter", "ns per token"], [200.0, 100.0, 50.0]),
                            _specs())
    by_type = log.attempts.set_index("hardware_type")
    assert by_type["throughput"].to_dict() == pytest.approx({"V100": 5e3, "A100": 1e4, "H100": 2e7})
    assert set(by_type["throughput_unit"]) == {"step/s", "iter/s", "token/s"}
    for duration in ("days", "minutes to train", "time to train (min)", "TTT (min)"):
        with pytest.warns(UserWarning, match=r"1 measurement\(s\) give a time as their unit"):
            log = from_measurements(_one_job(["samples/s", "samples/s", duration], [10.0, 20.0, 35.0]),
                                    _specs())
        assert sorted(log.attempts["hardware_type"]) == ["A100", "V100"], duration


@pytest.mark.parametrize("unit", ["tokens/gpu/s", "tokens per GPU per second", "tokens/s (per GPU)",
                                  "per-GPU tokens/s", "tokens/s per-GPU", "Tokens/sec/device"])
def test_a_rate_per_device_is_the_whole_job_s_however_it_is_spelled(unit):
    log = from_measurements(_one_job([unit] * 3, [100.0, 150.0, 300.0], devices=(8, 8, 8)), _specs())
    assert sorted(log.attempts["throughput"]) == [800.0, 1200.0, 2400.0]
    assert set(log.attempts["throughput_unit"]) == {"tokens/s"}


def test_a_row_shifted_by_an_unquoted_thousands_separator_is_refused_not_cut_short(tmp_path):
    """The fix-up for rows closed by a comma read ``1,234.5`` as a throughput of 1, the rest
    as the next column, where one row had the extra field and another did not."""
    path = tmp_path / "t.csv"
    path.write_text("source,model,num_devices,batch_size,hardware,precision,throughput,notes\n"
                    "a,r,1,32,V100,fp32,1,234.5,\na,r,2,64,V100,fp32,900,\n")
    with pytest.raises(ValueError, match="more fields than its header names.*thousands separator"):
        read_measurements(path)


def test_a_device_count_beside_a_node_count_is_refused_unless_it_is_num_devices():
    """``devices`` with ``num_nodes`` (as PyTorch Lightning writes them) counts one node's."""
    table = _one_job(["tokens/s"] * 2, [100.0, 150.0], devices=(8, 8), hardware=("V100", "A100"))
    per_node = table.rename(columns={"num_devices": "devices"}).assign(num_nodes=[1, 2])
    with pytest.raises(ValueError, match=r"'num_nodes' beside 'devices'.*\[1\].*as 'num_devices'"):
        from_measurements(per_node, _specs())
    # one node, or the whole job's devices under their own name: read as given
    assert from_measurements(per_node.assign(num_nodes=1), _specs()).attempts["trainer_count"].tolist() == [8, 8]
    whole = table.assign(num_devices=[8, 16], number_of_nodes=[1, 2])
    assert from_measurements(whole, _specs()).attempts["trainer_count"].tolist() == [8, 16]


def test_runs_of_other_given_batches_are_other_jobs_where_the_per_device_batch_is_unknown():
    """24 devices divide neither 100 nor 300: both runs read batch unknown and were one job."""
    table = _one_job(["samples/s"] * 3, [1000.0, 2500.0, 2600.0], devices=(24, 24, 24),
                     hardware=("V100", "V100", "A100")).drop(columns="per_device_batch_size")
    log = from_measurements(table.assign(batch_size=[100, 300, 300]), _specs())
    assert log.attempts["batch_size"].isna().all()
    jobs = log.attempts.set_index("throughput")["job_id"]
    assert jobs[1000.0] != jobs[2500.0] and jobs[2500.0] == jobs[2600.0]


def test_tables_in_other_formats_in_the_folder_are_warned_of(tmp_path):
    _table().to_csv(tmp_path / "lab.csv", index=False)
    _table().to_csv(tmp_path / "more.csv.gz", index=False)
    _table().to_parquet(tmp_path / "bench.parquet")
    (tmp_path / "README.md").write_text("notes")
    with pytest.warns(UserWarning, match=r"reads \.csv files only; not read: \['bench.parquet', 'more.csv.gz'\]"):
        assert len(read_measurements(tmp_path)) == len(_table())


def test_comment_lines_above_the_header_are_skipped(tmp_path):
    path = tmp_path / "t.csv"
    body = _table().to_csv(index=False)
    path.write_text("# Training throughput, lab runs\n# numbers are medians of 3 runs\n" + body)
    pd.testing.assert_frame_equal(read_measurements(path).reset_index(drop=True), _table(),
                                  check_dtype=False)
    path.write_text("# a title\nsource,model,throughput,throughput\na,b,1,2\n")
    with pytest.raises(ValueError, match="'throughput' in more than one column"):
        read_measurements(path)


def test_cells_saying_there_is_no_value_are_unknown_in_every_number_column():
    """``-`` for a CNN's sequence length, ``n/a`` for a batch: refused as text before."""
    table = _one_job(["samples/s"] * 3, [100.0, 150.0, 300.0]).astype({"per_device_batch_size": object})
    table = table.assign(seq_len=["-", "2048", "n/a"], per_device_batch_size=["32", "NaN", "32"],
                         throughput=["100", "150", "NaN"])
    with pytest.warns(UserWarning, match="no positive throughput: 1"):
        log = from_measurements(table, _specs())
    assert log.attempts["seq_len"].isna().tolist() == [True, False]
    assert log.attempts["batch_size"].isna().tolist() == [False, True]


def test_model_and_source_names_that_differ_only_in_case_are_one():
    """``Llama-2-7B`` and ``llama-2-7b`` were two models, so two jobs that never shared history."""
    table = _one_job(["samples/s"] * 3, [100.0, 150.0, 300.0])
    table = table.assign(model=["Llama-2-7B", "llama-2-7b ", "LLAMA-2-7B"], source=["lab", "Lab", "lab"])
    log = from_measurements(table, _specs())
    assert set(log.attempts["model_type"]) == {"Llama-2-7B"}
    assert log.attempts["job_id"].nunique() == 1
    assert any(note.startswith("model: 2 spelling(s) read as another row's") for note in log.notes)
