"""Baselines that LeapRegressor is compared with.

:class:`LastMeasuredRegressor` is persistence (the job's last measurement on
the same hardware), and :func:`single_model_reference` one LightGBM median
regressor on log throughput.

:class:`LookupTableRegressor` reproduces the fleet's old method: a table of
median measured throughput keyed on (model type, trainer count, batch size,
hardware type), kept for a curated set of model types only.

:class:`SpecScalingRegressor` is what an engineer does by hand: take the
throughput the job last measured (on any hardware type) and scale it by the
ratio of the candidate type's peak FLOP/s, or memory bandwidth, to that of
the type it was measured on.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

__all__ = [
    "LOOKUP_KEY",
    "LastMeasuredRegressor",
    "LookupTableRegressor",
    "SpecScalingRegressor",
    "single_model_reference",
]

#: Columns of the lookup table's key.
LOOKUP_KEY = ("model_type", "trainer_count", "batch_size", "hardware_type")


def _text_key(column: pd.Series) -> np.ndarray:
    """A text key part; a missing value stays missing (not the text "nan")."""
    values = column.to_numpy(dtype=object, na_value=None)
    missing = pd.isna(values)
    return np.where(missing, None, values.astype(str)).astype(object)


def _whole_key(column: pd.Series, name: str) -> pd.arrays.IntegerArray:
    """A count key part as nullable integers; a fraction or a text is named, not truncated."""
    try:
        values = pd.to_numeric(column.astype(object) if column.dtype == bool else column,
                               errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as err:
        raise ValueError(f"lookup key column {name!r} holds values that are not numbers: "
                         f"{err}") from err
    known = ~np.isnan(values)
    whole = np.isfinite(values) & (values == np.round(values))
    if (known & ~whole).any():
        raise ValueError(f"lookup key column {name!r} must hold whole numbers, got "
                         f"{float(values[known & ~whole][0])!r}")
    return pd.arrays.IntegerArray(np.where(known, values, 0).astype(np.int64), ~known)


class LookupTableRegressor(RegressorMixin, BaseEstimator):
    """The fleet's old lookup table: median throughput per (model type, trainers, batch, hardware).

    At ``fit`` the table keeps, for each key of :data:`LOOKUP_KEY` seen in the
    training rows of a curated model type, the median of the measured
    throughputs of that key. ``predict`` returns that median, or NaN where
    the table has no entry: a missing entry is the table's "no answer", and
    coverage is the share of rows that get one. Rows without a batch size
    (null) neither enter the table nor get an answer.

    Parameters
    ----------
    model_types : list of str, optional
        The curated model types. Default (None): the ``n_model_types`` most
        frequent model types among the training rows (ties broken by name),
        as a fleet team curates the models that run most.
    n_model_types : int or None, default=19
        How many model types to curate when ``model_types`` is None; None
        keeps every model type.
    key : tuple of str or None, default=LOOKUP_KEY
        The key columns, the first naming the model type. None: every column
        of ``X`` in order (an array as well as a DataFrame), the first naming
        the model type.

    Attributes
    ----------
    model_types_ : list of str
        The model types the table covers.
    table_ : DataFrame
        One row per key: the key columns, ``throughput`` (the median) and
        ``n_runs`` (how many training rows it summarises).
    feature_names_in_ : ndarray of str
        Columns of the ``X`` seen at ``fit``.
    n_features_in_ : int
        Number of those columns.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"model_type": ["a", "a", "a", "b"], "trainer_count": [8, 8, 8, 1],
    ...                   "batch_size": [64, 64, 64, 32], "hardware_type": ["H100", "H100", "H100", "T4"],
    ...                   "other": [1, 2, 3, 4]})
    >>> table = LookupTableRegressor(n_model_types=1).fit(X, [100.0, 120.0, 90.0, 5.0])
    >>> table.predict(X).tolist()
    [100.0, 100.0, 100.0, nan]
    """

    _parameter_constraints: dict = {
        "model_types": ["array-like", None],
        "n_model_types": [Interval(Integral, 1, None, closed="left"), None],
        "key": [tuple, list, None],
    }

    def __init__(self, *, model_types=None, n_model_types: int | None = 19, key=LOOKUP_KEY):
        self.model_types = model_types
        self.n_model_types = n_model_types
        self.key = key

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a key with a missing part has no entry
        tags.target_tags.positive_only = True
        return tags

    def _keys(self, X, *, reset: bool) -> pd.DataFrame:
        """The key of each row; rows whose key has a missing part get none (NaN)."""
        if self.key is None:
            X = validate_data(self, X, reset=reset, dtype=None, ensure_all_finite="allow-nan")
            # plain float64 copies: a read-only float32 memory map merges unreliably
            columns = X.astype(np.float64) if X.dtype.kind in "fiub" else np.array(X, dtype=object)
            keys = pd.DataFrame({f"key_{j}": columns[:, j] for j in range(X.shape[1])})
            keys["key_0"] = keys["key_0"].where(keys["key_0"].isna(), keys["key_0"].astype(str))
            return keys.rename(columns={"key_0": "model_type"})
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"X must be a pandas DataFrame with columns {list(LOOKUP_KEY)}, got {type(X).__name__}")
        missing = [c for c in self.key if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks the lookup key column(s) {missing}")
        if reset:  # record the names; at predict only the key columns matter, the rest is ignored
            validate_data(self, X, reset=True, skip_check_array=True)
        if tuple(self.key) != LOOKUP_KEY:
            return X[list(self.key)].rename(columns={self.key[0]: "model_type"}).reset_index(drop=True)
        # nullable throughout: a row with a missing key part is never a key of the table
        return pd.DataFrame({
            "model_type": _text_key(X["model_type"]),
            "trainer_count": _whole_key(X["trainer_count"], "trainer_count"),
            "batch_size": _whole_key(X["batch_size"], "batch_size"),
            "hardware_type": _text_key(X["hardware_type"]),
        })

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Build the table from training rows.

        Parameters
        ----------
        X : DataFrame
            Rows with the columns of :data:`LOOKUP_KEY` (other columns are ignored).
        y : array-like of shape (n_samples,)
            Measured throughput; rows where it is NaN, infinite or <= 0 are skipped.

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("LookupTableRegressor requires y to be passed, but the target y is None")
        keys = self._keys(X, reset=True)
        y = column_or_1d(y, warn=True).astype(float)
        check_consistent_length(keys, y)
        good = np.isfinite(y) & (y > 0) & keys.notna().all(axis=1).to_numpy()
        keys = keys[good]
        y = y[good]
        if self.model_types is None:
            counts = keys["model_type"].value_counts()
            counts = counts.rename_axis("model_type").reset_index(name="n")
            counts = counts.sort_values(["n", "model_type"], ascending=[False, True])
            kept = counts if self.n_model_types is None else counts.head(self.n_model_types)
            self.model_types_ = kept["model_type"].tolist()
        else:
            self.model_types_ = [str(m) for m in self.model_types]
        mask = keys["model_type"].isin(self.model_types_).to_numpy()
        frame = keys[mask].assign(throughput=y[mask])
        table = frame.groupby(list(keys.columns), sort=True).agg(
            throughput=("throughput", "median"), n_runs=("throughput", "size")
        )
        self.table_ = table.reset_index()
        return self

    def predict(self, X) -> np.ndarray:
        """Median throughput of each row's key in the table; NaN where there is no entry.

        Parameters
        ----------
        X : DataFrame
            Rows with the columns of :data:`LOOKUP_KEY`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "table_")
        keys = self._keys(X, reset=False)
        complete = keys.notna().all(axis=1).to_numpy()
        found = keys.merge(self.table_, on=list(keys.columns), how="left", sort=False)
        return np.where(complete, found["throughput"].to_numpy(dtype=float), np.nan)

    def coverage(self, X) -> float:
        """Share of rows of ``X`` that have an entry in the table.

        Examples
        --------
        >>> import pandas as pd
        >>> X = pd.DataFrame({"model_type": ["a", "b"], "trainer_count": [1, 1],
        ...                   "batch_size": [8, 8], "hardware_type": ["T4", "T4"]})
        >>> LookupTableRegressor().fit(X.iloc[:1], [3.0]).coverage(X)
        0.5
        """
        pred = self.predict(X)
        return float(np.isfinite(pred).mean()) if len(pred) else float("nan")


