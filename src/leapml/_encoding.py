"""One column encoder: an estimator's features as one float matrix, learned in ``fit``.

Numeric columns are read as they are; category columns become float codes,
NaN for missing values and for values unseen in ``fit``. The encoder is
learned once, in ``fit``, and every predict path (a DataFrame, a mapping of
named columns, an array) hands its input to it; nothing is written at
predict time, so one fitted model serves several threads at once.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from joblib import effective_n_jobs

__all__ = [
    "ColumnEncoder",
    "canonical_order",
    "effective_threads",
    "is_categorical",
    "learn_categories",
    "refuse_infinity",
    "unit_free_weights",
]

#: What ``pandas.api.types.infer_dtype`` calls an object column of numbers only.
_NUMBERS = ("integer", "floating", "mixed-integer-float", "decimal")
#: A categorical with more categories than this (and than twice its rows) has
#: only the categories its rows use translated: a few rows of a large dtype.
_WHOLE_TABLE = 256


def effective_threads(n_jobs) -> int:
    """The threads one call may use: 1 by default, else ``n_jobs`` as joblib reads it (-1: all cores).

    The one rule the estimators follow, decided once per call and handed down.

    Examples
    --------
    >>> effective_threads(None), effective_threads(2)
    (1, 2)
    """
    return 1 if n_jobs is None else int(effective_n_jobs(n_jobs))


#: LightGBM does not promise that one booster, or one process, may predict from several
#: Python threads at once, and its thread count is process-wide state each prediction
#: sets; eight threads predicting with one model at once (tests/test_threads.py) crashed
#: the interpreter once inside LightGBM's predict. Every prediction of a LightGBM booster
#: in the library takes this lock (:func:`booster_predict`); one call still uses its
#: threads.
_LIGHTGBM_PREDICT = threading.Lock()


def booster_predict(booster, X, **kwargs):
    """``booster.predict(X, **kwargs)``, one at a time in the process (a booster may
    still use several threads inside one call).

    Examples
    --------
    >>> import lightgbm as lgb
    >>> X = np.arange(40.0).reshape(-1, 1)
    >>> booster = lgb.train({"verbose": -1, "min_data_in_leaf": 2}, lgb.Dataset(X, X[:, 0]), 2)
    >>> booster_predict(booster, X[:3], num_threads=1).shape
    (3,)
    """
    with _LIGHTGBM_PREDICT:
        return booster.predict(X, **kwargs)


def is_categorical(series: pd.Series) -> bool:
    """Category, string and object columns are categories, except object columns of numbers.

    An Arrow dictionary column (what ``read_parquet(dtype_backend="pyarrow")``
    gives for a categorical) is a category column too.

    Examples
    --------
    >>> import pandas as pd
    >>> is_categorical(pd.Series(["a", "b"])), is_categorical(pd.Series([1.0, 2.0]))
    (True, False)
    """
    dtype = series.dtype
    if pd.api.types.is_object_dtype(dtype):
        return pd.api.types.infer_dtype(series, skipna=True) not in _NUMBERS
    return (isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype)
            or _is_arrow_dictionary(dtype))


def _is_arrow_dictionary(dtype) -> bool:
    """Whether ``dtype`` is an Arrow dictionary (pandas' ``ArrowDtype`` of ``pa.dictionary``)."""
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    import pyarrow as pa  # installed wherever an ArrowDtype is

    return pa.types.is_dictionary(dtype.pyarrow_dtype)


def learn_categories(series: pd.Series) -> list:
    """The categories of a category column: a categorical's own, else its values sorted.

    Examples
    --------
    >>> import pandas as pd
    >>> learn_categories(pd.Series(["b", "a", None, "b"]))
    ['a', 'b']
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        return list(series.cat.categories.tolist())
    if _is_arrow_dictionary(series.dtype):
        # its values, decoded: Arrow sorts no dictionary
        series = series.astype(pd.ArrowDtype(series.dtype.pyarrow_dtype.value_type))
    values = series.dropna()
    if pd.api.types.infer_dtype(values, skipna=True).startswith("mixed"):
        # text compares with text only: sorted as text, the categories do not
        # depend on the order of the rows
        values = values.map(str)
    return pd.Index(pd.unique(values)).sort_values().tolist()


def _refuse_unreadable(series: pd.Series, name) -> None:
    """Refuse a column that is neither numbers nor categories: times, durations, complex numbers."""
    dtype = series.dtype
    if (pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)
            or isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype))
            or pd.api.types.is_complex_dtype(dtype)):
        raise TypeError(
            f"column {name!r} holds {dtype} values, which are neither numbers nor categories: "
            "give them as numbers (a time as days since a date, a duration in seconds) or as text"
        )
    if pd.api.types.is_object_dtype(dtype) and pd.api.types.infer_dtype(series, skipna=True) == "mixed":
        held = next((v for v in series if isinstance(v, (list, dict, set, np.ndarray))), None)
        if held is not None:  # unhashable: no category, and pandas says only that
            raise TypeError(f"column {name!r} holds {type(held).__name__} values (such as "
                            f"{repr(held)[:40]}), which are neither numbers nor categories: give "
                            "one number or one text per cell")


def _refuse_odd_categories(categories, name) -> None:
    """Refuse categories that are neither text nor numbers (tuples, times): a model file holds
    its categories as JSON, and nothing else reads them back as they were."""
    odd = [c for c in categories or () if not isinstance(c, (str, bool, int, float, np.generic))
           or isinstance(c, (np.datetime64, np.timedelta64))]
    if odd:
        raise TypeError(f"column {name!r} holds categories of type {type(odd[0]).__name__} "
                        f"(such as {odd[0]!r}), which are neither text nor numbers: give them as text")


def _warn_if_ambiguous(series: pd.Series, name) -> None:
    """Warn where an object column's type is a guess: numbers only, or text mixed with numbers."""
    if not pd.api.types.is_object_dtype(series.dtype):
        return
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in _NUMBERS:
        warnings.warn(
            f"column {name!r} has dtype object but holds only numbers: it is used as a numeric "
            "feature. Cast it with astype(float) to say so, or with astype('category') to use "
            "its values as categories.", UserWarning, stacklevel=5)
    elif kind.startswith("mixed"):
        warnings.warn(
            f"column {name!r} mixes text with other values: every value is read as text, so 3 "
            "and '3' are one category. Cast it with astype(str) to say so.",
            UserWarning, stacklevel=5)


class ColumnEncoder:
    """What ``fit`` learned of its input's columns, and the encoding of any later input.

    Parameters
    ----------
    categories : list
        One entry per column: its categories (a list) or None for a numeric column.
    names : list of str, optional
        The columns' names, when ``fit`` saw a DataFrame.

    Attributes
    ----------
    categories : list
        As given.
    names : list of str or None
        As given.
    numeric : ndarray of int
        Positions of the numeric columns.
    codes : dict
        For each category column's position, its categories' codes by value.
    text : dict
        For each category column's position, whether its categories are text
        (then a 3 given later is the category ``"3"``).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"gpu": pd.Categorical(["a", "b"]), "memory_gb": [16.0, 80.0]})
    >>> encoder = ColumnEncoder.learn(X)
    >>> encoder.encode(X.assign(gpu=["b", "z"])).tolist()
    [[1.0, 16.0], [nan, 80.0]]
    """

    def __init__(self, categories, names=None):
        self.categories = list(categories)
        self.names = None if names is None else [str(name) for name in names]
        self.numeric = np.array([j for j, c in enumerate(self.categories) if c is None],
                                dtype=np.intp)
        self.codes = {j: {value: float(code) for code, value in enumerate(c)}
                      for j, c in enumerate(self.categories) if c is not None}
        self.text = {j: pd.api.types.infer_dtype(c, skipna=False) == "string"
                     for j, c in enumerate(self.categories) if c is not None}

    def __repr__(self) -> str:
        return (f"ColumnEncoder({len(self.categories)} columns, "
                f"{len(self.codes)} categorical)")

    @classmethod
    def learn(cls, X) -> ColumnEncoder:
        """Learn the columns of ``X``: a DataFrame's category columns, or all numeric.

        Warns where an object column's kind is a guess (numbers only, or
        text mixed with other values).
        """
        if not isinstance(X, pd.DataFrame):
            return cls([None] * _n_columns(X))
        columns = [X.iloc[:, j] for j in range(X.shape[1])]
        for name, series in zip(X.columns, columns, strict=True):
            _refuse_unreadable(series, name)
            _warn_if_ambiguous(series, name)
        categories = [learn_categories(s) if is_categorical(s) else None for s in columns]
        for name, found in zip(X.columns, categories, strict=True):
            _refuse_odd_categories(found, name)
        return cls(categories, [str(name) for name in X.columns])

    @property
    def any_categorical(self) -> bool:
        """Whether some column is a category column."""
        return bool(self.codes)

    def encode(self, X) -> np.ndarray:
        """``X`` (a DataFrame, a mapping of named columns, or a 2-D array) as floats.

        Columns are taken by position; the caller has checked their names
        and count. Raises ValueError naming a numeric column that holds
        something other than numbers.
        """
        if isinstance(X, pd.DataFrame):
            return self._encode_frame(X)
        if isinstance(X, Mapping):
            return self.encode_columns(list(X.values()))
        array = np.asarray(X, dtype=object)
        return self.encode_columns([array[:, j] for j in range(array.shape[1])])

    def encode_columns(self, columns) -> np.ndarray:
        """Columns (NumPy or pandas arrays of equal length, in order) as a float matrix."""
        if not columns:
            return np.empty((0, 0), dtype=np.float64)
        codes = self.codes
        # NumPy number columns as they are, the others converted, each copied into
        # its column of a column-major matrix (LightGBM reads either layout, with
        # the same results): a contiguous write each, at half the time of np.array
        out = np.empty((len(columns[0]), len(columns)), dtype=np.float64, order="F")
        for j, values in enumerate(columns):
            out[:, j] = (values if j not in codes and type(values) is np.ndarray
                         and values.dtype.kind in "biuf" else self._column(j, values))
        return out

    def _encode_frame(self, X: pd.DataFrame) -> np.ndarray:
        dtypes = X.dtypes.tolist()
        plain = [j for j in self.numeric.tolist()
                 if isinstance(dtypes[j], np.dtype) and dtypes[j].kind in "biuf"]
        if len(X) >= _FRAME_BY_COLUMN:
            # column by column into a column-major matrix: one copy of each column, where the
            # one conversion below copies the frame twice (0.6 s against 0.1 s on 478,752 rows)
            kept = set(plain)
            return self.encode_columns([X.iloc[:, j].to_numpy() if j in kept else X.iloc[:, j].array
                                        for j in range(X.shape[1])])
        out = np.empty(X.shape, dtype=np.float64)
        if plain:
            # the NumPy number columns in one conversion: per-column access costs more
            out[:, plain] = X.take(plain, axis=1).to_numpy(dtype=np.float64)
        done = set(plain)
        # by name where names are unique: about half the cost of iloc on one column
        by_name = X.columns.is_unique and X.columns.tolist() == self.names
        for j in range(X.shape[1]):
            if j not in done:
                column = X[self.names[j]] if by_name else X.iloc[:, j]
                out[:, j] = self._column(j, column.array)
        return out

    def _column(self, j: int, values) -> np.ndarray:
        """Column ``j``'s values as floats: numbers as they are, categories as codes."""
        if j not in self.codes:
            if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
                return values
            series = pd.Series(values, copy=False)
            name = j if self.names is None else self.names[j]
            _refuse_unreadable(series, name)  # to_numeric would read a time as nanoseconds
            try:
                numeric = pd.to_numeric(series, errors="raise")
            except (TypeError, ValueError) as err:
                # name the column: pandas' own message only gives a position
                raise ValueError(
                    f"column {name!r} was numeric in fit but holds values "
                    f"that are not numbers: {err}"
                ) from err
            return numeric.to_numpy(np.float64, na_value=np.nan)
        if isinstance(values, pd.Categorical):
            codes, found = values.codes, values.categories
            if len(found) > max(_WHOLE_TABLE, 2 * len(codes)):
                # only the categories these rows use: cheap for a few rows of a large dtype
                if len(codes) and (codes == codes[0]).all():
                    # one value (a job's candidates): no sorting, and one category read
                    used, codes = codes[:1], np.zeros(len(codes), dtype=np.intp)
                    value = found[max(int(used[0]), 0)]
                    table = self._lookup(j, [value.item() if isinstance(value, np.generic) else value])
                else:
                    used, codes = np.unique(codes, return_inverse=True)
                    table = self._lookup(j, found.take(np.maximum(used, 0)).tolist())
                table[used < 0] = np.nan
                return table[codes]
            names = found.to_numpy(dtype=object).tolist()  # cheaper than tolist on Arrow text
        else:
            try:
                codes, found = pd.factorize(np.asarray(values, dtype=object))
            except TypeError:  # unhashable cells: named by column (off the common path)
                _refuse_unreadable(pd.Series(values, copy=False),
                                   j if self.names is None else self.names[j])
                raise
            names = np.asarray(found, dtype=object).tolist()
        table = self._lookup(j, names, missing=True)
        if self.text[j] and len(names) and np.isnan(table[:-1]).all() and _numbers(values):
            # numbers where fit saw text (codes of the categories?): every row would be unseen
            name = j if self.names is None else self.names[j]
            raise ValueError(f"column {name!r} held text categories in fit (such as "
                             f"{list(self.codes[j])[:3]}) but holds numbers none of which is one: "
                             "give the categories themselves, not codes")
        # code -1 (missing) reads the trailing NaN
        return table[codes]

    def _lookup(self, j: int, values: list, *, missing: bool = False) -> np.ndarray:
        """The codes of distinct, non-null ``values`` among column ``j``'s categories (NaN: unseen).

        ``missing`` appends a NaN, what code -1 (a missing value) reads.
        """
        codes = self.codes[j]
        if self.text[j]:
            values = [v if isinstance(v, str) else str(v) for v in values]
        found = [codes.get(v, np.nan) for v in values]
        if missing:
            found.append(np.nan)
        return np.array(found, dtype=np.float64)


def _numbers(values) -> bool:
    """Whether ``values`` are a column of numbers (not booleans)."""
    dtype = getattr(values, "dtype", None)
    return dtype is not None and pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _n_columns(X) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2:
        return shape[1]
    try:
        return len(X[0])
    except (TypeError, IndexError, KeyError):
        return -1


def unit_free_weights(sample_weight):
    """Weights divided by their mean, so that their unit (hours, minutes, ...) cannot matter.

    LightGBM compares sums of weights with absolute thresholds
    (``min_child_weight``, the hessian floor), so weights in minutes fit
    another model than the same weights in hours. The mean-one weights are
    rounded to 32 significant bits: the division leaves the last bits of
    ``w`` and ``60 * w`` apart, and the rounding makes them equal.

    The weights are first scaled by a power of two that brings the largest
    near 1: exact, so ordinary weights give the same result as without it,
    while weights near the ends of the float range (1e306, or denormals
    such as 1e-320) neither overflow their sum nor its inverse.
    """
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.size:
        weights = np.ldexp(weights, -int(np.frexp(np.max(weights))[1]))
    # scikit-learn's check refuses weights that are all zero
    total = float(np.sum(weights))
    mantissa, exponent = np.frexp(weights * (len(weights) / total))
    return np.ldexp(np.round(mantissa * 2.0**32) / 2.0**32, exponent)


def canonical_order(X, y, sample_weight):
    """A row order that depends only on the rows' contents, not on their positions."""
    # hash each row's bit pattern; adding 0.0 maps -0.0 onto 0.0 and the
    # constants are odd 64-bit multipliers, so equal rows (and only those,
    # barring 2^-64 collisions) share a hash
    bits = np.ascontiguousarray(X + 0.0).view(np.uint64)
    row_hash = np.zeros(len(X), dtype=np.uint64)
    multiplier = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):
            mixed = (bits[:, j] ^ (bits[:, j] >> np.uint64(31))) * np.uint64(2 * j + 1)
            row_hash = (row_hash ^ mixed) * multiplier
    keys = [y, row_hash] if sample_weight is None else [sample_weight, y, row_hash]
    return np.lexsort(keys)


