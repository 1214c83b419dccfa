"""Prediction intervals (Mondrian conformal per bin and group) and risk-aware objectives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from leapml import LeapRegressor, rank_candidates
from leapml.model_file import load, save


def _data(n, seed):
    """Throughput whose noise is four times larger on rows of new jobs."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    new = rng.uniform(size=n) < 0.3
    noise = rng.normal(0, np.where(new, 0.4, 0.1))
    y = np.exp(4 * X[:, 0] + X[:, 1] + noise)
    return X, y, np.where(new, "new", "seen")


@pytest.fixture(scope="module")
def calibrated():
    X, y, groups = _data(1200, 0)
    model = LeapRegressor(n_bins=3, n_estimators=30, random_state=0).fit(X[:600], y[:600])
    return model.calibrate(X[600:], y[600:], groups=groups[600:])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_intervals_widen_for_new_jobs_and_hold_their_coverage(calibrated, seed):
    X, y, groups = _data(3000, seed)
    interval = calibrated.predict_interval(X, coverage=0.8, groups=groups)
    width = np.log(interval[:, 1] / interval[:, 0])
    new = groups == "new"
    assert np.median(width[new]) > 2 * np.median(width[~new])
    inside = (interval[:, 0] <= y) & (y <= interval[:, 1])
    for mask in (new, ~new, np.ones_like(new)):
        assert abs(inside[mask].mean() - 0.8) < 0.07
    # without groups both kinds of job share one width: the new jobs' coverage falls
    pooled = calibrated.predict_interval(X, coverage=0.8)
    inside = (pooled[:, 0] <= y) & (y <= pooled[:, 1])
    assert inside[new].mean() < 0.75


def test_higher_coverage_gives_wider_intervals(calibrated):
    X, _, groups = _data(200, 4)
    narrow = calibrated.predict_interval(X, coverage=0.5, groups=groups)
    wide = calibrated.predict_interval(X, coverage=0.95, groups=groups)
    predicted = calibrated.predict(X)
    assert (wide[:, 0] <= narrow[:, 0]).all() and (narrow[:, 1] <= wide[:, 1]).all()
    assert (narrow[:, 0] <= predicted).all() and (predicted <= narrow[:, 1]).all()


def test_an_uncalibrated_model_has_no_intervals():
    X, y, _ = _data(200, 0)
    with pytest.raises(NotFittedError, match="not fitted"):
        LeapRegressor(n_bins=2, n_estimators=5, random_state=0).predict_interval(X)
    model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(X, y)
    # fitted, not calibrated: the error says what is missing and how to get it
    with pytest.raises(NotFittedError, match=r"fitted but not calibrated: call calibrate"):
        model.predict_interval(X)


def test_a_refit_drops_the_calibration_of_the_model_it_replaces():
    X, y, groups = _data(600, 5)
    model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(X[:300], y[:300])
    model.calibrate(X[300:], y[300:], groups=groups[300:])
    assert model.predict_interval(X[:5]).shape == (5, 2)
    model.fit(X[:300], y[:300] * 10)  # a new model: the old widths say nothing of it
    with pytest.raises(NotFittedError, match="not calibrated"):
        model.predict_interval(X[:5])


def test_bad_coverage_and_groups_are_refused(calibrated):
    X, _, _ = _data(10, 0)
    with pytest.raises(ValueError, match="coverage"):
        calibrated.predict_interval(X, coverage=80)
    with pytest.raises(ValueError, match="groups has 3 labels for 10 rows"):
        calibrated.predict_interval(X, groups=["new"] * 3)


def test_calibration_travels_in_the_model_file(calibrated, tmp_path):
    X, _, groups = _data(50, 5)
    again = load(save(calibrated, tmp_path / "model.leap"))
    np.testing.assert_array_equal(again.predict_interval(X, groups=groups),
                                  calibrated.predict_interval(X, groups=groups))


