"""The hard-EM loop over per-bin experts, and the router, on plain numpy arrays."""

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeRegressor

from leapml._binning import assign_bins, equal_frequency_edges
from leapml._cascade import ConstantModel, default_base_regressor, fit_cascade, lightgbm_params
from leapml._router import fit_router, predict_router


def _two_regimes(n=400, seed=0):
    # two linear regimes chosen by a feature: experts can specialise on each
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    log_y = np.where(X[:, 0] > 0.5, 4.0 + 2 * X[:, 1], 1.0 - X[:, 1]) + 0.01 * rng.normal(size=n)
    return X, log_y


def _start(log_y, n_bins):
    edges = equal_frequency_edges(log_y, n_bins)
    return assign_bins(log_y, edges), len(edges) - 1


def _small_lgbm():
    return lgb.LGBMRegressor(objective="l1", n_estimators=10, min_child_samples=5, verbose=-1)


@pytest.mark.parametrize("seed", range(3))
def test_loop_terminates_and_records_each_iteration(seed):
    X, log_y = _two_regimes(seed=seed)
    bins, n_bins = _start(log_y, 4)
    result = fit_cascade(X, log_y, bins, n_bins, regressor=_small_lgbm(), max_iter=6, tol=0.0)
    assert 1 <= result.n_iter <= 6
    assert len(result.moved) == len(result.train_loss) == result.n_iter
    assert all(0.0 <= m <= 1.0 for m in result.moved)
    assert len(result.experts) == n_bins
    assert result.assignment.shape == log_y.shape
    assert set(np.unique(result.assignment)) <= set(range(n_bins))
    # stopped early only because nothing moved
    if result.n_iter < 6:
        assert result.moved[-1] == 0.0


def test_reassignment_never_increases_the_loss_with_exact_experts():
    # linear experts fitted by least squares on their own rows: the assigned
    # loss after reassignment is at most that before it
    X, log_y = _two_regimes()
    bins, n_bins = _start(log_y, 2)
    result = fit_cascade(X, log_y, bins, n_bins, regressor=LinearRegression(), max_iter=5, tol=0.0)
    start_loss = np.mean(np.abs(log_y - np.median(log_y)))
    assert result.train_loss[0] < start_loss
    # two linear experts recover the two regimes almost exactly
    assert result.train_loss[-1] < 0.1


def test_tol_stops_after_first_iteration():
    X, log_y = _two_regimes()
    bins, n_bins = _start(log_y, 3)
    result = fit_cascade(X, log_y, bins, n_bins, regressor=DecisionTreeRegressor(max_depth=3),
                         max_iter=10, tol=1.0)
    assert result.n_iter == 1


def test_single_row_bin_gets_a_constant_and_empty_bin_keeps_its_expert():
    X = np.arange(10, dtype=float).reshape(-1, 1)
    log_y = np.arange(10, dtype=float)
    bins = np.array([0] * 9 + [1])
    result = fit_cascade(X, log_y, bins, 3, regressor=DecisionTreeRegressor(max_depth=1),
                         max_iter=1)
    assert isinstance(result.experts[1], ConstantModel)
    assert result.experts[1].value == 9.0
    # bin 2 never held a row: it keeps the starting constant (the overall median)
    assert isinstance(result.experts[2], ConstantModel)
    assert result.experts[2].value == np.median(log_y)


def test_sample_weight_reaches_the_experts():
    X = np.zeros((20, 1))
    log_y = np.r_[np.zeros(10), np.ones(10)]
    weight = np.r_[np.full(10, 10.0), np.ones(10)]
    bins = np.zeros(20, dtype=int)
    heavy = fit_cascade(X, log_y, bins, 1, regressor=LinearRegression(), sample_weight=weight,
                        max_iter=1)
    plain = fit_cascade(X, log_y, bins, 1, regressor=LinearRegression(), max_iter=1)
    assert heavy.experts[0].predict(X[:1])[0] < plain.experts[0].predict(X[:1])[0]


def test_lightgbm_experts_are_boosters_and_deterministic_across_threads():
    X, log_y = _two_regimes(n=600)
    bins, n_bins = _start(log_y, 3)
    one = fit_cascade(X, log_y, bins, n_bins, regressor=_small_lgbm(), seed=3, num_threads=1)
    two = fit_cascade(X, log_y, bins, n_bins, regressor=_small_lgbm(), seed=3, num_threads=2)
    assert all(isinstance(e, lgb.Booster) for e in one.experts)
    for a, b in zip(one.experts, two.experts, strict=True):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(one.assignment, two.assignment)


