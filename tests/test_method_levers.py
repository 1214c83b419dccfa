"""The method's levers: bins for small logs, overlapping experts, an anchored target, defaults."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _synthetic import make_throughput_regression

from leapml import PUBLISHED, LeapRegressor, load, save
from leapml._cascade import _expert_rows
from leapml.regressor import HISTORY_COLUMNS


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
    assert model.base is None and model.history_prior is None
    default = LeapRegressor()
    assert (default.router, default.combine, default.base) == ("ordinal", "soft", "lightgbm")
    assert default.history_columns == HISTORY_COLUMNS and default.history_prior == 0.25


def _reruns(seed, n=2000):
    """Rows of jobs with a hidden factor that only their own earlier runs reveal."""
    rng = np.random.default_rng(seed)
    size = rng.uniform(size=n)
    hidden = rng.normal(0, 0.5, size=n)
    runs = rng.integers(0, 4, size=n)
    log_y = 4 + 3 * size + hidden
    # the mean of the earlier runs: the row's truth up to run-to-run noise
    mean = np.where(runs > 0, log_y + rng.normal(0, 0.05, size=n) / np.sqrt(np.maximum(runs, 1)),
                    np.nan)
    X = pd.DataFrame({"size": size, HISTORY_COLUMNS[0]: mean, HISTORY_COLUMNS[1]: runs})
    return X, np.exp(log_y + rng.normal(0, 0.05, size=n))


@pytest.fixture(scope="module")
def rerun_data():
    return _reruns(3)


def test_the_prediction_leans_on_the_jobs_own_runs_by_their_number(rerun_data, tmp_path):
    X, y = rerun_data
    params = {"n_bins": 3, "n_estimators": 20, "random_state": 0, "min_bin_rows": 50}
    blended = LeapRegressor(**params).fit(X, y)
    plain = LeapRegressor(history_prior=None, **params).fit(X, y)
    assert blended.history_columns_in_ == (1, 2) and plain.history_columns_in_ is None
    # the same experts; the blend is w * mean + (1 - w) * model in log, w = n / (n + 0.25)
    runs = X[HISTORY_COLUMNS[1]].to_numpy(float)
    weight = np.where(runs > 0, runs / (runs + 0.25), 0.0)
    mean = np.nan_to_num(X[HISTORY_COLUMNS[0]].to_numpy(float))
    expected = np.exp((1 - weight) * np.log(plain.predict(X)) + weight * mean)
    np.testing.assert_allclose(blended.predict(X), expected, rtol=1e-12)
    # on new rows, the runs' mean beats trees that must learn to copy it
    X_new, y_new = _reruns(4)
    rerun = X_new[HISTORY_COLUMNS[1]].to_numpy() > 0
    error = np.abs(np.log(blended.predict(X_new) / y_new))
    plain_error = np.abs(np.log(plain.predict(X_new) / y_new))
    assert np.median(error[rerun]) < 0.85 * np.median(plain_error[rerun])
    np.testing.assert_array_equal(error[~rerun], plain_error[~rerun])
    # the runs' share of each row goes to their mean's column in the explanation
    reasons = blended.explain(X.head(5))
    total = reasons.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(np.exp(total), blended.predict(X.head(5)))
    loaded = load(save(blended, tmp_path / "blended.leap"))
    assert loaded.history_columns_in_ == (1, 2)
    np.testing.assert_array_equal(loaded.predict(X), blended.predict(X))


def test_without_the_history_columns_nothing_is_blended(rerun_data):
    X, y = rerun_data
    params = {"n_bins": 3, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}
    array = LeapRegressor(**params).fit(X.to_numpy(float), y)
    assert array.history_columns_in_ is None  # no names, nothing to find
    renamed = LeapRegressor(history_columns=("mean", "runs"), **params).fit(X, y)
    assert renamed.history_columns_in_ is None
    assert LeapRegressor(history_columns=("mean", "runs"), **params).fit(
        X.rename(columns=dict(zip(HISTORY_COLUMNS, ("mean", "runs"), strict=True))), y
    ).history_columns_in_ == (1, 2)
    with pytest.raises(ValueError, match="history_columns.*numeric"):
        LeapRegressor(**params).fit(X.assign(**{HISTORY_COLUMNS[1]: pd.Categorical(["a"] * len(X))}), y)
    with pytest.raises(ValueError, match="two column names"):
        LeapRegressor(history_columns=("only one",), **params).fit(X, y)


def test_the_shared_expert_carries_a_row_routed_to_the_wrong_bin(rerun_data):
    # a smooth law over the whole range: a bin expert alone predicts inside its own
    # slice of it, so a row sent to the wrong bin jumps; the shared expert does not
    X, y = rerun_data
    X = X[["size"]]
    params = {"n_bins": 4, "n_estimators": 20, "random_state": 0, "min_bin_rows": 50,
              "combine": "hard", "history_prior": None}
    errors = {}
    for base in ("lightgbm", None):
        model = LeapRegressor(base=base, **params).fit(X, y)
        Xe = model._validate_X(X, reset=False)
        wrong = (model.predict_bin(X) + 2) % model.n_bins_  # two bins off
        offset = model._offset(Xe)
        logs = np.column_stack([e.predict(Xe) for e in model.regressors_])
        misrouted = offset + logs[np.arange(len(X)), wrong]
        errors[base] = np.median(np.abs(misrouted - np.log(y)))
    assert errors["lightgbm"] < 0.5 * errors[None]


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


def test_an_anchor_that_is_no_log_is_refused_at_fit_and_predict(anchored_data):
    # raw throughput given as the anchor: exp(800) is inf, exp(-800) is 0
    X, y = anchored_data
    message = r"anchor column 'estimate' must hold the natural log of a throughput; it holds 800"
    with pytest.raises(ValueError, match=message):
        LeapRegressor(anchor="estimate", n_estimators=3, min_bin_rows=50).fit(
            X.assign(estimate=X["estimate"].where(X.index != 200, 800.0)), y)
    model = LeapRegressor(anchor="estimate", n_estimators=3, min_bin_rows=50).fit(X, y)
    with pytest.raises(ValueError, match=r"it holds -800"):
        model.predict(X.head(3).assign(estimate=[1.0, -800.0, 2.0]))
    assert np.isfinite(model.predict(X.head(3))).all()


@pytest.fixture(scope="module")
def roofline_data():
    """Throughput a share of a roofline spanning three decades, the share set by a size."""
    rng = np.random.default_rng(3)
    n = 1500
    X = pd.DataFrame({"log_roofline_throughput": rng.uniform(2.0, 9.0, size=n),
                      "size": rng.uniform(size=n)})
    log_share = -1.0 - 0.5 * X["size"].to_numpy()
    y = np.exp(X["log_roofline_throughput"].to_numpy() + log_share + rng.normal(0, 0.02, size=n))
    return X, y


def test_auto_anchors_on_the_roofline_where_the_rows_have_one(roofline_data, tmp_path):
    X, y = roofline_data
    params = {"n_bins": 3, "n_estimators": 30, "random_state": 0, "min_bin_rows": 50}
    auto = LeapRegressor(**params).fit(X, y)
    assert auto.anchor_ == "log_roofline_throughput"
    named = LeapRegressor(anchor="log_roofline_throughput", **params).fit(X, y)
    np.testing.assert_array_equal(auto.predict(X), named.predict(X))
    # a model faster than any in the log (a family never seen): the anchored prediction
    # moves with its roofline, trees of log(y) stop at the fastest run they saw
    far = X.head(50).assign(log_roofline_throughput=12.0)
    truth = np.exp(12.0 - 1.0 - 0.5 * far["size"].to_numpy())
    plain = LeapRegressor(anchor=None, **params).fit(X, y)
    assert np.median(np.abs(np.log(auto.predict(far) / truth))) < 0.1
    assert np.median(np.abs(np.log(plain.predict(far) / truth))) > 1.0
    # a roofline no throughput could have (absurd sizes) is read as unknown, not refused
    absurd = auto.predict(X.head(2).assign(log_roofline_throughput=800.0))
    assert np.isfinite(absurd).all()
    loaded = load(save(auto, tmp_path / "auto.leap"))
    assert loaded.anchor_ == "log_roofline_throughput"
    np.testing.assert_array_equal(loaded.predict(X), auto.predict(X))
    reasons = auto.explain(X.head(3))  # the roofline counted on its own column
    total = reasons.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(np.exp(total), auto.predict(X.head(3)))


@pytest.mark.parametrize("rows", ["no_values", "no_column"])
def test_auto_anchors_nothing_without_a_roofline(roofline_data, rows):
    # a log without model sizes (the real measurements): the model is the unanchored one
    X, y = roofline_data
    X = (X.assign(log_roofline_throughput=np.nan) if rows == "no_values"
         else X.drop(columns="log_roofline_throughput"))
    params = {"n_bins": 3, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}
    auto = LeapRegressor(**params).fit(X, y)
    assert auto.anchor_ is None
    np.testing.assert_array_equal(auto.predict(X),
                                  LeapRegressor(anchor=None, **params).fit(X, y).predict(X))


def test_the_default_shared_expert_never_predicts_slower_on_faster_hardware():
    rng = np.random.default_rng(5)
    n = 1500
    X = pd.DataFrame({"peak_tflops": rng.uniform(10, 1000, n), "batch_size": rng.uniform(1, 64, n)})
    # noisy, and saturating: trees left alone wiggle along the peak
    y = np.exp(np.log(X["batch_size"]) + 0.3 * np.log(X["peak_tflops"]) + rng.normal(0, 0.4, n))
    grid = pd.DataFrame({"peak_tflops": np.linspace(5, 2000, 200), "batch_size": 16.0})
    params = {"n_bins": 2, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}
    for constrained in (True, False):
        model = LeapRegressor(monotone_increasing=("peak_tflops",) if constrained else None,
                              **params).fit(X, y)
        steps = np.diff(model.base_.predict(model._validate_X(grid, reset=False)))
        if constrained:
            assert (steps >= 0).all()
        else:
            assert (steps < 0).any()  # the control: without the constraint the trees dip


def test_the_default_shared_expert_learns_faster_only_on_a_large_log(monkeypatch):
    """The faster rate is measured to help on ~700,000 rows and to hurt on ~70,000 and fewer;
    the size is the log's own rows, not those with the cold-start copies added."""
    import leapml._cascade as cascade

    rng = np.random.default_rng(3)
    n = 400
    X = pd.DataFrame({"model_type": pd.Categorical(rng.choice(["a", "b"], n)),
                      "peak_tflops": rng.uniform(10, 1000, n)})
    y = np.exp(np.log(X["peak_tflops"]) + rng.normal(0, 0.2, n))
    params = {"n_bins": 2, "n_estimators": 5, "random_state": 0, "min_bin_rows": 50,
              "cold_start": 0.5}

    def rate(threshold):
        monkeypatch.setattr(cascade, "FAST_BASE_ROWS", threshold)
        return LeapRegressor(**params).fit(X, y).base_.params["learning_rate"]

    # 400 rows, 600 with the copies: the log's 400 decide
    assert (rate(401), rate(400), rate(500)) == (0.1, 0.2, 0.1)
    # a shared expert of the user's keeps its own rate
    from lightgbm import LGBMRegressor
    mine = LeapRegressor(base=LGBMRegressor(learning_rate=0.05, n_estimators=5, verbose=-1),
                         **params).fit(X, y)
    assert mine.base_.params["learning_rate"] == 0.05