def _candidates():
    # "steady": 100 samples/s, narrow interval; "gamble": 120, but it may be 30;
    # "tight": 150 and narrow, but it barely fits
    return pd.DataFrame({
        "job_id": [1, 1, 1],
        "hardware_type": ["steady", "gamble", "tight"],
        "predicted_throughput": [100.0, 120.0, 150.0],
        "throughput_low": [90.0, 30.0, 140.0],
        "fit_probability": [0.99, 0.99, 0.55],
    })


@pytest.mark.parametrize("objective, first", [
    ("throughput_per_cost", "tight"),
    ("lower_quantile_per_cost", "tight"),
    ("expected_utility", "steady"),
    ("expected_throughput_per_cost", "gamble"),
])
def test_each_objective_orders_by_what_it_says(objective, first):
    ranked = rank_candidates(_candidates(), cost={"steady": 1.0, "gamble": 1.0, "tight": 1.0},
                             objective=objective)
    assert ranked["hardware_type"].iloc[0] == first
    assert ranked["score"].is_monotonic_decreasing


def test_the_lower_quantile_passes_over_a_wide_interval():
    frame = _candidates().iloc[:2]
    ranked = rank_candidates(frame, cost={"steady": 1.0, "gamble": 1.0},
                             objective="lower_quantile_per_cost")
    assert ranked["hardware_type"].tolist() == ["steady", "gamble"]


def test_expected_throughput_per_cost_needs_no_interval_and_no_probability():
    cost = {"steady": 1.0, "gamble": 1.0, "tight": 1.0}
    frame = _candidates().drop(columns="throughput_low")
    ranked = rank_candidates(frame, cost=cost, objective="expected_throughput_per_cost")
    # 100 x 0.99, 120 x 0.99, 150 x 0.55: the likeliest throughput per cost first
    np.testing.assert_allclose(ranked["score"], [118.8, 99.0, 82.5])
    # without probabilities it is throughput per cost
    blind = rank_candidates(frame.drop(columns="fit_probability"), cost=cost,
                            objective="expected_throughput_per_cost")
    plain = rank_candidates(frame.drop(columns="fit_probability"), cost=cost)
    assert blind["hardware_type"].tolist() == plain["hardware_type"].tolist() == [
        "tight", "gamble", "steady"]


def test_objectives_name_what_they_lack():
    frame = _candidates().drop(columns="throughput_low")
    with pytest.raises(ValueError, match="throughput_low"):
        rank_candidates(frame, cost={"steady": 1, "gamble": 1, "tight": 1},
                        objective="expected_utility")
    with pytest.raises(ValueError, match="objective must be one of"):
        rank_candidates(frame, cost={"steady": 1, "gamble": 1, "tight": 1}, objective="best")


