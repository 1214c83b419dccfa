"""Cold-start copies: training rows fitted again as if their model family were new."""

import numpy as np
import pandas as pd
import pytest

from leapml import PUBLISHED, LeapRegressor, build_features
from leapml._cold_start import (
    _ESTIMATE_FALLBACKS,
    COLD_START_COLUMNS,
    NEW_HARDWARE_COLUMNS,
    with_cold_copies,
)
from leapml.features import FEATURE_GROUPS, feature_names
from leapml.fleet import simulate


def test_the_blanked_columns_are_the_model_identity_and_every_history_feature():
    # kept as plain strings in the method core, which imports nothing of the features
    history = [name for group in ("job_history", "model_history", "summary")
               for name in FEATURE_GROUPS[group]]
    assert list(COLD_START_COLUMNS) == ["model_type", "model_family", *history]
    assert set(COLD_START_COLUMNS) <= set(feature_names())
    # a new type lacks its name and its runs, not the job's runs elsewhere
    same = [name for name in feature_names() if name.endswith("_same_hardware")]
    assert list(NEW_HARDWARE_COLUMNS) == ["hardware_type", *same]
    assert {name for name, _, _ in _ESTIMATE_FALLBACKS} <= set(feature_names())


def test_a_copy_blanks_what_a_new_family_lacks_and_keeps_the_rest():
    names = ["model_family", "job_runs_any_hardware", "history_log_throughput_estimate",
             "peak_tflops"]
    X = np.array([[0.0, 3.0, 5.5, 100.0]] * 1000) + np.arange(1000)[:, None] * [0, 0, 0, 1]
    log_y = np.arange(1000.0)
    weight = np.linspace(0.5, 1.5, 1000)
    X2, y2, w2 = with_cold_copies(X, log_y, weight, share=0.2, names=names, seed=7)
    copies = X2[1000:]
    assert 150 < len(copies) < 250  # about a fifth of the rows
    assert np.isnan(copies[:, 0]).all() and np.isnan(copies[:, 2]).all()
    assert (copies[:, 1] == 0).all()  # a count of runs: none, not unknown
    # each copy keeps its row's other columns, target and weight
    source = (copies[:, 3] - 100).astype(int)
    assert np.array_equal(y2[1000:], log_y[source]) and np.array_equal(w2[1000:], weight[source])
    assert np.array_equal(X2[:1000], X) and not np.isnan(X).any()  # the originals untouched
    again = with_cold_copies(X, log_y, weight, share=0.2, names=names, seed=7)
    assert np.array_equal(again[1], y2)


@pytest.mark.parametrize("share, names", [(0.0, ["model_family"]), (0.3, None), (0.3, ["a"])])
def test_no_copies_without_a_share_or_the_named_columns(share, names):
    X = np.ones((50, 1))
    X2, y2, w2 = with_cold_copies(X, np.zeros(50), None, share=share, names=names, seed=0)
    assert X2 is X and len(y2) == 50 and w2 is None


def test_the_published_configuration_fits_every_row_once():
    assert PUBLISHED["cold_start"] == 0.0 and LeapRegressor().cold_start == 0.3
    assert PUBLISHED["cold_start_hardware"] == 0.0 and LeapRegressor().cold_start_hardware == 0.3
    with pytest.raises(ValueError, match="cold_start"):
        LeapRegressor(cold_start=1.0).fit(np.ones((10, 1)), np.ones(10))


def test_copies_carry_a_model_family_the_log_never_saw():
    """Each of three families held out of the fit in turn: the copies lower the median
    log error of its next-day attempts, with features built from a history without it."""
    fleet = simulate("tiny", days=10, seed=3)
    attempts = fleet.attempts[fleet.attempts["status"] == "ok"].reset_index(drop=True)
    day = attempts["submit_time"].dt.floor("D")
    test_day = day >= day.max()
    families = attempts.loc[test_day, "model_family"].astype(str).value_counts().index[:3]
    gains = []
    for family in families:
        member = (attempts["model_family"].astype(str) == family).to_numpy()
        others = attempts[~member]
        train = ~test_day[~member].to_numpy()
        X_train = build_features(others, fleet.hardware)[train]
        scored = attempts[member & test_day.to_numpy()]
        X_test = build_features(scored, fleet.hardware, history=others)
        errors = []
        # the copies on their own (no anchor), then the roofline anchor without copies
        for share, anchor in ((0.0, None), (0.2, None), (0.0, "auto")):
            model = LeapRegressor(n_estimators=20, min_bin_rows=50, cold_start=share,
                                  anchor=anchor, random_state=0)
            model.fit(X_train, others["throughput"][train])
            errors.append(np.median(np.abs(np.log(model.predict(X_test) / scored["throughput"]))))
        gains.append((errors[0] - errors[1], errors[0] - errors[2]))
    # without either the errors are 2.9-4.8 (x18 to x120); each alone takes 1.5 or more off
    assert min(copies for copies, _ in gains) > 0.3, gains
    assert min(anchor for _, anchor in gains) > 1.0, gains