def test_lightgbm_params_translate_the_sklearn_names():
    model = lgb.LGBMRegressor(n_estimators=7, subsample=0.5, n_jobs=3, random_state=11)
    params = lightgbm_params(model, seed=0, num_threads=1)
    assert params["num_iterations"] == 7
    assert params["num_threads"] == 3 and params["seed"] == 11
    assert "n_estimators" not in params and "random_state" not in params


def test_router_lightgbm_and_sklearn_give_full_probability_rows():
    X, log_y = _two_regimes()
    labels = (X[:, 0] > 0.5).astype(int) * 2  # bins 0 and 2 used, bin 1 empty
    for classifier in (lgb.LGBMClassifier(n_estimators=10, verbose=-1), LogisticRegression()):
        router = fit_router(X, labels, 3, classifier=classifier)
        proba = predict_router(router, X, 3)
        assert proba.shape == (len(X), 3)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert (proba.argmax(axis=1) == labels).mean() > 0.9


def test_router_with_one_label_is_constant():
    router = fit_router(np.zeros((5, 2)), np.full(5, 1), 3,
                        classifier=lgb.LGBMClassifier(verbose=-1))
    assert isinstance(router, ConstantModel)
    np.testing.assert_array_equal(predict_router(router, np.zeros((2, 2)), 3).argmax(axis=1), [1, 1])


def test_stratified_router_sample_keeps_every_bin_and_its_share():
    from leapml._router import _stratified_sample

    labels = np.repeat([0, 1, 2], [900, 95, 5])
    sample = _stratified_sample(labels, 100, seed=0)
    counts = np.bincount(labels[sample], minlength=3)
    assert counts.tolist() == [90, 10, 1]  # shares rounded up: a rare bin keeps a row
    assert np.all(np.diff(sample) > 0)
    assert _stratified_sample(labels, 5000, seed=0) is None


def test_windowed_reassignment_scores_only_neighbouring_experts():
    from leapml._cascade import _reassignment_errors

    X = np.zeros((4, 1))
    log_y = np.array([0.0, 1.0, 2.0, 3.0])
    experts = [ConstantModel(float(k)) for k in range(4)]
    assignment = np.array([0, 1, 2, 3])
    errors = _reassignment_errors(experts, X, log_y, assignment, 1, 1)
    full = _reassignment_errors(experts, X, log_y, assignment, None, 1)
    near = np.abs(assignment[:, None] - np.arange(4)) <= 1
    np.testing.assert_array_equal(errors[near], full[near])
    assert np.isinf(errors[~near]).all()


def test_experts_fitted_concurrently_equal_ones_fitted_one_after_another():
    # with two threads the experts of an iteration fit concurrently, one thread
    # each; with one thread they fit in turn: the models must not differ
    X, log_y = _two_regimes(n=600)
    bins, n_bins = _start(log_y, 4)
    runs = []
    for threads in (1, 2):
        result = fit_cascade(X, log_y, bins, n_bins, regressor=_small_lgbm(), max_iter=2,
                             tol=0.0, num_threads=threads)
        runs.append([e.model_to_string() for e in result.experts])
    assert runs[0] == runs[1]


def test_reassign_window_bounds_how_far_a_row_moves():
    # rows start in random bins, so the best expert is often far from a row's bin
    X, log_y = _two_regimes(n=600)
    start = np.random.default_rng(0).integers(0, 6, size=len(log_y))
    jumps = {}
    for window in (1, None):
        result = fit_cascade(X, log_y, start, 6, regressor=_small_lgbm(), max_iter=1,
                             tol=0.0, reassign_window=window)
        jumps[window] = np.abs(result.assignment - start).max()
    assert jumps[1] == 1
    assert jumps[None] > 1


def test_router_max_rows_samples_the_multiclass_router_only():
    from leapml import LeapRegressor

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(3000, 3))
    y = np.exp(4 * X[:, 0] + 2 * np.sin(6 * X[:, 1]) + rng.normal(0, 0.3, 3000))
    base = {"n_bins": 8, "min_bin_rows": 1, "n_estimators": 10, "max_iter": 2, "tol": 0.0,
            "random_state": 0}
    full = LeapRegressor(**base, router="multiclass", router_max_rows=None).fit(X, y)
    sampled = LeapRegressor(**base, router="multiclass", router_max_rows=500).fit(X, y)
    assert full.classifier_.model_to_string() != sampled.classifier_.model_to_string()
    assert [e.model_to_string() for e in full.regressors_] == [
        e.model_to_string() for e in sampled.regressors_]
    # the ordinal router trains on every row whatever the cap
    ordinal = [LeapRegressor(**base, router_max_rows=cap).fit(X, y) for cap in (None, 500)]
    assert (ordinal[0].classifier_.model_to_string()
            == ordinal[1].classifier_.model_to_string())


