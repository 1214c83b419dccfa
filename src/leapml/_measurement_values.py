"""Values of measurement and specification tables read for :mod:`leapml.datasets`.

Each reader takes a table's column as the user wrote it and either returns
its values or raises a ValueError naming the table, the column, the rows (by
the table's own index) and a value at fault: nothing is dropped or guessed
silently.
"""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from leapml.files import refuse_repeated_header
from leapml.schema import parse_times
from leapml.schema.coerce import read_numbers
from leapml.schema.columns import MAX_COUNT
from leapml.schema.rules import describe_rows
from leapml.schema.times import time_problem

#: What a text value left empty is read as, where one may be.
UNKNOWN = "unknown"

#: The columns of a measurement table the readers know, as they are spelled.
KNOWN_COLUMNS = ("source", "model", "task", "num_devices", "batch_size", "per_device_batch_size",
                 "hardware", "precision", "throughput", "throughput_unit", "seq_len",
                 "parallelism", "submit_time")


#: Other tables' words for known columns, read as those where the known name is absent.
ALIASES = {"num_gpus": "num_devices", "n_gpus": "num_devices", "gpus": "num_devices",
           "gpu_count": "num_devices", "devices": "num_devices", "global_batch_size": "batch_size",
           "batch_size_per_device": "per_device_batch_size",
           "batch_size_per_gpu": "per_device_batch_size", "per_gpu_batch_size": "per_device_batch_size",
           "micro_batch_size": "per_device_batch_size", "sequence_length": "seq_len",
           "seq_length": "seq_len", "seqlen": "seq_len", "unit": "throughput_unit"}


def _column_key(name) -> str:
    """A column name as the readers match it: stripped, lower case, spaces and ``-`` as ``_``."""
    return re.sub(r"[\s\-]+", "_", str(name).strip()).lower()


def canonical_columns(table: pd.DataFrame, notes: list[str] | None = None) -> pd.DataFrame:
    """``table`` with known column names spelled otherwise (``Throughput``, ``num devices``,
    ``" model"``) renamed, where the exact name is absent; each renaming in ``notes``."""
    spellings: dict[str, list] = {}
    for c in table.columns:
        spellings.setdefault(_column_key(c), []).append(c)
    twice = {name: given for name, given in spellings.items() if name in KNOWN_COLUMNS
             and len(given) > 1}
    if twice:  # which one holds the values meant is not for the reader to guess
        name, given = next(iter(twice.items()))
        raise ValueError(f"the measurements have {len(given)} columns read as {name!r}: "
                         f"{[str(c) for c in given]}; keep one")
    spelled = {name: given[0] for name, given in spellings.items()}
    for name in set(ALIASES.values()) - set(spelled):  # another table's word for a known column
        given = [spelled[alias] for alias, known in ALIASES.items() if known == name and alias in spelled]
        if len(given) > 1:
            raise ValueError(f"the measurements have {len(given)} columns that may be {name!r}: "
                             f"{[str(c) for c in given]}; name one {name!r}")
        if given:
            spelled[name] = given[0]
    renamed = {spelled[name]: name for name in KNOWN_COLUMNS
               if name not in table.columns and name in spelled}
    _refuse_devices_per_node(table, spelled)
    if renamed and notes is not None:
        notes.append(f"columns read under their usual names: {renamed}")
    return table.rename(columns=renamed) if renamed else table


#: Columns that count a run's nodes (hosts).
_NODES = ("num_nodes", "nodes", "n_nodes", "number_of_nodes", "node_count")


def _refuse_devices_per_node(table: pd.DataFrame, spelled: dict) -> None:
    """Refuse a device count read from another word (``devices``, ``gpus``) beside a node count
    above 1: tables that count nodes often count devices per node, so a run on 4 nodes would
    read as one node's devices. ``num_devices`` itself is the whole job's count."""
    device = spelled.get("num_devices")
    nodes = next((spelled[n] for n in _NODES if n in spelled), None)
    if device is None or nodes is None or _column_key(device) == "num_devices":
        return
    many = (read_numbers(table[nodes])[0] > 1).to_numpy()
    if many.any():
        raise ValueError(f"the measurements give {str(nodes)!r} beside {str(device)!r}, read as the "
                         f"device count, with more than one node in {describe_rows(many, table)}: "
                         "is the count per node? Give the whole job's devices (devices per node "
                         "times nodes) as 'num_devices'")


