"""place() with a calibrated model: intervals per candidate, new jobs wider, every objective."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml.features import HistoryIndex
from leapml.placement import fit_window, place, predict_candidates
from leapml.ranking import OBJECTIVES


@pytest.fixture(scope="module")
def setup(tiny_fleet):
    """The tiny fleet and a model calibrated on its window's last day."""
    model = fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5, calibration_days=1,
                       model=LeapRegressor(n_estimators=10, random_state=0))
    return tiny_fleet, model


def test_candidates_carry_an_interval_that_widens_for_new_jobs(setup):
    fleet, model = setup
    index = HistoryIndex(fleet.attempts, fleet.hardware)
    seen = fleet.jobs[fleet.jobs["job_id"].isin(fleet.attempts["job_id"])].head(5)
    # the same launch configurations under ids the log never saw
    new = seen.assign(job_id=[f"new-{i}" for i in range(len(seen))])
    columns = [c for c in fleet.jobs if not c.startswith("_")]
    out = predict_candidates(model, seen[columns], fleet.hardware, history=index)
    out_new = predict_candidates(model, new[columns], fleet.hardware, history=index)
    for frame in (out, out_new):
        assert (frame["throughput_low"] <= frame["predicted_throughput"]).all()
        assert (frame["predicted_throughput"] <= frame["throughput_high"]).all()
    width = np.log(out["throughput_high"] / out["throughput_low"])
    width_new = np.log(out_new["throughput_high"] / out_new["throughput_low"])
    # wider than on the types the job ran on; a type it never ran on is its own group, whose
    # interval can be as wide as a new job's (on this tiny log, wider)
    ran = set(zip(fleet.attempts["job_id"], fleet.attempts["hardware_type"].astype(str),
                  strict=True))
    own = np.array([(j, str(h)) in ran
                    for j, h in zip(out["job_id"], out["hardware_type"], strict=True)])
    assert own.any() and (~own).any()
    assert np.median(width_new) > np.median(width[own])


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_objective_ranks_from_place(setup, objective):
    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(3)
    ranked = place(model, jobs, fleet.hardware, history=fleet.attempts, objective=objective)
    for _, rows in ranked[ranked["rankable"]].groupby("job_id"):
        assert rows["score"].is_monotonic_decreasing
    if objective == "throughput_per_cost":
        np.testing.assert_allclose(ranked["score"], ranked["throughput_per_cost"])


def test_calibration_days_must_leave_days_to_fit(tiny_fleet):
    with pytest.raises(ValueError, match="calibration_days"):
        fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=3, calibration_days=3)


@pytest.mark.parametrize("objective", ["lower_quantile_per_cost", "expected_utility"])
def test_an_objective_on_the_interval_of_a_model_that_gives_none_is_refused(setup, objective):
    """Before, every candidate came back unrankable ("no prediction") and ordered by
    throughput alone, though each had its prediction."""
    from leapml import rank_candidates

    fleet, calibrated = setup
    plain = fit_window(fleet.attempts, fleet.hardware, window_days=5,
                       model=LeapRegressor(n_estimators=10, random_state=0))
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(2)
    with pytest.raises(ValueError, match=f"objective '{objective}' needs the low end"):
        place(plain, jobs, fleet.hardware, history=fleet.attempts, objective=objective)
    cost = dict(zip(fleet.hardware["hardware_type"], fleet.hardware["cost_per_device_hour"], strict=True))
    candidates = predict_candidates(plain, jobs, fleet.hardware, history=fleet.attempts)
    assert candidates["throughput_low"].isna().all()
    with pytest.raises(ValueError, match="and there is none"):
        rank_candidates(candidates, cost=cost, objective=objective)
    # an interval missing for some rows only is those rows' "no prediction"
    some = predict_candidates(calibrated, jobs, fleet.hardware, history=fleet.attempts)
    some.loc[some.index[:3], "throughput_low"] = np.nan
    ranked = rank_candidates(some, cost=cost, objective=objective)
    assert (~ranked["rankable"]).sum() >= 3 and ranked["rankable"].any()


def test_lognormal_mean_is_the_mean_of_the_interval_s_normal():
    """The mean read from an interval is that of the log-normal whose interval it is."""
    from scipy.stats import norm

    from leapml.ranking import lognormal_mean

    sigma, coverage = 0.4, 0.8
    z = norm.ppf(0.9)
    mean = lognormal_mean([100.0, 100.0, 100.0, 100.0],
                          [100 * np.exp(-z * sigma), np.nan, 0.0, 50.0],
                          [100 * np.exp(z * sigma), 150.0, np.inf, 40.0], coverage)
    assert mean[0] == pytest.approx(100 * np.exp(sigma ** 2 / 2))
    assert np.isnan(mean[1:]).all()  # no interval, an infinite one, one upside down: no mean
    with pytest.raises(ValueError, match="coverage"):
        lognormal_mean([1.0], [0.5], [2.0], 1.0)