def test_the_shared_expert_spreads_its_splits_beyond_its_strongest_column():
    """Half the columns per split: the default shared expert cannot put every split on one column.

    ``spec`` sets most of the answer, ``own`` (a job's own runs, absent on
    30% of rows) and ``hint`` (a noisy view of the job's factor) the rest.
    With every column at every split the trees give most of their gain to
    the strongest column; sampled per split, the gain is shared.
    """
    rng = np.random.default_rng(0)
    n = 4000
    spec = rng.uniform(0, 3, n)
    job = rng.normal(0, 0.5, n)
    y = 2.0 * spec + job + rng.normal(0, 0.05, n)
    own = np.where(rng.random(n) < 0.7, y + rng.normal(0, 0.02, n), np.nan)
    X = np.column_stack([own, spec, job + rng.normal(0, 0.3, n), rng.normal(size=(n, 2))])

    def top_gain_share(model):
        gains = model.fit(X, y).booster_.feature_importance(importance_type="gain")
        return gains.max() / gains.sum()

    sampled = default_base_regressor().set_params(random_state=0)
    every_column = default_base_regressor().set_params(random_state=0, feature_fraction_bynode=1.0)
    assert top_gain_share(sampled) < top_gain_share(every_column) - 0.1


_SPLIT_FAILURE = "Check failed: (best_split_info.right_count) > (0) at serial_tree_learner.cpp, line 870 ."


def _failing_on_subsets(monkeypatch, message=_SPLIT_FAILURE):
    """lgb.train as LightGBM behaves on the row subsets that trip its split check: it raises
    on any subset of a Dataset (``used_indices`` set) and trains on anything else."""
    real_train = lgb.train
    calls = []

    def train(params, train_set, *args, **kwargs):
        calls.append(getattr(train_set, "used_indices", None) is not None)
        if calls[-1]:
            raise lgb.basic.LightGBMError(message)
        return real_train(params, train_set, *args, **kwargs)

    monkeypatch.setattr(lgb, "train", train)
    return calls


def test_a_failed_split_check_on_a_subset_refits_the_rows_binned_on_their_own(monkeypatch):
    from leapml.regressor import LeapRegressor

    X, log_y = _two_regimes(n=600)
    calls = _failing_on_subsets(monkeypatch)
    model = LeapRegressor(n_bins=3, n_estimators=5, min_bin_rows=50, random_state=0)
    with pytest.warns(RuntimeWarning, match="split check"):
        model.fit(X, np.exp(log_y))
    assert any(calls) and not all(calls)  # the subsets failed, the refits trained
    assert all(isinstance(e, lgb.Booster) for e in model.regressors_)
    assert np.isfinite(model.predict(X)).all()


def test_other_lightgbm_errors_are_not_retried(monkeypatch):
    from leapml._cascade import train_booster

    _failing_on_subsets(monkeypatch, message="Check failed: (num_data) > (0)")
    dataset = lgb.Dataset(np.random.default_rng(0).normal(size=(100, 2)), label=np.arange(100.0),
                          params={"verbose": -1}).construct()
    rebuilt = []
    with pytest.raises(lgb.basic.LightGBMError, match="num_data"):
        train_booster({"num_iterations": 2, "verbose": -1}, dataset.subset(np.arange(50)),
                      lambda layout: rebuilt.append(layout))
    assert rebuilt == []


def test_a_split_check_failing_every_way_is_raised(monkeypatch):
    from leapml._cascade import train_booster

    monkeypatch.setattr(lgb, "train", lambda *a, **k: (_ for _ in ()).throw(
        lgb.basic.LightGBMError(_SPLIT_FAILURE)))
    layouts = []
    with pytest.raises(lgb.basic.LightGBMError, match="best_split_info"):
        train_booster({"num_iterations": 2}, None, lambda layout: layouts.append(layout))
    assert layouts == [{}, {"force_col_wise": False, "force_row_wise": True}]
