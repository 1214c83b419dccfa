"""Time columns read from text: one reading per column, or the reason there is none.

:func:`parse_times` reads a column of text as timestamps only when its
reading is not a guess: ISO 8601 text (with or without fractional seconds,
``T`` or a space), day/month dates whose order some value settles
(``13/01/2026`` is day first), or any one format pandas reads in every row.
Numbers are never read as times: nothing says whether they count seconds,
milliseconds or years. :func:`time_problem` says why a column has no reading,
in words the validators, the dataset readers and the command share.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["parse_times", "time_problem"]

_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?)?"
    r"\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?"
)
# day and month in either order, then the year: 01/02/2026, 1.2.26, 01-02-2026 14:00
_DAY_MONTH = re.compile(r"(\d{1,2})[/.\-](\d{1,2})[/.\-](?:\d{4}|\d{2})(?:[T ,].*)?")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_COMPACT_DATE = re.compile(r"(?:19|20)\d{6}")  # 20260131, ISO 8601's basic format
# an offset after a time of day (01-02-2026 ends in "-2026", which is no offset)
_OFFSET = re.compile(r"\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:[+-]\d\d(?::?\d\d)?|Z)$")
_WRITE_ISO = "write dates and times as ISO 8601, such as 2026-01-31 or 2026-01-31 14:00"


def parse_times(values: pd.Series) -> pd.Series:
    """Text (or objects) read as timestamps; ``values`` unchanged if they have no sure reading.

    Times written with their UTC offset in a zone that changes its offset
    (``...-05:00`` in winter, ``...-04:00`` in summer) are read as UTC
    instants, the one column type that holds them all; times without an
    offset stay naive. A column that mixes both, holds numbers (seconds?
    milliseconds? a year?), dates whose day and month could be either way
    round (``01/02/2026``) or text that is not a date is left as it is, for
    validation to name (:func:`time_problem` says why).

    Examples
    --------
    >>> times = pd.Series(["2026-03-08 01:30-05:00", "2026-03-08 03:30-04:00"])
    >>> parse_times(times).astype(str).tolist()
    ['2026-03-08 06:30:00+00:00', '2026-03-08 07:30:00+00:00']
    >>> parse_times(pd.Series(["13/01/2026", "01/02/2026"])).astype(str).tolist()
    ['2026-01-13', '2026-02-01']
    >>> parse_times(pd.Series([1767225600])).tolist()  # no unit: left for validation to name
    [1767225600]
    """
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return values
    read, _, _ = _reading(values)
    return values if read is None else read


def time_problem(values: pd.Series, rows: Callable[[np.ndarray], str]) -> str:
    """Why ``values`` do not read as times ("" if they do); ``rows(mask)`` names rows.

    Examples
    --------
    >>> time_problem(pd.Series(["2026-01-01", "garbage"]), lambda m: f"rows {np.flatnonzero(m)}")
    "not a date in rows [1], such as 'garbage'"
    """
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return ""
    _, why, bad = _reading(values)
    if bad is not None and bad.any():
        example = values[bad].iloc[0]
        example = repr(example) if isinstance(example, str) else str(example)
        return why.replace("<where>", f"in {rows(bad)}, such as {example}")
    return why


def _reading(values: pd.Series) -> tuple[pd.Series | None, str, np.ndarray | None]:
    """(the times, "", None), or (None, why not, the rows at fault or None)."""
    present = values.notna().to_numpy()
    if pd.api.types.is_bool_dtype(values.dtype) or pd.api.types.is_numeric_dtype(values.dtype):
        if not present.any():  # an empty column read from a CSV: floats, all NaN
            return pd.to_datetime(values), "", None
        return None, _NUMBERS, present
    textual = pd.api.types.is_string_dtype(values.dtype) and values.dtype != object
    if present.any() and (textual or isinstance(values[present].iloc[0], str)):
        first = str(values[present].iloc[0]).strip()
        if _ISO.fullmatch(first):  # the usual case, read at once
            read = _converted(values, present, utc=False, format="ISO8601")
            if read[0] is not None:
                return read
    objects = values.to_numpy(dtype=object)
    is_text = present if textual else np.array([isinstance(v, str) for v in objects], dtype=bool)
    numbers = present & ~is_text & np.array(
        [isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in objects],
        dtype=bool)
    text = pd.Series(np.where(is_text, objects, None), index=values.index, dtype=object)
    text = text.where(is_text, "").str.strip()
    numbers |= is_text & _matches(text, _NUMBER) & ~_matches(text, _COMPACT_DATE)
    if numbers.any():
        return None, _NUMBERS, numbers
    aware = (is_text & text.str.contains(_OFFSET).to_numpy(dtype=bool)) | np.array(
        [getattr(v, "tzinfo", None) is not None for v in objects], dtype=bool)
    if aware.any() and (present & ~aware).any():
        first, other = values[aware].iloc[0], values[present & ~aware].iloc[0]
        return None, (f"mixes times with a UTC offset (such as {str(first)!r}) and times without "
                      f"one (such as {str(other)!r}): give every time its offset, or none"), None
    utc = bool(aware.any())
    if is_text.any() and is_text.sum() == present.sum():
        if _matches(text[is_text], _ISO).all():
            return _converted(values, present, utc=utc, format="ISO8601")
        written = text[is_text].reset_index(drop=True)
        day_month = written.str.extract("^" + _DAY_MONTH.pattern + "$").dropna(how="all")
        if len(day_month) == len(written):
            return _day_month(values, present, written, day_month, utc)
    return _converted(values, present, utc=utc)


def _matches(text: pd.Series, pattern: re.Pattern) -> np.ndarray:
    return text.str.fullmatch(pattern).fillna(False).to_numpy(dtype=bool)


_NUMBERS = ("holds numbers, not dates, <where>: a number could count seconds, milliseconds or "
            f"years; {_WRITE_ISO}")


def _day_month(values: pd.Series, present: np.ndarray, written: pd.Series, fields: pd.DataFrame,
               utc: bool):
    """Day/month dates read in the one order some value settles, else none."""
    first, second = fields[0].astype(int).to_numpy(), fields[1].astype(int).to_numpy()
    day_first, month_first = bool((second <= 12).all()), bool((first <= 12).all())
    if not (day_first or month_first):
        one, other = written[first > 12].iloc[0], written[second > 12].iloc[0]
        return None, (f"mixes day/month and month/day dates (such as {one!r} and {other!r}); "
                      f"{_WRITE_ISO}"), None
    if day_first and month_first and (first != second).any():
        example = written[first != second].iloc[0]
        return None, (f"holds dates such as {example!r} that read both as day/month and as "
                      f"month/day, and no value settles which; {_WRITE_ISO}"), None
    return _converted(values, present, utc=utc, dayfirst=day_first)


def _converted(values: pd.Series, present: np.ndarray, *, utc: bool, **how):
    """``pd.to_datetime`` of every value (as UTC instants if ``utc`` and offsets differ), or why not."""
    with warnings.catch_warnings():
        # pandas warns when it infers one format from the first value; every value is checked below
        warnings.simplefilter("ignore", UserWarning)
        try:
            converted = pd.to_datetime(values, errors="coerce", **how)
        except (TypeError, ValueError, OverflowError) as err:  # offsets that differ from row to row
            if not utc:
                return None, f"does not read as times ({' '.join(str(err).split())})", None
            try:
                converted = pd.to_datetime(values, errors="coerce", utc=True, **how)
            except (TypeError, ValueError, OverflowError) as err:
                return None, f"does not read as times ({' '.join(str(err).split())})", None
    if not pd.api.types.is_datetime64_any_dtype(converted.dtype):
        return None, "does not read as times", None
    bad = present & converted.isna().to_numpy()
    if not bad.any():
        return converted, "", None
    with warnings.catch_warnings():
        # each value read on its own: in the order settled for day/month dates, else only to
        # tell a column of several formats from one with values that are not dates
        warnings.simplefilter("ignore", UserWarning)
        try:
            each = pd.to_datetime(values, errors="coerce", format="mixed", utc=utc or "dayfirst" not in how,
                                  dayfirst=how.get("dayfirst", False))
        except (TypeError, ValueError, OverflowError):
            each = None
    if each is not None and not (present & each.isna().to_numpy()).any():
        if "dayfirst" in how:
            return each, "", None
        later = values[bad].iloc[0]
        return None, (f"mixes formats (such as {values[present].iloc[0]!r} and {later!r}); "
                      f"{_WRITE_ISO}"), None
    if each is not None:  # the rows no reading takes, not those the first value's format misses
        bad = present & each.isna().to_numpy()
    if all(_reads_alone(value) for value in values[bad]):
        # a date pandas reads on its own, beyond what a column of nanosecond times holds
        return None, (f"holds times outside {pd.Timestamp.min.date()} .. {pd.Timestamp.max.date()}, "
                      "the range of nanosecond times, <where>"), bad
    return None, "not a date <where>", bad


def _reads_alone(value) -> bool:
    """Whether pandas reads ``value`` as one time (a wider range than a column holds)."""
    try:
        return pd.Timestamp(str(value).strip()) is not pd.NaT
    except (TypeError, ValueError, OverflowError):
        return False
