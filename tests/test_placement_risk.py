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