def test_the_mean_objective_prefers_the_uncertain_of_two_like_predictions():
    """Same prediction and cost: the wider interval has the higher mean and ranks first; a
    candidate with no mean ranks by its prediction, one with no prediction is not rankable."""
    from leapml import rank_candidates

    frame = pd.DataFrame({"job_id": [1, 1, 1, 1], "hardware_type": ["a", "b", "c", "d"],
                          "predicted_throughput": [100.0, 100.0, 110.0, np.nan],
                          "throughput_mean": [105.0, 120.0, np.nan, 500.0]})
    cost = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}
    ranked = rank_candidates(frame, cost=cost, objective="mean_throughput_per_cost")
    assert ranked["hardware_type"].tolist() == ["b", "c", "a", "d"]
    assert ranked["score"].tolist()[:3] == [120.0, 110.0, 105.0]
    assert ranked["reason"].iloc[-1] == "no prediction"
    # the median objective reads the prediction alone
    median = rank_candidates(frame, cost=cost, objective="expected_throughput_per_cost")
    assert median["hardware_type"].tolist()[:1] == ["c"]
    with pytest.raises(ValueError, match="mean throughput"):
        rank_candidates(frame.assign(throughput_mean=[1.0, -1.0, 1.0, 1.0]), cost=cost,
                        objective="mean_throughput_per_cost")


def test_place_ranks_by_the_mean_its_candidates_carry(setup):
    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(4)
    out = predict_candidates(model, jobs, fleet.hardware, history=fleet.attempts)
    assert (out["throughput_mean"] > out["predicted_throughput"]).all()
    ranked = place(model, jobs, fleet.hardware, history=fleet.attempts,
                   objective="mean_throughput_per_cost")
    rankable = ranked[ranked["rankable"]]
    np.testing.assert_allclose(rankable["score"], rankable["fit_probability"].fillna(1.0)
                               * rankable["throughput_mean"] / rankable["cost_per_hour"])
    plain = fit_window(fleet.attempts, fleet.hardware, window_days=5,
                       model=LeapRegressor(n_estimators=10, random_state=0))
    assert predict_candidates(plain, jobs, fleet.hardware,
                              history=fleet.attempts)["throughput_mean"].isna().all()


def test_the_mean_does_not_move_with_the_coverage_shown(setup):
    """Before, the mean was read from the interval shown: 2.3 times the prediction at coverage
    0.01, 1.03 at 0.05, 1.09 at 0.5, and it changed picks."""
    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(3)
    means = [predict_candidates(model, jobs, fleet.hardware, history=fleet.attempts,
                                coverage=c)["throughput_mean"] for c in (0.05, 0.5, 0.8, 0.95)]
    for other in means[:2] + means[3:]:
        np.testing.assert_allclose(other, means[2])


def test_an_infinite_interval_is_no_interval_to_rank_by(setup):
    """Before, coverage 0.999 gave every candidate [0, inf]: every low end 0, every score 0, and
    the interval objectives ranked by throughput alone, whatever it cost."""
    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(2)
    with pytest.warns(UserWarning, match="infinite interval"):
        out = predict_candidates(model, jobs, fleet.hardware, history=fleet.attempts, coverage=0.999)
    assert out[["throughput_low", "throughput_high"]].isna().all().all()
    assert out["throughput_mean"].notna().all()  # read at 0.8, where the calibration answers
    with pytest.warns(UserWarning, match="infinite interval"), \
            pytest.raises(ValueError, match="none is finite at coverage 0.999"):
        place(model, jobs, fleet.hardware, history=fleet.attempts, coverage=0.999,
              objective="lower_quantile_per_cost")


def test_known_infeasible_types_are_never_ranked(setup):
    """Before, a type known not to fit was ranked at min_fit_probability=0."""
    fleet, model = setup
    job = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(1)
    types = ["H100-80GB-SXM5", "L4-24GB", "A100-80GB-SXM4"]
    known = pd.DataFrame({"job_id": job["job_id"].iloc[0], "hardware_type": types,
                          "feasible": [False, True, True]})
    for threshold in (0.0, 0.5):
        ranked = place(model, job, fleet.hardware, history=fleet.attempts, hardware_types=types,
                       feasibility=known, min_fit_probability=threshold)
        h100 = ranked[ranked["hardware_type"] == "H100-80GB-SXM5"].iloc[0]
        assert not h100["rankable"] and h100["reason"] == "marked infeasible"
    with pytest.raises(ValueError, match="both 'feasible' and 'fit_probability'"):
        place(model, job, fleet.hardware, history=fleet.attempts, hardware_types=types,
              feasibility=known.assign(fit_probability=1.0))


