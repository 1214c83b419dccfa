"""LeapRegressor: fitted state, edge cases, pandas categoricals, errors, determinism."""

import numpy as np
import pandas as pd
import pytest
from _synthetic import make_throughput_regression
from lightgbm import LGBMClassifier, LGBMRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from leapml import LeapRegressor
from leapml._binning import assign_bins
from leapml._cascade import ConstantModel


def small(**params):
    defaults = {
        "n_bins": 5, "max_iter": 3, "random_state": 0, "router": "multiclass", "combine": "hard",
        "min_bin_rows": 1,
        "regressor": LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1),
        "classifier": LGBMClassifier(n_estimators=10, min_child_samples=5, verbose=-1),
    }
    defaults.update(params)
    return LeapRegressor(**defaults)


@pytest.fixture(scope="module")
def synthetic():
    return make_throughput_regression(600, random_state=1)


@pytest.mark.parametrize("seed", range(3))
def test_fitted_attributes_and_positive_predictions(seed):
    X, y = make_throughput_regression(400, random_state=seed)
    model = small().fit(X, y)
    assert model.n_bins_ == 5 and model.bin_edges_.shape == (6,)
    assert np.all(np.diff(model.bin_edges_) > 0)
    np.testing.assert_allclose(model.bin_edges_[[0, -1]], np.log([y.min(), y.max()]))
    assert len(model.regressors_) == 5
    assert model.moved_.shape == model.train_loss_.shape == (model.n_iter_,)
    assert 1 <= model.n_iter_ <= 3
    assert model.n_features_in_ == X.shape[1]
    assert list(model.feature_names_in_) == list(X.columns)
    pred = model.predict(X)
    assert pred.shape == (len(X),) and np.all(pred > 0) and np.all(np.isfinite(pred))
    proba = model.predict_bin_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict_bin(X), proba.argmax(axis=1))


def test_default_submodels_learn_the_synthetic_task(synthetic):
    X, y = synthetic
    model = LeapRegressor(n_estimators=20, random_state=0).fit(X, y)
    # far better than predicting the median everywhere on a 7-orders target
    log_error = np.abs(np.log(model.predict(X)) - np.log(y))
    assert np.median(log_error) < 0.5 * np.median(np.abs(np.log(y) - np.median(np.log(y))))


@pytest.mark.parametrize("seed", range(3))
def test_row_order_does_not_change_the_fit(seed):
    X, y = make_throughput_regression(300, random_state=seed)
    perm = np.random.default_rng(seed).permutation(len(y))
    a = small(combine="soft").fit(X, y).predict(X)
    b = small(combine="soft").fit(X.iloc[perm], y[perm]).predict(X)
    np.testing.assert_array_equal(a, b)


def test_hard_uses_the_chosen_expert_and_soft_blends_in_log_space(synthetic):
    X, y = synthetic
    model = small().fit(X, y)
    Xe = model._validate_X(X, reset=False)
    # the experts correct the shared expert's estimate
    base = model.base_.predict(Xe)
    logs = np.column_stack([e.predict(Xe) for e in model.regressors_])
    chosen = model.predict_bin(X)
    np.testing.assert_allclose(model.predict(X), np.exp(base + logs[np.arange(len(y)), chosen]))
    proba = model.predict_bin_proba(X)
    soft = model.set_params(combine="soft").predict(X)
    np.testing.assert_allclose(soft, np.exp(base + (proba * logs).sum(axis=1)), rtol=1e-12)


def test_same_seed_same_predictions_also_with_threads(synthetic):
    X, y = synthetic
    one = LeapRegressor(n_estimators=10, random_state=5, n_jobs=1).fit(X, y).predict(X)
    two = LeapRegressor(n_estimators=10, random_state=5, n_jobs=2).fit(X, y).predict(X)
    again = LeapRegressor(n_estimators=10, random_state=5, n_jobs=2).fit(X, y).predict(X)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(two, again)


def test_ties_give_fewer_bins():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 2))
    y = np.repeat([1.0, 10.0, 100.0], 30)
    model = small(n_bins=13).fit(X, y)
    assert model.n_bins_ == 3
    assert set(np.unique(model.predict_bin(X))) <= {0, 1, 2}


def test_all_equal_y_predicts_that_value():
    X = np.random.default_rng(0).uniform(size=(30, 2))
    model = small().fit(X, np.full(30, 7.5))
    assert model.n_bins_ == 1
    assert isinstance(model.classifier_, ConstantModel)
    np.testing.assert_allclose(model.predict(X), 7.5)


