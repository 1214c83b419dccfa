"""placement_backtest: learned feasibility, failed launches, objectives, held-out hardware."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml.evaluation.placement_backtest import placement_backtest
from leapml.feasibility import FeasibilityClassifier
from leapml.placement import EVIDENCE_COLUMNS
from leapml.ranking import OBJECTIVES


@pytest.fixture(scope="module")
def held_out_result(tiny_fleet):
    counts = tiny_fleet.attempts["hardware_type"].astype(str).value_counts()
    held_out = counts.index[0]
    result = placement_backtest(
        tiny_fleet.attempts, tiny_fleet.hardware, oracle=tiny_fleet.expected_throughput,
        models={"leap": LeapRegressor(n_estimators=8, random_state=0)},
        feasibility=FeasibilityClassifier(n_estimators=10, random_state=0,
                                          evidence_columns=list(EVIDENCE_COLUMNS)),
        window_days=5, nights=2, jobs_per_night=40, held_out_hardware=held_out,
        min_fit_probability=[0.5, 0.9],
        fit_at_submission=tiny_fleet.fit_probability_at_submission,
    )
    return result, held_out


def test_an_infeasible_pick_counts_as_a_failed_launch(held_out_result):
    picks = held_out_result[0].picks
    assert (picks.loc[picks["infeasible"], "regret"] == 1.0).all()
    assert picks["regret"].between(0, 1).all()
    # true feasibility never picks where a job cannot run
    true = picks[picks["feasibility"] == "true"]
    assert not true["infeasible"].any()


def test_a_type_no_model_trained_on_is_never_picked_with_learned_feasibility(held_out_result):
    result, held_out = held_out_result
    learned = result.picks[result.picks["feasibility"] == "learned"]
    assert not (learned["picked"] == held_out).any()
    assert "held_out_hardware" in set(result.intervals["slice"])


def test_every_objective_is_scored_and_summarised(held_out_result):
    summary = held_out_result[0].summary()
    learned = summary[summary["feasibility"] == "learned"]
    assert set(learned["objective"]) == set(OBJECTIVES)
    assert np.isfinite(summary["mean_regret"]).all()
    # a job with no rankable candidate is a failed launch, and counted apart too
    assert (summary["no_candidate_rate"] <= summary["infeasible_pick_rate"]).all()
    picks = held_out_result[0].picks
    assert (picks.loc[picks["no_candidate"], "regret"] == 1).all()
    # with true feasibility every placed job has a feasible type, which the cascade predicts
    leap_true = picks[(picks["feasibility"] == "true") & (picks["policy"] == "leap")]
    assert len(leap_true) and not leap_true["no_candidate"].any()
    scores = held_out_result[0].feasibility_scores
    assert scores[["precision", "recall", "recall_infeasible"]].stack().between(0, 1).all()


def test_learned_feasibility_is_scored_at_every_threshold(held_out_result):
    result = held_out_result[0]
    learned = result.picks[result.picks["feasibility"] == "learned"]
    assert set(learned["min_fit_probability"]) == {0.5, 0.9}
    # no threshold changes a pick made with known (0 or 1) or no probabilities
    known = ~result.picks["feasibility"].isin(["learned", "submission"])
    assert result.picks.loc[known, "min_fit_probability"].isna().all()
    summary = result.summary()
    assert len(summary[summary["feasibility"] == "learned"]) == 2 * len(OBJECTIVES)  # thresholds x objectives
    scores = result.feasibility_scores.groupby("min_fit_probability")[["recall"]].mean()
    # a stricter threshold lets fewer candidates fit: recall cannot rise
    assert scores.loc[0.9, "recall"] <= scores.loc[0.5, "recall"]


def test_the_submission_bound_differs_from_the_truth_only_on_new_jobs(held_out_result):
    from leapml.ranking import DEFAULT_OBJECTIVE

    picks = held_out_result[0].picks
    bound = picks[picks["feasibility"] == "submission"]
    assert set(bound["objective"]) == {DEFAULT_OBJECTIVE}
    assert set(bound["min_fit_probability"]) == {0.5, 0.9}
    seen_picks = {}
    for level, rows in bound.groupby("min_fit_probability"):
        rows = rows.set_index(["night", "policy", "job_id"])
        seen = rows["job_history"] != "new"
        assert seen.any() and (~seen).any()
        # a job with runs is placed by the truth (its runs measured its memory): never where
        # it cannot run, and the same at every threshold, its probabilities being 0 or 1 (the
        # truth's own picks rank by another objective, the point estimate, so may differ)
        assert not rows.loc[seen, "infeasible"].any()
        seen_picks[level] = rows.loc[seen, "picked"]
    assert seen_picks[0.5].equals(seen_picks[0.9])



def test_the_submission_bound_reads_its_probability_for_new_jobs_only(tiny_fleet):
    def unsure(jobs, hardware_types):  # every new job fits anywhere with probability 0.6
        return tiny_fleet.fit_probability_at_submission(jobs, hardware_types, draws=1).assign(
            fit_probability=0.6)

    result = placement_backtest(
        tiny_fleet.attempts, tiny_fleet.hardware, oracle=tiny_fleet.expected_throughput,
        models={"leap": LeapRegressor(n_estimators=4, random_state=0)},
        feasibility=FeasibilityClassifier(n_estimators=4, random_state=0),
        window_days=5, nights=1, jobs_per_night=40, min_fit_probability=[0.5, 0.9],
        fit_at_submission=unsure)
    bound = result.picks[result.picks["feasibility"] == "submission"]
    new = bound["job_history"] == "new"
    strict = bound["min_fit_probability"] == 0.9
    assert new.any() and (~new).any()
    # above the threshold every new job is left without a candidate: a failed launch
    assert bound.loc[new & strict, "no_candidate"].all()
    assert (bound.loc[new & strict, "regret"] == 1).all()
    # below it they are placed, and the jobs with runs never answer to the probability
    assert not bound.loc[new & ~strict, "no_candidate"].any()
    assert not bound.loc[~new, "no_candidate"].any()


def test_min_fit_probability_is_checked(tiny_fleet):
    with pytest.raises(ValueError, match="min_fit_probability"):
        placement_backtest(tiny_fleet.attempts, tiny_fleet.hardware,
                           oracle=tiny_fleet.expected_throughput,
                           models={"leap": LeapRegressor(n_estimators=2)}, min_fit_probability=[0.5, 1.5])


def test_if_none_fit_is_checked_before_any_fit(tiny_fleet):
    class Unfittable:
        def fit(self, X, y):
            raise AssertionError("fitted before the arguments were checked")

    with pytest.raises(ValueError, match="if_none_fit must be one of"):
        placement_backtest(tiny_fleet.attempts, tiny_fleet.hardware,
                           oracle=tiny_fleet.expected_throughput,
                           models={"leap": Unfittable()}, if_none_fit="best")


def test_each_pick_says_what_the_log_knew_of_its_job(held_out_result, tiny_fleet):
    from leapml.evaluation.placement_backtest import JOB_HISTORY
    from leapml.features import outcome_known_time

    result, held_out = held_out_result
    picks = result.picks
    assert set(picks["job_history"]) <= set(JOB_HISTORY) and picks["job_history"].notna().all()
    attempts = tiny_fleet.attempts
    known = outcome_known_time(attempts)
    done = ((attempts["status"].astype(str) == "ok")
            & (attempts["hardware_type"].astype(str) != held_out)).to_numpy()
    checked = set()
    t = attempts["submit_time"]
    CONFIGURATION = ("trainer_count", "batch_size", "seq_len", "precision", "parallelism")
    for pick in picks.drop_duplicates(["night", "job_id"]).itertuples():
        night = pd.Timestamp(pick.night)
        mine = (attempts["job_id"] == pick.job_id).to_numpy()
        submitted = t[mine & ((t >= night) & (t < night + pd.Timedelta(days=1))).to_numpy()].min()
        before = done & mine & (known < submitted).to_numpy()
        launch = attempts[mine & (t == submitted).to_numpy()].iloc[0]
        alike = np.logical_and.reduce([
            (attempts[c].isna() if pd.isna(launch[c]) else attempts[c] == launch[c])
            .fillna(False).to_numpy(bool) for c in CONFIGURATION])
        # a new job completed nothing the features could read; the others did, and
        # "this_configuration" in the launch configuration it is submitted with
        assert bool(before.any()) == (pick.job_history != "new"), pick
        assert bool((before & alike).any()) == (pick.job_history == "this_configuration"), pick
        checked.add(pick.job_history)
    assert {"new", "this_configuration"} <= checked  # both kinds occur on this log
    by = result.summary(by="job_history")
    overall = result.summary()
    keys = ["policy", "feasibility", "min_fit_probability", "objective"]
    assert (by.groupby(keys, dropna=False)["jobs"].sum().to_numpy()
            == overall.set_index(keys)["jobs"].to_numpy()).all()
    with pytest.raises(ValueError, match="no column 'tenant'"):
        result.summary(by="tenant")


def test_the_regret_gap_script_splits_the_gap_by_job_history():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "docs" / "scripts" / "regret_gap.py"
    spec = importlib.util.spec_from_file_location("regret_gap", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    picks = pd.DataFrame({
        "night": [0] * 8, "job_id": [1, 2, 3, 4] * 2,
        "feasibility": ["learned"] * 4 + ["true"] * 4, "objective": ["throughput_per_cost"] * 8,
        "job_history": ["new", "new", "this_configuration", "other_configuration"] * 2,
        "regret": [1.0, 0.3, 0.1, 0.2, 0.1, 0.1, 0.1, 0.0],
        "infeasible": [True, False, False, False] * 2,
    })
    table = module.gap_table(picks).set_index("jobs")
    # job 1 fails (0.9 of gap), job 2 is 0.2 worse, job 4 0.2: over 4 jobs, in points
    assert table.loc["new", "points of the gap"] == pytest.approx(100 * 1.1 / 4)
    assert table.loc["new", "of which failed launches"] == pytest.approx(100 * 0.9 / 4)
    assert table.loc["this_configuration", "points of the gap"] == pytest.approx(0)
    assert table.loc["all", "points of the gap"] == pytest.approx(
        table.drop(index="all")["points of the gap"].sum())
    assert table.loc["new", "share %"] == pytest.approx(50)


def test_nights_past_the_log_are_not_placed_and_said_so(tiny_fleet):
    """A billion nights once looped a billion times, each finding nothing to place."""
    from leapml import LeapRegressor
    from leapml.evaluation.placement_backtest import placement_backtest

    with pytest.warns(UserWarning, match=r"of the 1000000000 nights asked for are placed"):
        result = placement_backtest(
            tiny_fleet.attempts, tiny_fleet.hardware, oracle=tiny_fleet.expected_throughput,
            models={"leap": LeapRegressor(n_estimators=3, random_state=0)}, window_days=6,
            nights=10**9, jobs_per_night=5)
    assert result.picks["night"].nunique() <= 2