@pytest.fixture(scope="module")
def weighted_model(rerun_data):
    X, y = rerun_data
    params = {"n_bins": 3, "n_estimators": 20, "random_state": 0, "min_bin_rows": 50}
    return LeapRegressor(**params).fit(X, y), X


def test_expert_weight_shrinks_the_corrections_towards_the_shared_expert(weighted_model):
    model, X = weighted_model
    log_at = {}
    for weight in (0.0, 0.5, 1.0):
        model.set_params(expert_weight=weight)  # a predict-time weight: no refit
        log_at[weight] = np.log(model.predict(X))
    model.set_params(expert_weight=1.0)
    # in log throughput the corrections scale linearly, the blend with the job's runs after them
    np.testing.assert_allclose(log_at[0.5], (log_at[0.0] + log_at[1.0]) / 2, rtol=0, atol=1e-9)
    assert np.abs(log_at[1.0] - log_at[0.0]).max() > 1e-3  # the corrections move something
    shared = model.base_.predict(np.asarray(X, dtype=float))
    weight, mean = model._history_weight(np.asarray(X, dtype=float))
    np.testing.assert_allclose(log_at[0.0], (1 - weight) * shared + weight * mean, atol=1e-9)


def test_expert_weight_is_kept_by_the_model_file_and_explained(weighted_model, tmp_path):
    model, X = weighted_model
    model.set_params(expert_weight=0.25)
    try:
        loaded = load(save(model, tmp_path / "model.leap"))
        assert loaded.expert_weight == 0.25
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        reasons = model.explain(X.head(5))
        total = reasons.groupby("row")["contribution"].sum().to_numpy()
        np.testing.assert_allclose(np.exp(total), model.predict(X.head(5)), rtol=1e-9)
    finally:
        model.set_params(expert_weight=1.0)


