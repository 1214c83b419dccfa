"""Reading the columns the features need: checks that name every problem, and parsing to arrays."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import pandas as pd

from leapml.features.names import _TEXT_COLUMNS
from leapml.schema import (
    DEFAULT_THROUGHPUT_UNIT,
    PRECISIONS,
    normalize_precision,
)

# ----------------------------------------------------------------------------
# validation and conversion helpers
# ----------------------------------------------------------------------------

_PRECISION_CODES = {name: code for code, name in enumerate(PRECISIONS)}
_PRECISION_DTYPE = pd.CategoricalDtype(list(PRECISIONS))
# the column of the catalog's peak table that precisions outside PRECISIONS read
_OTHER_PRECISION = len(PRECISIONS)
_normalized_precision = lru_cache(maxsize=1024)(normalize_precision)
_OK_CODES = {"ok": 0}
# Below this many rows a Python loop over values beats a pandas hash table.
_FEW_ROWS = 256


def _require_frame(frame, name: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")


def _describe_rows(mask: np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def _null(series: pd.Series) -> np.ndarray:
    """Where ``series`` is null, read from its array (a Series would cost more than the test)."""
    return np.asarray(series.array.isna(), dtype=bool)


def _floats(series: pd.Series) -> np.ndarray:
    """A numeric column as floats, NaN where null."""
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(dtype=float)  # NaN already: no null mask to build
    return series.to_numpy(dtype=float, na_value=np.nan)


def _text_codes(series: pd.Series, codes: dict[str, int]) -> np.ndarray:
    """The code of each value of ``series`` by its text (-1: absent from ``codes``, or null)."""
    values = series.array
    if isinstance(values, pd.Categorical):
        # map the few categories once instead of every row; code -1 (null) picks the appended -1
        mapping = [codes.get(str(c), -1) for c in values.categories.tolist()]
        return np.array([*mapping, -1], dtype=np.int64)[values.codes]
    if (
        len(values) > _FEW_ROWS
        and pd.api.types.is_string_dtype(series.dtype)
        and series.dtype != object
    ):
        # text already: look the distinct values up once
        found, uniques = pd.factorize(values)
        mapping = [codes.get(u, -1) for u in uniques]
        return np.array([*mapping, -1], dtype=np.int64)[found]
    found = np.fromiter(
        (codes.get(str(v), -1) for v in values.to_numpy(dtype=object)), np.int64, len(values)
    )
    return np.where(_null(series), -1, found)


def _precision_codes(series: pd.Series) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """Each value's precision code and the categories of the ``precision`` feature.

    Values are read through :func:`~leapml.schema.normalize_precision`: a
    family of :data:`~leapml.schema.PRECISIONS` gets its position, any other
    value a code past them (its own category, after the five, sorted), a null
    or blank value -1.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        raw, uniques = values.codes, values.categories.tolist()
    elif len(values) <= _FEW_ROWS:
        uniques = values.to_numpy(dtype=object).tolist()
        raw = np.arange(len(uniques))
    else:
        raw, uniques = pd.factorize(values)
        uniques = np.asarray(uniques, dtype=object).tolist()
    names = [_normalized_precision(u) if isinstance(u, str) else None for u in uniques]
    extra = sorted({n for n in names if n is not None and n not in _PRECISION_CODES})
    codes = {**_PRECISION_CODES, **{n: len(PRECISIONS) + i for i, n in enumerate(extra)}}
    mapping = np.array([*(codes.get(n, -1) for n in names), -1], dtype=np.int64)
    dtype = pd.CategoricalDtype([*PRECISIONS, *extra]) if extra else _PRECISION_DTYPE
    return mapping[raw], dtype


def _keyed(values, unit):
    """A history key's values, with the throughput unit where a row states one other than samples/s.

    History aggregates never mix units: a model type measured in tokens/s and
    in images/s is two keys. Rows in samples/s (or stating no unit) keep their
    value, so a log without the column keys as before. ``values`` is a Series
    or a pandas array; the result is of the same kind.
    """
    if unit is None:
        return values
    units = pd.Series(unit).astype(object).to_numpy()
    other = pd.notna(units) & (units != DEFAULT_THROUGHPUT_UNIT)
    if not other.any():
        return values
    keyed = (values.array if isinstance(values, pd.Series) else values).to_numpy(dtype=object).copy()
    keyed[other] = [f"{v}\x1f{u}" for v, u in zip(keyed[other], units[other], strict=True)]
    if isinstance(values, pd.Series):
        return pd.Series(keyed, index=values.index)
    return pd.array(keyed, dtype=object)


