"""The nightly backtest: what it counts, what it compares, and that it never peeks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone

from leapml.evaluation.backtest import nightly
from leapml.evaluation.held_out import held_out
from leapml.evaluation.regret import CEILING, SUBMISSION_CEILING


@pytest.fixture(scope="module")
def result(tiny_fleet, quick_models):
    return nightly(
        tiny_fleet.attempts,
        tiny_fleet.hardware,
        models=quick_models,
        window_days=5,
        nights=2,
        oracle=tiny_fleet.expected_throughput,
        submission_oracle=tiny_fleet.expected_at_submission,
        regret_jobs=150,
        progress=False,
    )


def test_scores_count_every_completed_attempt_of_each_night(tiny_fleet, result):
    attempts = tiny_fleet.attempts
    ok = attempts[attempts["status"] == "ok"]
    day = ok["submit_time"].dt.floor("D")
    for night, rows in result.scores[result.scores["slice"] == "all"].groupby("night"):
        assert (rows["n_attempts"] == int((day == night).sum())).all()


def test_deciles_partition_the_night(result):
    scores = result.scores
    for _key, rows in scores.groupby(["night", "model"]):
        total = rows.loc[rows["slice"] == "all", "n_attempts"].item()
        deciles = rows[rows["slice"].str.startswith("decile_")]
        assert len(deciles) == 10
        assert deciles["n_attempts"].sum() == total


def test_metrics_are_shares_and_ordered(result):
    scores = result.scores
    for column in ("within_20", "within_10", "within_20_by_device_hours", "coverage"):
        assert scores[column].between(0, 1).all(), column
    assert (scores["within_20"] >= scores["within_10"]).all()


def test_table_abstains_and_table_covered_slice_matches_its_predictions(result):
    scores = result.scores.set_index(["night", "model", "slice"])
    preds = result.predictions
    for night, rows in preds.groupby("night"):
        covered = int(rows["predicted_lookup_table"].notna().sum())
        assert scores.loc[(night, "leap", "table_covered"), "n_attempts"] == covered
        assert scores.loc[(night, "leap", "all"), "coverage"] == 1.0
        assert scores.loc[(night, "lookup_table", "all"), "coverage"] < 1.0


def test_ceiling_policy_has_no_regret_and_every_regret_is_a_share(result):
    regret = result.regret
    assert set(regret["policy"]) >= {"leap", CEILING, "cheapest_feasible", "stay_on_last_hardware"}
    assert regret["regret"].between(0, 1).all()
    assert np.allclose(regret.loc[regret["policy"] == CEILING, "regret"], 0.0)
    summary = result.regret_summary()
    assert summary.loc[CEILING, "optimal_share"] == 1.0


def test_the_future_does_not_change_a_night(tiny_fleet, quick_models):
    attempts = tiny_fleet.attempts
    night = attempts["submit_time"].dt.floor("D").min() + pd.Timedelta(days=5)
    kwargs = {"models": quick_models, "window_days": 5, "nights": 1, "progress": False}
    before = nightly(attempts, tiny_fleet.hardware, **kwargs)
    later = attempts["submit_time"] >= night + pd.Timedelta(days=1)
    changed = attempts.copy()
    changed.loc[later, "throughput"] = changed.loc[later, "throughput"] * 7.0
    changed.loc[later, "expected_throughput"] = changed.loc[later, "expected_throughput"] * 7.0
    after = nightly(changed, tiny_fleet.hardware, **kwargs)
    pd.testing.assert_frame_equal(before.scores, after.scores)


def test_same_seed_same_tables(tiny_fleet, quick_models):
    kwargs = {"models": quick_models, "window_days": 5, "nights": 1, "progress": False}
    first = nightly(tiny_fleet.attempts, tiny_fleet.hardware, **kwargs)
    second = nightly(tiny_fleet.attempts, tiny_fleet.hardware, **kwargs, n_jobs=2)
    pd.testing.assert_frame_equal(first.scores, second.scores)


def test_summary_and_published_comparison(result):
    summary = result.summary()
    assert summary.loc["leap", "nights"] == 2
    assert summary.loc["leap", "min"] <= summary.loc["leap", "median"] <= summary.loc["leap", "max"]
    comparison = result.published_comparison()
    assert comparison["published"].notna().all()
    assert comparison["ours"].between(0, 1).all()


def test_bad_windows_are_refused(tiny_fleet):
    with pytest.raises(ValueError, match="before the first night"):
        nightly(tiny_fleet.attempts, tiny_fleet.hardware, window_days=40, progress=False)
    with pytest.raises(ValueError, match="models is empty"):
        nightly(tiny_fleet.attempts, tiny_fleet.hardware, models={}, progress=False)
    with pytest.raises(ValueError, match=">= 1"):
        nightly(tiny_fleet.attempts, tiny_fleet.hardware, window_days=0, progress=False)


class _Times(BaseEstimator, RegressorMixin):
    """A model's predictions times e."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        self.model_ = clone(self.model).fit(X, y)
        return self

    def predict(self, X):
        return np.e * self.model_.predict(X)


