"""The job's own earlier peak memory in its configuration: PeakLog and the feasibility model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_feasibility import _big_jobs, _log, _models, _with_peaks
from test_features import START, make_catalog

from leapml.feasibility import FeasibilityClassifier
from leapml.features import MEASURED_PEAK, HistoryIndex, PeakLog, build_features
from leapml.model_file import load_feasibility, save
from leapml.placement import FEASIBILITY_FEATURES, fit_feasibility, place
from leapml.schema import LAUNCH_COLUMNS
from leapml.training import RULE_FACTOR, feasibility_model, with_measured_peaks


def _run(job, batch, hardware, hours, peak, status="ok"):
    """One attempt of a 4-trainer fsdp job, submitted at ``START`` and ending ``hours`` later."""
    return {"attempt_id": hours, "job_id": job, "submit_time": START,
            "end_time": START + pd.Timedelta(hours=hours), "model_type": "llm-00",
            "model_family": "llm", "trainer_count": 4, "batch_size": batch, "precision": "bf16",
            "seq_len": 2048, "parallelism": "fsdp", "hardware_type": hardware, "status": status,
            "throughput": 10.0 if status == "ok" else np.nan, "device_hours": 4.0 * hours,
            "peak_memory_gb": peak if status == "ok" else np.nan}


def _tiny_log():
    log = pd.DataFrame([
        _run("j1", 8, "A100", 1, 10.0),
        _run("j1", 8, "H100", 2, 12.0),
        _run("j1", 8, "V100", 3, np.nan, status="oom"),
        _run("j1", 16, "A100", 1, 30.0),
        _run("j2", 8, "A100", 1, 50.0),
    ])
    return log.assign(attempt_id=np.arange(len(log)))


def test_a_peak_counts_once_known_for_its_job_configuration_and_host_where_it_matters():
    catalog = make_catalog(5)
    log = _tiny_log()
    peaks = PeakLog.of(log, catalog)
    assert len(peaks) == 4  # the oom run measured nothing

    def measured(job, batch, hardware, hours):
        row = pd.DataFrame([_run(job, batch, hardware, 0, 0.0)])
        return peaks.before(row, catalog, START + pd.Timedelta(hours=hours))[0]

    assert np.isnan(measured("j1", 8, "A100", 1))  # the first run ends at 1 h: not strictly before
    assert measured("j1", 8, "V100", 1.5) == 10.0  # measured on the A100, asked of the V100
    assert measured("j1", 8, "V100", 2.5) == 12.0  # the largest of the runs known
    assert measured("j1", 16, "V100", 2.5) == 30.0  # another batch: another configuration
    assert np.isnan(measured("j3", 8, "V100", 9))  # a job that never ran
    # fsdp shards over every trainer: a host of 4 devices needs what one of 8 measured
    assert measured("j1", 8, "MI250X", 9) == 12.0
    # tensor parallelism shards within a host: only hosts of as many devices count
    tensor = PeakLog.of(log.assign(parallelism="tensor"), catalog)
    ask = pd.DataFrame([_run("j1", 8, "V100", 0, 0.0), _run("j1", 8, "MI250X", 0, 0.0)]).assign(
        parallelism="tensor")
    np.testing.assert_array_equal(tensor.before(ask, catalog, START + pd.Timedelta(hours=9)),
                                  [12.0, np.nan])
    # a style the library does not know keeps the host's size in the key, as tensor does
    pipeline = PeakLog.of(log.assign(parallelism="pipeline"), catalog)
    assert np.isnan(pipeline.before(ask.assign(parallelism="pipeline"), catalog,
                                    START + pd.Timedelta(hours=9))[1])
    # one time for all rows, or each row's own submit_time
    rows = pd.DataFrame([_run("j1", 8, "A100", 0, 0.0)] * 2).assign(
        submit_time=[START + pd.Timedelta(hours=1.5), START + pd.Timedelta(hours=3)])
    np.testing.assert_array_equal(peaks.before(rows, catalog), [10.0, 12.0])
    # a precision spelled otherwise in the log is the same precision
    spelled = PeakLog.of(log.assign(precision="BFloat16", parallelism=" FSDP"), catalog)
    np.testing.assert_array_equal(spelled.before(rows, catalog), [10.0, 12.0])
    # a catalog that does not say how many devices a host holds keys on the job alone
    bare = catalog.drop(columns="devices_per_host")
    np.testing.assert_array_equal(PeakLog.of(log, bare).before(rows, bare), [10.0, 12.0])
    assert np.isnan(PeakLog.of(log.drop(columns="peak_memory_gb"), catalog)
                    .before(rows, catalog)).all()


def test_a_history_index_keeps_the_peaks_and_folds_new_ones_in():
    log, catalog = _log(0)
    log = _with_peaks(log, catalog, 0).assign(end_time=lambda f: f["submit_time"]
                                              + pd.Timedelta(minutes=30))
    order = log.sort_values("submit_time", kind="stable").index
    early, late = log.loc[order[:800]], log.loc[order[800:]]
    index = HistoryIndex(early, catalog).update(late)
    at = log["end_time"].max() + pd.Timedelta(hours=1)
    whole = PeakLog.of(log, catalog).before(log, catalog, at)
    np.testing.assert_array_equal(index.peaks.before(log, catalog, at), whole)
    assert np.isfinite(whole).mean() > 0.5
    # before the late part came in, its new configurations were unknown
    assert np.isnan(HistoryIndex(early, catalog).peaks.before(log, catalog, at)).sum() > np.isnan(
        whole).sum()


def test_the_default_model_reads_the_measured_peak_only_where_the_log_has_peaks():
    log, catalog = _log(0)
    _, without = _models(log, catalog)
    assert without.measured_need_column is None
    assert MEASURED_PEAK not in without.feature_names_in_
    learned = fit_feasibility(_with_peaks(log, catalog, 0), catalog, window_days=400)
    assert learned.measured_need_column == MEASURED_PEAK
    assert MEASURED_PEAK in learned.feature_names_in_
    # a rerun's need is measured to 3%: its margin is far tighter than a predicted need's
    assert 0 < learned.memory_measured_margin_ < learned.memory_need_margin_


@pytest.mark.parametrize("seed", [0, 1])
def test_a_job_that_measured_more_than_a_type_holds_is_kept_off_it(seed):
    # every job of one model type is launched alike (4 trainers, batch 8, bf16) and needs
    # 2 GB, except one, which needs 40 GB more (a larger variant no launch column names):
    # only its own earlier runs, on large memory, tell the log so
    log, catalog = _log(seed)
    alike = (log["model_type"] == "llm-00").to_numpy()
    log.loc[alike, ["trainer_count", "batch_size"]] = [4, 8]
    log.loc[alike, "precision"] = "bf16"
    log.loc[alike, "status"] = "ok"
    log.loc[alike, "throughput"] = 100.0
    log = _with_peaks(log, catalog, seed)
    heavy = log.loc[alike, "job_id"].value_counts().index[0]
    on_heavy = (log["job_id"] == heavy).to_numpy()
    log.loc[on_heavy, "peak_memory_gb"] += 40.0
    log = log[~(on_heavy & (log["hardware_type"] == "V100").to_numpy())].reset_index(drop=True)
    model, _ = _models(log, catalog)
    learned = fit_feasibility(log, catalog, window_days=400)
    blind = fit_feasibility(log, catalog, window_days=400,
                            model=feasibility_model(measured_need_column=None))
    jobs = log.loc[log["model_type"] == "llm-00", ["job_id", *LAUNCH_COLUMNS]].drop_duplicates(
        "job_id")
    assert len(jobs) > 5

    def on_v100(feasibility):
        ranked = place(model, jobs, catalog, history=log, feasibility=feasibility)
        return ranked.loc[ranked["hardware_type"] == "V100"].set_index("job_id")["fit_probability"]

    with_peak, without = on_v100(learned), on_v100(blind)
    assert without[heavy] >= 0.5  # the launch columns say it is like the others
    assert with_peak[heavy] < 0.5
    assert (with_peak.drop(heavy) >= 0.5).all()  # the others still fit


def test_place_fills_the_measured_peak_from_a_frame_or_an_index_alike(tmp_path):
    log, catalog = _log(1)
    log = _with_peaks(log, catalog, 1)
    model, _ = _models(log, catalog)
    learned = fit_feasibility(log, catalog, window_days=400)
    jobs = pd.concat([_big_jobs(log).head(3),
                      log.loc[log["batch_size"] == 8, ["job_id", *LAUNCH_COLUMNS]]]).drop_duplicates(
        "job_id").head(12)
    by_frame = place(model, jobs, catalog, history=log, feasibility=learned)
    by_index = place(model, jobs, catalog, history=HistoryIndex(log, catalog),
                     feasibility=learned)
    np.testing.assert_array_equal(by_frame["fit_probability"], by_index["fit_probability"])
    # the model file keeps the measured margin, and answers as the fitted model does
    back = load_feasibility(save(model, tmp_path / "m.leap", feasibility=learned))
    assert back.memory_measured_margin_ == learned.memory_measured_margin_
    X = with_measured_peaks(build_features(log, catalog)[FEASIBILITY_FEATURES], learned, log,
                            PeakLog.of(log, catalog), catalog)
    assert X[MEASURED_PEAK].notna().any()
    np.testing.assert_array_equal(back.fit_probability(X), learned.fit_probability(X))


def test_a_missing_measured_need_column_is_named():
    log, catalog = _log(0)
    learned = fit_feasibility(_with_peaks(log, catalog, 0), catalog, window_days=400)
    X = build_features(log, catalog)[FEASIBILITY_FEATURES]
    with pytest.raises(ValueError, match="with_measured_peaks"):
        learned.fit_probability(X)
    with pytest.raises(TypeError, match="measured_need_column"):
        FeasibilityClassifier(measured_need_column=MEASURED_PEAK).fit(
            X[["memory_gb"]].to_numpy(), log["status"] == "ok")


def test_a_job_that_measured_its_need_is_not_kept_out_by_another_jobs_oom():
    # jobs of one model type are launched alike and need 2 GB, but one of them needs 90 GB
    # (a variant no launch column names) and ran out of memory on every 80 GB type: the
    # memory ceiling of the key then keeps the whole configuration off 80 GB, unless a
    # job's own earlier runs measured what it needs
    log, catalog = _log(0)
    alike = (log["model_type"] == "llm-00").to_numpy()
    log.loc[alike, ["trainer_count", "batch_size"]] = [4, 8]
    log.loc[alike, "precision"] = "bf16"
    log.loc[alike, "status"] = "ok"
    log.loc[alike, "throughput"] = 100.0
    log = _with_peaks(log, catalog, 0)
    heavy = log.loc[alike, "job_id"].value_counts().index[0]
    on_heavy = (log["job_id"] == heavy).to_numpy()
    memory = log["hardware_type"].astype(str).map(catalog.set_index("hardware_type")["memory_gb"])
    oom = on_heavy & (memory <= 80).to_numpy()
    log.loc[on_heavy, "peak_memory_gb"] = 90.0
    log.loc[oom, ["status", "throughput", "peak_memory_gb"]] = ["oom", np.nan, np.nan]
    model, _ = _models(log, catalog)
    learned = fit_feasibility(log, catalog, window_days=400)
    blind = fit_feasibility(log, catalog, window_days=400,
                            model=feasibility_model(measured_need_column=None))
    light = log.loc[alike & ~on_heavy & (log["status"] == "ok").to_numpy(),
                    ["job_id", *LAUNCH_COLUMNS]].drop_duplicates("job_id")
    assert len(light) > 5

    def on_80gb(feasibility, jobs):
        ranked = place(model, jobs, catalog, history=log, feasibility=feasibility)
        return ranked.loc[ranked["hardware_type"].isin(["A100", "H100"]), "fit_probability"]

    assert (on_80gb(blind, light) <= RULE_FACTOR).all()  # the ceiling keeps them all out
    assert (on_80gb(learned, light) >= 0.5).all()  # each measured 2 GB of its own
    heavy_job = log.loc[on_heavy, ["job_id", *LAUNCH_COLUMNS]].head(1)
    assert (on_80gb(learned, heavy_job) < 0.5).all()


def test_job_ids_given_as_text_read_the_log_s_own_peaks(tiny_fleet):
    """A submissions CSV gives job ids as text where the log's are numbers: the job's own
    measured peaks were left behind (compared by dtype), and a type it had measured to
    fit looked a near-certain failure."""
    from leapml import LeapRegressor
    from leapml.placement import fit_window, predict_candidates

    log, catalog = tiny_fleet.attempts, tiny_fleet.hardware
    assert pd.api.types.is_integer_dtype(log["job_id"])
    model = fit_window(log, catalog, window_days=5, model=LeapRegressor(n_estimators=5, random_state=0))
    feasibility = fit_feasibility(log, catalog, window_days=5)
    jobs = tiny_fleet.jobs[["job_id", *LAUNCH_COLUMNS, "param_count", "flops_per_sample",
                            "embedding_gb"]].head(8)
    by_number = predict_candidates(model, jobs, catalog, history=log, feasibility=feasibility)
    by_text = predict_candidates(model, jobs.astype({"job_id": str}), catalog, history=log,
                                 feasibility=feasibility)
    np.testing.assert_array_equal(by_text["fit_probability"], by_number["fit_probability"])
    np.testing.assert_array_equal(by_text["predicted_throughput"], by_number["predicted_throughput"])
