"""The method's levers: bins for small logs, overlapping experts, an anchored target, defaults."""

import numpy as np
import pandas as pd
import pytest
from _synthetic import make_throughput_regression

from leapml import PUBLISHED, LeapRegressor, load, save
from leapml._cascade import _expert_rows


def test_small_logs_get_fewer_bins_and_a_warning_that_says_why():
    X, y = make_throughput_regression(450, random_state=0)
    with pytest.warns(UserWarning, match=r"450 training rows .* fitting 2 bin\(s\)"):
        model = LeapRegressor(n_estimators=5, random_state=0, min_bin_rows=200).fit(X, y)
    assert model.n_bins_ == 2 and len(model.regressors_) == 2


def test_a_log_large_enough_keeps_the_requested_bins_without_warning(recwarn):
    X, y = make_throughput_regression(600, random_state=0)
    model = LeapRegressor(n_bins=3, n_estimators=5, random_state=0, min_bin_rows=200).fit(X, y)
    assert model.n_bins_ == 3
    assert not [w for w in recwarn if "too few for n_bins" in str(w.message)]


def test_published_configuration_is_one_parameter_set_away():
    model = LeapRegressor(**PUBLISHED)
    assert (model.n_bins, model.router, model.combine) == (13, "multiclass", "hard")
    assert model.expert_overlap == 0 and model.min_bin_rows == 1 and model.anchor is None
    default = LeapRegressor()
    assert (default.router, default.combine) == ("ordinal", "soft")


def test_overlapping_experts_train_on_their_neighbours_at_a_lower_weight():
    assignment = np.array([0, 1, 2, 3, 1, 2, 0, 3])
    order = np.argsort(assignment, kind="stable")
    bounds = np.searchsorted(assignment[order], np.arange(5))
    rows, k, weight = _expert_rows(1, order, bounds, assignment, None, 0.25)
    assert k == 1
    np.testing.assert_array_equal(np.sort(assignment[rows]), [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(weight, np.where(assignment[rows] == 1, 1.0, 0.25))
    own, _, none = _expert_rows(1, order, bounds, assignment, None, 0.0)
    assert none is None and set(assignment[own]) == {1}
    # an edge bin has one neighbour; row weights multiply
    rows, _, weight = _expert_rows(0, order, bounds, assignment, np.full(8, 2.0), 0.5)
    assert set(assignment[rows]) == {0, 1}
    np.testing.assert_array_equal(weight, np.where(assignment[rows] == 0, 2.0, 1.0))


def test_overlap_changes_the_experts_and_survives_the_model_file(tmp_path):
    X, y = make_throughput_regression(1200, random_state=1)
    params = {"n_bins": 4, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}
    plain = LeapRegressor(**params).fit(X, y)
    wide = LeapRegressor(expert_overlap=1.0, **params).fit(X, y)
    assert plain.regressors_[1].model_to_string() != wide.regressors_[1].model_to_string()
    loaded = load(save(wide, tmp_path / "wide.leap"))
    assert loaded.get_params()["expert_overlap"] == 1.0
    np.testing.assert_array_equal(loaded.predict(X), wide.predict(X))


@pytest.fixture(scope="module")
def anchored_data():
    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({"size": rng.uniform(size=n), "estimate": rng.normal(5.0, 2.0, size=n)})
    y = np.exp(X["estimate"] + 0.5 * X["size"] + rng.normal(0, 0.02, size=n))
    X.loc[:99, "estimate"] = np.nan  # no history for these rows
    return X, y.to_numpy()


def test_anchored_experts_learn_a_correction_to_the_anchor(anchored_data, tmp_path):
    X, y = anchored_data
    params = {"n_bins": 3, "n_estimators": 30, "random_state": 0, "min_bin_rows": 50}
    anchored = LeapRegressor(anchor="estimate", **params).fit(X, y)
    assert anchored.anchor_fill_ == pytest.approx(np.median(np.log(y)))
    # each expert's output is added to the anchor (the fill where it is missing) and to
    # the shared expert, which learned the correction to the anchor first
    Xe = X.to_numpy(dtype=float)
    offset = np.where(np.isnan(Xe[:, 1]), anchored.anchor_fill_, Xe[:, 1])
    offset = offset + anchored.base_.predict(Xe)
    proba = anchored.predict_bin_proba(X)
    logs = np.column_stack([e.predict(Xe) for e in anchored.regressors_])
    np.testing.assert_allclose(anchored.predict(X), np.exp((proba * logs).sum(axis=1) + offset))
    has = X["estimate"].notna().to_numpy()
    error = np.abs(np.log(anchored.predict(X)) - np.log(y))[has]
    plain = LeapRegressor(**params).fit(X, y)
    plain_error = np.abs(np.log(plain.predict(X)) - np.log(y))[has]
    assert np.median(error) < np.median(plain_error)
    # contributions still add up to the prediction, the anchor counted on its column
    reasons = anchored.explain(X.head(3))
    total = reasons.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(np.exp(total), anchored.predict(X.head(3)))
    loaded = load(save(anchored, tmp_path / "anchored.leap"))
    np.testing.assert_array_equal(loaded.predict(X), anchored.predict(X))


@pytest.mark.parametrize("anchor, match", [("missing", "not a column"), ("kind", "numeric")])
def test_an_anchor_that_cannot_be_read_is_refused(anchored_data, anchor, match):
    X, y = anchored_data
    X = X.assign(kind=pd.Categorical(np.where(X["size"] > 0.5, "a", "b")))
    with pytest.raises(ValueError, match=match):
        LeapRegressor(anchor=anchor, n_estimators=3, min_bin_rows=50).fit(X, y)