class _Recorder:
    """An estimator that records which rows it was fitted and calibrated on."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        self.fitted_on_ = X["row"].tolist()
        return self

    def calibrate(self, X, y, *, groups=None):
        self.calibrated_on_ = X["row"].tolist()
        self.groups_ = list(groups)
        return self


def test_calibration_rows_are_the_outcomes_known_on_the_last_day_whenever_submitted():
    from leapml.training import fit_calibrated

    end = pd.Timestamp("2026-01-10")
    # row 0: a long run submitted days ago that ended on the last day; row 1: a
    # short run of the last day; rows 2-3: runs that ended before the last day
    known = pd.Series(pd.to_datetime(["2026-01-09 20:00", "2026-01-09 10:00",
                                      "2026-01-08 12:00", "2026-01-05 00:00", "2026-01-11 00:00"]))
    X = pd.DataFrame({"row": range(5), "job_runs_any_hardware": [1, 0, 2, 0, 0],
                      "job_runs_same_hardware": [1, 0, 0, 0, 0]})
    rows = np.array([True, True, True, True, False])  # row 4 is still running at the end
    fitted = fit_calibrated(_Recorder(), X, np.ones(5), rows=rows, known=known, end=end,
                            calibration_days=1)
    assert fitted.calibrated_on_ == [0, 1]
    assert fitted.fitted_on_ == [2, 3]
    assert fitted.groups_ == ["seen", "new"]
    plain = fit_calibrated(_Recorder(), X, np.ones(5), rows=rows, known=known, end=end,
                           calibration_days=0)
    assert plain.fitted_on_ == [0, 1, 2, 3] and not hasattr(plain, "calibrated_on_")
    with pytest.raises(ValueError, match="nothing to calibrate"):
        fit_calibrated(_Recorder(), X, np.ones(5), rows=rows, known=known,
                       end=pd.Timestamp("2026-01-20"), calibration_days=1)


class _Counter(_Recorder):
    """A recorder of how many rows it was fitted and calibrated on (any features)."""

    def fit(self, X, y):
        self.fitted_on_ = len(X)
        return self

    def calibrate(self, X, y, *, groups=None):
        self.calibrated_on_ = len(X)
        return self


@pytest.mark.parametrize("calibration_days", [0, 1, 2])
def test_window_counts_are_the_rows_fit_window_fits_and_holds_back(tiny_fleet, calibration_days):
    """What ``leapml fit`` reports is what the fit read, long runs that ended late included."""
    from leapml.training import fit_window, window_counts

    fitted = fit_window(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5, model=_Counter(),
                        calibration_days=calibration_days)
    counts = window_counts(tiny_fleet.attempts, tiny_fleet.hardware, window_days=5,
                           calibration_days=calibration_days)
    assert counts == (fitted.fitted_on_, getattr(fitted, "calibrated_on_", 0))
    assert (counts[1] > 0) == (calibration_days > 0)


def test_a_category_too_small_for_the_coverage_answers_with_its_group_not_infinity():
    """Bins of 20 to 90 rows each got their own quantile at coverage 0.99 and answered
    [0, inf], where the 200 rows pooled answer a finite interval."""
    from leapml._conformal import rows_for_coverage

    X, y, _ = _data(1000, 4)
    model = LeapRegressor(n_bins=5, n_estimators=20, random_state=0).fit(X[:600], y[:600])
    model.calibrate(X[600:800], y[600:800])
    counts = np.bincount(np.asarray(model.calibration_["bins"]))
    assert (counts[counts > 0] < rows_for_coverage(0.99)).any()
    interval = model.predict_interval(X[800:], coverage=0.99)
    assert np.isfinite(interval).all()
    inside = (interval[:, 0] <= y[800:]) & (y[800:] <= interval[:, 1])
    assert inside.mean() > 0.9
    # too few rows in all: said, and the interval is honest about it
    with pytest.warns(UserWarning, match="1 calibration row"):
        model.calibrate(X[600:601], y[600:601])
    with pytest.warns(UserWarning, match="get an infinite interval: coverage 0.8 needs 4"):
        assert np.isinf(model.predict_interval(X[800:802], coverage=0.8)[:, 1]).all()


def test_group_labels_are_one_label_however_a_number_is_typed():
    X, y, groups = _data(1200, 0)
    seen = (groups == "seen").astype(int)
    model = LeapRegressor(n_bins=3, n_estimators=30, random_state=0).fit(X[:600], y[:600])
    model.calibrate(X[600:], y[600:], groups=seen[600:])
    rows, labels = X[:50], seen[:50]
    reference = model.predict_interval(rows, groups=labels)
    for typed in (labels.astype(float), labels.astype(bool), labels.astype(np.int8)):
        np.testing.assert_array_equal(model.predict_interval(rows, groups=typed), reference)
    # labels the calibration never saw get the pooled width, and say so
    with pytest.warns(UserWarning, match="no group label given was calibrated"):
        unseen = model.predict_interval(rows, groups=np.full(50, "x"))
    np.testing.assert_allclose(unseen, model.predict_interval(rows))