def lacking(table: pd.DataFrame, missing: list[str]) -> str:
    """What a table that lacks ``missing`` columns is told: the columns it has, and a hint where
    its one column holds ``;`` or tabs (a table separated otherwise)."""
    hint = ("; its one column holds ';' or tabs: write the table comma-separated"
            if len(table.columns) == 1 and any(c in str(table.columns[0]) for c in ";\t") else "")
    return f"lacks column(s) {missing} (it has {[str(c) for c in table.columns][:20]}{hint})"


def without_duplicates(table: pd.DataFrame, notes: list[str], subset=None) -> pd.DataFrame:
    """``table`` without rows that repeat an earlier row exactly (a table read twice?), or its
    ``subset`` columns (the same job, hardware and throughput once names are read), said so."""
    try:
        twice = table.duplicated(subset).to_numpy()
    except TypeError:  # cells that cannot be hashed: nothing compared
        return table
    if twice.any():
        what = "exactly" if subset is None else f"in {', '.join(subset)}"
        notes.append(f"rows dropped, duplicates of an earlier row {what}: {int(twice.sum())}")
        warnings.warn(f"{int(twice.sum())} measurement row(s) repeat an earlier row {what} (a "
                      "table read twice?) and are dropped: each copy would read its twin's "
                      "throughput as its history", UserWarning, stacklevel=3)
        table = table[~twice]
    return table


def job_columns_of(job_columns, source: str) -> tuple:
    """The ``job_columns`` of one source: a list's, or a mapping's entry for the source, its
    name matched whatever its case and surrounding spaces (``"Gavel "`` is ``"gavel"``)."""
    if not isinstance(job_columns, dict):
        return tuple(job_columns)
    key = source.strip().casefold()
    return next((tuple(c) for s, c in job_columns.items() if str(s).strip().casefold() == key), ())


def unmatched_job_columns(table: pd.DataFrame, job_columns, notes: list[str]) -> None:
    """Warn of ``job_columns`` names no column of ``table`` has: rows they would tell apart
    would form one job."""
    if isinstance(job_columns, dict):  # a source absent from these tables asks for nothing
        sources = set(table["source"].astype(str)) if "source" in table else set()
        names = {c for source in sources for c in job_columns_of(job_columns, source)}
    else:
        names = set(job_columns)
    unknown = [f"column {c!r}" for c in sorted(names) if c not in table.columns]
    if unknown:
        notes.append(f"job_columns: no {', '.join(unknown)} in the measurements, ignored")
        warnings.warn(f"job_columns names what the measurements lack ({', '.join(unknown)}): "
                      "ignored, so rows it would tell apart may form one job", UserWarning,
                      stacklevel=3)


#: Units of time a ``throughput_unit`` may name, in seconds.
_SECONDS = {"ns": 1e-9, "nsec": 1e-9, "nanosecond": 1e-9, "nanoseconds": 1e-9,
            "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "usec": 1e-6, "microsecond": 1e-6,
            "microseconds": 1e-6, "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3,
            "milliseconds": 1e-3, "s": 1.0, "min": 60.0, "mins": 60.0, "minute": 60.0,
            "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0,
            "hours": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0}
#: A device a rate may be given per (``tokens/s/GPU``, ``images/s per chip``, ``per-GPU tokens/s``),
#: as :func:`unit_spelling` writes it: ``/gpu`` anywhere, in parentheses or not.
_PER_DEVICE = re.compile(r"\s*\(?/(gpu|device|chip|accelerator|gcd|card|tpu|hpu|xpu)s?\)?(?=/|\s|$)")


