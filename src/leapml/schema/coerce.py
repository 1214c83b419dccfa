"""Coercion of a user's attempt log and catalog (read from CSV) to the schema's dtypes."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from leapml.schema.columns import (
    _KIND_CHECKS,
    ATTEMPT_COLUMNS,
    HARDWARE_COLUMNS,
    OPTIONAL_ATTEMPT_COLUMNS,
    normalize_precision,
)

_CATEGORY_ATTEMPT = [c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.kind == "category"]
_INT_ATTEMPT = [c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.kind == "int"]
_CATEGORY_HARDWARE = [c.name for c in HARDWARE_COLUMNS if c.kind == "category"]


def parse_times(values: pd.Series) -> pd.Series:
    """Text (or objects) read as timestamps; ``values`` unchanged if one is not a time.

    Times written with their UTC offset in a zone that changes its offset
    (``...-05:00`` in winter, ``...-04:00`` in summer) are read as UTC
    instants, the one column type that holds them all; times without an
    offset stay naive. A column that mixes both is left as it is, for
    validation to name.

    Examples
    --------
    >>> times = pd.Series(["2026-03-08 01:30-05:00", "2026-03-08 03:30-04:00"])
    >>> parse_times(times).astype(str).tolist()
    ['2026-03-08 06:30:00+00:00', '2026-03-08 07:30:00+00:00']
    """
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return values
    with warnings.catch_warnings():
        # pandas warns when it guesses a format; the values are checked below
        warnings.simplefilter("ignore", UserWarning)
        try:
            converted = pd.to_datetime(values, errors="coerce")
        except (TypeError, ValueError):  # offsets that differ from row to row, among others
            if not _all_have_offsets(values):
                return values
            try:
                converted = pd.to_datetime(values, errors="coerce", utc=True)
            except (TypeError, ValueError):
                return values
    if converted.notna().sum() != values.notna().sum():
        return values
    return converted


def _all_have_offsets(values: pd.Series) -> bool:
    text = values.dropna().astype(str).str.strip()
    return bool(text.str.contains(r"(?:[+-]\d\d:?\d\d|Z)$", regex=True).all())


def _normalized(precision: pd.Series) -> pd.Series:
    """:func:`normalize_precision` of every value, computed once per distinct value."""
    if isinstance(precision.dtype, pd.CategoricalDtype):
        # code -1 (null) picks the appended None
        spelled = [normalize_precision(c) for c in precision.cat.categories.tolist()] + [None]
        return pd.Series(np.array(spelled, dtype=object)[precision.cat.codes.to_numpy()], index=precision.index)
    values = precision.astype(object)
    spellings = {v: normalize_precision(v) for v in pd.unique(values.dropna())}
    return values.map(spellings, na_action="ignore").astype(object)


def _integers(series: pd.Series) -> pd.Series:
    """``series`` as nullable integers where every value is a whole number; else unchanged."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return series
    numeric = pd.to_numeric(series, errors="coerce")
    if numeric.notna().sum() == series.notna().sum() and (numeric.dropna() % 1 == 0).all():
        return numeric.astype("Int64")
    return series


def coerce_attempts(attempts: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a user's attempt log with the schema's dtypes.

    Text columns become categoricals, ``submit_time`` and ``end_time``
    timestamps, integer columns read as floats (``batch_size`` or ``seq_len``
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
        if name in out and out[name].dtype == object:
            numeric = pd.to_numeric(out[name], errors="coerce")
            if numeric.notna().sum() == out[name].notna().sum():
                out[name] = numeric.astype(float)
    for name in _CATEGORY_ATTEMPT:
        if name in out and not isinstance(out[name].dtype, pd.CategoricalDtype):
            if _KIND_CHECKS["category"](out[name]):
                out[name] = out[name].astype("category")
    return out


def coerce_hardware(hardware: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a user's hardware catalog with the schema's dtypes.

    ``introduced`` becomes a timestamp, ``devices_per_host`` read as floats
    (gaps in a CSV) a nullable integer; text columns stay text.

    Examples
    --------
    >>> catalog = pd.DataFrame({"hardware_type": ["H100"], "introduced": ["2026-01-01"]})
    >>> coerce_hardware(catalog)["introduced"].dt.year.tolist()
    [2026]
    """
    out = hardware.copy()
    if "introduced" in out:
        out["introduced"] = parse_times(out["introduced"])
    if "devices_per_host" in out:
        out["devices_per_host"] = _integers(out["devices_per_host"])
    for name in _CATEGORY_HARDWARE:
        if name in out and out[name].dtype == object:
            out[name] = out[name].astype(str)
    return out