def test_expert_weight_needs_a_shared_expert_and_lies_in_0_1(rerun_data):
    X, y = rerun_data
    with pytest.raises(ValueError, match="base=None has none"):
        LeapRegressor(base=None, expert_weight=0.5, n_bins=2, n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="expert_weight"):
        LeapRegressor(expert_weight=1.5, n_bins=2, n_estimators=5).fit(X, y)
    model = LeapRegressor(base=None, n_bins=2, n_estimators=5, min_bin_rows=50).fit(X, y)
    with pytest.raises(ValueError, match="base=None has none"):
        model.set_params(expert_weight=0.0).predict(X)


def test_auto_expert_weight_halves_the_corrections_only_behind_the_faster_shared_expert(
        rerun_data, monkeypatch, tmp_path):
    """Measured: on ~700,000 rows half the corrections score better on new jobs; on ~70,000,
    where the shared expert learns at 0.1, the whole corrections do."""
    from lightgbm import LGBMRegressor

    import leapml._cascade as cascade

    X, y = rerun_data  # 2,000 rows
    params = {"n_bins": 3, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}

    def weight(threshold, **more):
        monkeypatch.setattr(cascade, "FAST_BASE_ROWS", threshold)
        return LeapRegressor(**params, **more).fit(X, y)

    small, large = weight(2001), weight(2000)
    assert (small.expert_weight_, large.expert_weight_) == (1.0, cascade.FAST_BASE_EXPERT_WEIGHT)
    assert large.base_.params["learning_rate"] == 0.2  # the two rules switch together
    # "auto" predicts as the weight it chose, and a model file keeps the choice
    pinned = LeapRegressor(**params, expert_weight=0.5).fit(X, y)
    np.testing.assert_array_equal(large.predict(X), pinned.predict(X))
    np.testing.assert_array_equal(load(save(large, tmp_path / "m.leap")).predict(X), large.predict(X))
    # a user's shared expert, or none, keeps the whole corrections
    mine = weight(2000, base=LGBMRegressor(n_estimators=5, verbose=-1))
    assert mine.expert_weight_ == 1.0
    assert weight(2000, base=None).expert_weight_ == 1.0


