"""A job's miss on the types it ran on, carried to its other candidates when they are ranked."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml._job_miss import HISTORY_TRANSFER, job_shift, predict_by_job
from leapml.features import build_features, candidate_rows
from leapml.placement import CARRIED_MISS, explain_picks, fit_window, place, predict_candidates
from leapml.regressor import HISTORY_COLUMNS
from leapml.training import history_groups

MEAN, RUNS = HISTORY_COLUMNS


@pytest.fixture(scope="module")
def model(tiny_fleet):
    return fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5,
                      model=LeapRegressor(n_estimators=10, random_state=0))


def _ran_and_new(fleet):
    """A job that completed runs by the log's end, and one submitted then that never ran."""
    log = fleet.attempts
    ran = log.loc[log["status"].astype(str) == "ok", "job_id"].value_counts().index[0]
    never = fleet.jobs.loc[~fleet.jobs["job_id"].isin(log["job_id"]), "job_id"]
    jobs = fleet.jobs[fleet.jobs["job_id"] == ran]
    if len(never):
        jobs = pd.concat([jobs, fleet.jobs[fleet.jobs["job_id"] == never.iloc[0]]])
    return jobs.drop(columns="submit_time", errors="ignore"), ran


def test_the_miss_is_the_model_before_its_blend_and_carries_by_the_share(tiny_fleet, model):
    jobs, ran = _ran_and_new(tiny_fleet)
    at = tiny_fleet.attempts["end_time"].max() + pd.Timedelta(hours=1)
    names = tiny_fleet.hardware["hardware_type"].astype(str).tolist()
    rows = candidate_rows(jobs.head(1), names, at=at)
    X = build_features(rows, tiny_fleet.hardware, history=tiny_fleet.attempts)
    runs = X[RUNS].fillna(0).to_numpy()
    assert (runs > 0).any() and (runs == 0).any()  # ran on some types only
    unblended = copy.deepcopy(model)
    unblended.history_columns_in_ = None  # the model alone, not leaning on the runs
    own = np.log(unblended.predict(X))
    weights = runs[runs > 0]
    miss = np.average(X[MEAN].to_numpy()[runs > 0] - own[runs > 0], weights=weights)
    predicted, shift = predict_by_job(model, X, np.zeros(len(X), dtype=int))
    np.testing.assert_allclose(shift[runs == 0], HISTORY_TRANSFER * miss)
    assert (shift[runs > 0] == 0).all()
    np.testing.assert_allclose(predicted, model.predict(X) * np.exp(shift))
    assert abs(miss) > 1e-3  # the check above could fail: there is a miss to carry


def test_only_the_jobs_own_runs_move_its_candidates():
    X = pd.DataFrame({MEAN: [np.log(300.0), np.nan, np.nan, np.nan],
                      RUNS: [2, 0, 0, np.nan]})
    predicted = np.full(4, 100.0)
    # two jobs: the first ran on its first type, the second never ran
    shift = job_shift(object(), X, ["a", "a", "b", "b"], predicted, transfer=1.0)
    np.testing.assert_allclose(shift, [0.0, np.log(3.0), 0.0, 0.0])
    # without the columns, or with no share, nothing moves
    assert (job_shift(object(), X.drop(columns=RUNS), [0] * 4, predicted) == 0).all()
    assert (job_shift(object(), X, [0] * 4, predicted, transfer=0.0) == 0).all()
    assert (job_shift(object(), X.to_numpy(), [0] * 4, predicted) == 0).all()


def test_place_and_predict_candidates_carry_the_miss_and_move_the_interval(tiny_fleet):
    model = fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5, calibration_days=1,
                       model=LeapRegressor(n_estimators=10, random_state=0))
    jobs, ran = _ran_and_new(tiny_fleet)
    out = predict_candidates(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts)
    at = tiny_fleet.attempts["submit_time"].max() + pd.Timedelta(microseconds=1)
    names = out["hardware_type"].astype(str).unique().tolist()
    X = build_features(candidate_rows(jobs, names, at=at), tiny_fleet.hardware,
                       history=tiny_fleet.attempts)
    alone = model.predict(X)
    moved = ~np.isclose(out["predicted_throughput"].to_numpy(), alone)
    assert moved.any()
    # only the ran job's types without runs in its configuration move
    assert set(out.loc[moved, "job_id"]) == {ran}
    assert (X.loc[moved, RUNS].fillna(0) == 0).all()
    # the interval moves with its prediction
    low = model.predict_interval(X, coverage=0.8, groups=history_groups(X))[:, 0]
    np.testing.assert_allclose(out["throughput_low"], low * out["predicted_throughput"] / alone)
    ranked = place(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts)
    merged = ranked.merge(out, on=["job_id", "hardware_type"], suffixes=("", "_candidates"))
    np.testing.assert_allclose(merged["predicted_throughput"],
                               merged["predicted_throughput_candidates"])


def test_explain_picks_names_the_carried_miss(tiny_fleet, model):
    jobs, ran = _ran_and_new(tiny_fleet)
    ranked = place(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts)
    # make the ran job's pick one its runs moved: the best of its types without runs
    at = tiny_fleet.attempts["submit_time"].max() + pd.Timedelta(microseconds=1)
    rows = candidate_rows(jobs, ranked["hardware_type"].astype(str).unique().tolist(), at=at)
    X = build_features(rows, tiny_fleet.hardware, history=tiny_fleet.attempts)
    unmoved = ranked.merge(rows[["job_id", "hardware_type"]].assign(
        hardware_type=rows["hardware_type"].astype(str), runs=X[RUNS].fillna(0).to_numpy()),
        on=["job_id", "hardware_type"])
    pick = unmoved[(unmoved["job_id"] == ran) & (unmoved["runs"] == 0)].iloc[[0]]
    reasons = explain_picks(model, pick.assign(rank=1), jobs[jobs["job_id"] == ran],
                            tiny_fleet.hardware, history=tiny_fleet.attempts, top=50)
    carried = reasons[reasons["feature"] == CARRIED_MISS]
    assert len(carried) == 1
    alone = model.predict(X[(rows["job_id"] == ran).to_numpy()
                            & (rows["hardware_type"].astype(str) == pick["hardware_type"].iloc[0]).to_numpy()])
    expected = np.log(pick["predicted_throughput"].iloc[0] / alone[0])
    np.testing.assert_allclose(carried["contribution"], expected)
    assert carried["value"].iloc[0] == f"x{np.exp(expected):.3g}"


def test_job_codes_and_share_are_checked():
    from leapml.placement import predict_by_job

    class Model:
        def predict(self, X):
            return np.ones(len(X))

    X = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="job_codes must number each of the 2 rows"):
        predict_by_job(Model(), X, [0])
    with pytest.raises(ValueError, match="transfer must be a share"):
        predict_by_job(Model(), X, [0, 0], transfer=float("nan"))


def test_a_row_that_is_all_runs_carries_nothing_and_breaks_nothing():
    """Before, a blend weight of 1 divided by zero and gave the job's other types no prediction."""
    from leapml._job_miss import job_shift

    class Model:
        history_prior = 1e-300
        history_columns_in_ = ("mean", "runs")

    X = pd.DataFrame({"job_config_mean_log_throughput_same_hardware": [np.log(200.0), np.nan],
                      "job_config_runs_same_hardware": [3, 0]})
    shift = job_shift(Model(), X, [0, 0], np.array([200.0, 100.0]))
    assert np.isfinite(shift).all() and (shift == 0).all()