def test_a_mean_column_named_but_absent_is_refused():
    from leapml import rank_candidates

    frame = pd.DataFrame({"job_id": [1, 1], "hardware_type": ["a", "b"],
                          "predicted_throughput": [1.0, 2.0]})
    with pytest.raises(ValueError, match="throughput_avg"):
        rank_candidates(frame, cost={"a": 1.0, "b": 1.0}, mean_col="throughput_avg")
    # the default column may be absent: the prediction ranks
    assert rank_candidates(frame, cost={"a": 1.0, "b": 1.0})["hardware_type"].tolist() == ["b", "a"]


def test_explain_picks_reads_ids_as_place_does(setup):
    from leapml.placement import explain_picks

    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(2)
    ranked = place(model, jobs, fleet.hardware, history=fleet.attempts)
    expected = explain_picks(model, ranked, jobs, fleet.hardware, history=fleet.attempts, top=2)
    as_text = explain_picks(model, ranked.assign(job_id=ranked["job_id"].astype(str)), jobs,
                            fleet.hardware, history=fleet.attempts, top=np.int64(2))
    np.testing.assert_allclose(as_text["contribution"], expected["contribution"])
    with pytest.raises(ValueError, match=r"ranked lacks column\(s\) \['rank'\]"):
        explain_picks(model, ranked.drop(columns="rank"), jobs, fleet.hardware,
                      history=fleet.attempts)


def test_calibration_days_for_a_model_that_cannot_calibrate_is_refused_before_the_fit(tiny_fleet):
    """Before, the model was fitted first, then an AttributeError came from inside."""
    from leapml.evaluation.baselines import LookupTableRegressor

    with pytest.raises(TypeError, match="needs a model with calibrate .*LookupTableRegressor"):
        fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5, calibration_days=1,
                   model=LookupTableRegressor())


def test_submit_times_given_as_text_are_named_on_the_index_path(setup):
    """Before, an index read text times with a numpy TypeError from deep inside."""
    from leapml.features import HistoryIndex

    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(2)
    jobs = jobs.assign(submit_time=str(fleet.attempts["submit_time"].max()))
    with pytest.raises(ValueError, match="'submit_time' must hold times"):
        place(model, jobs, fleet.hardware, history=HistoryIndex(fleet.attempts, fleet.hardware))


def test_a_type_the_catalog_gives_twice_is_named_as_the_catalog_s(setup):
    """Before, the error blamed hardware_types, an argument not given."""
    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(1)
    twice = pd.concat([fleet.hardware, fleet.hardware.tail(1)], ignore_index=True)
    with pytest.raises(ValueError, match=r"the catalog \(hardware\) gives hardware_type"):
        place(model, jobs, twice, history=fleet.attempts)


def test_an_index_refuses_a_catalog_of_other_specs_but_not_of_other_prices(setup):
    """Before, an index built with one catalog read its specs whatever catalog place was given."""
    from leapml.features import HistoryIndex

    fleet, model = setup
    jobs = fleet.jobs[[c for c in fleet.jobs if not c.startswith("_")]].head(1)
    index = HistoryIndex(fleet.attempts, fleet.hardware)
    bigger = fleet.hardware.assign(memory_gb=fleet.hardware["memory_gb"] * 2)
    with pytest.raises(ValueError, match="specs are not those of the catalog the HistoryIndex"):
        place(model, jobs, bigger, history=index)
    cheaper = fleet.hardware.assign(cost_per_device_hour=fleet.hardware["cost_per_device_hour"] / 2)
    same = place(model, jobs, fleet.hardware.copy(), history=index)
    assert place(model, jobs, cheaper, history=index)["hardware_type"].tolist() == \
        same["hardware_type"].tolist()


def test_a_job_id_given_again_for_another_model_is_another_configuration(setup):
    """Before, a logged job's id given to another model of its family, at the same launch
    fields, read the first model's runs as its own in that configuration: the blend with the
    job's runs and the carried miss moved its predictions by 1.5 to 4.7 times."""
    from leapml.features import HistoryIndex, build_features, candidate_rows

    fleet, _ = setup
    log = fleet.attempts
    ran = log[log["status"] == "ok"].iloc[0]
    other = log[(log["model_family"] == ran["model_family"])
                & (log["model_type"] != ran["model_type"])].iloc[0]
    columns = [c for c in fleet.jobs if not c.startswith("_")]
    launch = {c: ran[c] for c in ("job_id", "trainer_count", "batch_size", "seq_len", "precision",
                                  "parallelism")}
    again = fleet.jobs.loc[fleet.jobs["job_id"] == other["job_id"], columns].assign(**launch)
    same = again.assign(model_type=ran["model_type"])  # the logged model itself: its runs count
    at = log["submit_time"].max() + pd.Timedelta(minutes=1)
    types = [str(ran["hardware_type"])]
    index = HistoryIndex(log, fleet.hardware)
    for jobs, runs in ((again, 0), (same, None)):
        rows = candidate_rows(jobs, types, at=at)
        for X in (build_features(rows, fleet.hardware, history=log), index.features(rows)):
            seen = X["job_config_runs_same_hardware"].iloc[0]
            assert seen == 0 if runs == 0 else seen > 0
