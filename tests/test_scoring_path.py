"""place() scores a HistoryIndex's feature columns without frames, and answers as the steps do.

With an index, place() reads HistoryIndex.candidate_features, hands the
columns to LeapRegressor.predict as they are and ranks with rank_arrays.
Its answers must be those of the public steps one by one (candidate_rows ->
HistoryIndex.features -> model.predict -> rank_candidates) and of the log
itself as the history, to the bit; bad input is refused alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_features import make_catalog, make_log

import leapml.placement as placement
from leapml import LeapRegressor
from leapml._job_miss import predict_by_job
from leapml.evaluation.baselines import single_model_reference
from leapml.feasibility import FeasibilityClassifier
from leapml.features import (
    FeatureColumns,
    HistoryIndex,
    build_features,
    candidate_rows,
    feature_names,
)
from leapml.placement import (
    EVIDENCE_COLUMNS,
    fit_feasibility,
    fit_window,
    place,
    predict_candidates,
)
from leapml.ranking import rank_candidates
from leapml.schema import LAUNCH_COLUMNS, SchemaError

MINUTE = pd.Timedelta(minutes=1)


@pytest.fixture(scope="module")
def fleet(tiny_fleet):
    return tiny_fleet


@pytest.fixture(scope="module")
def index(fleet):
    return HistoryIndex(fleet.attempts, fleet.hardware)


@pytest.fixture(scope="module")
def models(fleet):
    """Each kind of model place() meets: both routers, soft blending, a plain LightGBM model."""
    kinds = {
        "multiclass": LeapRegressor(n_estimators=8, random_state=0),
        "ordinal": LeapRegressor(n_estimators=8, router="ordinal", random_state=0),
        "soft": LeapRegressor(n_estimators=8, combine="soft", random_state=0),
        # one LightGBM model of log throughput (on raw throughput, least squares can go negative)
        "lightgbm": single_model_reference(n_estimators=30),
    }
    return {name: fit_window(fleet.attempts, fleet.hardware, window_days=5, model=model)
            for name, model in kinds.items()}


def _jobs(fleet, n):
    # with their model sizes: without them, place reads them from the log first (tested apart)
    return fleet.jobs[["job_id", *LAUNCH_COLUMNS, "param_count", "flops_per_sample",
                       "embedding_gb"]].head(n)


def _by_frames(model, jobs, fleet, index, at, types, top_k=None, feasibility=None):
    """The frame path, step by step."""
    rows = candidate_rows(jobs, types, at=at)
    X = index.features(rows)
    predictions = rows[["job_id", "hardware_type", "trainer_count"]].assign(
        hardware_type=rows["hardware_type"].astype(str),
        predicted_throughput=predict_by_job(model, X, pd.factorize(rows["job_id"])[0])[0],
        fit_probability=(np.nan if feasibility is None
                         else feasibility.fit_probability(X[feasibility.feature_names_in_])),
        throughput_low=np.nan,  # the models here are not calibrated
        throughput_high=np.nan,
        throughput_mean=np.nan,
    )
    cost = dict(zip(fleet.hardware["hardware_type"].astype(str),
                    fleet.hardware["cost_per_device_hour"], strict=True))
    return rank_candidates(predictions, cost=cost, top_k=top_k)


def _candidate_frame(index, jobs, types, at):
    columns = index.candidate_features(jobs, types, at=at)
    assert isinstance(columns, FeatureColumns) and list(columns) == feature_names()
    return columns.to_frame()


@pytest.mark.parametrize("kind", ["multiclass", "ordinal", "soft", "lightgbm"])
@pytest.mark.parametrize("n_jobs, top_k", [(1, None), (4, None), (4, 3)])
def test_place_by_index_equals_the_frame_path(fleet, index, models, kind, n_jobs, top_k):
    model = models[kind]
    jobs = _jobs(fleet, n_jobs)
    at = index.end + MINUTE
    types = fleet.hardware["hardware_type"].astype(str).tolist()
    got = place(model, jobs, fleet.hardware, history=index, at=at, hardware_types=types,
                top_k=top_k)
    expected = _by_frames(model, jobs, fleet, index, at, types, top_k)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["predicted_throughput"].nunique() > 1
    # and with the log itself as the history
    pd.testing.assert_frame_equal(
        got, place(model, jobs, fleet.hardware, history=fleet.attempts, at=at,
                   hardware_types=types, top_k=top_k),
        check_exact=True,
    )


def test_place_with_feasibility_by_index_equals_the_frame_path(fleet, index, models):
    feasibility = fit_feasibility(fleet.attempts, fleet.hardware,
                                  model=FeasibilityClassifier(n_estimators=5, random_state=0,
                                                              evidence_columns=list(EVIDENCE_COLUMNS)))
    jobs = _jobs(fleet, 4)
    at = index.end + MINUTE
    types = fleet.hardware["hardware_type"].astype(str).tolist()
    got = place(models["ordinal"], jobs, fleet.hardware, history=index, at=at,
                hardware_types=types, feasibility=feasibility)
    expected = _by_frames(models["ordinal"], jobs, fleet, index, at, types,
                          feasibility=feasibility)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    # types no family of these jobs ever completed on are kept out, with the reason
    assert (got["fit_probability"] == 0).any()
    unlikely = got["fit_probability"] < 0.5
    assert (got.loc[unlikely, "reason"] == "fit probability below threshold").all()
    assert not got.loc[unlikely, "rankable"].any()


def test_scoring_by_index_builds_no_frame(fleet, index, models, monkeypatch):
    """No candidate frame, no feature frame, no frame-level ranking: the columns as they are."""
    jobs = _jobs(fleet, 3)
    model = models["ordinal"]
    for at in (index.end + MINUTE, index.end):  # after the log, and inside it (the as-of join)
        expected = place(model, jobs, fleet.hardware, history=index, at=at)
        predictions = predict_candidates(model, jobs, fleet.hardware, history=index, at=at)
        with monkeypatch.context() as patch:
            def refuse(*args, **kwargs):
                raise AssertionError("a frame was built")

            patch.setattr(placement, "candidate_rows", refuse)
            patch.setattr(placement, "rank_candidates", refuse, raising=False)
            patch.setattr(FeatureColumns, "to_frame", refuse)
            pd.testing.assert_frame_equal(
                place(model, jobs, fleet.hardware, history=index, at=at), expected,
                check_exact=True)
            pd.testing.assert_frame_equal(
                predict_candidates(model, jobs, fleet.hardware, history=index, at=at),
                predictions, check_exact=True)
        pd.testing.assert_frame_equal(
            expected, place(model, jobs, fleet.hardware, history=fleet.attempts, at=at),
            check_exact=True)


def _variants(jobs):
    """The same jobs with columns of every dtype a user may hand over."""
    yield "as simulated", jobs
    yield "ids as text", jobs.assign(job_id=jobs["job_id"].astype(str))
    yield "ids as objects", jobs.assign(job_id=jobs["job_id"].astype(object))
    yield "categorical ids", jobs.assign(job_id=jobs["job_id"].astype("category"))
    yield "text model types", jobs.assign(model_type=jobs["model_type"].astype(str),
                                          model_family=jobs["model_family"].astype(object))
    yield "categorical precision", jobs.assign(precision=jobs["precision"].astype("category"))
    yield "nullable counts", jobs.assign(trainer_count=jobs["trainer_count"].astype("Int64"),
                                         batch_size=jobs["batch_size"].astype("Int32"))
    yield "float counts", jobs.assign(trainer_count=jobs["trainer_count"].astype(float))
    yield "missing seq_len", jobs.assign(seq_len=pd.array([None] * len(jobs), dtype="Int64"))
    yield "another index", jobs.set_axis(np.arange(len(jobs))[::-1] * 7)


def test_candidate_features_equal_the_frame_features_for_any_dtypes(fleet, index):
    jobs = _jobs(fleet, 5)
    types = fleet.hardware["hardware_type"].astype(str).tolist()[::2]
    at = index.end + MINUTE
    for name, variant in _variants(jobs):
        got = _candidate_frame(index, variant, types, at)
        expected = index.features(candidate_rows(variant, types, at=at))
        pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=name)


def test_candidate_features_at_each_jobs_own_time(fleet, index):
    jobs = _jobs(fleet, 4)
    types = fleet.hardware["hardware_type"].astype(str).tolist()[:5]
    own = index.end + MINUTE * np.arange(1, 5)
    for at, frame in ((own, jobs), (pd.Series(own), jobs),
                      (None, jobs.assign(submit_time=own))):
        got = _candidate_frame(index, frame, types, at)
        expected = index.features(candidate_rows(frame, types, at=at))
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got["job_days_since_last_run_any_hardware"].nunique() > 1


def test_candidate_features_on_a_time_zone_aware_log():
    catalog, log = make_catalog(), make_log(4, 200)
    log["submit_time"] = log["submit_time"].dt.tz_localize("America/New_York")
    index = HistoryIndex(log, catalog)
    jobs = log[["job_id", *LAUNCH_COLUMNS]].drop_duplicates("job_id").head(6)
    types = catalog["hardware_type"].tolist()
    at = (index.end + MINUTE).tz_convert("Asia/Tokyo")  # the same instant elsewhere
    got = _candidate_frame(index, jobs, types, at)
    expected = build_features(candidate_rows(jobs, types, at=at), catalog, history=log)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert (got["job_runs_any_hardware"] > 0).any()
    # a naive time against an aware log: the frame path's error, from place() too
    naive = index.end.tz_localize(None) + MINUTE
    model = LeapRegressor(n_estimators=4, random_state=0).fit(
        build_features(log, catalog), log["throughput"].fillna(1.0).to_numpy(float))
    errors = []
    for history in (index, log):
        with pytest.raises(SchemaError) as caught:
            place(model, jobs, catalog, history=history, at=naive, hardware_types=types)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "time-zone naive in the rows to describe" in errors[0]


def _broken_jobs(jobs):
    yield "null model type", jobs.assign(model_type=[None] + jobs["model_type"].tolist()[1:]), \
        "'model_type' is null"
    yield "blank precision", jobs.assign(precision=" "), "precision is blank"
    yield "zero trainers", jobs.assign(trainer_count=0), "trainer_count must be finite and > 0"
    yield "text batch size", jobs.assign(batch_size="large"), "'batch_size' has dtype"
    yield "no parallelism column", jobs.drop(columns="parallelism"), "missing column"


def test_bad_jobs_are_refused_alike(fleet, index, models):
    jobs = _jobs(fleet, 3)
    at = index.end + MINUTE
    types = fleet.hardware["hardware_type"].astype(str).tolist()
    for _name, broken, message in _broken_jobs(jobs):
        with pytest.raises(SchemaError, match=message):
            index.candidate_features(broken, types, at=at)
        for history in (index, fleet.attempts):
            with pytest.raises(SchemaError, match=message):
                place(models["ordinal"], broken, fleet.hardware, history=history, at=at,
                      hardware_types=types)
    # candidate lists candidate_rows refuses, refused alike
    for bad_types, message in (([], "empty"), ([types[0], types[0]], "repeats"),
                               (["no-such-accelerator"], "absent from the catalog")):
        for history in (index, fleet.attempts):
            with pytest.raises((SchemaError, ValueError), match=message):
                place(models["ordinal"], jobs, fleet.hardware, history=history, at=at,
                      hardware_types=bad_types)


def test_ranking_problems_are_refused(fleet, index, models):
    jobs = _jobs(fleet, 2)
    at = index.end + MINUTE
    model = models["ordinal"]
    hardware = fleet.hardware
    priced = hardware.assign(cost_per_device_hour=hardware["cost_per_device_hour"].astype(float))
    zero = priced.copy()
    zero.loc[zero.index[0], "cost_per_device_hour"] = 0.0
    with pytest.raises(ValueError, match=r"must be > 0 and finite; it is not for \['"):
        place(model, jobs, zero, history=index, at=at)
    unpriced = hardware["hardware_type"].astype(str).tolist() + ["not-in-this-catalog"]
    with pytest.raises((ValueError, SchemaError)):
        place(model, jobs, hardware, history=index, at=at, hardware_types=unpriced)
    twice = pd.concat([jobs, jobs.head(1)])
    errors = []
    for history in (index, fleet.attempts):
        with pytest.raises(ValueError) as caught:
            place(model, twice, hardware, history=history, at=at)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "more than once, in 2 row(s)" in errors[0]
    with pytest.raises(ValueError, match="top_k"):
        place(model, jobs, hardware, history=index, at=at, top_k=0)
    # a NumPy integer top_k answers as an int does
    pd.testing.assert_frame_equal(
        place(model, jobs, hardware, history=index, at=at, top_k=np.int64(2)),
        place(model, jobs, hardware, history=index, at=at, top_k=2),
        check_exact=True,
    )


class _Fixed:
    """A fitted model that predicts given values, whatever the rows."""

    def __init__(self, value):
        self.value = value

    def predict(self, X):
        return np.full(len(X), self.value)


@pytest.mark.parametrize("value, message", [(-1.0, "must be >= 0"), (np.inf, "infinite")])
def test_impossible_predictions_are_refused(fleet, index, value, message):
    with pytest.raises(ValueError, match=message):
        place(_Fixed(value), _jobs(fleet, 2), fleet.hardware, history=index,
              at=index.end + MINUTE)


def test_nan_predictions_rank_last_as_rank_candidates_ranks_them(fleet, index):
    jobs = _jobs(fleet, 2)
    at = index.end + MINUTE
    got = place(_Fixed(np.nan), jobs, fleet.hardware, history=index, at=at)
    types = fleet.hardware.loc[fleet.hardware["introduced"] <= at, "hardware_type"].astype(str)
    expected = _by_frames(_Fixed(np.nan), jobs, fleet, index, at, types.tolist())
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert not got["rankable"].any()


def test_predict_reads_feature_columns_as_their_frame(fleet, index, models):
    jobs = _jobs(fleet, 3)
    types = fleet.hardware["hardware_type"].astype(str).tolist()
    columns = index.candidate_features(jobs, types, at=index.end + MINUTE)
    frame = columns.to_frame()
    for kind in ("multiclass", "ordinal", "soft"):
        model = models[kind]
        np.testing.assert_array_equal(model._validate_X(columns, reset=False),
                                      model._validate_X(frame, reset=False))
        np.testing.assert_array_equal(model.predict(columns), model.predict(frame))
    # columns in another order are refused, as a reordered frame is
    model = models["ordinal"]
    reordered = {name: columns[name] for name in feature_names()[::-1]}
    with pytest.raises(ValueError, match="feature names"):
        model.predict(reordered)


@pytest.mark.parametrize("chunk", [1, 7, 50])
def test_predictions_in_chunks_are_those_of_one_pass(fleet, index, models, monkeypatch, chunk):
    """predict scores PREDICT_ROWS rows at a time: the same numbers, to the bit, on the
    column-major rows of feature columns and the row-major rows of an array."""
    import leapml.regressor as regressor

    jobs = _jobs(fleet, 6)
    types = fleet.hardware["hardware_type"].astype(str).tolist()
    columns = index.candidate_features(jobs, types, at=index.end + MINUTE)
    for kind in ("multiclass", "ordinal", "soft"):
        model = models[kind]
        encoded = model._validate_X(columns, reset=False)
        whole = model.predict(columns)
        assert len(whole) > 2 * chunk  # more than one chunk, and a last one cut short
        with monkeypatch.context() as patched:
            patched.setattr(regressor, "PREDICT_ROWS", chunk)
            np.testing.assert_array_equal(model.predict(columns), whole)
            np.testing.assert_array_equal(model._predict_encoded(np.ascontiguousarray(encoded)),
                                          whole)


def test_a_model_fitted_on_other_columns_is_refused_alike(fleet, index):
    """A model fitted on a subset of the features sees every feature and says so."""
    X = build_features(fleet.attempts, fleet.hardware)
    ok = (fleet.attempts["status"].astype(str) == "ok").to_numpy()
    y = fleet.attempts.loc[ok, "throughput"].to_numpy(float)
    subset = LeapRegressor(n_estimators=4, random_state=0).fit(X.loc[ok, X.columns[:20]], y)
    jobs = _jobs(fleet, 2)
    errors = []
    for history in (index, fleet.attempts):
        with pytest.raises(ValueError) as caught:
            place(subset, jobs, fleet.hardware, history=history, at=index.end + MINUTE)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "feature names" in errors[0].lower()


@pytest.mark.parametrize("values", [["b"] * 6, ["z7"] * 3, [None] * 4, ["a", None, "z5", "a"], ["c"]])
def test_a_categorical_of_many_categories_encodes_as_its_values(values):
    from leapml._encoding import ColumnEncoder

    encoder = ColumnEncoder.learn(pd.DataFrame({"m": pd.Categorical(["a", "b", "c"]), "x": [1.0, 2.0, 3.0]}))
    many = [f"z{i}" for i in range(400)] + ["a", "b", "c"]  # more categories than the rows use
    x = np.arange(len(values), dtype=float)
    as_categories = encoder.encode_columns([pd.Categorical(values, categories=many), x])
    as_text = encoder.encode_columns([np.array(values, dtype=object), x])
    expected = [{"a": 0.0, "b": 1.0, "c": 2.0}.get(v, np.nan) for v in values]
    np.testing.assert_array_equal(as_categories[:, 0], expected)
    np.testing.assert_array_equal(as_text, as_categories)
    np.testing.assert_array_equal(as_categories[:, 1], x)


def test_bad_calls_to_place_are_named_before_any_work(fleet, models):
    """history=None, a coverage out of (0, 1) on a model without intervals, and text times
    once met raw errors (a NoneType subscript, nothing, pandas' DateParseError)."""
    model, jobs = models["ordinal"], _jobs(fleet, 2)
    with pytest.raises(TypeError, match="history must be the attempt log .* got NoneType"):
        place(model, jobs, fleet.hardware, history=None, at=fleet.attempts["submit_time"].max())
    for coverage in (1.5, 0, True, "0.8"):
        with pytest.raises(ValueError, match="coverage must be a number in \\(0, 1\\)"):
            predict_candidates(model, jobs, fleet.hardware, history=fleet.attempts,
                               at=fleet.attempts["submit_time"].max(), coverage=coverage)
    dated = jobs.assign(submit_time=["2026-01-05", "garbage"])
    for types in (None, ["H100-80GB-SXM5"]):
        with pytest.raises(ValueError, match="'submit_time' must hold times"):
            place(model, dated, fleet.hardware, history=fleet.attempts, hardware_types=types)


def test_python_dash_m_runs_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "leapml", "--help"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stdout.startswith("usage: leapml")
