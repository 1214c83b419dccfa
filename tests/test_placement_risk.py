"""place() with a calibrated model: intervals per candidate, new jobs wider, every objective."""

from __future__ import annotations

import numpy as np
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
    assert np.median(width_new) > np.median(width)


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