def _time_ns(series: pd.Series) -> tuple[np.ndarray, bool]:
    """Nanoseconds since the epoch (UTC where the column has a time zone), and tz-awareness."""
    aware = getattr(series.dtype, "tz", None) is not None
    if aware:
        series = series.dt.tz_convert(None)
    if np.datetime_data(series.dtype)[0] != "ns" and len(series):
        # a coarser unit holds years a nanosecond count cannot: numpy would wrap them silently
        outside = (series < pd.Timestamp.min) | (series > pd.Timestamp.max)
        if outside.any():
            raise ValueError(
                f"column {series.name!r} holds {int(outside.sum())} time(s) outside "
                f"{pd.Timestamp.min.date()} .. {pd.Timestamp.max.date()} (e.g. "
                f"{series[outside].iloc[0]}), the range leapml computes times in"
            )
    return series.to_numpy(dtype="datetime64[ns]").view("int64"), aware


def _check_rows(
    frame: pd.DataFrame,
    required: Iterable[str],
    type_codes: dict[str, int],
    problems: list[str],
    rows: np.ndarray | None = None,
) -> tuple[dict[str, pd.Series], dict[str, np.ndarray]]:
    """Collect problems with the columns ``build_features`` reads from ``frame``.

    ``rows`` restricts the value checks to a boolean mask (the ``ok`` rows of a
    history log: the only ones read). Returns the columns it read and what it
    parsed on the way (hardware-type and precision codes, numbers as floats),
    so that callers read each column once.
    """
    required = list(required)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        problems.append(f"missing column(s): {missing}")
    columns = {c: frame[c] for c in required if c in frame.columns}
    for name in _TEXT_COLUMNS:
        if name in columns:
            columns[name] = _as_text(columns[name])
    parsed: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    for name, series in columns.items():
        if name in ("seq_len", "batch_size", "throughput", "status"):
            continue
        null = nulls[name] = _null(series)
        if rows is not None:
            null = null & rows
        if null.any():
            problems.append(f"column {name!r} is null in {_describe_rows(null, frame)}")
    if "submit_time" in columns and not pd.api.types.is_datetime64_any_dtype(
        columns["submit_time"].dtype
    ):
        problems.append(
            f"column 'submit_time' has dtype {columns['submit_time'].dtype}, expected a timestamp "
            "(convert it with pandas.to_datetime or leapml.schema.coerce_attempts)"
        )
    for name in ("trainer_count", "batch_size", "seq_len"):
        if name not in columns:
            continue
        dtype = columns[name].dtype
        if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            problems.append(f"column {name!r} has dtype {dtype}, expected numbers")
            continue
        values = parsed[name] = _floats(columns[name])
        bad = ~np.isnan(values) & ~(np.isfinite(values) & (values > 0))
        if rows is not None:
            bad &= rows
        if bad.any():
            problems.append(
                f"{name} must be finite and > 0; it is not in {_describe_rows(bad, frame)}"
            )
    if "precision" in columns:
        codes, parsed["precision_dtype"] = _precision_codes(columns["precision"])
        parsed["precision"] = codes
        bad = (codes < 0) & ~nulls["precision"]
        if rows is not None:
            bad &= rows
        if bad.any():
            problems.append(f"precision is blank in {_describe_rows(bad, frame)}")
    if "hardware_type" in columns:
        codes = parsed["hardware_type"] = _text_codes(columns["hardware_type"], type_codes)
        bad = (codes < 0) & ~nulls["hardware_type"]
        if rows is not None:
            bad &= rows
        if bad.any():
            unknown = sorted({str(v) for v in columns["hardware_type"].to_numpy(dtype=object)[bad]})
            problems.append(
                f"hardware_type absent from the catalog: {unknown[:10]} in {_describe_rows(bad, frame)}"
            )
    if "throughput" in columns and rows is not None:
        if not pd.api.types.is_numeric_dtype(columns["throughput"].dtype):
            problems.append(
                f"column 'throughput' has dtype {columns['throughput'].dtype}, expected numbers"
            )
        else:
            values = parsed["throughput"] = _floats(columns["throughput"])
            bad = rows & ~(np.isfinite(values) & (values > 0))
            if bad.any():
                problems.append(
                    f"throughput must be finite and > 0 on ok rows; it is not in {_describe_rows(bad, frame)}"
                )
    return columns, parsed


