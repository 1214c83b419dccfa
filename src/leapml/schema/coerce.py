"""Coercion of a user's attempt log and catalog (read from CSV) to the schema's dtypes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from leapml.schema.columns import (
    _KIND_CHECKS,
    ATTEMPT_COLUMNS,
    HARDWARE_COLUMNS,
    MAX_COUNT,
    OPTIONAL_ATTEMPT_COLUMNS,
    STATUSES,
    normalize_precision,
)
from leapml.schema.times import parse_times

__all__ = ["coerce_attempts", "coerce_hardware", "parse_times", "read_numbers"]

_CATEGORY_ATTEMPT = [c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.kind == "category"]
_INT_ATTEMPT = [c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.kind == "int"]
_CATEGORY_HARDWARE = [c.name for c in HARDWARE_COLUMNS if c.kind == "category"]
_FLOAT_HARDWARE = [c.name for c in HARDWARE_COLUMNS if c.kind == "float"]
# a number grouped in thousands with commas: 1,234 or -12,345,678.5 (never 1,5 or 12,34)
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")


def read_numbers(values: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """The floats of a column of numbers or number text, and where a value is not a number.

    Text is stripped; a number grouped in thousands with commas (``"1,234.5"``)
    is read without them; blank text is null. A value that is none of these
    (``"12 GB"``, ``"$0.9"``, ``"1,5"``) is NaN, and True in the mask returned.

    Examples
    --------
    >>> floats, bad = read_numbers(pd.Series(["1,234.5", " 7 ", "", "12 GB"]))
    >>> floats.tolist(), bad.tolist()
    ([1234.5, 7.0, nan, nan], [False, False, False, True])
    """
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        return values.astype(float), np.zeros(len(values), dtype=bool)
    text = values.astype(object).map(_number_text)
    numbers = pd.to_numeric(text, errors="coerce").astype(float)
    bad = (text.notna() & numbers.isna()).to_numpy(dtype=bool)
    return numbers, bad


def _normalized(precision: pd.Series) -> pd.Series:
    """:func:`normalize_precision` of every value, computed once per distinct value."""
    if isinstance(precision.dtype, pd.CategoricalDtype):
        # code -1 (null) picks the appended None
        spelled = [normalize_precision(c) for c in precision.cat.categories.tolist()] + [None]
        return pd.Series(np.array(spelled, dtype=object)[precision.cat.codes.to_numpy()], index=precision.index)
    values = precision.astype(object)
    spellings = {v: normalize_precision(v) for v in pd.unique(values.dropna())}
    return values.map(spellings, na_action="ignore").astype(object)


def _number_text(value):
    """One value as :func:`pandas.to_numeric` should see it (None: blank)."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)  # never read as 1 or 0
    if not isinstance(value, str):
        return value
    value = value.strip()
    if not value:
        return None
    return value.replace(",", "") if _GROUPED.fullmatch(value) else value


def _respelled(series: pd.Series, spell) -> pd.Series:
    """``series`` with each text value replaced by ``spell(value)``; unchanged if none changes."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = series.cat.categories.tolist()
        spelled = [spell(c) if isinstance(c, str) else c for c in categories]
        if spelled == categories:
            return series
        return series.astype(object).map(dict(zip(categories, spelled, strict=True)), na_action="ignore")
    if not (series.dtype == object or pd.api.types.is_string_dtype(series.dtype)):
        return series
    distinct = [v for v in pd.unique(series.dropna()) if isinstance(v, str)]
    spellings = {v: spell(v) for v in distinct if spell(v) != v}
    if not spellings:
        return series
    return series.map(lambda v: spellings.get(v, v) if isinstance(v, str) else v)


def _status(value: str) -> str:
    """``" OK"`` -> ``"ok"``: a known status in another case or padded; any other text unchanged."""
    spelled = value.strip().lower()
    return spelled if spelled in STATUSES else value


def _integers(series: pd.Series) -> pd.Series:
    """``series`` as nullable integers where every value is a whole number; else unchanged."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return series
    numeric, bad = read_numbers(series)
    known = numeric.dropna()
    if not bad.any() and (known % 1 == 0).all() and (known.abs() <= MAX_COUNT).all():
        return numeric.astype("Int64")
    return series  # as it is: validation names what is wrong with it