def test_fewer_rows_than_bins_and_single_row_bins():
    X = np.arange(4, dtype=float).reshape(-1, 1)
    y = np.array([1.0, 10.0, 100.0, 1000.0])
    model = small(n_bins=13).fit(X, y)
    assert model.n_bins_ == 4
    # every bin holds one row, so every expert is that row's constant
    assert all(isinstance(e, ConstantModel) for e in model.regressors_)
    assert np.all(model.predict(X) > 0)


def test_one_feature_and_nan_features():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=200)
    y = np.exp(8 * x)
    X = x.reshape(-1, 1).copy()
    X[::10, 0] = np.nan
    model = small().fit(X, y)
    pred = model.predict(np.array([[np.nan], [0.5]]))
    assert pred.shape == (2,) and np.all(np.isfinite(pred)) and np.all(pred > 0)


def test_numpy_input_and_user_estimators(synthetic):
    X, y = make_throughput_regression(300, random_state=2, as_frame=False)
    model = LeapRegressor(n_bins=4, regressor=DecisionTreeRegressor(max_depth=4),
                          router="multiclass", min_bin_rows=1,
                          classifier=DecisionTreeClassifier(max_depth=4), random_state=0)
    model.fit(X, y)
    assert isinstance(model.regressors_[0], DecisionTreeRegressor)
    assert not hasattr(model, "feature_names_in_")
    assert model.predict(X).shape == (300,)


def test_categories_learned_in_fit_and_unseen_means_missing(synthetic):
    X, y = synthetic
    model = small().fit(X, y)
    assert model.categories_[X.columns.get_loc("precision")] == ["bf16", "fp32", "fp8"]
    new = X.head(20).copy()
    new["precision"] = "fp4"  # never seen in fit
    missing = X.head(20).copy()
    missing["precision"] = None
    np.testing.assert_array_equal(model.predict(new), model.predict(missing))


def test_category_order_at_predict_does_not_remap(synthetic):
    X, y = synthetic
    model = small().fit(X, y)
    shuffled = X.copy()
    hardware = X["hardware_type"].cat.categories[::-1]
    shuffled["hardware_type"] = X["hardware_type"].cat.reorder_categories(hardware)
    as_strings = X.assign(hardware_type=X["hardware_type"].astype(str))
    expected = model.predict(X)
    np.testing.assert_array_equal(model.predict(shuffled), expected)
    np.testing.assert_array_equal(model.predict(as_strings), expected)


def test_an_arrow_dictionary_column_is_categorical(synthetic):
    import pyarrow as pa  # a dependency of leapml

    X, y = synthetic
    names = X["hardware_type"].astype(str).to_numpy()
    arrow = pd.Series(pa.array(names).dictionary_encode(), index=X.index,
                      dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())))
    model = small().fit(X.assign(hardware_type=arrow), y)
    as_text = small().fit(X.assign(hardware_type=names), y)
    position = X.columns.get_loc("hardware_type")
    assert model.categories_[position] == sorted(set(names)) == as_text.categories_[position]
    np.testing.assert_array_equal(model.predict(X.assign(hardware_type=arrow)), as_text.predict(X))


def test_sample_weight_moves_the_bins():
    X = np.random.default_rng(0).uniform(size=(100, 2))
    y = np.exp(np.linspace(0, 5, 100))
    weight = np.where(np.arange(100) < 50, 4.0, 1.0)
    plain = small(n_bins=2).fit(X, y)
    weighted = small(n_bins=2).fit(X, y, sample_weight=weight)
    assert weighted.bin_edges_[1] < plain.bin_edges_[1]
    start = assign_bins(np.log(y), weighted.bin_edges_)
    np.testing.assert_allclose(np.bincount(start, weights=weight), weight.sum() / 2, rtol=0.05)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (0.0, r"1 of 50 rows are not \(0 NaN, 0 inf, 1 <= 0\)"),
        (-3.0, r"1 of 50 rows are not \(0 NaN, 0 inf, 1 <= 0\)"),
        (np.nan, r"1 of 50 rows are not \(1 NaN, 0 inf, 0 <= 0\)"),
        (np.inf, r"1 of 50 rows are not \(0 NaN, 1 inf, 0 <= 0\)"),
    ],
)
def test_bad_targets_are_refused_with_a_count(bad, message):
    X = np.random.default_rng(0).uniform(size=(50, 2))
    y = np.linspace(1, 2, 50)
    y[7] = bad
    with pytest.raises(ValueError, match=message):
        small().fit(X, y)


