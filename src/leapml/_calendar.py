"""Calendar days of a log's own clock, safe across daylight-saving changes.

Training windows and backtest nights are whole days of the log's wall clock.
Where clocks jump at midnight (``America/Havana``, ``America/Santiago``,
``Asia/Beirut``, ...) a day has no 00:00, or two; adding 24 hours to a
midnight lands at 23:00 or 01:00 after a change. Days are therefore counted
on the naive wall clock and turned back into instants of the log's time
zone, each day starting at its first existing instant.
"""

from __future__ import annotations

import re
from numbers import Real

import numpy as np
import pandas as pd

__all__ = ["add_days", "day_start", "days_between", "on_clock", "on_or_before", "numpy_times",
           "read_time", "utc_ns"]


def numpy_times(series: pd.Series) -> pd.Series:
    """``series`` with an Arrow timestamp dtype turned into NumPy's (its zone kept); any
    other series as it is. Arrow columns come from ``read_parquet(dtype_backend="pyarrow")``.

    Examples
    --------
    >>> times = pd.Series(pd.to_datetime(["2026-01-02 03:00"])).dt.tz_localize("UTC")
    >>> numpy_times(times.astype("timestamp[s, tz=UTC][pyarrow]")).dtype
    datetime64[s, UTC]
    """
    arrow = getattr(series.dtype, "pyarrow_dtype", None)
    if arrow is None or not hasattr(arrow, "tz"):  # not an Arrow timestamp
        return series
    if arrow.tz is None:
        return series.astype(series.dtype.numpy_dtype)
    return series.astype(pd.DatetimeTZDtype(arrow.unit, arrow.tz))


def read_time(stamp) -> pd.Timestamp:
    """``stamp`` as a :class:`pandas.Timestamp`, or a :class:`ValueError` that quotes it.

    Examples
    --------
    >>> read_time("2026-01-02 03:00")
    Timestamp('2026-01-02 03:00:00')
    >>> read_time(None)
    Traceback (most recent call last):
    ...
    ValueError: cannot read None as a time: no time given
    """
    if isinstance(stamp, Real) and not isinstance(stamp, bool):
        # pandas would read 2026 as 2026 nanoseconds after 1970: say what is meant instead
        raise ValueError(f"cannot read {stamp!r} as a time: a number has no unit; give a date "
                         "(text such as '2026-01-02') or a pandas.Timestamp")
    if isinstance(stamp, str):
        # text is read as a column of the log is: never a guess between day and month
        from leapml.schema.times import parse_times, time_problem

        read = parse_times(pd.Series([stamp.strip()], dtype=object))
        if not pd.api.types.is_datetime64_any_dtype(read.dtype):
            why = re.sub(r",? in @, such as .*?(?=[:;]|$)", "", time_problem(read, lambda bad: "@"))
            raise ValueError(f"cannot read {stamp!r} as a time: {why}")
        stamp = read.iloc[0]
    try:
        time = pd.Timestamp(stamp)
    except (TypeError, ValueError, OverflowError) as err:
        raise ValueError(f"cannot read {stamp!r} as a time: {err}") from err
    if time is pd.NaT:
        raise ValueError(f"cannot read {stamp!r} as a time: no time given")
    return time


def day_start(stamp) -> pd.Timestamp:
    """The first instant of ``stamp``'s calendar day, in ``stamp``'s time zone.

    Examples
    --------
    >>> day_start(pd.Timestamp("2026-09-06 15:00", tz="America/Santiago"))
    Timestamp('2026-09-06 01:00:00-0300', tz='America/Santiago')
    >>> day_start(pd.Timestamp("2026-01-02 15:00"))
    Timestamp('2026-01-02 00:00:00')
    """
    return add_days(stamp, 0)