def unit_spelling(unit: str) -> str:
    """One spelling of a throughput unit: lower case, single spaces, ``per`` as ``/`` with no
    spaces around it, seconds as ``s`` (``"Samples per Second"`` is ``"samples/s"``,
    ``"per-GPU tokens/s"`` is ``"/gpu tokens/s"``)."""
    text = re.sub(r"\bper-", "per ", " ".join(unit.lower().split()))
    text = re.sub(r"\s*(/|\bper\b)\s*", "/", text)
    return re.sub(r"\b(sec|secs|second|seconds)\b", "s", text)


def _is_duration(unit: str) -> bool:
    """Whether a unit with no work in it names a time (``min``, ``days``, ``time to train
    (min)``, ``TTT (min)``): a time to train, no rate."""
    head, _, rest = unit.partition("/")
    if head in _SECONDS and rest in ("", "run", "training"):
        return True
    return "/" not in unit and any(w in _SECONDS for w in re.findall(r"[a-zµμ]+", unit))


def rates(table: pd.DataFrame, throughput: np.ndarray, devices: np.ndarray, notes: list[str]):
    """Throughputs of the whole job in a rate unit, the units spelled one way, and the rows
    whose unit is a time alone (``min``: no rate; dropped by the caller).

    A time per unit of work (``ms/step``, ``s/epoch``) is inverted into work per second
    (``step/s``), a rate per device (``tokens/s/GPU``) multiplied by the job's devices, each
    said in ``notes``. A unit that is a number is refused: a throughput written with an
    unquoted thousands separator (``12,345``) shifts the row's cells by one.
    """
    if "throughput_unit" not in table:
        return throughput, None, np.zeros(len(table), dtype=bool)
    given = table["throughput_unit"].astype(object)
    text = given.map(lambda v: unit_spelling(str(v)), na_action="ignore")
    text = text.where(text != "", None)
    unique = pd.unique(text.dropna())
    as_number = read_numbers(pd.Series(unique, dtype=object))[0].notna().to_numpy()
    numeric = text.isin(set(unique[as_number])).to_numpy()
    if numeric.any():
        raise ValueError(
            f"measurements column 'throughput_unit' holds a number in {describe_rows(numeric, table)}"
            f", such as {shown(given[numeric].iloc[0])}: is a throughput written with an unquoted "
            "thousands separator (12,345)? It shifts the row's cells; quote it or drop the comma")
    throughput, units = throughput.astype(float).copy(), text.to_numpy(dtype=object)
    changed: dict[str, str] = {}
    time_only = np.zeros(len(units), dtype=bool)
    for unit in unique:
        rows = units == unit
        rate = _PER_DEVICE.sub("", unit).strip()  # the unit of one device's work, if per device
        head, _, rest = rate.partition("/")
        if _is_duration(rate):
            time_only |= rows  # a duration, such as a time to train: no rate
            continue
        if head in _SECONDS and rest:
            with np.errstate(divide="ignore"):
                throughput[rows] = 1.0 / (throughput[rows] * _SECONDS[head])
            rate = f"{rest}/s"
        if _PER_DEVICE.search(unit):
            throughput[rows] = throughput[rows] * devices[rows]
        if rate != unit:
            units[rows] = changed[unit] = rate
    if time_only.any():
        warnings.warn(f"{int(time_only.sum())} measurement(s) give a time as their unit "
                      f"({sorted(set(units[time_only]))[:5]}), not a rate: dropped", UserWarning,
                      stacklevel=5)
    if changed:
        notes.append(f"throughput_unit: read as the whole job's rate (a time per unit of work "
                     f"inverted, a rate per device times the devices): {changed}")
    return throughput, units, time_only


def is_count(values: np.ndarray) -> np.ndarray:
    """Whether each value is a whole number above 0 and at most 2**53 (NaN and inf are not)."""
    with np.errstate(invalid="ignore"):
        return (values > 0) & (values % 1 == 0) & (values <= MAX_COUNT)


