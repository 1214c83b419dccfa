"""The memory one trainer needs, learned from the peaks a log records.

Behind ``FeasibilityClassifier(memory_need_features=...)``: a LightGBM
regressor of the log of ``peak_memory_gb`` (completed runs) on columns that
do not depend on the device's memory (the launch configuration, the model's
sizes, the devices a host holds). The classifier then reads each row's
*headroom*, the log of its device memory over that need, which means the
same thing on every hardware type: a log that never put a model on small
memory still says how much memory the model needs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from leapml._encoding import booster_predict, effective_threads
from leapml._memory_keys import require_columns

#: The name of the feature the classifier reads: log(memory_gb / predicted need).
HEADROOM = "memory_headroom"
#: Fewest completed rows with a peak before a need model is fitted.
MIN_PEAK_ROWS = 50


def check_products(X, products) -> None:
    """Check ``memory_need_products``: tuples of names of numeric columns of the frame ``X``."""
    if any(isinstance(p, str) or not all(isinstance(c, str) for c in p) for p in products):
        raise ValueError(f"memory_need_products must be a list of tuples of column names, got {products!r}")
    require_columns(X, products, "memory_need_products")
    text = sorted({c for p in products for c in p if not pd.api.types.is_numeric_dtype(X[c])})
    if text:
        raise ValueError(f"memory_need_products multiplies numeric columns; {text} are not")


def need_matrix(X, columns, products) -> np.ndarray:
    """The need model's matrix: ``X``'s ``columns``, then the log of each product of columns in
    ``products`` (positions in ``X``; NaN where a product is not positive or unknown)."""
    logs = []
    for factors in products:
        with np.errstate(invalid="ignore", over="ignore"):  # NaN factors, huge products
            product = np.prod(X[:, list(factors)], axis=1)
            logs.append(np.log(product, out=np.full(len(X), np.nan), where=product > 0))
    return np.column_stack([X[:, columns], *logs])


def configuration_folds(X_need: np.ndarray) -> np.ndarray:
    """0 or 1 for each row, the same for every row of one configuration (a hash of its values)."""
    hashed = pd.util.hash_pandas_object(pd.DataFrame(X_need), index=False).to_numpy()
    return (hashed % np.uint64(2)).astype(np.int8)


def _fit_one(X_need, log_peak, *, categorical, params, rounds):
    """One LightGBM regressor of ``log_peak`` on ``X_need``."""
    import lightgbm as lgb

    dataset = lgb.Dataset(X_need, log_peak, categorical_feature=categorical,
                          free_raw_data=True, params={"verbose": -1})
    return lgb.train({**params, "objective": "regression"}, dataset, num_boost_round=rounds)


def fit_need(X_need, peak, known, *, categorical, params, rounds, quantile):
    """The need model on the ``known`` rows' peaks, each row's log need as a model that never
    saw its configuration predicts it (two folds by configuration), and the margin: the
    ``quantile`` of the known rows' log of measured over predicted need.

    The classifier learns from the out-of-fold needs how far to trust a
    predicted need; in-sample ones would be too good for a new configuration.
    A fold with too few peaks falls back to the model fitted on all of them.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        log_peak = np.log(peak)
    final = _fit_one(X_need[known], log_peak[known], categorical=categorical, params=params,
                     rounds=rounds)
    need = np.empty(len(X_need))
    folds = configuration_folds(X_need)
    for fold in (0, 1):
        train, held = known & (folds != fold), folds == fold
        model = final if train.sum() < MIN_PEAK_ROWS else _fit_one(
            X_need[train], log_peak[train], categorical=categorical, params=params, rounds=rounds)
        need[held] = predict_need(model, X_need[held], params["num_threads"])
    return final, need, float(np.quantile(log_peak[known] - need[known], quantile))


def read_measured(X, column, memory_column):
    """``memory_column`` and ``column`` of the frame ``X`` as floats (NaN where the measured
    need is not positive), checking that ``X`` has them."""
    if isinstance(X, pd.DataFrame) and column not in X.columns:
        raise ValueError(f"X lacks {column!r}, the measured need of measured_need_column "
                         "(leapml.training.with_measured_peaks adds it)")
    require_columns(X, [(column, memory_column)], "measured_need_column")
    memory, measured = (pd.to_numeric(X[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                        for c in (memory_column, column))
    with np.errstate(invalid="ignore"):
        return memory, np.where(measured > 0, measured, np.nan)


def measured_margin(peak, measured, known, quantile) -> float:
    """The ``quantile`` of the ``known`` rows' log of measured peak over the need an earlier run
    measured (``measured``, NaN: none); NaN with fewer than :data:`MIN_PEAK_ROWS` such rows."""
    with np.errstate(divide="ignore", invalid="ignore"):
        both = known & (measured > 0)
        if both.sum() < MIN_PEAK_ROWS:
            return float("nan")
        return float(np.quantile(np.log(peak[both]) - np.log(measured[both]), quantile))


def best_need(log_need, measured) -> np.ndarray:
    """The log need a row is judged by: what an earlier run measured where one did, else
    ``log_need`` (predicted)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(measured > 0, np.log(measured), log_need)


def headroom(device_memory, log_need) -> np.ndarray:
    """log(memory_gb / need): what the classifier reads (NaN where either is unknown)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(device_memory) - log_need


def predict_need(booster, X_need, n_jobs=None) -> np.ndarray:
    """Predicted log of the memory one trainer needs, GB."""
    if len(X_need) == 0:
        return np.empty(0)
    return booster_predict(booster, X_need, num_threads=effective_threads(n_jobs))
