"""Tidy tables of published throughput measurements -> an attempt log and a hardware catalog.

A measurement table has one row per published measurement: a workload
(``model``, ``task``), its launch configuration (``num_devices``,
``batch_size`` / ``per_device_batch_size``, ``precision``, optionally
``seq_len``), the ``hardware`` it ran on and the measured ``throughput`` in
``throughput_unit``, as in the public tables described in
``docs/guide/measurements.md``. A hardware specification table has one row
per ``hardware`` name with datasheet figures (the layout of
``hardware_specs.csv``: ``peak_<precision>_tflops`` or
``peak_<precision>_tensor_tflops``, ``memory_gb``, ``memory_bw_gbps``,
``release_year``, a price column).

:func:`from_measurements` maps them onto the schema of
:mod:`leapml.schema` by these rules:

- **one attempt per measurement**: every row with a positive throughput, a
  device count and a hardware type the catalog knows becomes one ``ok``
  attempt; the others are dropped, counted in the notes and warned of;
- **jobs**: rows sharing ``source``, the launch configuration
  (:data:`~leapml.schema.LAUNCH_COLUMNS`: model, task, device count,
  per-device batch size, precision, ``seq_len``, parallelism), the
  throughput unit and the extra ``job_columns`` are one job (the same launch configuration measured
  on several hardware types, or measured again); ``job_id`` is
  ``<source>-<number>``;
- **submit times**: a table without a ``submit_time`` column gets one
  attempt per second from ``start``, rows ordered by the hardware's release
  year, then its name, then their order in the table: a job's measurements
  on older hardware are known when its rows on newer hardware are
  submitted, as in a fleet that buys newer types over time; ``end_time``
  (when the outcome is known) is the submit time, since a measurement is a
  finished run;
- ``model_type`` is ``model``, ``model_family`` is ``task``,
  ``trainer_count`` is ``num_devices``, ``batch_size`` is the per-device
  batch (``per_device_batch_size``, else ``batch_size / num_devices`` when
  that is whole), ``precision`` its :func:`~leapml.schema.normalize_precision`
  spelling, ``parallelism`` the table's ``parallelism`` column or
  ``"unknown"``, ``device_hours`` null (a benchmark does not report them);
- the catalog takes the specification table's peaks, memory and bandwidth as
  they are, ``introduced`` as the 1st of January of ``release_year``, and
  its cost from ``cost_column``; it has no topology columns (a datasheet
  does not say how a fleet hosts its devices). Types with no peak at any
  precision are dropped.

Nothing is invented silently: every value assumed, and every row or type
dropped, is counted in the ``notes`` of the result.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from leapml import _measurement_values as _values
from leapml._frames import require_unique_columns
from leapml.schema import (
    LAUNCH_COLUMNS,
    PRECISIONS,
    SchemaError,
    coerce_attempts,
    coerce_hardware,
    normalize_precision,
    parse_times,
    validate_attempts,
    validate_hardware,
)
from leapml.schema.rules import catalog_spelling, closest_names, describe_rows
from leapml.schema.times import time_problem

__all__ = ["PUBLIC_JOB_COLUMNS", "MeasurementLog", "from_measurements", "read_measurements"]

#: Extra columns that tell launch configurations apart in the public tables,
#: by source (what each table's README names as differing between its rows).
PUBLIC_JOB_COLUMNS: dict[str, tuple[str, ...]] = {
    "lambda_tf": ("data", "distortions", "variable_update", "xla"),
    "gavel": ("placement",),
    "nvidia_dle": ("framework", "subheading", "workload"),
    "mlperf_training": ("benchmark", "division"),
}

_UNKNOWN = _values.UNKNOWN
_REQUIRED = ("source", "model", "num_devices", "hardware", "throughput")  # task, precision: unknown if absent


class MeasurementLog(NamedTuple):
    """What :func:`from_measurements` returns."""

    #: the attempt log, valid for :func:`leapml.schema.validate_attempts`
    attempts: pd.DataFrame
    #: the hardware catalog, valid for :func:`leapml.schema.validate_hardware`
    hardware: pd.DataFrame
    #: one line per assumption made or rows dropped, with counts
    notes: list[str]


def read_measurements(folder, *, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """Read and stack the measurement tables (``<source>.csv``) of a folder.

    Parameters
    ----------
    folder : str or Path
        The folder holding the tables, or one table (a ``.csv`` file).
    sources : str or list of str, optional
        The tables to read, by file name without ``.csv``; default: every
        CSV file of the folder that is a measurement table, in name order
        (another CSV file, such as the hardware specifications, is skipped
        with a warning naming it).

    Returns
    -------
    DataFrame
        The rows of every table, the union of their columns, each row
        labelled ``"<file>:<row>"`` (``"gavel.csv:0"`` is the first data row
        of ``gavel.csv``), the label an error about its values names.

    Raises
    ------
    FileNotFoundError
        If the folder or a named table does not exist, or the folder has no CSV file.
    ValueError
        If a table named in ``sources`` lacks a measurement table's columns,
        no file of the folder is a measurement table, or a file is not UTF-8
        CSV text (naming the file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("source,model,task,num_devices,batch_size,hardware,"
    ...                                    "precision,throughput\\na,x,vision,1,32,V100,fp32,10\\n")
    >>> read_measurements(folder)["model"].tolist()
    ['x']
    """
    folder = Path(folder)
    single = folder.is_file() and folder.suffix.lower() == ".csv" and sources is None
    if single:  # one table, read as a table named in sources is
        folder, sources = folder.parent, [folder.name]
    if not folder.is_dir():
        why = (f"no file {folder}" if folder.suffix.lower() == ".csv" else f"{folder} is not a "
               ".csv file (tables are comma-separated)" if folder.is_file() else f"no folder {folder}")
        raise FileNotFoundError(f"{why}: give the folder holding the measurement tables (or one table)")
    named = None if sources is None else _values.column_names(sources, "sources")
    paths = (sorted(p for p in folder.iterdir() if p.suffix.lower() == ".csv" and p.is_file())
             if named is None else [folder / (s if s.lower().endswith(".csv") else f"{s}.csv")
                                    for s in named])
    missing = [str(p) for p in paths if not p.is_file()]
    if named is None:
        _values.warn_of_other_tables(folder)
    if missing or not paths:
        raise FileNotFoundError(f"no measurement table {missing or str(folder / '*.csv')}")
    tables, skipped = [], []
    for path in paths:
        try:
            table = _values.read_csv(path)
        except ValueError as err:
            if named is not None or isinstance(err, _values.UnreadableTable):
                raise
            skipped.append(f"{path.name} ({err})")  # a file beside the tables, not one of them
            continue
        table = _values.canonical_columns(table)
        lacks = _missing_columns(table)
        if lacks and named is not None:
            raise ValueError(f"{path} is not a measurement table: it {_values.lacking(table, lacks)}")
        if lacks:
            skipped.append(f"{path.name} (lacks {lacks}; it has {list(table.columns)[:10]})")
        else:  # rows named by their file, which an error about a value then names
            tables.append(table.set_axis([f"{path.name}:{i}" for i in range(len(table))]))
    if not tables:
        raise ValueError(f"no measurement table in {folder}: no CSV file is one: "
                         + "; ".join(skipped))
    if skipped:
        warnings.warn(f"read_measurements skipped {len(skipped)} file(s) of {folder} that are not "
                      "measurement tables: " + "; ".join(skipped), UserWarning, stacklevel=2)
    return pd.concat(tables)


def _missing_columns(table: pd.DataFrame) -> list[str]:
    """The columns of a measurement table that ``table`` lacks."""
    missing = [c for c in _REQUIRED if c not in table]
    if "batch_size" not in table and "per_device_batch_size" not in table:
        missing.append("batch_size or per_device_batch_size")
    return missing


def from_measurements(
    measurements: pd.DataFrame,
    specs: pd.DataFrame,
    *,
    job_columns: Sequence[str] | dict[str, Sequence[str]] = (),
    start="2026-01-01",
    cost_column: str = "cloud_usd_per_gpu_hour",
) -> MeasurementLog:
    """Turn a tidy measurement table and hardware specifications into an attempt log and catalog.

    The mapping rules are those of the module's description
    (:mod:`leapml.datasets`).

    Parameters
    ----------
    measurements : DataFrame
        One row per measurement, with ``source``, ``model``,
        ``num_devices``, ``hardware``, ``throughput`` and ``batch_size`` or
        ``per_device_batch_size``; optional ``task`` and ``precision``
        (``unknown`` where absent), ``throughput_unit``, ``seq_len``,
        ``parallelism``, ``submit_time``.
    specs : DataFrame
        One row per hardware name (``hardware``), in the layout of
        ``hardware_specs.csv``.
    job_columns : str or list of str, or dict source -> (str or list of str), default=()
        Extra columns that tell jobs apart (for instance
        :data:`PUBLIC_JOB_COLUMNS`); a column a table lacks is ignored.
    start : timestamp, default="2026-01-01"
        The first submit time formed: a date or time (a number is refused,
        having no unit).
    cost_column : str, default="cloud_usd_per_gpu_hour"
        The column of ``specs`` giving the cost of a device-hour (may be
        absent or have gaps: prediction needs no cost).

    Numbers may be written as text, grouped in thousands with commas
    (``"1,234.5"``); text that is no number (``"12 GB"``, ``"$0.9"``) is
    refused, naming its column and rows, as are a ``submit_time`` that is not
    a date (or is a number), a required name (``model``, ``source``,
    the specs' ``hardware``) left empty, a hardware name given twice in
    ``specs`` and a ``release_year`` that is not a whole year.

    Returns
    -------
    MeasurementLog
        ``attempts``, ``hardware`` (both validated) and ``notes``.

    Raises
    ------
    TypeError
        If an input is not a DataFrame, or ``job_columns`` not names.
    ValueError
        Naming the required columns a table lacks, a value that cannot be
        read (its column, rows and value), or if no row is left.

    Examples
    --------
    >>> import pandas as pd
    >>> specs = pd.DataFrame({"hardware": ["V100", "A100"], "vendor": "NVIDIA",
    ...     "release_year": [2017, 2020], "peak_fp32_tflops": [15.7, 19.5],
    ...     "peak_fp16_tensor_tflops": [125.0, 312.0], "memory_gb": [16.0, 40.0],
    ...     "memory_bw_gbps": [900.0, 1555.0], "cloud_usd_per_gpu_hour": [3.06, None]})
    >>> table = pd.DataFrame({"source": "demo", "model": "ResNet-50", "task": "vision",
    ...     "num_devices": 1, "per_device_batch_size": 256, "hardware": ["A100", "V100"],
    ...     "precision": "amp", "throughput": [2400.0, 1100.0], "throughput_unit": "images/s"})
    >>> log = from_measurements(table, specs)
    >>> log.attempts[["job_id", "hardware_type", "precision", "submit_time"]].values.tolist()
    [['demo-0', 'V100', 'fp16', Timestamp('2026-01-01 00:00:00')], ['demo-0', 'A100', 'fp16', Timestamp('2026-01-01 00:00:01')]]
    >>> [note.split(":")[0] for note in log.notes]  # what each note is about
    ['cost_per_device_hour', 'introduced', 'intra_node_bw_gbps, inter_node_bw_gbps, devices_per_host', 'parallelism', 'device_hours', 'submit_time', 'end_time']
    """
    for name, frame in (("measurements", measurements), ("specs", specs)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(job_columns, dict):
        job_columns = {source: _values.column_names(columns, f"job_columns[{source!r}]")
                       for source, columns in job_columns.items()}
    else:
        job_columns = _values.column_names(job_columns, "job_columns")
    for name, frame in (("measurements", measurements), ("specs", specs)):
        require_unique_columns(frame, name)
    notes: list[str] = []
    measurements = _values.canonical_columns(measurements, notes)
    _values.unmatched_job_columns(measurements, job_columns, notes)
    if not measurements.index.is_unique:  # pd.concat without ignore_index: rows by position
        measurements = measurements.reset_index(drop=True)
        notes.append("index: the measurements' row labels repeat; rows are named by position")
    measurements = _values.without_duplicates(measurements, notes)
    start = _values.start_time(start)
    hardware, no_peak = _catalog(specs, cost_column, notes)
    try:
        hardware = validate_hardware(hardware).reset_index(drop=True)
    except SchemaError as err:
        raise SchemaError("the hardware catalog formed from the specs (rows by the specs' index; "
                          "hardware_type is hardware, peak_<precision>_tflops the tensor figure "
                          "where given)", err.problems) from None
    attempts = _attempts(measurements, hardware, job_columns, start, notes, no_peak)
    # rows that differ only in how a name is spelled are the same measurement
    attempts = _values.without_duplicates(attempts, notes, ["job_id", "hardware_type", "throughput"])
    try:  # rows still carry the measurements' labels, so a problem names the user's rows
        attempts = validate_attempts(coerce_attempts(attempts), hardware)
    except SchemaError as err:
        raise SchemaError("the attempt log formed from the measurements (rows by the "
                          "measurements' index; trainer_count is num_devices, batch_size the "
                          "per-device batch, model_type the model, model_family the task, "
                          "hardware_type the hardware)", err.problems) from None
    return MeasurementLog(attempts.reset_index(drop=True), hardware, notes)


def _catalog(specs: pd.DataFrame, cost_column: str, notes: list[str]) -> tuple[pd.DataFrame, list]:
    """The hardware catalog of a specification table, and the types dropped for want of a peak."""
    missing = [
        c
        for c in ("hardware", "vendor", "release_year", "memory_gb", "memory_bw_gbps")
        if c not in specs
    ]
    if missing:
        raise ValueError(f"specs lacks column(s) {missing}")
    names = _values.names(specs, "hardware", "specs")
    twice = names.duplicated(keep=False).to_numpy()
    if twice.any():
        raise ValueError(f"specs gives hardware {sorted(set(names[twice]))} more than once, in "
                         f"{describe_rows(twice, specs)}: keep one row per hardware name")
    vendor = specs["vendor"].astype(object)
    if vendor.isna().any():
        notes.append(f"vendor: none for {int(vendor.isna().sum())} hardware type(s), set to "
                     f"{_UNKNOWN!r}")
    catalog = pd.DataFrame({"hardware_type": names.to_numpy(),
                            "vendor": vendor.where(vendor.notna(), _UNKNOWN).astype(str).to_numpy()},
                           index=specs.index)  # the specs' labels, which its errors name
    for precision in PRECISIONS:
        plain, tensor = f"peak_{precision}_tflops", f"peak_{precision}_tensor_tflops"
        given = [_values.numbers(specs, c, "specs") for c in (tensor, plain) if c in specs]
        # the catalog's peak is the tensor units' (dense); a plain figure fills its gaps
        catalog[plain] = np.nan if not given else given[0]
        if len(given) == 2:
            catalog[plain] = np.where(np.isnan(given[0]), given[1], given[0])
            notes.append(f"{plain}: {tensor!r} where given, else {plain!r}")
    catalog["memory_gb"] = _values.numbers(specs, "memory_gb", "specs")
    catalog["memory_bw_gbps"] = _values.numbers(specs, "memory_bw_gbps", "specs")
    catalog["cost_per_device_hour"] = (
        _values.numbers(specs, cost_column, "specs") if cost_column in specs else np.nan
    )
    catalog["introduced"] = pd.to_datetime(
        [f"{int(year)}-01-01" for year in _values.years(specs)])
    peaks = catalog[[f"peak_{p}_tflops" for p in PRECISIONS]].to_numpy()
    none = ~np.isfinite(peaks).any(axis=1)
    dropped = sorted(catalog["hardware_type"][none])
    if none.any():
        notes.append(f"hardware types dropped, no peak FLOP/s at any precision: {dropped}")
    catalog = catalog[~none]
    uncosted = int(catalog["cost_per_device_hour"].isna().sum())
    if cost_column not in specs:
        notes.append(
            f"cost_per_device_hour: specs has no column {cost_column!r} (cost_column), so no "
            "hardware type has a cost; prediction needs none, ranking refuses them"
        )
    elif uncosted:
        notes.append(
            f"cost_per_device_hour: {uncosted} of {len(catalog)} hardware type(s) have none in "
            f"{cost_column!r}; prediction needs none, ranking refuses them"
        )
    notes.append("introduced: 1 January of each type's release_year (the specs give a year)")
    notes.append(
        "intra_node_bw_gbps, inter_node_bw_gbps, devices_per_host: not in the specs, left out "
        "(the features read them as unknown)"
    )
    return coerce_hardware(catalog), dropped


def _attempts(
    table: pd.DataFrame, catalog: pd.DataFrame, job_columns, start: pd.Timestamp, notes: list[str],
    no_peak: list,
) -> pd.DataFrame:
    """The attempt log of a measurement table (one attempt per kept row)."""
    if missing := _missing_columns(table):
        raise ValueError(f"measurements {_values.lacking(table, missing)}")
    table = _kept_rows(table, catalog, notes, no_peak)
    devices = table["num_devices"].to_numpy(dtype=float)
    attempts = pd.DataFrame(
        {
            "source": _values.one_spelling(_values.names(table, "source", "measurements"), "source", notes).to_numpy(),
            "model_type": _values.one_spelling(_values.names(table, "model", "measurements"), "model", notes).to_numpy(),
            "model_family": _filled(table, "task", "model_family", notes),
            "trainer_count": devices.astype(np.int64),
            "batch_size": _per_device_batch(table, devices, notes),
            "precision": _precisions(table["precision"] if "precision" in table
                                     else pd.Series(None, index=table.index, dtype=object), notes),
            "seq_len": _values.whole_or_null(_values.numbers(table, "seq_len", "measurements"), "seq_len", notes)
            if "seq_len" in table else np.nan,
            "parallelism": _filled(table, "parallelism", "parallelism", notes),
            "hardware_type": table["hardware"].astype(str).to_numpy(),
            "status": "ok",
            "throughput": table["throughput"].to_numpy(dtype=float),
            "throughput_unit": _text(table["throughput_unit"]) if "throughput_unit" in table else None,
            "device_hours": np.nan,
        },
        index=table.index,
    )
    if attempts["throughput_unit"].isna().any():
        notes.append(
            f"throughput_unit: none for {int(attempts['throughput_unit'].isna().sum())} "
            "row(s), read as samples/s"
        )  # and so keyed: a job's rows with and without the unit stay one job
        attempts["throughput_unit"] = attempts["throughput_unit"].fillna("samples/s")
    notes.append("device_hours: null on every attempt (measurements do not report them)")
    attempts.insert(0, "job_id", _job_ids(table, attempts, job_columns))
    attempts.insert(1, "submit_time", _submit_times(table, catalog, start, notes))
    # a measurement is a finished run: its outcome is known once it is in the table
    attempts.insert(2, "end_time", attempts["submit_time"])
    notes.append("end_time: the submit time (a measurement's outcome is known once recorded)")
    attempts = attempts.sort_values("submit_time", kind="stable")
    attempts.insert(0, "attempt_id", np.arange(len(attempts), dtype=np.int64))
    return attempts


def _kept_rows(table: pd.DataFrame, catalog: pd.DataFrame, notes: list[str], no_peak=()) -> pd.DataFrame:
    """The rows that are measurements of a known hardware type; the others counted in the notes."""
    devices = _values.numbers(table, "num_devices", "measurements")
    throughput, units, time_only = _values.rates(table, _values.throughputs(table, notes), devices,
                                                 notes)
    unnamed = table["hardware"].isna().to_numpy()
    table = table.assign(hardware=_catalog_spelling(table["hardware"], catalog["hardware_type"],
                                                    notes))
    known = table["hardware"].astype(str).isin(set(catalog["hardware_type"])).to_numpy()
    reasons = {
        "no hardware named": unnamed,
        "no positive throughput": ~(np.isfinite(throughput) & (throughput > 0)),
        "a unit that is a time, not a rate": time_only,
        "no whole, positive device count": ~_values.is_count(devices),
        "a hardware type the catalog lacks": ~known,
    }
    drop, unsaid = np.zeros(len(table), dtype=bool), {}
    for reason, mask in reasons.items():
        mask = mask & ~drop
        if mask.any():
            where = ""
            if reason.startswith("a hardware"):
                unknown = sorted(set(table["hardware"][mask].astype(str)))
                where = f" {unknown}"
            notes.append(f"rows dropped, {reason}{where}: {int(mask.sum())}")
            if not reason.startswith("a "):  # rates() warns of a time unit; below, of types
                unsaid[reason] = int(mask.sum())
            elif reason.startswith("a hardware"):
                closest = _closest_names(sorted(set(unknown) - set(no_peak)), catalog["hardware_type"])
                if set(unknown) & set(no_peak):  # in the specs, but dropped: not another type
                    closest.insert(0, f"in the specs without any peak FLOP/s: {sorted(set(unknown) & set(no_peak))}")
                notes.extend(closest)
                # a name the catalog spells otherwise loses real rows: said, not only noted
                warnings.warn(f"{int(mask.sum())} measurement(s) dropped: hardware the catalog "
                              f"lacks{where}" + (f" ({'; '.join(closest)})" if closest else ""),
                              UserWarning, stacklevel=4)
        drop |= mask
    if unsaid and not drop.all():  # all dropped: the error below says why
        warnings.warn(f"{sum(unsaid.values())} measurement(s) dropped, "
                      + "; ".join(f"{reason}: {n}" for reason, n in unsaid.items()), UserWarning,
                      stacklevel=4)
    if not len(table):
        raise ValueError("measurements has no rows")
    if drop.all():
        dropped = [note for note in notes if note.startswith(("rows dropped", "hardware names"))]
        raise ValueError(
            "no measurement left: every row lacks a throughput, a device count or a known type ("
            + "; ".join(dropped) + ")"
        )
    kept = table[~drop].copy()
    kept["throughput"] = throughput[~drop]
    if units is not None:
        kept["throughput_unit"] = units[~drop]
    kept["num_devices"] = devices[~drop]
    return kept


def _catalog_spelling(names: pd.Series, catalog_names: pd.Series, notes: list[str]) -> pd.Series:
    """Each hardware name as the catalog spells it (:func:`~leapml.schema.rules.catalog_spelling`).

    A name the catalog has is kept; another is replaced by the one catalog
    name it can only mean, if there is one. Every replacement is counted in
    the notes.
    """
    text = names.astype(object).map(str, na_action="ignore")  # a null is no name: left null
    exact = set(catalog_names)
    replaced = {name: found for name in set(text.dropna()) - exact
                if (found := catalog_spelling(name, catalog_names)) is not None}
    if not replaced:
        return text
    shown = dict(sorted(replaced.items())[:10])
    more = f" and {len(replaced) - len(shown)} more" if len(replaced) > len(shown) else ""
    notes.append("hardware names read as the catalog spells them (case, spaces, '-', '_', the "
                 f"order of the words, the maker's name, and memory or form factor left out "
                 f"where one type has them): {shown}{more}")
    return text.map(lambda name: replaced.get(name, name))


def _closest_names(unknown: list[str], catalog_names: pd.Series) -> list[str]:
    """A note naming the catalog's closest names to hardware names it lacks (none if none is close)."""
    closest = closest_names(unknown, catalog_names)
    return [f"hardware names the catalog lacks, and its closest names: {closest}"] if closest else []


def _filled(table: pd.DataFrame, source: str, name: str, notes: list[str]) -> np.ndarray:
    """A text column of the table with nulls (or the whole column, if absent) read as ``"unknown"``."""
    if source not in table:
        notes.append(f"{name}: no {source!r} column, set to {_UNKNOWN!r}")
        return np.full(len(table), _UNKNOWN, dtype=object)
    column = _text(table[source])
    if column.isna().any():
        notes.append(
            f"{name}: {source!r} null in {int(column.isna().sum())} row(s), set to {_UNKNOWN!r}"
        )
    return column.fillna(_UNKNOWN).to_numpy()


def _text(column: pd.Series) -> pd.Series:
    """Text stripped of spaces (``"nlp "`` is ``"nlp"``), an empty one null."""
    text = column.astype(object).map(lambda v: str(v).strip(), na_action="ignore")
    return text.where(text != "", None).astype(object)


def _per_device_batch(table: pd.DataFrame, devices: np.ndarray, notes: list[str]) -> pd.array:
    """The per-device batch: given, else the global batch over the devices when whole, else null."""
    per_device = (
        _values.numbers(table, "per_device_batch_size", "measurements")
        if "per_device_batch_size" in table else np.full(len(table), np.nan)
    )
    if "batch_size" in table:
        derived = _values.numbers(table, "batch_size", "measurements") / devices
        # none given, or none that can be
        use = (np.isnan(per_device) | ~_values.is_count(per_device)) & _values.is_count(derived)
        if use.any():
            notes.append(f"batch_size: global batch / devices for {int(use.sum())} row(s) without "
                         "a per-device batch (or with one that is not a whole number above 0)")
        with np.errstate(invalid="ignore"):
            differ = (per_device != derived) & ~np.isnan(per_device) & (derived % 1 == 0)
        if differ.any():
            notes.append(f"batch_size: per_device_batch_size differs from batch_size / num_devices "
                         f"in {int(differ.sum())} row(s); the per-device batch is used")
        per_device = np.where(use, derived, per_device)
    per_device = _values.whole_or_null(per_device, "batch_size", notes, depth=4)
    if per_device.isna().any():
        notes.append(f"batch_size: unknown (null) for {int(per_device.isna().sum())} row(s)")
    return per_device


def _precisions(column: pd.Series, notes: list[str]) -> np.ndarray:
    """Normalised precisions; nulls read as ``"unknown"``; values outside the five counted."""
    values = column.astype(object).map(normalize_precision, na_action="ignore")
    unknown = values.isna()
    if unknown.any():
        notes.append(f"precision: none given for {int(unknown.sum())} row(s), set to {_UNKNOWN!r}")
    values = values.where(~unknown, _UNKNOWN)
    others = values[~values.isin(PRECISIONS) & ~unknown].value_counts()
    if len(others):
        notes.append(f"precision: kept as their own category {dict(others.astype(int).items())}")
    return values.to_numpy(dtype=object)


def _job_ids(table: pd.DataFrame, attempts: pd.DataFrame, job_columns) -> np.ndarray:
    """``<source>-<number>``: one number per launch configuration within a source."""
    keys = attempts[["source", *LAUNCH_COLUMNS, "throughput_unit"]].astype(object).map(str)
    extra = pd.Series("", index=table.index)
    for source, rows in table.groupby(attempts["source"], sort=False):  # names stripped
        columns = [c for c in _values.job_columns_of(job_columns, source) if c in rows]
        if columns:
            extra[rows.index] = rows[columns].astype(object).map(str).agg("|".join, axis=1)
    keys["extra"] = extra + _values.unread_launch_values(table, attempts)
    number = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup()
    within = number.groupby(keys["source"], sort=False).transform(lambda n: pd.factorize(n)[0])
    return (keys["source"] + "-" + within.astype(str)).to_numpy()


def _submit_times(
    table: pd.DataFrame, catalog: pd.DataFrame, start: pd.Timestamp, notes: list[str]
) -> np.ndarray:
    """The table's ``submit_time``, or one second apart from ``start``, older hardware first."""
    if "submit_time" in table:
        times = parse_times(table["submit_time"])
        if not pd.api.types.is_datetime64_any_dtype(times.dtype):
            why = time_problem(table["submit_time"], lambda bad: describe_rows(bad, table))
            raise ValueError(f"measurements column 'submit_time': {why or 'not dates'}")
        empty = times.isna().to_numpy()
        if empty.any():
            sources = sorted(set(table["source"][empty].astype(str)))[:5]
            raise ValueError(f"measurements column 'submit_time' is empty in "
                             f"{describe_rows(empty, table)}, of source(s) {sources}: give every "
                             "measurement its time, or leave the column out to have times formed "
                             "from start")
        return times.array
    introduced = catalog.set_index("hardware_type")["introduced"]
    order = pd.DataFrame(
        {
            "introduced": table["hardware"].astype(str).map(introduced).to_numpy(),
            "hardware": table["hardware"].astype(str).to_numpy(),
            "position": np.arange(len(table)),
        }
    ).sort_values(["introduced", "hardware", "position"], kind="stable")
    seconds = np.empty(len(table), dtype=np.int64)
    seconds[order["position"].to_numpy()] = np.arange(len(table))
    notes.append(
        f"submit_time: none in the table; one attempt per second from {start}, ordered by the "
        "hardware's release year, its name, then the table's row order"
    )
    return (start + pd.to_timedelta(seconds, unit="s")).to_numpy()