def _joint_codes(
    query: pd.Series, history: pd.Series | None, subset: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column, consistent between the query rows and the history.

    ``subset`` is given when the history is ``query[subset]`` (the training case),
    so the column is factorized once (and ``history`` is not read).
    """
    if subset is not None:
        codes = pd.factorize(query)[0]
        return codes, codes[subset]
    history_codes, uniques = pd.factorize(history)
    # look the (usually few) query rows up among the history's values, by value
    known = pd.Index(np.asarray(uniques, dtype=object))
    query_codes = known.get_indexer(_as_object(query))
    # a value the history lacks gets a code no history row has
    query_codes[query_codes < 0] = len(known)
    return query_codes, history_codes


def _as_text(series: pd.Series) -> pd.Series:
    """An id or category column as text, so that 413 in one table matches "413" in another.

    A float column of whole numbers reads as the integers (a log with a
    missing id turns its ids into floats); nulls stay null.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        categories = values.categories
        if pd.api.types.infer_dtype(categories, skipna=False) == "string":
            return series
        names = [str(c) for c in _as_text(pd.Series(categories.to_numpy(dtype=object)))]
        if len(set(names)) == len(names):
            return pd.Series(pd.Categorical.from_codes(values.codes, categories=names),
                             index=series.index, name=series.name)
    elif pd.api.types.is_string_dtype(series.dtype) and (
        series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    ):
        return series
    null = _null(series)
    if series.dtype.kind == "f" and (series[~null] % 1 == 0).all():
        series = series.astype("Int64")
    # str() value by value: several times cheaper than astype(str) on the few rows of a submission
    text = np.array([str(v) for v in series.tolist()], dtype=object)
    text[null] = None
    return pd.Series(text, index=series.index, name=series.name, dtype=object, copy=False)


def _as_object(series: pd.Series) -> np.ndarray:
    values = series.array
    if isinstance(values, pd.Categorical):
        categories = np.append(values.categories.to_numpy(dtype=object), None)
        return categories[values.codes]
    return series.to_numpy(dtype=object)


def _value_codes(values, codes: dict) -> np.ndarray:
    """The code in ``codes`` of each of ``values`` (a Categorical or objects), by value (-1: absent)."""
    if isinstance(values, pd.Categorical):
        # only the categories in use: a categorical may carry thousands
        used = np.unique(values.codes)
        used = used[used >= 0]
        categories = values.categories
        # one job's rows use one category: indexing it alone beats converting them all
        if len(used) <= 8:
            found = [codes.get(categories[c], -1) for c in used]
        else:
            found = [codes.get(v, -1) for v in categories.take(used).to_numpy(dtype=object)]
        mapping = np.full(len(categories) + 1, -1, dtype=np.int64)
        mapping[used] = found
        return mapping[values.codes]
    if len(values) <= _FEW_ROWS:
        return np.fromiter((codes.get(v, -1) for v in values), np.int64, len(values))
    found, uniques = pd.factorize(values)
    mapping = [codes.get(v, -1) for v in uniques]
    return np.array([*mapping, -1], dtype=np.int64)[found]


def _as_category(values) -> pd.Categorical:
    """Keep a categorical's categories (stable across row subsets); otherwise sort the values.

    ``values`` is a column's pandas array.
    """
    if isinstance(values, pd.Categorical):
        return values.copy()
    return pd.Categorical(values.to_numpy(dtype=object))
def _whole(values: np.ndarray) -> np.ndarray:
    """Whole numbers as integers; as floats when some are unknown (NaN)."""
    return values if np.isnan(values).any() else values.astype(np.int64)


def _categorical(codes: np.ndarray, dtype: pd.CategoricalDtype) -> pd.Categorical:
    """A categorical of codes checked already (-1 or a category's position)."""
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