#: From how many rows a frame is encoded column by column (fewer: the number columns in
#: one conversion, cheaper than 62 column reads on one submission's rows).
_FRAME_BY_COLUMN = 10_000


def refuse_infinity(encoded: np.ndarray, names=None) -> None:
    """Raise a ``ValueError`` naming the columns of ``encoded`` that hold +-inf, if any.

    NaN means unknown and passes; infinity is no usable feature value (a ratio
    divided by zero upstream, a unit overflow), and a tree would put it past
    every split. The message keeps scikit-learn's wording ("Input X contains
    infinity") and adds which columns and how many rows.

    Examples
    --------
    >>> refuse_infinity(np.array([[1.0, np.nan]]))
    >>> refuse_infinity(np.array([[1.0, np.inf], [2.0, -np.inf]]), ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: Input X contains infinity: column 'b' (2 rows); give finite numbers (NaN for unknown)
    """
    infinite = np.isinf(encoded)
    if not infinite.any():
        return
    counts = infinite.sum(axis=0)
    columns = np.flatnonzero(counts)
    labels = [repr(names[j]) if names is not None else str(j) for j in columns]
    shown = ", ".join(f"{label} ({counts[j]} row{'s' if counts[j] > 1 else ''})"
                      for label, j in zip(labels[:5], columns[:5], strict=False))
    more = f" and {len(columns) - 5} more" if len(columns) > 5 else ""
    raise ValueError(f"Input X contains infinity: column{'s' if len(columns) > 1 else ''} "
                     f"{shown}{more}; give finite numbers (NaN for unknown)")
