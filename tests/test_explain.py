"""LeapRegressor.explain: contributions through the routed experts, summing to the prediction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from leapml import LeapRegressor


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"memory_gb": rng.uniform(10, 200, n), "batch_size": rng.uniform(1, 64, n),
                      "noise": rng.normal(size=n)})
    y = np.exp(np.log(X["memory_gb"]) * 2 + 0.01 * X["batch_size"]).to_numpy()
    return X, y


@pytest.mark.parametrize("params", [{}, {"combine": "soft"}, {"router": "ordinal"}])
def test_contributions_add_up_to_the_log_prediction(params):
    X, y = _data()
    model = LeapRegressor(n_bins=3, n_estimators=20, random_state=0, **params).fit(X, y)
    reasons = model.explain(X.head(25))
    assert len(reasons) == 25 * (X.shape[1] + 1)
    total = reasons.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(total, np.log(model.predict(X.head(25))), rtol=1e-6)


def test_the_feature_that_drives_throughput_weighs_most():
    X, y = _data()
    model = LeapRegressor(n_bins=3, n_estimators=30, random_state=0).fit(X, y)
    reasons = model.explain(X.head(50))
    reasons = reasons[reasons["feature"] != "(baseline)"]
    size = reasons.assign(size=reasons["contribution"].abs()).groupby("feature")["size"].mean()
    assert size.idxmax() == "memory_gb"
    assert size["noise"] < 0.1 * size["memory_gb"]


def test_explain_needs_lightgbm_experts():
    X, y = _data(120)
    model = LeapRegressor(n_bins=2, regressor=LinearRegression(), n_estimators=5,
                          random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="LightGBM experts"):
        model.explain(X.head(3))
