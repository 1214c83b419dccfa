"""Bad inputs get a clear exception naming what is wrong, or a documented fallback.

Each test here backs a row of the table in ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import pickle
import re
import zipfile

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml.features import build_features, candidate_rows
from leapml.files import read_table
from leapml.fleet import load_fleet
from leapml.model_file import ModelFileError, load
from leapml.placement import fit_window, place, predict_candidates
from leapml.ranking import rank_candidates
from leapml.schema import SchemaError, validate_attempts, validate_hardware

LAUNCH = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
          "seq_len", "parallelism"]


def small_model():
    return LeapRegressor(n_estimators=5, random_state=0, n_jobs=1)


@pytest.fixture(scope="module")
def log(tiny_fleet):
    return tiny_fleet.attempts.drop(columns="expected_throughput")


@pytest.fixture(scope="module")
def hardware(tiny_fleet):
    return tiny_fleet.hardware


@pytest.fixture(scope="module")
def fitted(log, hardware):
    return fit_window(log, hardware, window_days=3, model=small_model())


@pytest.fixture(scope="module")
def jobs(tiny_fleet):
    return tiny_fleet.jobs[LAUNCH].head(3)


def problems_of(call):
    with pytest.raises(SchemaError) as info:
        call()
    return " ".join(info.value.problems)


# -- empty frames --------------------------------------------------------------


def test_empty_frames_are_refused_by_name(log, hardware, fitted, jobs):
    assert "the attempt log is empty" in problems_of(lambda: validate_attempts(log.iloc[:0]))
    assert "the hardware catalog is empty" in problems_of(lambda: validate_hardware(hardware.iloc[:0]))
    assert "empty" in problems_of(lambda: fit_window(log.iloc[:0], hardware, model=small_model()))
    with pytest.raises(ValueError, match="jobs is empty"):
        predict_candidates(fitted, jobs.iloc[:0], hardware, history=log)


def test_empty_inputs_with_a_defined_answer(log, hardware):
    # no rows to describe: an empty feature frame with every column, not an error
    X = build_features(log.iloc[:0], hardware, history=log)
    assert X.shape == (0, build_features(log.head(1), hardware).shape[1])
    # no candidates at all: an empty ranking
    empty = pd.DataFrame({"job_id": [], "hardware_type": [], "predicted_throughput": []})
    ranked = rank_candidates(empty, cost={})
    assert len(ranked) == 0 and {"rank", "rankable"} <= set(ranked.columns)


# -- columns: missing, renamed, extra, wrong dtypes ----------------------------


@pytest.mark.parametrize("column", ["submit_time", "throughput", "hardware_type", "status"])
def test_missing_or_renamed_columns_are_named(log, hardware, column):
    renamed = log.rename(columns={column: column + "_x"})
    text = problems_of(lambda: fit_window(renamed, hardware, model=small_model()))
    assert f"missing column(s): ['{column}']" in text


def test_missing_catalog_column_is_named(log, hardware):
    text = problems_of(lambda: fit_window(log, hardware.drop(columns="memory_gb"),
                                          model=small_model()))
    assert "['memory_gb']" in text


def test_extra_columns_are_ignored(log, hardware):
    noisy = log.assign(comment="hello", trainer_count_typo=-1, throughput_estimate=np.inf)
    pd.testing.assert_frame_equal(build_features(noisy, hardware), build_features(log, hardware))
    assert validate_attempts(noisy, hardware) is noisy


@pytest.mark.parametrize(
    ("column", "convert", "kind"),
    [
        ("submit_time", lambda s: s.astype(str), "time"),
        ("trainer_count", lambda s: s.astype(str), "int"),
        ("trainer_count", lambda s: s.astype(float), "int"),
        ("throughput", lambda s: s.astype(str), "float"),
        ("precision", lambda s: s.cat.codes.astype(float), "category"),
    ],
)
def test_wrong_dtypes_are_named(log, hardware, column, convert, kind):
    bad = log.assign(**{column: convert(log[column])})
    text = problems_of(lambda: fit_window(bad, hardware, model=small_model()))
    assert f"column {column!r} has dtype" in text and f"expected {kind}" in text


# -- throughput, ids, hardware, costs ------------------------------------------


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, -5.0, 0.0])
def test_bad_throughput_on_an_ok_row_names_the_row(log, hardware, value):
    row = log.index[log["status"] == "ok"][7]
    bad = log.copy()
    bad.loc[row, "throughput"] = value
    text = problems_of(lambda: fit_window(bad, hardware, model=small_model()))
    assert "throughput must be finite and > 0" in text and f"1 row(s) (index [{row}])" in text


def test_throughput_on_a_failed_row_is_named(log, hardware):
    row = log.index[log["status"] != "ok"][0]
    bad = log.copy()
    bad.loc[row, "throughput"] = 10.0
    assert f"index [{row}]" in problems_of(lambda: validate_attempts(bad, hardware))


def test_duplicate_attempt_ids_name_the_rows(log, hardware):
    bad = log.copy()
    bad.loc[bad.index[5], "attempt_id"] = bad.loc[bad.index[2], "attempt_id"]
    text = problems_of(lambda: fit_window(bad, hardware, model=small_model()))
    assert f"duplicate attempt_id in 2 row(s) (index [{bad.index[2]}, {bad.index[5]}])" in text


def test_hardware_absent_from_the_catalog_is_named(log, hardware):
    used = log["hardware_type"].astype(str)
    dropped = used.iloc[0]
    catalog = hardware[hardware["hardware_type"].astype(str) != dropped]
    text = problems_of(lambda: fit_window(log, catalog, model=small_model()))
    assert f"absent from the catalog: ['{dropped}']" in text
    text = problems_of(lambda: build_features(log, catalog))
    assert dropped in text


def test_a_hardware_name_spelled_otherwise_points_to_the_catalogs_spelling(log, hardware, fitted, jobs):
    """A log, or a job to score, naming a type in other case and separators is told the
    catalog's spelling; a name like none of the catalog's gets no suggestion."""
    name = str(log["hardware_type"].iloc[0])
    typed = name.lower().replace("-", " ")
    misspelled = log.assign(hardware_type=log["hardware_type"].astype(str)
                            .where(log.index != log.index[0], typed))
    text = problems_of(lambda: validate_attempts(misspelled, hardware))
    assert f"absent from the catalog: ['{typed}']" in text
    assert f"closest names: {{'{typed}': ['{name}'" in text
    for types, suggested in (([typed], True), (["zzzz-0000"], False)):
        text = problems_of(lambda types=types: place(fitted, jobs, hardware, history=log,
                                                     hardware_types=types))
        assert ("closest names" in text) is suggested


def test_candidate_lists_empty_or_unknown(log, hardware, fitted, jobs):
    with pytest.raises(ValueError, match="hardware_types is empty"):
        place(fitted, jobs, hardware, history=log, hardware_types=[])
    text = problems_of(lambda: place(fitted, jobs, hardware, history=log,
                                     hardware_types=["H100-80GB-SXM5", "TPU-v99"]))
    assert "['TPU-v99']" in text
    # the argument is named, not the internal candidate rows ("the attempts to describe")
    with pytest.raises(SchemaError, match="^hardware_types, the candidate types does not follow"):
        place(fitted, jobs, hardware, history=log, hardware_types=["TPU-v99"])
    with pytest.raises(ValueError, match="repeats"):
        place(fitted, jobs, hardware, history=log, hardware_types=["T4-16GB", "T4-16GB"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h.assign(cost_per_device_hour=np.where(h.index == 4, 0.0, h["cost_per_device_hour"])),
         "cost_per_device_hour must be finite and > 0; it is not in 1 row(s) (index [4])"),
        (lambda h: h.assign(cost_per_device_hour=np.where(h.index == 5, -1.0, h["cost_per_device_hour"])),
         "cost_per_device_hour must be finite and > 0; it is not in 1 row(s) (index [5])"),
    ],
)
def test_costs_zero_or_negative_in_the_catalog(log, hardware, fitted, jobs, change, message):
    catalog = change(hardware)
    assert message in problems_of(lambda: place(fitted, jobs, catalog, history=log))
    assert message in problems_of(lambda: fit_window(log, catalog, model=small_model()))


@pytest.mark.parametrize("value", [np.inf, -np.inf, 0.0, -3.0])
def test_a_peak_flops_figure_that_is_no_datasheet_value_is_named(hardware, value):
    """Every peak FLOP/s column is blank (no such precision) or finite and > 0, as memory is."""
    for column in [c for c in hardware.columns if c.startswith("peak_") and c.endswith("_tflops")]:
        catalog = hardware.assign(**{column: np.where(hardware.index == 2, value, hardware[column])})
        with pytest.raises(SchemaError) as refused:
            validate_hardware(catalog)
        assert f"{column} must be finite and > 0; it is not in 1 row(s) (index [2])" in str(refused.value)
    # blank stays allowed: a type without that precision
    column = max((c for c in hardware.columns if c.startswith("peak_") and c.endswith("_tflops")),
                 key=lambda c: hardware[c].isna().sum())
    assert hardware[column].isna().any()
    validate_hardware(hardware.assign(**{column: np.where(hardware.index == 2, np.nan,
                                                          hardware[column])}))


@pytest.mark.parametrize("drop", [False, True])
def test_costs_absent_from_the_catalog_stop_ranking_only(log, hardware, fitted, jobs, drop):
    uncosted = ["A100-80GB-SXM4", "T4-16GB"]
    if drop:
        catalog, uncosted = hardware.drop(columns="cost_per_device_hour"), sorted(hardware["hardware_type"])
    else:
        catalog = hardware.assign(cost_per_device_hour=np.where(
            hardware["hardware_type"].isin(uncosted), np.nan, hardware["cost_per_device_hour"]))
    # prediction needs no cost
    predicted = predict_candidates(fitted, jobs, catalog, history=log)
    assert np.isfinite(predicted["predicted_throughput"]).all()
    if drop:  # no type has a cost: nothing to rank
        with pytest.raises(ValueError, match="lacks for hardware type") as caught:
            place(fitted, jobs, catalog, history=log)
        assert str(sorted(uncosted)) in str(caught.value)
        return
    # the default candidates are the costed types, the others said (a real catalog prices few)
    others = [t for t in hardware["hardware_type"] if t not in uncosted]
    with pytest.warns(UserWarning, match=rf"2 hardware type\(s\) .* not ranked: "
                                         rf"{re.escape(str(sorted(uncosted)))}"):
        ranked = place(fitted, jobs, catalog, history=log)
    assert set(ranked["hardware_type"]) == set(others)
    pd.testing.assert_frame_equal(
        ranked, place(fitted, jobs, catalog, history=log, hardware_types=others))
    # types asked for by name must all have a cost
    with pytest.raises(ValueError, match="lacks for hardware type") as caught:
        place(fitted, jobs, catalog, history=log, hardware_types=list(hardware["hardware_type"]))
    assert str(sorted(uncosted)) in str(caught.value)


@pytest.mark.parametrize("cost", [0.0, -2.0, np.nan])
def test_costs_zero_negative_or_missing_in_rank_candidates(cost):
    frame = pd.DataFrame({"job_id": [1, 1], "hardware_type": ["a", "b"],
                          "predicted_throughput": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"\['b'\]"):
        rank_candidates(frame, cost={"a": 1.0, "b": cost})
    with pytest.raises(ValueError, match=r"no entry for hardware type\(s\) \['b'\]"):
        rank_candidates(frame, cost={"a": 1.0})


# -- predict-time inputs ------------------------------------------------------


def test_unseen_categories_predict_as_missing(log, hardware, fitted, jobs):
    rows = candidate_rows(jobs, ["A100-80GB-SXM4", "T4-16GB"], at=log["submit_time"].max())
    X = build_features(rows, hardware, history=log)
    unseen = X.assign(model_type=pd.Categorical(["never-seen-type"] * len(X)),
                      parallelism=pd.Categorical(["warp-drive"] * len(X)))
    missing = X.assign(model_type=pd.Categorical([np.nan] * len(X)),
                       parallelism=pd.Categorical([np.nan] * len(X)))
    predicted = fitted.predict(unseen)
    # documented fallback: an unseen category is read as a missing value
    np.testing.assert_array_equal(predicted, fitted.predict(missing))
    assert np.all(np.isfinite(predicted) & (predicted > 0))


def test_text_in_a_numeric_feature_is_named(log, hardware, fitted, jobs):
    rows = candidate_rows(jobs, ["A100-80GB-SXM4"], at=log["submit_time"].max())
    X = build_features(rows, hardware, history=log)
    bad = X.assign(batch_size=["thirty-two"] * len(X))
    with pytest.raises(ValueError, match=r"column 'batch_size' was numeric in fit"):
        fitted.predict(bad)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda X: X.drop(columns="batch_size"), "batch_size"),
        (lambda X: X.assign(extra=1.0), "extra"),
        (lambda X: X[X.columns[::-1]], "same order"),
    ],
)
def test_feature_columns_that_differ_from_fit_are_named(log, hardware, fitted, change, match):
    X = build_features(log.tail(20), hardware, history=log)
    with pytest.raises(ValueError, match=match):
        fitted.predict(change(X))


def test_log_out_of_time_order_gives_the_same_answers(log, hardware, fitted):
    shuffled = log.sample(frac=1.0, random_state=1)
    pd.testing.assert_frame_equal(build_features(shuffled, hardware).loc[log.index],
                                  build_features(log, hardware))
    again = fit_window(shuffled, hardware, window_days=3, model=small_model())
    X = build_features(log.tail(50), hardware, history=log)
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))


def test_window_with_no_completed_attempt_is_refused(log, hardware):
    with pytest.raises(ValueError, match="no completed attempts between"):
        fit_window(log, hardware, window_days=2, until="2001-01-01", model=small_model())


@pytest.mark.parametrize("days", [float("nan"), 0, -1.5, "30", True])
def test_a_window_that_is_no_number_of_days_is_named_as_such(log, hardware, days):
    """NaN, text or a flag is no window: the error is about window_days, not what follows it."""
    from leapml.evaluation.backtest import nightly
    from leapml.evaluation.placement_backtest import placement_backtest

    for run in (lambda: fit_window(log, hardware, window_days=days, model=small_model()),
                lambda: nightly(log, hardware, window_days=days, nights=1),
                lambda: placement_backtest(log, hardware, oracle=lambda *_: None, models={},
                                           window_days=days)):
        with pytest.raises(ValueError, match=r"window_days must be a number >= 1, got "):
            run()


@pytest.mark.parametrize("count", [0, 1.5, "2", True, float("nan")])
def test_a_count_of_nights_or_jobs_that_is_no_whole_number_is_named(log, hardware, count):
    from leapml.evaluation.backtest import nightly
    from leapml.evaluation.placement_backtest import placement_backtest

    whole = r"must be a whole number >= 1, got "
    with pytest.raises(ValueError, match="nights " + whole):
        nightly(log, hardware, window_days=2, nights=count)
    for name in ("nights", "jobs_per_night"):
        with pytest.raises(ValueError, match=name + " " + whole):
            placement_backtest(log, hardware, oracle=lambda *_: None, models={}, window_days=2,
                               **{name: count})


def test_models_that_are_no_mapping_and_an_oracle_that_is_no_function_are_named(log, hardware):
    from leapml.evaluation.backtest import nightly
    from leapml.evaluation.placement_backtest import placement_backtest

    with pytest.raises(TypeError, match="models must map names to models .* got list"):
        nightly(log, hardware, window_days=2, nights=1, models=[small_model()])
    with pytest.raises(TypeError, match="models must map names to models .* got list"):
        placement_backtest(log, hardware, oracle=lambda *_: None, models=[small_model()])
    with pytest.raises(TypeError, match="oracle must be a function .* got NoneType"):
        placement_backtest(log, hardware, oracle=None, models={"leap": small_model()})


def test_times_as_text_point_to_the_coercers(log, hardware):
    text = log.assign(submit_time=log["submit_time"].astype(str))
    assert re.search(r"column 'submit_time' has dtype \S+, expected time \(times as text: "
                     r"coerce_attempts or coerce_hardware parses them\)",
                     problems_of(lambda: validate_attempts(text, hardware)))


def test_window_with_one_row_predicts_that_row(log, hardware):
    one = log[log["status"] == "ok"].tail(1)
    # the window ends once the run has ended: its outcome is known by then
    until = one["end_time"].max() + pd.Timedelta(hours=1)
    model = fit_window(one, hardware, window_days=1, until=until, model=small_model())
    predicted = model.predict(build_features(one, hardware))
    np.testing.assert_allclose(predicted, one["throughput"].to_numpy(), rtol=1e-9)


# -- files that are truncated, from another version, or not ours -------------


def test_model_file_that_would_run_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "model.leap"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ModelFileError, match="not a leapml model file"):
        load(path)
    # the same payload inside a zip that claims to be a model
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps({"format": "leapml-model", "format_version": 1,
                                                      "members": {}}))
        archive.writestr("model.pkl", pickle.dumps(Payload()))
    with pytest.raises(ModelFileError, match="no metadata"):
        load(path)
    assert not marker.exists()


def test_model_path_that_is_a_directory(tmp_path):
    from leapml.model_file import save

    folder = tmp_path / "models"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="models is a folder; a leapml model is one file"):
        load(folder)
    with pytest.raises(IsADirectoryError, match="models is a folder; name a file to write"):
        X = pd.DataFrame({"batch_size": np.arange(40.0)})
        save(LeapRegressor(n_bins=2, n_estimators=5, min_bin_rows=1).fit(X, np.exp(X["batch_size"] / 10)),
             folder)
    assert list(tmp_path.rglob("*tmp")) == []


@pytest.fixture()
def fleet_dir(tiny_fleet, tmp_path):
    return tiny_fleet.save(tmp_path / "fleet")


def test_truncated_fleet_table_is_named(fleet_dir):
    table = fleet_dir / "attempts.parquet"
    table.write_bytes(table.read_bytes()[:1000])
    with pytest.raises(ValueError, match=r"attempts\.parquet is not a readable parquet file"):
        load_fleet(fleet_dir)


def test_foreign_fleet_table_is_named(fleet_dir):
    pd.DataFrame({"user": ["a"], "score": [1.0]}).to_parquet(fleet_dir / "attempts.parquet")
    with pytest.raises(SchemaError, match=r"attempts\.parquet does not follow the schema"):
        load_fleet(fleet_dir)
    pd.DataFrame({"hardware_type": ["x"]}).to_parquet(fleet_dir / "hardware.parquet")
    with pytest.raises(SchemaError, match=r"hardware\.parquet does not follow the schema"):
        load_fleet(fleet_dir)


def test_fleet_folder_missing_a_table_or_not_a_folder(fleet_dir):
    (fleet_dir / "releases.parquet").unlink()
    with pytest.raises(FileNotFoundError, match=r"releases\.parquet"):
        load_fleet(fleet_dir)
    with pytest.raises(FileNotFoundError, match=r"not a fleet folder \(a file, not a folder\)"):
        load_fleet(fleet_dir / "attempts.parquet")
    with pytest.raises(FileNotFoundError, match=r"not a fleet folder \(no such directory\)"):
        load_fleet(fleet_dir / "elsewhere")


def test_corrupt_fleet_params_are_named(fleet_dir):
    (fleet_dir / "params.json").write_text('{"seed": ')
    with pytest.raises(ValueError, match=r"params\.json is not readable JSON"):
        load_fleet(fleet_dir)


def test_table_path_that_is_a_directory(tmp_path):
    folder = tmp_path / "attempts.parquet"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_table(folder)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_table_naming_a_column_twice_is_refused(tmp_path, suffix):
    # pandas reads a CSV's second 'throughput' as 'throughput.1' and keeps the first
    path = tmp_path / f"attempts{suffix}"
    if suffix == ".csv":
        path.write_text("job_id,throughput,batch_size,throughput\n7,1.5,32,2.5\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table([pa.array([1.5]), pa.array([2.5])],
                                names=["throughput", "throughput"]), path)
    with pytest.raises(ValueError, match="names 'throughput' in more than one column"):
        read_table(path)


def test_measurement_table_naming_a_column_twice_is_refused(tmp_path):
    from leapml.datasets import read_measurements

    (tmp_path / "a.csv").write_text("model,gpu,throughput,throughput\nresnet,V100,1.5,2.5\n")
    with pytest.raises(ValueError, match="a.csv .its header names 'throughput'"):
        read_measurements(tmp_path)


def test_bad_jobs_to_place_are_named_by_their_own_rows(log, hardware, fitted, jobs):
    from leapml.features import HistoryIndex

    named = jobs.set_axis(["a", "b", "c"])
    for history in (log, HistoryIndex(log, hardware)):
        text = problems_of(lambda h=history: place(fitted, named.assign(batch_size=[8, -4, 8]),
                                                   hardware, history=h))
        assert text == "batch_size must be finite and > 0; it is not in 1 row(s) (index ['b'])"
        # a model size whose products would overflow the features
        text = problems_of(lambda h=history: place(fitted, named.assign(param_count=[1e9, 1e308, 1e9]),
                                                   hardware, history=h))
        assert text == "param_count is beyond 1e+30 in 1 row(s) (index ['b'])"
    twice = pd.concat([named, named.iloc[[0]]])
    with pytest.raises(ValueError, match=r"more than once, in 2 row\(s\) \(index \['a', 'a'\]\)"):
        place(fitted, twice, hardware, history=log)


def test_known_feasibility_matches_ids_as_text(log, hardware, fitted, jobs):
    types = ["T4-16GB", "H100-80GB-SXM5"]
    known = pd.DataFrame({"job_id": np.repeat(jobs["job_id"].astype(str).to_numpy(), 2),
                          "hardware_type": types * 3, "fit_probability": [1, np.nan, 1, 1, 0.2, 1]})
    assert jobs["job_id"].dtype.kind == "i"  # the ids of the jobs are numbers, those given text
    ranked = place(fitted, jobs, hardware, history=log, hardware_types=types, feasibility=known)
    probability = ranked.set_index(["job_id", "hardware_type"])["fit_probability"]
    first = jobs["job_id"].iloc[0]
    assert np.isnan(probability[(first, "H100-80GB-SXM5")])  # unknown, and ranked
    assert ranked["rankable"].sum() == 5


def test_jobs_without_their_model_sizes_read_them_from_the_log(log, hardware, fitted, tiny_fleet):
    from leapml.features import HistoryIndex

    sizes = ["param_count", "flops_per_sample", "embedding_gb"]
    ran = log[log["status"] == "ok"].drop_duplicates("job_id").head(3)  # jobs the log knows
    jobs = tiny_fleet.jobs.set_index("job_id").loc[ran["job_id"]].reset_index()
    at = log["submit_time"].max()
    for history in (log, HistoryIndex(log, hardware)):
        full = place(fitted, jobs, hardware, history=history, at=at)
        with pytest.warns(UserWarning, match="the jobs lack model sizes the log holds"):
            bare = place(fitted, jobs.drop(columns=sizes), hardware, history=history, at=at)
        # their own runs give the sizes: the same predictions as with them
        np.testing.assert_allclose(bare["predicted_throughput"], full["predicted_throughput"])
    # a job the log never saw gets its model type's median: not the far-off answer of none
    new = jobs.drop(columns=sizes).assign(job_id=-1 - np.arange(len(jobs)))
    with pytest.warns(UserWarning, match="model sizes"):
        guessed = place(fitted, new, hardware, history=log, at=at)
    assert np.isfinite(guessed["predicted_throughput"]).all()


def test_model_sizes_of_a_job_are_its_id_and_model_and_an_update_reads_as_a_fresh_log():
    from leapml.features.sizes import ModelSizes

    log = pd.DataFrame({"job_id": [1, 1, 2, 1], "model_type": ["gpt", "gpt", "gpt", "bert"],
                        "param_count": [7e9, 7e9, 13e9, 1e8]})
    jobs = pd.DataFrame({"job_id": ["1", 3, 1], "model_type": ["gpt", "gpt", "bert"]})
    with pytest.warns(UserWarning, match="model sizes"):
        filled = ModelSizes.of(log).fill(jobs)["param_count"].tolist()
    # id 1 is two jobs: its gpt and its bert; job 3 reads the median of gpt's jobs (1 and 2)
    assert filled == [7e9, 10e9, 1e8]
    updated = ModelSizes.of(log.iloc[:2]).updated(log.iloc[2:])
    pd.testing.assert_frame_equal(updated.by_model, ModelSizes.of(log).by_model)
    with pytest.warns(UserWarning, match="model sizes"):
        assert updated.fill(jobs)["param_count"].tolist() == filled


def test_explain_picks_leaves_out_jobs_without_a_rankable_pick(log, hardware, fitted, jobs):
    from leapml.placement import explain_picks

    ranked = place(fitted, jobs, hardware, history=log, min_fit_probability=1.0)
    ranked["rankable"] = ranked["job_id"] != jobs["job_id"].iloc[0]  # its first job: nothing fits
    reasons = explain_picks(fitted, ranked, jobs, hardware, history=log)
    assert jobs["job_id"].iloc[0] not in set(reasons["job_id"])
    assert set(reasons["job_id"]) == set(jobs["job_id"].iloc[1:])


def test_backtest_refuses_a_bad_log_by_name(log, hardware):
    from leapml.evaluation.backtest import nightly

    bad = log.copy()
    bad.loc[bad.index[9], "attempt_id"] = bad.loc[bad.index[4], "attempt_id"]
    text = problems_of(lambda: nightly(bad, hardware, window_days=3, nights=1, progress=False))
    assert f"duplicate attempt_id in 2 row(s) (index [{bad.index[4]}, {bad.index[9]}])" in text
    catalog = hardware.assign(cost_per_device_hour=-hardware["cost_per_device_hour"])
    text = problems_of(lambda: nightly(log, catalog, window_days=3, nights=1, progress=False))
    assert "cost_per_device_hour must be finite and > 0" in text


def test_every_test_the_reliability_page_names_exists():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "reliability.md").read_text()
    named = set(re.findall(r"`(tests/test_\w+\.py)::(test_\w+)`", text))
    assert len(named) > 40
    for path, name in sorted(named):
        source = (root / path).read_text()
        assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{path}::{name}"


def test_evaluation_arguments_that_would_run_on_nothing_are_refused(tiny_fleet):
    from leapml.evaluation.backtest import nightly
    from leapml.evaluation.held_out import held_out
    from leapml.evaluation.placement_backtest import placement_backtest

    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    model = {"leap": LeapRegressor(n_estimators=3, random_state=0)}
    # a misspelled type held out nothing, and reported in-distribution figures as held out
    with pytest.raises(ValueError, match=r"absent from the catalog: \['h100-80gb-sxm5'\].*H100-80GB-SXM5"):
        placement_backtest(log, hardware, models=model, oracle=tiny_fleet.expected_throughput,
                           window_days=2, nights=1, jobs_per_night=5, held_out_hardware="h100-80gb-sxm5")
    for n_groups in (-3, 0, 2.7):
        with pytest.raises(ValueError, match="n_groups"):
            held_out(log, hardware, by="hardware_type", n_groups=n_groups, model=model["leap"],
                     window_days=2)
    with pytest.raises(ValueError, match="no hardware_type value to hold out"):
        held_out(log, hardware, by="hardware_type", groups=[], model=model["leap"], window_days=2)
    for jobs in (0, -1, 2.5):
        with pytest.raises(ValueError, match="regret_jobs"):
            nightly(log, hardware, models=model, window_days=2, nights=1, regret_jobs=jobs,
                    oracle=tiny_fleet.expected_throughput, progress=False)