def coerce_attempts(attempts: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a user's attempt log with the schema's dtypes.

    Text columns become categoricals, ``status`` its lower-case spelling
    (``OK`` is ``ok``), ``hardware_type`` its text without surrounding
    spaces, ``submit_time`` and ``end_time`` timestamps (see
    :func:`parse_times`), integer columns read as floats (``batch_size`` or ``seq_len``
    with gaps) nullable integers, and ``precision`` its
    :func:`normalize_precision` spelling. Use it on logs read from CSV, then
    :func:`validate_attempts`. Values that cannot be converted are left as
    they are, so that validation names them.

    Examples
    --------
    >>> log = pd.DataFrame({"submit_time": ["2026-01-01 10:00"], "seq_len": [2048.0],
    ...                     "precision": ["AMP"]})
    >>> coerced = coerce_attempts(log)
    >>> coerced.dtypes.astype(str).tolist()
    ['datetime64[us]', 'Int64', 'category']
    >>> coerced["precision"].tolist()
    ['fp16']
    """
    out = attempts.copy()
    if "status" in out:
        out["status"] = _respelled(out["status"], _status)
    if "hardware_type" in out:  # spaces around a name are no part of it
        out["hardware_type"] = _respelled(out["hardware_type"], str.strip)
    for name in ("submit_time", "end_time"):
        if name in out:
            out[name] = parse_times(out[name])
    for name in _INT_ATTEMPT:
        if name in out:
            out[name] = _integers(out[name])
    if "precision" in out and not pd.api.types.is_numeric_dtype(out["precision"]):
        normalized = _normalized(out["precision"])
        # a column already in its normalised spelling keeps its dtype (and categories)
        before = out["precision"].to_numpy(dtype=object, na_value=None).tolist()
        if normalized.to_numpy(dtype=object, na_value=None).tolist() != before:
            out["precision"] = normalized
    for name in ("throughput", "device_hours"):
        if name in out:
            out[name] = _floats(out[name])
    for name in _CATEGORY_ATTEMPT:
        if name in out and not isinstance(out[name].dtype, pd.CategoricalDtype):
            if _KIND_CHECKS["category"](out[name]):
                out[name] = out[name].astype("category")
    return out


def _floats(series: pd.Series) -> pd.Series:
    """``series`` as floats where every value is a number (:func:`read_numbers`); else unchanged."""
    if pd.api.types.is_numeric_dtype(series.dtype) or not (
            series.dtype == object or pd.api.types.is_string_dtype(series.dtype)):
        return series
    numeric, bad = read_numbers(series)
    return series if bad.any() else numeric


def coerce_hardware(hardware: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a user's hardware catalog with the schema's dtypes.

    ``hardware_type`` loses surrounding spaces, ``introduced`` becomes a
    timestamp (see :func:`parse_times`: a year alone is a number, not a date), ``devices_per_host`` read as floats
    (gaps in a CSV) a nullable integer; text columns stay text.

    Examples
    --------
    >>> catalog = pd.DataFrame({"hardware_type": ["H100"], "introduced": ["2026-01-01"]})
    >>> coerce_hardware(catalog)["introduced"].dt.year.tolist()
    [2026]
    """
    out = hardware.copy()
    if "hardware_type" in out:
        out["hardware_type"] = _respelled(out["hardware_type"], str.strip)
    if "introduced" in out:
        out["introduced"] = parse_times(out["introduced"])
    if "devices_per_host" in out:
        out["devices_per_host"] = _integers(out["devices_per_host"])
    for name in _FLOAT_HARDWARE:
        if name in out:
            out[name] = _floats(out[name])
    for name in _CATEGORY_HARDWARE:
        if name in out and out[name].dtype == object:
            out[name] = out[name].astype(str)
    return out
