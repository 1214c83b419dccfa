"""fit_window, predict_candidates and place: the calls a scheduler integration makes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml._job_miss import predict_by_job
from leapml.placement import explain_picks, fit_window, place, predict_candidates


@pytest.fixture(scope="module")
def model(tiny_fleet):
    return fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5,
                      model=LeapRegressor(n_estimators=10, random_state=0))


def _jobs(fleet, n=3):
    return fleet.jobs.head(n)


def test_fit_window_trains_only_on_the_window(tiny_fleet):
    attempts = tiny_fleet.attempts
    end = attempts["submit_time"].max().floor("D") + pd.Timedelta(days=1)
    # the window holds the runs that finished in it: known earlier is outside
    older = attempts["end_time"] < end - pd.Timedelta(days=2)
    assert (older & (attempts["submit_time"] >= end - pd.Timedelta(days=3))).any()
    changed = attempts.copy()
    changed.loc[older, "throughput"] = changed.loc[older, "throughput"] * 3.0
    kwargs = {"window_days": 2, "model": LeapRegressor(n_estimators=5, random_state=0)}
    a = fit_window(attempts, tiny_fleet.hardware, **kwargs)
    b = fit_window(changed, tiny_fleet.hardware, **kwargs)
    # The bin edges come from the training labels alone: rows before the window
    # (rescaled here) must not be among them.
    np.testing.assert_array_equal(a.bin_edges_, b.bin_edges_)
    # Control: a window that reaches back over the rescaled rows sees them.
    kwargs["window_days"] = 8
    wide_a = fit_window(attempts, tiny_fleet.hardware, **kwargs)
    wide_b = fit_window(changed, tiny_fleet.hardware, **kwargs)
    assert not np.array_equal(wide_a.bin_edges_, wide_b.bin_edges_)


def test_fit_window_never_trains_on_runs_still_going(tiny_fleet):
    attempts = tiny_fleet.attempts
    until = attempts["submit_time"].max().floor("D") - pd.Timedelta(days=1)
    going = (attempts["submit_time"] < until) & (attempts["end_time"] >= until)
    assert (going & (attempts["status"] == "ok")).sum() > 10
    changed = attempts.copy()
    changed.loc[going, "throughput"] = changed.loc[going, "throughput"] * 3.0
    kwargs = {"window_days": 3, "until": until, "model": LeapRegressor(n_estimators=5, random_state=0)}
    a = fit_window(attempts, tiny_fleet.hardware, **kwargs)
    b = fit_window(changed, tiny_fleet.hardware, **kwargs)
    np.testing.assert_array_equal(a.bin_edges_, b.bin_edges_)
    # control: read as known at submission, the same runs are trained on
    kwargs["outcome_known"] = "submit_time"
    leaky_a = fit_window(attempts, tiny_fleet.hardware, **kwargs)
    leaky_b = fit_window(changed, tiny_fleet.hardware, **kwargs)
    assert not np.array_equal(leaky_a.bin_edges_, leaky_b.bin_edges_)


def test_fit_window_refuses_an_empty_window(tiny_fleet):
    with pytest.raises(ValueError, match="no completed attempts"):
        fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=1,
                   until="2000-01-01")
    with pytest.raises(ValueError, match="window_days"):
        fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=0)


def test_predict_candidates_covers_every_available_type(tiny_fleet, model):
    jobs = _jobs(tiny_fleet)
    at = tiny_fleet.attempts["submit_time"].max()
    out = predict_candidates(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts, at=at)
    available = tiny_fleet.hardware.loc[tiny_fleet.hardware["introduced"] <= at, "hardware_type"]
    assert len(out) == len(jobs) * len(available)
    assert set(out["hardware_type"]) == set(available.astype(str))
    assert (out["predicted_throughput"] > 0).all()


def test_place_ranks_by_throughput_per_cost(tiny_fleet, model):
    ranked = place(model, _jobs(tiny_fleet), tiny_fleet.hardware, history=tiny_fleet.attempts)
    cost = tiny_fleet.hardware.set_index("hardware_type")["cost_per_device_hour"]
    expected = ranked["predicted_throughput"] / (
        ranked["hardware_type"].map(cost).astype(float) * ranked["trainer_count"]
    )
    assert np.allclose(ranked["throughput_per_cost"], expected)
    for _, rows in ranked.groupby("job_id", sort=False):
        assert rows["rank"].tolist() == list(range(1, len(rows) + 1))
        assert rows["throughput_per_cost"].is_monotonic_decreasing


def test_place_top_k_keeps_the_best(tiny_fleet, model):
    full = place(model, _jobs(tiny_fleet), tiny_fleet.hardware, history=tiny_fleet.attempts)
    top = place(model, _jobs(tiny_fleet), tiny_fleet.hardware, history=tiny_fleet.attempts, top_k=2)
    assert (top.groupby("job_id").size() == 2).all()
    best = full[full["rank"] <= 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(top.reset_index(drop=True), best)


def test_candidates_read_the_same_features_from_their_families_alone(tiny_fleet, model):
    from leapml.features import build_features, candidate_rows

    jobs = tiny_fleet.jobs.head(4)
    at = tiny_fleet.attempts["submit_time"].max()
    types = tiny_fleet.hardware["hardware_type"].astype(str).tolist()[:6]
    out = predict_candidates(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts,
                             at=at, hardware_types=types)
    rows = candidate_rows(jobs, types, at=at)
    full = build_features(rows, tiny_fleet.hardware, history=tiny_fleet.attempts)
    # a job's candidates are predicted together (its runs' miss carries to its other types)
    together, _ = predict_by_job(model, full, pd.factorize(rows["job_id"])[0])
    np.testing.assert_array_equal(out["predicted_throughput"].to_numpy(), together)
    assert tiny_fleet.attempts["model_family"].nunique() > jobs["model_family"].nunique()


def test_a_history_index_gives_the_same_predictions_and_ranking(tiny_fleet, model):
    from leapml.features import HistoryIndex

    attempts, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    index = HistoryIndex(attempts, hardware)
    jobs = _jobs(tiny_fleet, 5)
    at = attempts["submit_time"].max() + pd.Timedelta(minutes=5)
    # after the log, within it (the index joins there), and at the default time
    for when in (at, attempts["submit_time"].iloc[len(attempts) // 2], None):
        by_log = predict_candidates(model, jobs, hardware, history=attempts, at=when)
        by_index = predict_candidates(model, jobs, hardware, history=index, at=when)
        pd.testing.assert_frame_equal(by_index, by_log, check_exact=True)
    assert by_log["predicted_throughput"].nunique() > 1
    pd.testing.assert_frame_equal(
        place(model, jobs, hardware, history=index, top_k=3),
        place(model, jobs, hardware, history=attempts, top_k=3),
        check_exact=True,
    )
    # the default time follows the log's latest attempt, even a failed one
    failed_last = attempts.assign(status=attempts["status"].astype(str))
    latest = failed_last["submit_time"].idxmax()
    failed_last.loc[latest, ["status", "throughput"]] = ["failed", np.nan]
    pd.testing.assert_frame_equal(
        predict_candidates(model, jobs, hardware, history=HistoryIndex(failed_last, hardware)),
        predict_candidates(model, jobs, hardware, history=failed_last),
        check_exact=True,
    )


@pytest.mark.parametrize(("argument", "column"), [("jobs", "batch_size"), ("hardware", "cost_per_device_hour"),
                                                  ("history", "job_id"), ("feasibility", "feasible")])
def test_a_column_given_twice_is_named(tiny_fleet, model, argument, column):
    jobs = _jobs(tiny_fleet, 2)
    types = tiny_fleet.hardware["hardware_type"].head(3)
    known = predict_candidates(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts,
                               hardware_types=types)[["job_id", "hardware_type"]].assign(feasible=True)
    given = {"jobs": jobs, "hardware": tiny_fleet.hardware, "history": tiny_fleet.attempts,
             "feasibility": known}
    frame = given[argument]
    given[argument] = pd.concat([frame, frame[[column]]], axis=1)
    match = rf"{argument} has column\(s\) \['{column}'\] more than once"
    with pytest.raises(ValueError, match=match):
        place(model, given["jobs"], given["hardware"], history=given["history"], hardware_types=types,
              feasibility=given["feasibility"])
    if argument != "feasibility":  # explaining the picks reads the same frames
        ranked = place(model, jobs, tiny_fleet.hardware, history=tiny_fleet.attempts,
                       hardware_types=types)
        with pytest.raises(ValueError, match=match):
            explain_picks(model, ranked, given["jobs"], given["hardware"], history=given["history"])
