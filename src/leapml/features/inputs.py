"""Feature-side readers of checked columns: history keys, times, codes and categoricals.

The columns themselves are checked and parsed by :func:`leapml.schema.rules.check_rows`.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import numpy as np
import pandas as pd

from leapml._calendar import numpy_times
from leapml.schema import DEFAULT_THROUGHPUT_UNIT, PRECISIONS
from leapml.schema.rules import FEW_ROWS

# the column of the catalog's peak table that precisions outside PRECISIONS read
_OTHER_PRECISION = len(PRECISIONS)


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
    series = numpy_times(series)
    if not pd.api.types.is_datetime64_any_dtype(series.dtype):
        raise ValueError(f"column {series.name!r} must hold times (datetime64), got dtype "
                         f"{series.dtype}: read it as times first (pandas.to_datetime)")
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
    if series.dtype == "datetime64[ns]":
        # the array as it is (Series.to_numpy costs several times more on a few rows)
        return np.asarray(series.array).view("int64"), aware
    return series.to_numpy(dtype="datetime64[ns]").view("int64"), aware


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
        row_codes = values.codes
        # one job's rows hold one value: no sorting
        used = row_codes[:1] if len(row_codes) and (row_codes == row_codes[0]).all() else np.unique(row_codes)
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
    if len(values) <= FEW_ROWS:
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


# odd 64-bit multipliers of the configuration hash (splitmix64's)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _mixed(state: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``state`` folded with ``values`` (both uint64) by a splitmix64 round."""
    with np.errstate(over="ignore"):
        z = (state ^ values) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * _MIX[0]
        z = (z ^ (z >> np.uint64(27))) * _MIX[1]
        return z ^ (z >> np.uint64(31))


def _mixed_ints(state: int, value: int) -> int:
    """:func:`_mixed` of one value, on Python integers (cheaper than arrays for a few rows)."""
    z = (state ^ value) + 0x9E3779B97F4A7C15 & _MASK
    z = (z ^ (z >> 30)) * _MIX_INTS[0] & _MASK
    z = (z ^ (z >> 27)) * _MIX_INTS[1] & _MASK
    return z ^ (z >> 31)


_MASK = (1 << 64) - 1
_MIX_INTS = tuple(int(m) for m in _MIX)


def _crc(value) -> int:
    return zlib.crc32(str(value).encode("utf-8"))


def _text_hashes(values) -> np.ndarray:
    """A stable uint64 per value of a text column (a pandas array), the same in every process."""
    if isinstance(values, pd.Categorical) and len(values.categories) <= len(values) + 16:
        # few categories: hash them all, no factorizing
        table = np.array([*map(_crc, values.categories.tolist()), 0], dtype=np.uint64)
        return table[values.codes]  # code -1 (null) reads the last entry
    codes, uniques = pd.factorize(values.to_numpy(dtype=object) if not isinstance(values, pd.Categorical)
                                  else values, use_na_sentinel=True)
    table = np.array([*map(_crc, uniques), 0], dtype=np.uint64)
    return table[codes]  # code -1 (null) reads the last entry


@lru_cache(maxsize=64)
def _precision_hashes(dtype: pd.CategoricalDtype) -> np.ndarray:
    """The hash of each precision category of ``dtype``, and 0 for a null code (-1); read-only."""
    table = np.array([*map(_crc, dtype.categories), 0], dtype=np.uint64)
    table.flags.writeable = False
    return table


def _config_codes(trainers, batch, seq_len, precision, precision_dtype, parallelism,
                  model_type) -> np.ndarray:
    """A code of each row's launch configuration, from its values alone (int64, >= 0).

    Two rows with the same model type, trainer count, batch size, sequence
    length, precision and parallelism get the same code (a job id given
    again for another model is another configuration), whichever table they come
    from (a log, the jobs to score), so that history and query rows match
    without factorizing them together. A 64-bit hash: two configurations
    share a code with odds of about 2**-63 per pair.
    """
    numbers = np.array([trainers, batch, seq_len], dtype=np.float64).reshape(3, -1)
    numbers[np.isnan(numbers)] = -1.0
    # the values folded in turn, one row of ``parts`` each
    parts = np.vstack([
        numbers.view(np.uint64),
        _precision_hashes(precision_dtype)[np.asarray(precision, dtype=np.int64)],
        _text_hashes(parallelism),
        _text_hashes(model_type),
    ])
    if parts.shape[1] <= FEW_ROWS:
        codes = []
        for row in parts.T.tolist():
            state = 0
            for value in row:
                state = _mixed_ints(state, value)
            codes.append(state >> 1)
        return np.array(codes, dtype=np.int64)
    state = np.zeros(parts.shape[1], dtype=np.uint64)
    for values in parts:
        state = _mixed(state, values)
    return (state >> np.uint64(1)).astype(np.int64)