def test_a_fit_with_copies_does_not_depend_on_the_order_of_the_rows():
    fleet = simulate("tiny", days=6, seed=0)
    ok = fleet.attempts[fleet.attempts["status"] == "ok"].reset_index(drop=True)
    X = build_features(ok, fleet.hardware)
    y = ok["throughput"].to_numpy()
    shuffled = np.random.default_rng(1).permutation(len(X))
    model = LeapRegressor(n_estimators=5, min_bin_rows=20, random_state=0)
    first = model.fit(X, y).predict(X)
    second = LeapRegressor(**model.get_params()).fit(
        X.iloc[shuffled].reset_index(drop=True), y[shuffled]).predict(X)
    np.testing.assert_allclose(first, second)
    assert isinstance(X, pd.DataFrame)


def test_a_new_hardware_copy_blanks_the_type_and_its_runs_and_falls_back_to_runs_elsewhere():
    names = ["hardware_type", "job_runs_same_hardware", "job_mean_log_throughput_same_hardware",
             "job_last_throughput_scaled_by_peak", "model_type_log_throughput_estimate_any_hardware",
             "history_log_throughput_estimate", "history_estimate_source", "model_family",
             "peak_tflops"]
    n = 600
    X = np.tile([3.0, 2.0, 4.0, np.e ** 5, 6.0, 4.0, 2.0, 1.0, 0.0], (n, 1))
    X[:, 8] = np.arange(n)
    X[n // 2:, 3] = np.nan  # half the jobs never ran elsewhere: the model type's estimate
    X2, y2, _ = with_cold_copies(X, np.arange(n, dtype=float), None, share=0.0, names=names,
                                 seed=5, hardware_share=0.25)
    copies = X2[n:]
    assert 100 < len(copies) < 200
    assert np.isnan(copies[:, 0]).all() and np.isnan(copies[:, 2]).all()
    assert (copies[:, 1] == 0).all()
    source = copies[:, 8].astype(int)
    scaled = source < n // 2
    # the job's last run elsewhere scaled by peak first (level 4), then its model type (level 5)
    np.testing.assert_allclose(copies[scaled, 5], 5.0)
    assert (copies[scaled, 6] == 4).all() and (copies[~scaled, 6] == 5).all()
    assert (copies[~scaled, 5] == 6.0).all() and scaled.any() and (~scaled).any()
    assert (copies[:, 7] == 1.0).all()  # the model's identity is kept
    assert np.array_equal(y2[n:], source.astype(float)) and np.array_equal(X2[:n], X, equal_nan=True)


def test_hardware_copies_come_after_the_family_copies_and_leave_them_as_they_were():
    names = ["model_family", "hardware_type", "job_runs_same_hardware", "peak_tflops"]
    X = np.column_stack([np.ones(400), np.ones(400), np.ones(400), np.arange(400.0)])
    alone = with_cold_copies(X, np.zeros(400), None, share=0.3, names=names, seed=2)[0]
    both = with_cold_copies(X, np.zeros(400), None, share=0.3, names=names, seed=2,
                            hardware_share=0.3)[0]
    np.testing.assert_array_equal(both[:len(alone)], alone)
    extra = both[len(alone):]
    assert len(extra) > 80 and np.isnan(extra[:, 1]).all() and (extra[:, 0] == 1).all()
    with pytest.raises(ValueError, match="cold_start_hardware"):
        LeapRegressor(cold_start_hardware=-0.1).fit(np.ones((10, 1)), np.ones(10))