def test_a_model_pickled_before_expert_weight_existed_predicts_with_the_whole_corrections(
        weighted_model):
    import pickle

    model, X = weighted_model
    old = pickle.loads(pickle.dumps(model))
    for name in ("expert_weight", "expert_weight_"):  # as a model of an earlier version has it
        del old.__dict__[name]
    np.testing.assert_array_equal(old.predict(X), model.predict(X))


def test_auto_rounds_are_fewer_only_behind_the_faster_shared_expert(rerun_data, monkeypatch,
                                                                     tmp_path):
    """Measured: on ~700,000 rows 30 rounds score within 0.3 points of 50 and place a batch 1.3
    times as fast; smaller logs, and experts without the default shared expert, keep 50."""
    import leapml._cascade as cascade

    X, y = rerun_data  # 2,000 rows
    params = {"n_bins": 3, "random_state": 0, "min_bin_rows": 50}

    def fitted(threshold, **more):
        monkeypatch.setattr(cascade, "FAST_BASE_ROWS", threshold)
        return LeapRegressor(**params, **more).fit(X, y)

    def trees(model):
        return {booster.num_trees() for booster in (*model.regressors_, model.classifier_)}

    small, large = fitted(2001), fitted(2000)
    assert (small.n_estimators_, large.n_estimators_) == (50, cascade.FAST_BASE_ROUNDS)
    assert (trees(small), trees(large)) == ({50}, {cascade.FAST_BASE_ROUNDS})
    assert large.expert_weight_ == cascade.FAST_BASE_EXPERT_WEIGHT  # the rules switch together
    # a count of the user's is kept, and experts without the default shared expert keep 50
    assert fitted(2000, n_estimators=7).n_estimators_ == 7
    assert fitted(2000, base=None).n_estimators_ == 50
    # the model file keeps the parameter and the rounds it gave
    loaded = load(save(large, tmp_path / "m.leap"))
    assert (loaded.n_estimators, loaded.n_estimators_) == ("auto", cascade.FAST_BASE_ROUNDS)
    np.testing.assert_array_equal(loaded.predict(X), large.predict(X))
    with pytest.raises(ValueError, match="n_estimators"):
        LeapRegressor(n_estimators="many").fit(X, y)