def whole_or_null(values: np.ndarray, name: str, notes: list[str], depth: int = 3) -> pd.array:
    """Whole counts above 0 (at most 2**53); another value read as unknown (null), in the notes
    and warned of (``depth``: the calls between the caller's code and this one)."""
    bad = ~is_count(values)
    given = bad & ~np.isnan(values)
    if given.any():
        count, example = int(given.sum()), f"{values[given][0]:g}"
        notes.append(f"{name}: {count} value(s) not a whole number above 0 (at most 2**53) read "
                     f"as unknown (null), such as {example}")
        # the row is kept, but predicted as a run of unknown size: said, not only noted
        warnings.warn(f"{count} measurement(s) give a {name} that is not a whole number above 0 "
                      f"(such as {example}): read as unknown", UserWarning, stacklevel=depth + 1)
    return pd.array(np.where(bad, np.nan, values), dtype="Int64")


def unread_launch_values(table: pd.DataFrame, attempts: pd.DataFrame) -> np.ndarray:
    """Per row, the batch and ``seq_len`` the table gives where the log reads them as unknown
    (a global batch its devices do not divide, a fraction): text that keeps runs of
    different given values in different jobs ('' where the log reads them)."""
    out = np.full(len(table), "", dtype=object)
    for read, given in (("batch_size", ("batch_size", "per_device_batch_size")),
                        ("seq_len", ("seq_len",))):
        unknown = attempts[read].isna().to_numpy()
        for column in (c for c in given if c in table and unknown.any()):
            values = np.array([f"|{v}" for v in table[column].tolist()], dtype=object)
            out = out + np.where(unknown, values, "")
    return out


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


class UnreadableTable(ValueError):
    """A file whose header names a measurement table's columns, but whose rows cannot be read:
    refused even where files that are no measurement table are skipped."""


#: Files that hold tables in another format than CSV, which ``read_measurements`` does not read.
_OTHER_TABLES = (".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".tsv", ".parquet", ".xlsx",
                 ".xls")


def warn_of_other_tables(folder: Path) -> None:
    """Warn of the files of ``folder`` that look like tables in another format: they are not read."""
    others = sorted(p.name for p in folder.iterdir()
                    if p.is_file() and p.name.lower().endswith(_OTHER_TABLES))
    if others:
        warnings.warn(f"read_measurements reads .csv files only; not read: {others[:10]}"
                      f"{f' and {len(others) - 10} more' if len(others) > 10 else ''} (write them "
                      "as comma-separated .csv files to read them)", UserWarning, stacklevel=3)


def _table_header(path: Path) -> bool:
    """Whether the first line of ``path`` names ``source``, ``model``, ``hardware`` and
    ``throughput`` (in any case), whatever its encoding."""
    with open(path, "rb") as file:
        lines = (line.decode("utf-8", errors="replace") for line in file)
        first = next((line for line in lines if not line.lstrip("\ufeff ").startswith("#")), "")
    words = set(re.split(r"[^a-z_]+", first.casefold()))
    return {"source", "model", "hardware", "throughput"} <= words


def read_csv(path: Path) -> pd.DataFrame:
    """One CSV table; a file that is not UTF-8 CSV text is named in the error (an
    :class:`UnreadableTable` where its header is a measurement table's)."""
    try:
        return _read_csv(path)
    except ValueError as err:
        if _table_header(path):
            raise UnreadableTable(f"{err} (its header is a measurement table's, so it is not "
                                  "skipped: mend it, or move it out of the folder)") from None
        raise