def test_length_mismatch_and_bad_params_are_refused():
    X = np.ones((10, 2))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        small().fit(X, np.ones(9))
    with pytest.raises(ValueError, match="combine"):
        small(combine="mean").fit(X, np.ones(10))
    with pytest.raises(ValueError, match="n_bins"):
        small(n_bins=0).fit(X, np.ones(10))


def test_every_input_form_encodes_by_value(synthetic):

    X, y = synthetic
    model = small().fit(X, y)
    column = X.columns.get_loc("hardware_type")
    frame = X.head(30).assign(precision=X["precision"].head(30).astype("category"))
    # an unseen category and a missing one must both become NaN
    hardware = frame["hardware_type"].cat.add_categories(["never-seen"])
    hardware.iloc[0], hardware.iloc[1] = "never-seen", None
    frame["hardware_type"] = hardware
    encoded = model._validate_X(frame, reset=False)
    assert np.isnan(encoded[:2, column]).all()
    assert not np.isnan(encoded[2:, column]).any()
    # as text, as a mapping of named columns, or as an object array: the same codes
    text = frame.assign(hardware_type=frame["hardware_type"].astype(object),
                        precision=frame["precision"].astype(str))
    mapping = {name: frame[name].array for name in frame.columns}
    for other in (text, mapping):
        np.testing.assert_array_equal(model._validate_X(other, reset=False), encoded)
    with pytest.warns(UserWarning, match="valid feature names"):
        array = model._validate_X(frame.to_numpy(dtype=object), reset=False)
    np.testing.assert_array_equal(array, encoded)
    np.testing.assert_array_equal(model.predict(mapping), model.predict(frame))


def test_a_mapping_of_series_with_different_indexes_is_refused(synthetic):
    X, y = synthetic
    model = small().fit(X, y)
    rows = X.head(20)
    same = {name: rows[name] for name in rows.columns}
    np.testing.assert_array_equal(model.predict(same), model.predict(rows))
    # one column in another order of its labels: read by position, its rows would be mixed
    shuffled = dict(same, batch_size=rows["batch_size"].iloc[::-1])
    with pytest.raises(ValueError, match="Series whose indexes differ"):
        model.predict(shuffled)


def test_codes_do_not_depend_on_a_dtypes_order(synthetic):
    import pandas as pd

    X, y = synthetic
    model = small().fit(X, y)
    column = X.columns.get_loc("hardware_type")
    seen = list(X["hardware_type"].cat.categories)
    rows = X.sample(20, random_state=0).copy()
    reference = model._validate_X(rows, reset=False)
    for categories in (seen + ["never-seen"], ["never-seen", *seen[::-1]], seen[:3]):
        names = rows["hardware_type"].astype(str)
        names = names.where(names.isin(categories))  # a type outside the dtype is missing
        frame = rows.assign(hardware_type=names.astype(pd.CategoricalDtype(categories)))
        encoded = model._validate_X(frame, reset=False)
        known = frame["hardware_type"].notna().to_numpy()
        np.testing.assert_array_equal(encoded[known], reference[known])
        assert np.isnan(encoded[~known, column]).all()


def test_predict_checks_its_input_and_writes_nothing(synthetic):
    X, y = synthetic
    model = small().fit(X, y)
    before = dict(vars(model))
    frame = X.head(5)
    numeric = next(c for c in X.columns if X[c].dtype.kind == "f")
    with pytest.raises(ValueError, match="infinity"):
        model.predict(frame.assign(**{numeric: np.inf}))
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame[frame.columns[::-1]])
    with pytest.raises(ValueError, match="feature names"):
        model.predict({name: frame[name].array for name in frame.columns[::-1]})
    with pytest.raises(ValueError, match="was numeric in fit"):
        model.predict(frame.assign(**{numeric: "fast"}))
    # the other way round: a category column's codes, every one of them unseen
    category = next(c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype))
    with pytest.raises(ValueError, match=f"column '{category}' held text categories in fit"):
        model.predict(frame.assign(**{category: frame[category].cat.codes}))
    model.predict(frame.assign(**{category: np.nan}))  # a column with no value is no mistake
    model.predict(frame)
    model.predict({name: frame[name].array for name in frame.columns})
    assert vars(model).keys() == before.keys()
    assert all(vars(model)[key] is value for key, value in before.items())


# -- the ordinal router ---------------------------------------------------------


def ordinal(**params):
    defaults = {"n_bins": 5, "max_iter": 3, "random_state": 0, "n_estimators": 10,
                "router": "ordinal", "combine": "hard", "min_bin_rows": 1,
                "regressor": LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1)}
    defaults.update(params)
    return LeapRegressor(**defaults)


