"""Tests of the lookup-table baseline."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from leapml.evaluation.baselines import (
    LOOKUP_KEY,
    LastMeasuredRegressor,
    LookupTableRegressor,
    SpecScalingRegressor,
    single_model_reference,
)
from leapml.evaluation.table_score import lookup_table_score
from leapml.features import build_features
from leapml.fleet import simulate


def frame(rows):
    return pd.DataFrame(rows, columns=["model_type", "trainer_count", "batch_size", "hardware_type"])


def test_median_per_key_and_nan_elsewhere():
    X = frame([("a", 8, 64, "H100")] * 3 + [("a", 8, 128, "H100"), ("b", 1, 32, "T4")])
    y = [10.0, 30.0, 20.0, 50.0, 7.0]
    table = LookupTableRegressor().fit(X, y)
    pred = table.predict(frame([("a", 8, 64, "H100"), ("a", 8, 128, "H100"), ("a", 16, 64, "H100"), ("c", 1, 1, "T4")]))
    assert pred[0] == 20.0 and pred[1] == 50.0
    assert np.isnan(pred[2]) and np.isnan(pred[3])
    assert table.table_["n_runs"].sum() == 5


def test_default_keeps_the_most_frequent_model_types():
    X = frame([("a", 1, 1, "T4")] * 5 + [("b", 1, 1, "T4")] * 3 + [("c", 1, 1, "T4")] * 1)
    table = LookupTableRegressor(n_model_types=2).fit(X, np.ones(len(X)))
    assert table.model_types_ == ["a", "b"]
    assert np.isnan(table.predict(frame([("c", 1, 1, "T4")]))[0])
    assert LookupTableRegressor().fit(X, np.ones(len(X))).model_types_ == ["a", "b", "c"]


def test_explicit_model_types_and_extra_columns():
    X = frame([("a", 1, 1, "T4"), ("b", 1, 1, "T4")]).assign(noise=[1.0, 2.0])
    table = LookupTableRegressor(model_types=["b"]).fit(X, [3.0, 4.0])
    assert table.model_types_ == ["b"]
    np.testing.assert_array_equal(table.predict(X), [np.nan, 4.0])
    assert table.coverage(X) == 0.5


def test_skips_unusable_targets():
    X = frame([("a", 1, 1, "T4")] * 3)
    table = LookupTableRegressor().fit(X, [np.nan, -1.0, 6.0])
    assert table.predict(X).tolist() == [6.0, 6.0, 6.0]


def test_input_errors():
    with pytest.raises(TypeError, match="DataFrame"):
        LookupTableRegressor().fit(np.zeros((2, 4)), [1.0, 2.0])
    with pytest.raises(ValueError, match="lookup key"):
        LookupTableRegressor().fit(pd.DataFrame({"model_type": ["a"]}), [1.0])
    with pytest.raises(ValueError, match="n_model_types"):
        LookupTableRegressor(n_model_types=0).fit(frame([("a", 1, 1, "T4")]), [1.0])
    with pytest.raises(ValueError, match="column 3 is out of range"):
        LastMeasuredRegressor(column=3).fit(np.ones((2, 2)), [1.0, 2.0])


def test_lookup_table_keyed_on_every_column_of_an_array():
    X = np.array([[1.0, 8.0], [1.0, 8.0], [2.0, 8.0], [1.0, np.nan]])
    table = LookupTableRegressor(key=None, n_model_types=None).fit(X, [10.0, 30.0, 5.0, 7.0])
    # the row with a missing key part neither enters the table nor gets an answer
    np.testing.assert_array_equal(table.predict(X), [20.0, 20.0, 5.0, np.nan])
    assert table.n_features_in_ == 2 and table.table_["n_runs"].sum() == 3


def test_is_a_clonable_estimator():
    est = LookupTableRegressor(n_model_types=5)
    assert clone(est).get_params() == {"model_types": None, "n_model_types": 5, "key": LOOKUP_KEY}


def test_score_on_a_simulated_fleet():
    fleet = simulate("tiny", days=5, seed=0, attempts_per_day=1500)
    score = lookup_table_score(fleet.attempts, train_days=4)
    assert 0 < score["coverage"] < 0.6
    assert 0 < score["accuracy"] <= 1
    assert score["n_scored"] > 500


def test_last_measured_returns_the_history_column():
    X = pd.DataFrame({"job_last_throughput_same_hardware": [5.0, np.nan, 0.0], "other": [1, 2, 3]})
    model = LastMeasuredRegressor().fit(X, [1.0, 2.0, 3.0])
    pred = model.predict(X)
    assert pred[0] == 5.0 and np.isnan(pred[1]) and np.isnan(pred[2])
    with pytest.raises(ValueError, match="needs a DataFrame with column"):
        LastMeasuredRegressor(column="missing").fit(X, [1.0, 2.0, 3.0])


def test_single_model_reference_learns_log_throughput():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 10, 400)})
    y = np.exp(X["x"].to_numpy())  # spans four orders of magnitude
    model = single_model_reference(random_state=0, n_estimators=50).fit(X, y)
    ratio = model.predict(X) / y
    assert np.median(np.abs(ratio - 1)) < 0.2
    assert model.regressor_.get_params()["objective"] == "l1"


def test_lookup_table_gives_no_answer_for_rows_without_a_batch_size():
    X = pd.DataFrame({"model_type": ["a", "a", "a"], "trainer_count": [1, 1, 1],
                      "batch_size": pd.array([8, None, 8], dtype="Int64"),
                      "hardware_type": ["T4", "T4", "T4"]})
    table = LookupTableRegressor().fit(X, [2.0, 50.0, 4.0])
    np.testing.assert_array_equal(table.predict(X), [3.0, np.nan, 3.0])
    assert table.table_["n_runs"].tolist() == [2]


def test_spec_scaling_scales_the_last_measurement_by_the_figure_ratio():
    X = pd.DataFrame({
        "job_last_throughput_per_trainer_any_hardware": [10.0, 10.0, np.nan, 10.0],
        "trainer_count": [4, 4, 4, 4],
        "log_peak_tflops_ratio_to_last_hardware": np.log([3.0, 1.0, 2.0, np.nan]),
        "log_memory_bw_ratio_to_last_hardware": np.log([1.5, 0.5, 2.0, 2.0]),
    })
    np.testing.assert_allclose(SpecScalingRegressor().fit(X).predict(X), [120.0, 40.0, np.nan, np.nan])
    np.testing.assert_allclose(SpecScalingRegressor(by="memory_bw_gbps").fit(X).predict(X),
                               [60.0, 20.0, np.nan, 80.0])
    with pytest.raises(ValueError, match="'by' parameter"):
        SpecScalingRegressor(by="tdp").fit(X)
    with pytest.raises(ValueError, match="needs a DataFrame with columns"):
        SpecScalingRegressor().fit(X.drop(columns="trainer_count"))


def test_spec_scaling_on_features_matches_the_scaled_by_peak_feature():
    from test_features import make_catalog, make_log

    log = make_log(3, 120)
    X = build_features(log, make_catalog())
    predicted = SpecScalingRegressor().fit(X).predict(X)
    np.testing.assert_allclose(predicted, X["job_last_throughput_scaled_by_peak"], rtol=1e-12)


def test_a_lookup_key_with_a_missing_part_has_no_entry_and_a_fraction_is_named():
    """A NaN trainer count once became the key -9223372036854775808 (with an answer), and
    8.9 trainers were read as 8."""
    X = pd.DataFrame({"model_type": ["a", "a", "a", None], "trainer_count": [8, 8, np.nan, 8],
                      "batch_size": [64, 64, 64, 64], "hardware_type": ["H", "H", "H", "H"]})
    table = LookupTableRegressor().fit(X, [100.0, 110.0, 999.0, 5.0])
    assert len(table.table_) == 1 and table.table_["throughput"].iloc[0] == 105.0
    expected = [105.0, 105.0, np.nan, np.nan]
    np.testing.assert_array_equal(table.predict(X), expected)
    np.testing.assert_array_equal(table.predict(X.astype({"trainer_count": "Int64"})), expected)
    with pytest.raises(ValueError, match="'trainer_count' must hold whole numbers, got 8.9"):
        table.predict(X.assign(trainer_count=[8.9, 8, 8, 8]))
    with pytest.raises(ValueError, match="'batch_size' holds values that are not numbers"):
        table.predict(X.assign(batch_size=["x", 1, 1, 1]))