class _FeatureColumnBaseline(RegressorMixin, BaseEstimator):
    """A baseline that reads feature columns and learns nothing: ``fit`` only checks them."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing measurement is an abstention
        tags.target_tags.positive_only = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check that ``X`` has the columns (and ``y``, if given, is finite); nothing is learned."""
        X = self._validated(X, reset=True)
        if y is not None:
            y = column_or_1d(y, warn=True).astype(float)
            check_consistent_length(X, y)
            if not np.isfinite(y).all():
                raise ValueError(f"Input y contains NaN or infinity in {int((~np.isfinite(y)).sum())} row(s)")
        self._check(X)
        return self

    def _validated(self, X, *, reset: bool):
        """``X`` as given (a DataFrame, its names recorded) or as a checked array."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, reset=reset, skip_check_array=True)
            return X
        return validate_data(self, X, reset=reset, ensure_all_finite="allow-nan")


class LastMeasuredRegressor(_FeatureColumnBaseline):
    """Persistence: predict the throughput this job last measured on this hardware.

    What a scheduler without a model does when a job comes back: expect what
    it saw last time. Abstains (NaN) for jobs never run on the hardware type.

    Parameters
    ----------
    column : str or int, default="job_last_throughput_same_hardware"
        Feature column of :func:`leapml.build_features` holding the last
        measured throughput (a position for an array ``X``).

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen in ``fit``.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"job_last_throughput_same_hardware": [120.0, None]})
    >>> LastMeasuredRegressor().fit(X, [100.0, 50.0]).predict(X)
    array([120.,  nan])
    """

    _parameter_constraints: dict = {"column": [str, Interval(Integral, 0, None, closed="left")]}

    def __init__(self, *, column: str | int = "job_last_throughput_same_hardware"):
        self.column = column

    def predict(self, X):
        """The last measured throughput, NaN where there is none."""
        check_is_fitted(self, "n_features_in_")
        X = self._validated(X, reset=False)
        self._check(X)
        if isinstance(X, pd.DataFrame):
            column = X[self.column] if isinstance(self.column, str) else X.iloc[:, self.column]
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, copy=True)
        else:
            values = np.asarray(X[:, self.column], dtype=float).copy()
        values[~(values > 0)] = np.nan
        return values

    def _check(self, X):
        if isinstance(self.column, str):
            if not isinstance(X, pd.DataFrame) or self.column not in X.columns:
                raise ValueError(
                    f"LastMeasuredRegressor needs a DataFrame with column {self.column!r} "
                    "(as leapml.build_features makes)"
                )
        elif self.column >= X.shape[1]:
            raise ValueError(f"column {self.column} is out of range for X with {X.shape[1]} columns")


class SpecScalingRegressor(_FeatureColumnBaseline):
    """Spec scaling: the job's last measured throughput, scaled by a ratio of hardware figures.

    Predicts ``last throughput per trainer x trainer count x (figure of the
    candidate type / figure of the type of the last run)``, from the feature
    columns :func:`leapml.build_features` makes. Abstains (NaN) for jobs never
    measured before, and where a figure is unknown. The last run may be on
    the candidate type itself (the ratio is then 1).

    Parameters
    ----------
    by : {"peak_tflops", "memory_bw_gbps"}, default="peak_tflops"
        The figure: peak FLOP/s at the job's precision (compute-bound jobs),
        or memory bandwidth (memory-bound jobs).

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen in ``fit``.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"job_last_throughput_per_trainer_any_hardware": [100.0, None],
    ...                   "trainer_count": [8, 1], "log_peak_tflops_ratio_to_last_hardware": [0.0, 0.0],
    ...                   "log_memory_bw_ratio_to_last_hardware": [np.log(2.0), 0.0]})
    >>> SpecScalingRegressor().fit(X).predict(X).tolist()
    [800.0, nan]
    >>> SpecScalingRegressor(by="memory_bw_gbps").fit(X).predict(X).round(6).tolist()
    [1600.0, nan]
    """

    _RATIO = {
        "peak_tflops": "log_peak_tflops_ratio_to_last_hardware",
        "memory_bw_gbps": "log_memory_bw_ratio_to_last_hardware",
    }
    _LAST = "job_last_throughput_per_trainer_any_hardware"

    _parameter_constraints: dict = {"by": [StrOptions({"peak_tflops", "memory_bw_gbps"})]}

    def __init__(self, *, by: str = "peak_tflops"):
        self.by = by

    def predict(self, X):
        """The scaled last measurement, NaN where there is none."""
        check_is_fitted(self, "n_features_in_")
        ratio = self._check(self._validated(X, reset=False))
        columns = [self._LAST, "trainer_count", ratio]
        last, trainers, log_ratio = (
            pd.to_numeric(X[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan) for c in columns
        )
        predicted = last * trainers * np.exp(log_ratio)
        predicted[~(predicted > 0) | ~np.isfinite(predicted)] = np.nan
        return predicted

    def _check(self, X) -> str:
        ratio = self._RATIO[self.by]
        needed = [self._LAST, "trainer_count", ratio]
        if not isinstance(X, pd.DataFrame) or any(c not in X.columns for c in needed):
            raise ValueError(
                f"SpecScalingRegressor needs a DataFrame with columns {needed} "
                "(as leapml.build_features makes)"
            )
        return ratio


def single_model_reference(*, random_state: int = 0, n_estimators: int = 400, **params):
    """One LightGBM median regressor on log throughput: the single-model reference.

    The same features and objective as one expert of
    :class:`~leapml.LeapRegressor`, without the bins, wrapped so that it
    predicts throughput itself.

    Parameters
    ----------
    random_state : int, default=0
    n_estimators : int, default=400
        Trees; the default gives it a tree budget comparable to the cascade's
        per-row budget (one expert plus the classifier).
    **params
        Further ``lightgbm.LGBMRegressor`` parameters.

    Returns
    -------
    sklearn.compose.TransformedTargetRegressor

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = np.exp(X[:, 0] + 3)
    >>> model = single_model_reference(n_estimators=20).fit(X, y)
    >>> bool((model.predict(X) > 0).all())
    True
    """
    from lightgbm import LGBMRegressor
    from sklearn.compose import TransformedTargetRegressor

    settings = {"objective": "l1", "learning_rate": 0.1, "num_leaves": 63,
                "min_child_samples": 10, "verbose": -1, "n_jobs": 1}
    settings.update(params)
    regressor = LGBMRegressor(n_estimators=n_estimators, random_state=random_state, **settings)
    return TransformedTargetRegressor(
        regressor=regressor, func=np.log, inverse_func=np.exp, check_inverse=False
    )