def _read_csv(path: Path) -> pd.DataFrame:
    """:func:`read_csv` before its errors are told apart."""
    try:
        comments = _comment_lines(path)  # a title or notes above the header
        refuse_repeated_header(path, skip=comments)
        table = pd.read_csv(path, low_memory=False, skiprows=comments)
        if not isinstance(table.index, pd.RangeIndex):
            # rows with one field more than the header: pandas took the first as an index
            if _closed_by_commas(path, comments):
                # a comma closing every row: read the fields under their own names
                return pd.read_csv(path, low_memory=False, index_col=False, skiprows=comments)
            raise ValueError(f"{path} is not a readable CSV table: its rows have more fields "
                             "than its header names (a number written with an unquoted "
                             "thousands separator, 12,345? quote it or drop the comma)")
        return table
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text (byte {err.object[err.start]:#04x} does not "
                         "decode): save it as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"{path} is not a readable CSV table: {' '.join(str(err).split())}") from None


def _comment_lines(path: Path) -> int:
    """How many lines starting with ``#`` open the file (a title, notes): skipped."""
    count = 0
    with open(path, encoding="utf-8-sig", errors="replace") as file:
        for line in file:
            if not line.lstrip().startswith("#"):
                break
            count += 1
    return count


def _closed_by_commas(path: Path, comments: int = 0) -> bool:
    """Whether every row of the CSV file has one field more than its header, and that one
    empty: a comma closing each row (as some spreadsheets write), no value shifted."""
    with open(path, newline="", encoding="utf-8-sig") as file:
        rows = [row for row in csv.reader(file) if row][comments:]
    width = len(rows[0]) if rows else 0
    return len(rows) > 1 and all(len(row) == width + 1 and row[-1] == "" for row in rows[1:])


def names(table: pd.DataFrame, column: str, what: str) -> pd.Series:
    """A column of names, stripped; an empty one refused, naming its rows."""
    values = table[column].astype(object)
    text = values.map(lambda v: str(v).strip(), na_action="ignore")
    empty = (text.isna() | (text == "")).to_numpy(dtype=bool)
    if empty.any():
        raise ValueError(f"{what} column {column!r} is empty in {describe_rows(empty, table)}: "
                         f"every row needs its {column}")
    return text.astype(str)


def one_spelling(values: pd.Series, name: str, notes: list[str]) -> pd.Series:
    """Names that differ only in case or inner spaces (``Llama-2-7B``, ``llama-2-7b``) read as
    their first spelling in the table, so that they are one model (one source); in ``notes``."""
    key = values.map(lambda v: " ".join(v.split()).casefold())
    first = dict(zip(key[::-1], values[::-1], strict=True))  # the first spelling wins
    read = key.map(first)
    changed = sorted(set(values[read != values]))
    if changed:
        notes.append(f"{name}: {len(changed)} spelling(s) read as another row's, the same but for "
                     f"case or spaces, such as {changed[0]!r} as {read[values == changed[0]].iloc[0]!r}")
    return read


#: Throughput cells that say the run ran out of memory, and cells that say there is no value.
_OOM = re.compile(r"(oom|out[\s_]+of[\s_]+memory)", re.IGNORECASE)
_NO_VALUE = re.compile(r"(-+|\u2013|\u2014|n/?a|nan|none|null|\?)", re.IGNORECASE)


def throughputs(table: pd.DataFrame, notes: list[str]) -> np.ndarray:
    """The ``throughput`` column as numbers; a cell saying the run ran out of memory (``OOM``)
    or that there is no value (``-``, ``n/a``) is NaN, counted in the notes."""
    column = table["throughput"]
    if pd.api.types.is_numeric_dtype(column.dtype):
        return numbers(table, "throughput", "measurements")
    text = [v.strip() if isinstance(v, str) else "" for v in column.tolist()]
    oom = np.array([_OOM.fullmatch(v) is not None for v in text], dtype=bool)
    empty = np.array([_NO_VALUE.fullmatch(v) is not None for v in text], dtype=bool)
    if oom.any():
        notes.append(f"throughput: {int(oom.sum())} row(s) say the run ran out of memory ('OOM'); "
                     "a measurement is a completed run, so they are rows without a throughput")
    if empty.any():
        notes.append(f"throughput: {int(empty.sum())} row(s) say there is no value (such as "
                     f"{text[int(np.flatnonzero(empty)[0])]!r})")
    return numbers(table.assign(throughput=column.where(~(oom | empty), None)), "throughput",
                   "measurements")


def numbers(table: pd.DataFrame, column: str, what: str) -> np.ndarray:
    """A column of numbers (thousands grouped with commas read); a cell saying there is no value
    (``-``, ``n/a``) is NaN; other text that is no number refused."""
    given = table[column]
    if not pd.api.types.is_numeric_dtype(given.dtype):
        empty = given.map(lambda v: isinstance(v, str) and _NO_VALUE.fullmatch(v.strip()) is not None)
        given = given.where(~empty.astype(bool), None)
    values, bad = read_numbers(given)
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