def add_days(stamp, days: int, *, keep_time: bool = False) -> pd.Timestamp:
    """The first instant of the calendar day ``days`` days after ``stamp``'s day.

    With ``keep_time=True``, the same wall-clock time ``days`` days later
    instead (the next existing instant, where the clock skips it).

    Raises :class:`ValueError` naming the date when the result is outside
    the dates pandas can hold.

    Examples
    --------
    >>> add_days(pd.Timestamp("2026-09-05 00:00", tz="America/Santiago"), 1)
    Timestamp('2026-09-06 01:00:00-0300', tz='America/Santiago')
    """
    stamp = pd.Timestamp(stamp)
    tz, wall = stamp.tz, _wall(stamp)
    try:
        day = (wall if keep_time else wall.floor("D")) + pd.Timedelta(days=int(days))
    except (OverflowError, pd.errors.OutOfBoundsDatetime, pd.errors.OutOfBoundsTimedelta) as err:
        raise ValueError(f"{days} days after {wall.date()} is beyond the dates pandas holds") from err
    if tz is None:
        return day
    # a midnight the clock skips starts its day at the next instant; of two, the first
    return day.tz_localize(tz, nonexistent="shift_forward", ambiguous=True)


def days_between(first, last) -> int:
    """Whole calendar days from ``first``'s day to ``last``'s day, on their wall clocks.

    Examples
    --------
    >>> days_between(pd.Timestamp("2026-01-01 23:00"), pd.Timestamp("2026-01-03 01:00"))
    2
    """
    return (_wall(last).floor("D") - _wall(first).floor("D")).days


def _wall(stamp) -> pd.Timestamp:
    stamp = pd.Timestamp(stamp)
    return stamp.tz_localize(None) if stamp.tz is not None else stamp


def on_or_before(times: pd.Series, when) -> np.ndarray:
    """``times <= when``, reading a naive time as UTC where the other side has a zone.

    :func:`~leapml.features.build_features` compares a UTC log with a naive
    catalog that way; placement and the backtest must agree with it.

    Examples
    --------
    >>> introduced = pd.Series(pd.to_datetime(["2026-01-01", "2026-03-01"]))
    >>> on_or_before(introduced, pd.Timestamp("2026-02-01", tz="UTC")).tolist()
    [True, False]
    """
    when, times = pd.Timestamp(when), numpy_times(times)
    if (getattr(times.dtype, "tz", None) is None) != (when.tz is None):
        if when.tz is None:
            times = times.dt.tz_convert(None)
        else:
            when = when.tz_convert(None)
    return (times <= when).to_numpy()


def on_clock(stamp, tz) -> pd.Timestamp:
    """``stamp`` on the clock of a log in time zone ``tz`` (None: naive).

    A naive time given for an aware log is a time of the log's zone; an
    aware time given for a naive log is read in UTC.

    Examples
    --------
    >>> on_clock("2026-09-06", "America/Santiago")
    Timestamp('2026-09-06 01:00:00-0300', tz='America/Santiago')
    >>> on_clock("yesterday", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot read 'yesterday' as a time: ...
    """
    stamp = read_time(stamp)
    if stamp.tz is None:
        if tz is None:
            return stamp
        return stamp.tz_localize(tz, nonexistent="shift_forward", ambiguous=True)
    return stamp.tz_convert(tz)


def utc_ns(times) -> np.ndarray:
    """Instants as int64 nanoseconds since 1970 UTC, a naive time read as UTC (as
    :func:`on_or_before` reads it), so that a log and a catalog compare whatever their zones.

    Examples
    --------
    >>> utc_ns(pd.Series(pd.to_datetime(["2026-01-01 01:00"])).dt.tz_localize("Europe/Paris"))
    array([1767225600000000000])
    >>> utc_ns(pd.to_datetime(["2026-01-01 00:00"]))
    array([1767225600000000000])
    """
    times = numpy_times(pd.Series(times))
    if not pd.api.types.is_datetime64_any_dtype(times.dtype):
        times = pd.to_datetime(times)
    if times.dt.tz is not None:
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    return times.to_numpy("datetime64[ns]").view(np.int64)