def test_held_out_hardware_reports_the_drop(tiny_fleet, quick_models):
    table = held_out(
        tiny_fleet.attempts,
        tiny_fleet.hardware,
        by="hardware_type",
        n_groups=2,
        model=quick_models["leap"],
        window_days=5,
        progress=False,
    )
    assert len(table) == 2
    assert np.allclose(table["drop_points"], 100 * (table["in_distribution"] - table["held_out"]))
    assert (table["n_attempts"] > 0).all()
    # a model that predicts e times as much is off by exactly one more in log, group by group
    scaled = held_out(tiny_fleet.attempts, tiny_fleet.hardware, by="hardware_type",
                       groups=table["hardware_type"].tolist(), model=_Times(quick_models["leap"]),
                       window_days=5, progress=False)
    assert np.allclose(scaled["held_out_log_bias"] - table["held_out_log_bias"], 1.0)
    with pytest.raises(ValueError, match="not in the log"):
        held_out(tiny_fleet.attempts, tiny_fleet.hardware, groups=["no-such-type"], window_days=5)


def test_submission_ceiling_is_scored_on_every_slice_below_the_ceiling(result):
    scores = result.scores
    slices = set(scores["slice"])
    assert set(scores.loc[scores["model"] == SUBMISSION_CEILING, "slice"]) == slices
    table = result.slice_summary()
    # knowing a job's hidden factor beats estimating it, most of all for new jobs
    assert table.loc["all", CEILING] > table.loc["all", SUBMISSION_CEILING]
    assert table.loc["job_new", CEILING] - table.loc["job_new", SUBMISSION_CEILING] > 0.2
    assert table.loc["job_seen_before", SUBMISSION_CEILING] > table.loc["job_new", SUBMISSION_CEILING]
    gaps = result.gap_to(SUBMISSION_CEILING)
    assert SUBMISSION_CEILING not in gaps.columns and set(gaps.index) == slices
    night_gaps = scores[scores["slice"] == "all"].pivot(index="night", columns="model", values="within_20")
    expected = (night_gaps["leap"] - night_gaps[SUBMISSION_CEILING]).median()
    assert gaps.loc["all", "leap"] == pytest.approx(expected)
    with pytest.raises(ValueError, match="was not scored"):
        result.gap_to("no-such-model")


def test_regret_among_considered_types_is_never_below_known_feasibility(result):
    regret = result.regret
    assert set(regret["candidates"]) == {"known_feasible", "considered"}
    wide = regret.pivot_table(index=["night", "job_id", "policy"], columns="candidates", values="regret")
    assert (wide["considered"] >= wide["known_feasible"] - 1e-12).all()
    # considering every type, a model picks a type the job does not fit on for some jobs
    assert (wide["considered"] > wide["known_feasible"]).any()
    ceiling = result.regret_summary(candidates="considered").loc[CEILING]
    assert ceiling["mean_regret"] == 0.0
    with pytest.raises(ValueError, match="candidates must be one of"):
        result.regret_summary(candidates="oracle")


def test_feasibility_can_be_plugged_in(tiny_fleet, quick_models):
    kwargs = {"models": {"leap": quick_models["leap"]}, "window_days": 5, "nights": 1, "progress": False,
              "oracle": tiny_fleet.expected_throughput, "regret_jobs": 30}
    nothing = nightly(tiny_fleet.attempts, tiny_fleet.hardware, feasibility=lambda c, X: np.zeros(len(c)),
                      **kwargs)
    picked = nothing.regret[(nothing.regret["candidates"] == "considered") & (nothing.regret["policy"] == "leap")]
    assert (picked["regret"] == 1.0).all()  # no type considered: nothing runs
    with pytest.raises(ValueError, match="one finite value per candidate"):
        nightly(tiny_fleet.attempts, tiny_fleet.hardware, feasibility=lambda c, X: np.ones(3), **kwargs)


def test_warnings_of_nights_run_in_parallel_reach_the_caller(tiny_fleet):
    # a worker process printed its warnings itself, file and line included, past any filter
    from leapml import LeapRegressor

    with pytest.warns(UserWarning, match="training rows are too few for n_bins=13"):
        nightly(tiny_fleet.attempts, tiny_fleet.hardware, window_days=2, nights=2, n_jobs=2,
                models={"leap": LeapRegressor(n_estimators=3, random_state=0)}, progress=False)