def test_ordinal_router_sends_each_row_to_the_nearest_bins_expert(synthetic):
    from leapml._router import nearest_bin, router_scores

    X, y = synthetic
    model = ordinal().fit(X, y)
    assert model.classifier_.num_model_per_iteration() == 1  # one tree per round, not per bin
    Xe = model._validate_X(X, reset=False)
    scores = router_scores(model.classifier_, Xe)
    chosen = model.predict_bin(X)
    np.testing.assert_array_equal(chosen, nearest_bin(scores, model.n_bins_))
    # the score lands within half a bin of the chosen index, except beyond the ends
    inside = (scores >= 0) & (scores <= model.n_bins_ - 1)
    assert np.all(np.abs(scores[inside] - chosen[inside]) <= 0.5)
    logs = np.column_stack([e.predict(Xe) for e in model.regressors_])
    base = model.base_.predict(Xe)
    np.testing.assert_allclose(model.predict(X), np.exp(base + logs[np.arange(len(y)), chosen]))


def test_ordinal_probabilities_split_between_two_neighbouring_bins(synthetic):
    X, y = synthetic
    model = ordinal().fit(X, y)
    proba = model.predict_bin_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba >= 0)
    nonzero = proba > 0
    assert nonzero.sum(axis=1).max() <= 2
    lo = proba.argmax(axis=1)
    two = nonzero.sum(axis=1) == 2
    cols = [np.flatnonzero(row) for row in nonzero[two]]
    assert all(c[1] - c[0] == 1 for c in cols)
    assert 0 < two.mean()  # scores are rarely whole numbers
    # soft blends the two neighbours by those weights
    Xe = model._validate_X(X, reset=False)
    logs = np.column_stack([e.predict(Xe) for e in model.regressors_])
    soft = model.set_params(combine="soft").predict(X)
    np.testing.assert_allclose(soft, np.exp(model.base_.predict(Xe) + (proba * logs).sum(axis=1)),
                               rtol=1e-12)
    assert lo.min() >= 0


def test_blending_two_neighbouring_experts_matches_the_probability_matrix():
    # scores below the first bin, on a bin, between bins and past the last, in shuffled order
    from leapml._cascade import ConstantModel
    from leapml._router import predict_between_bins, predict_router

    rng = np.random.default_rng(3)
    experts = [ConstantModel(v) for v in (1.0, -2.0, 5.0, 0.5)]
    scores = rng.permutation(np.r_[-1.5, 0.0, 1.0, 2.25, 2.5, 3.0, 7.0, rng.uniform(-1, 4, 200)])
    X = np.zeros((len(scores), 1))
    proba = np.vstack([predict_router(ConstantModel(s), X[:1], 4, ordinal=True) for s in scores])
    expected = proba @ np.array([e.value for e in experts])
    np.testing.assert_allclose(predict_between_bins(experts, X, scores), expected, rtol=1e-12)
    assert predict_between_bins(experts[:1], X, scores).tolist() == [1.0] * len(scores)
    assert predict_between_bins(experts, X[:0], scores[:0]).shape == (0,)


def test_ordinal_routing_learns_the_bins_about_as_well_as_multiclass():
    X, y = make_throughput_regression(2000, random_state=7)
    X_test, y_test = make_throughput_regression(1000, random_state=8)
    common = {"n_bins": 5, "random_state": 0, "n_estimators": 30}
    hits = {}
    for router in ("multiclass", "ordinal"):
        model = LeapRegressor(router=router, **common).fit(X, y)
        hits[router] = np.mean(np.abs(model.predict(X_test) / y_test - 1) <= 0.2)
    # a router that placed rows at random would lose most of them
    assert hits["ordinal"] > 0.8 * hits["multiclass"] > 0


def test_ordinal_router_refuses_a_classifier():
    X, y = make_throughput_regression(100, random_state=0)
    with pytest.raises(ValueError, match="router='multiclass'"):
        ordinal(classifier=LGBMClassifier(n_estimators=3, verbose=-1)).fit(X, y)
    with pytest.raises(ValueError, match="router"):
        LeapRegressor(router="tree").fit(X, y)


def test_ordinal_router_with_one_bin_and_user_regressors():
    X = np.arange(8, dtype=float).reshape(-1, 1)
    model = ordinal().fit(X, np.full(8, 5.0))
    np.testing.assert_allclose(model.predict(X), 5.0)
    X, y = make_throughput_regression(300, random_state=2, as_frame=False)
    tree = ordinal(regressor=DecisionTreeRegressor(max_depth=4, random_state=0)).fit(X, y)
    assert np.all(tree.predict(X) > 0)