@pytest.fixture(scope="module")
def compute_data():
    """Throughput of a share of the peak spent on a model's FLOPs per sample, over three decades."""
    rng = np.random.default_rng(4)
    n = 1500
    X = pd.DataFrame({"trainer_count": rng.choice([1.0, 2.0, 4.0, 8.0], size=n),
                      "flops_per_sample": np.exp(rng.uniform(np.log(1e9), np.log(1e12), size=n)),
                      "peak_tflops": rng.uniform(50.0, 1000.0, size=n)})
    log_y = (np.log(X["trainer_count"]) + np.log(0.4e12 * X["peak_tflops"])
             - np.log(X["flops_per_sample"]) + rng.normal(0, 0.02, size=n))
    return X, np.exp(log_y.to_numpy())


def test_compute_anchor_is_the_flops_at_a_reference_rate(compute_data, tmp_path):
    X, y = compute_data
    params = {"n_bins": 3, "n_estimators": 30, "random_state": 0, "min_bin_rows": 50}
    model = LeapRegressor(anchor="compute", **params).fit(X, y)
    assert model.anchor_ == "compute"
    expected = np.log(X["trainer_count"] * 1e14 / X["flops_per_sample"]).to_numpy()
    np.testing.assert_allclose(model._anchor_values(model._validate_X(X, reset=False)), expected)
    # a model a thousand times larger than any in the log: the anchored prediction falls
    # with its FLOPs, trees of log(y) stop at the slowest run they saw
    far = X.head(50).assign(flops_per_sample=1e15)
    truth = (far["trainer_count"] * 0.4e12 * far["peak_tflops"] / 1e15).to_numpy()
    plain = LeapRegressor(anchor=None, **params).fit(X, y)
    assert np.median(np.abs(np.log(model.predict(far) / truth))) < 0.1
    assert np.median(np.abs(np.log(plain.predict(far) / truth))) > 1.0
    # sizes no throughput could have, or none, are read as unknown (the fill), not refused
    with pytest.warns(UserWarning, match="never learned to read"):
        odd = model.predict(X.head(3).assign(flops_per_sample=[1e-300, 0.0, np.nan]))
    assert np.isfinite(odd).all()
    reasons = model.explain(X.head(3))  # the anchor counted on flops_per_sample
    total = reasons.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(np.exp(total), model.predict(X.head(3)))
    loaded = load(save(model, tmp_path / "compute.leap"))
    assert loaded.anchor_ == "compute"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_compute_anchor_needs_its_columns_and_anchors_nothing_without_sizes(compute_data):
    X, y = compute_data
    params = {"n_bins": 3, "n_estimators": 10, "random_state": 0, "min_bin_rows": 50}
    with pytest.raises(ValueError, match=r"X lacks \['flops_per_sample'\]"):
        LeapRegressor(anchor="compute", **params).fit(X.drop(columns="flops_per_sample"), y)
    unsized = X.assign(flops_per_sample=np.nan)  # a log without model sizes
    model = LeapRegressor(anchor="compute", **params).fit(unsized, y)
    assert model.anchor_ is None
    np.testing.assert_array_equal(model.predict(unsized),
                                  LeapRegressor(anchor=None, **params).fit(unsized, y).predict(unsized))


def _bench_method_levers():
    """The levers benchmark as a module (benchmarks/ is not a package)."""
    import importlib.util

    path = Path(__file__).parents[1] / "benchmarks" / "bench_method_levers.py"
    spec = importlib.util.spec_from_file_location("bench_method_levers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ranking_levers_of_the_benchmark_move_only_what_they_name():
    """rank_margin lifts the types a job ran on; rank_spread scales the distance from the job's mean."""
    bench = _bench_method_levers()
    runs = pd.DataFrame({"job_config_runs_same_hardware": [2, np.nan, 0, 1]})
    predicted = np.array([100.0, 400.0, 50.0, 200.0])
    jobs = np.array([7, 7, 3, 3])
    plain = bench.make_model("default", 0)
    assert bench._ranking_levers(plain, runs, jobs, predicted) is predicted

    margin = bench.make_model("rank_margin=0.1", 0)
    assert isinstance(margin, LeapRegressor) and "rank_margin" not in margin.get_params()
    np.testing.assert_allclose(np.log(bench._ranking_levers(margin, runs, jobs, predicted)
                                      / predicted), [0.1, 0.0, 0.0, 0.1], atol=1e-12)

    spread = bench.make_model("rank_spread=0.5", 0)
    moved = np.log(bench._ranking_levers(spread, runs, jobs, predicted))
    for job in (7, 3):
        ours = jobs == job
        before = np.log(predicted[ours])
        np.testing.assert_allclose(moved[ours].mean(), before.mean())
        np.testing.assert_allclose(moved[ours] - moved[ours].mean(), 0.5 * (before - before.mean()))
