"""Values of measurement and specification tables read for :mod:`leapml.datasets`.

Each reader takes a table's column as the user wrote it and either returns
its values or raises a ValueError naming the table, the column, the rows (by
the table's own index) and a value at fault: nothing is dropped or guessed
silently.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from leapml.files import refuse_repeated_header
from leapml.schema import parse_times
from leapml.schema.coerce import read_numbers
from leapml.schema.rules import describe_rows
from leapml.schema.times import time_problem

#: What a text value left empty is read as, where one may be.
UNKNOWN = "unknown"


def shown(value) -> str:
    """A value as an error message shows it: text quoted, numbers (and NaN) plain."""
    return repr(value) if isinstance(value, str) else str(value)


def column_names(value, name: str) -> tuple:
    """A column (or file) name, or a list of them, as a tuple; one name is never read letter by letter."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (dict, pd.DataFrame, pd.Series)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a name or a list of names, got {type(value).__name__}")
    return tuple(value)


def read_csv(path: Path) -> pd.DataFrame:
    """One CSV table; a file that is not UTF-8 CSV text is named in the error."""
    try:
        refuse_repeated_header(path)
        table = pd.read_csv(path, low_memory=False)
        if not isinstance(table.index, pd.RangeIndex):
            # rows with one field more than the header: pandas took the first as an index
            if len(table.columns) and table.iloc[:, -1].isna().all():
                # a comma closing every row: read the fields under their own names
                return pd.read_csv(path, low_memory=False, index_col=False)
            raise ValueError(f"{path} is not a readable CSV table: its rows have more fields "
                             "than its header names")
        return table
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text (byte {err.object[err.start]:#04x} does not "
                         "decode): save it as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"{path} is not a readable CSV table: {' '.join(str(err).split())}") from None


def names(table: pd.DataFrame, column: str, what: str) -> pd.Series:
    """A column of names, stripped; an empty one refused, naming its rows."""
    values = table[column].astype(object)
    text = values.map(lambda v: str(v).strip(), na_action="ignore")
    empty = (text.isna() | (text == "")).to_numpy(dtype=bool)
    if empty.any():
        raise ValueError(f"{what} column {column!r} is empty in {describe_rows(empty, table)}: "
                         f"every row needs its {column}")
    return text.astype(str)


def numbers(table: pd.DataFrame, column: str, what: str) -> np.ndarray:
    """A column of numbers (thousands grouped with commas read); text that is no number refused."""
    values, bad = read_numbers(table[column])
    if bad.any():
        examples = list(dict.fromkeys(table[column][bad].astype(str)))[:3]
        raise ValueError(f"{what} column {column!r} holds text that is not a number in "
                         f"{describe_rows(bad, table)}, such as {examples}: write plain numbers "
                         "(no units, currency signs or decimal commas)")
    return values.to_numpy(dtype=float)


def years(specs: pd.DataFrame) -> np.ndarray:
    """``release_year`` as whole years; a gap or another value refused, naming its rows."""
    read, bad = read_numbers(specs["release_year"])
    read = read.to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        bad = bad | ~np.isfinite(read) | (read % 1 != 0) | (read < 1678) | (read > 2261)
    if bad.any():
        example = shown(specs["release_year"][bad].iloc[0])
        raise ValueError(f"specs column 'release_year' is not a whole year in "
                         f"{describe_rows(bad, specs)}, such as {example}: give each hardware "
                         "type the year it came out, such as 2020")
    return read


def start_time(start) -> pd.Timestamp:
    """``start`` as a timestamp; a number or text that is no date refused."""
    values = pd.Series([start], dtype=object if isinstance(start, str) else None)
    times = parse_times(values)
    if not pd.api.types.is_datetime64_any_dtype(times.dtype) or times.isna().any():
        why = time_problem(values, lambda bad: "it") or "is not a date or time"
        raise ValueError(f"start={start!r}: {why}")
    return pd.Timestamp(times.iloc[0])
