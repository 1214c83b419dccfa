"""Column names, dtypes and validation of attempt logs and hardware catalogs.

This module is the contract between the fleet simulator, the feature builder,
the baselines and the backtest: every attempt log (simulated or brought by a
user) and every hardware catalog goes through :func:`validate_attempts` and
:func:`validate_hardware` before anything else reads it.

Each validator collects *every* problem it finds and raises one
:class:`SchemaError` that lists them all, so a user fixes a file in one pass.

Precision is an open vocabulary. :func:`normalize_precision` lower-cases a
value, strips it, turns spaces and hyphens into underscores and maps the
usual spellings onto the five families the hardware catalog has peaks for
(:data:`PRECISION_ALIASES`: ``amp``, ``amp_fp16`` and ``mixed`` are the fp16
mixed-precision family, ``amp_bf16`` is bf16, ``float32`` is fp32, ...).
Any other value (``int8``, ``fp4``, ``unknown``) is kept, normalised, as a
category of its own: validation never refuses it, and the features read it
as described in ``docs/features.md``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ATTEMPT_COLUMNS",
    "HARDWARE_COLUMNS",
    "LAUNCH_COLUMNS",
    "DEFAULT_THROUGHPUT_UNIT",
    "OPTIONAL_ATTEMPT_COLUMNS",
    "PRECISIONS",
    "PRECISION_ALIASES",
    "STATUSES",
    "TRUTH_COLUMNS",
    "RowsSchemaError",
    "SchemaError",
    "coerce_attempts",
    "coerce_hardware",
    "normalize_precision",
    "parse_times",
    "validate_attempts",
    "validate_hardware",
]

#: Attempt statuses. Only ``ok`` attempts carry a throughput.
STATUSES = ("ok", "oom", "failed")

#: Precision families the hardware catalog gives peaks for, from widest to narrowest.
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")

#: Spellings of each precision family that :func:`normalize_precision` maps onto it
#: (after lower-casing and turning spaces and hyphens into underscores). Automatic
#: mixed precision without a stated type (``amp``, ``mixed``) is the fp16 family: it
#: is what the frameworks mean by it unless told bf16.
PRECISION_ALIASES: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32", "float32", "float", "single", "full"),
    "tf32": ("tf32", "tensorfloat32", "tensor_float_32"),
    "bf16": ("bf16", "bfloat16", "amp_bf16", "mixed_bf16", "bf16_mixed"),
    "fp16": ("fp16", "float16", "half", "amp", "amp_fp16", "mixed", "mixed_fp16", "fp16_mixed"),
    "fp8": ("fp8", "float8", "fp8_e4m3", "fp8_e5m2", "fp8_mixed"),
}
_ALIAS_FAMILY = {alias: family for family, aliases in PRECISION_ALIASES.items() for alias in aliases}


def normalize_precision(value):
    """The normalised spelling of one precision value.

    Lower-cased and stripped, spaces and hyphens turned into underscores, then
    mapped onto its family of :data:`PRECISIONS` when
    :data:`PRECISION_ALIASES` lists it; any other value is kept (normalised)
    as a category of its own. A null or empty value gives None.

    Examples
    --------
    >>> [normalize_precision(v) for v in ["AMP", "amp_fp16", "Mixed", " BF16 ", "int8", ""]]
    ['fp16', 'fp16', 'fp16', 'bf16', 'int8', None]
    """
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    text = "_".join(str(value).strip().lower().replace("-", " ").split())
    if not text:
        return None
    return _ALIAS_FAMILY.get(text, text)


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its kind and whether it may be null.

    ``kind`` is one of ``"int"``, ``"float"``, ``"time"``, ``"category"``
    (strings or pandas categoricals) and ``"id"`` (integers or strings).
    ``optional`` columns may be absent from the table (read as all null).
    """

    name: str
    kind: str
    nullable: bool = False
    description: str = ""
    optional: bool = False


#: The launch configuration of a job: what is known when it is submitted.
LAUNCH_COLUMNS = (
    "model_type",
    "model_family",
    "trainer_count",
    "batch_size",
    "precision",
    "seq_len",
    "parallelism",
)

#: Columns of an attempt log, in order.
ATTEMPT_COLUMNS = (
    Column("attempt_id", "id", description="unique id of the attempt"),
    Column("job_id", "id", description="stable id of the recurring job"),
    Column("submit_time", "time", description="when the attempt was submitted"),
    Column("model_type", "category", description="model type (e.g. 'llm-ft-042')"),
    Column("model_family", "category", description="family of the model type (e.g. 'llm')"),
    Column("trainer_count", "int", description="number of accelerator devices (trainers)"),
    Column(
        "batch_size", "int", nullable=True, description="per-trainer batch size, in samples; null if unknown"
    ),
    Column(
        "precision",
        "category",
        description="numeric precision: " + ", ".join(PRECISIONS) + " or any other (see below)",
    ),
    Column("seq_len", "int", nullable=True, description="sequence length, where it applies"),
    Column("parallelism", "category", description="parallelism style (data, fsdp, ...)"),
    Column("hardware_type", "category", description="hardware type, a key of the catalog"),
    Column("status", "category", description="outcome: " + ", ".join(STATUSES)),
    Column(
        "throughput",
        "float",
        nullable=True,
        description="measured training throughput (samples/s unless throughput_unit says otherwise); null unless status is ok",
    ),
    Column("device_hours", "float", nullable=True, description="device-hours the attempt used; null if unknown"),
)

#: Columns an attempt log may add: validated when present, read as null when absent.
OPTIONAL_ATTEMPT_COLUMNS = (
    Column(
        "end_time",
        "time",
        nullable=True,
        optional=True,
        description="when the run ended and its outcome became known (null: still running)",
    ),
    Column(
        "throughput_unit",
        "category",
        nullable=True,
        optional=True,
        description="unit of throughput (samples/s, tokens/s, ...); absent or null: samples/s",
    ),
    Column("nodes", "int", nullable=True, optional=True, description="hosts the attempt ran on"),
    Column("data_parallel_degree", "int", nullable=True, optional=True, description="data-parallel replicas"),
    Column("tensor_parallel_degree", "int", nullable=True, optional=True, description="tensor-parallel degree"),
    Column(
        "pipeline_parallel_degree", "int", nullable=True, optional=True, description="pipeline stages"
    ),
)

#: The throughput unit of rows that state none.
DEFAULT_THROUGHPUT_UNIT = "samples/s"

#: Columns only the simulator writes and only evaluation may read.
TRUTH_COLUMNS = ("expected_throughput",)

#: Columns of a hardware catalog, in order.
HARDWARE_COLUMNS = (
    Column("hardware_type", "category", description="unique name of the hardware type"),
    Column("vendor", "category", description="vendor (NVIDIA, AMD, Intel, ...)"),
    Column("peak_fp32_tflops", "float", nullable=True, description="dense fp32 peak, TFLOP/s"),
    Column("peak_tf32_tflops", "float", nullable=True, description="dense tf32 tensor peak"),
    Column("peak_bf16_tflops", "float", nullable=True, description="dense bf16 tensor peak"),
    Column("peak_fp16_tflops", "float", nullable=True, description="dense fp16 tensor peak"),
    Column("peak_fp8_tflops", "float", nullable=True, description="dense fp8 tensor peak"),
    Column("memory_gb", "float", nullable=True, description="device memory, GB"),
    Column("memory_bw_gbps", "float", nullable=True, description="device memory bandwidth, GB/s"),
    Column(
        "intra_node_bw_gbps",
        "float",
        nullable=True,
        optional=True,
        description="per-device link bandwidth inside a host, GB/s",
    ),
    Column(
        "inter_node_bw_gbps",
        "float",
        nullable=True,
        optional=True,
        description="per-device network bandwidth between hosts, GB/s",
    ),
    Column("devices_per_host", "int", nullable=True, optional=True, description="devices in one host"),
    Column(
        "cost_per_device_hour",
        "float",
        nullable=True,
        optional=True,
        description="cost of one device-hour, USD; ranking needs it, prediction does not",
    ),
    Column("introduced", "time", description="first day the type is in the fleet"),
)

_KIND_CHECKS = {
    "int": lambda s: pd.api.types.is_integer_dtype(s.dtype),
    "float": lambda s: pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype),
    "time": lambda s: pd.api.types.is_datetime64_any_dtype(s.dtype),
    "category": lambda s: isinstance(s.dtype, pd.CategoricalDtype)
    or pd.api.types.is_string_dtype(s.dtype)
    or s.dtype == object,
    "id": lambda s: pd.api.types.is_integer_dtype(s.dtype)
    or pd.api.types.is_string_dtype(s.dtype)
    or s.dtype == object,
}


class SchemaError(ValueError):
    """An attempt log or hardware catalog does not follow the schema.

    ``problems`` lists every problem found, one string each.

    Examples
    --------
    >>> err = SchemaError("the log", ["missing column(s): ['job_id']"])
    >>> err.problems
    ["missing column(s): ['job_id']"]
    """

    def __init__(self, what: str, problems: list[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{what} does not follow the schema ({len(problems)} problem(s)):\n{lines}")


class RowsSchemaError(SchemaError):
    """A :class:`SchemaError` of the rows passed to be described (submissions), not the history or catalog."""


def _rows(mask: pd.Series | np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    """Describe which rows a boolean mask selects: count and the first labels."""
    mask = np.asarray(mask, dtype=bool)
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def _bad_dates(series: pd.Series, frame: pd.DataFrame, kind: str) -> str:
    """For text in a time column, which rows do not read as dates (else "")."""
    if kind != "time" or pd.api.types.is_numeric_dtype(series.dtype):
        return ""
    parsed = pd.to_datetime(series, errors="coerce", format="mixed")
    bad = (parsed.isna() & series.notna()).to_numpy()
    if not bad.any():
        return ""
    return f"; not a date in {_rows(bad, frame)}, such as {series[bad].iloc[0]!r}"


def _check_columns(frame: pd.DataFrame, columns, problems: list[str]) -> None:
    missing = [c.name for c in columns if c.name not in frame.columns and not c.optional]
    if missing:
        problems.append(f"missing column(s): {missing}")
    for col in columns:
        if col.name not in frame.columns:
            continue
        series = frame[col.name]
        if not _KIND_CHECKS[col.kind](series):
            hint = ""
            if col.kind == "int" and pd.api.types.is_float_dtype(series.dtype):
                # a CSV reads an integer column with gaps as floats
                hint = " (integers with nulls need pandas' Int64 dtype: coerce_attempts converts them)"
            problems.append(f"column {col.name!r} has dtype {series.dtype}, expected {col.kind}{hint}"
                            + _bad_dates(series, frame, col.kind))
        # nulls are a problem of their own: report them in the same pass as the dtype
        if not col.nullable:
            null = series.isna().to_numpy()
            if null.any():
                problems.append(f"column {col.name!r} is null in {_rows(null, frame)}")


def validate_attempts(attempts: pd.DataFrame, hardware: pd.DataFrame | None = None) -> pd.DataFrame:
    """Check an attempt log against the schema; return it unchanged if it passes.

    Parameters
    ----------
    attempts : DataFrame
        One row per attempt, with the columns of :data:`ATTEMPT_COLUMNS`,
        and any of :data:`OPTIONAL_ATTEMPT_COLUMNS`. Extra columns are
        allowed and kept.
    hardware : DataFrame, optional
        The hardware catalog; when given, every ``hardware_type`` of the log
        must be in it.

    Returns
    -------
    DataFrame
        ``attempts``, the same object.

    Raises
    ------
    SchemaError
        Listing every problem: missing columns, wrong dtypes, nulls in
        required columns, unknown statuses, blank precisions, throughput <= 0
        or non-finite on ``ok`` rows, throughput present on failed rows,
        non-positive trainer counts, batch sizes, nodes or parallel degrees,
        duplicate attempt ids, hardware types absent from the catalog. A
        precision outside :data:`PRECISIONS` is not a problem.
    TypeError
        If ``attempts`` is not a DataFrame.

    Examples
    --------
    >>> import pandas as pd
    >>> from leapml.schema import validate_attempts, SchemaError
    >>> try:
    ...     validate_attempts(pd.DataFrame({"job_id": [1]}))
    ... except SchemaError as err:
    ...     print(err.problems[0][:26])
    missing column(s): ['attem
    """
    if not isinstance(attempts, pd.DataFrame):
        raise TypeError(f"attempts must be a pandas DataFrame, got {type(attempts).__name__}")
    problems: list[str] = []
    if len(attempts) == 0:
        problems.append("the attempt log is empty")
    _check_columns(attempts, ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS, problems)
    cols = attempts.columns

    if "attempt_id" in cols:
        dup = attempts["attempt_id"].duplicated(keep=False).to_numpy()
        if dup.any():
            problems.append(f"duplicate attempt_id in {_rows(dup, attempts)}")
    if "status" in cols:
        bad = ~attempts["status"].astype(object).isin(STATUSES).to_numpy()
        if bad.any():
            problems.append(f"status not in {list(STATUSES)} in {_rows(bad, attempts)}")
    if "precision" in cols:
        blank = (attempts["precision"].notna() & _normalized(attempts["precision"]).isna()).to_numpy()
        if blank.any():
            problems.append(f"precision is blank in {_rows(blank, attempts)}")
    counts = [c.name for c in OPTIONAL_ATTEMPT_COLUMNS if c.kind == "int"]
    for name in ("trainer_count", "batch_size", *counts):
        if name in cols and pd.api.types.is_numeric_dtype(attempts[name].dtype):
            bad = (attempts[name] <= 0).fillna(False).to_numpy(dtype=bool)
            if bad.any():
                problems.append(f"{name} <= 0 in {_rows(bad, attempts)}")
    if {"status", "throughput"} <= set(cols) and pd.api.types.is_numeric_dtype(attempts["throughput"]):
        ok = (attempts["status"].astype(object) == "ok").to_numpy()
        thr = attempts["throughput"].to_numpy(dtype=float, na_value=np.nan)
        bad = ok & ~(np.isfinite(thr) & (thr > 0))
        if bad.any():
            problems.append(
                f"throughput must be finite and > 0 on ok rows; it is not in {_rows(bad, attempts)}"
            )
        bad = ~ok & ~np.isnan(thr)
        if bad.any():
            problems.append(f"throughput must be null on rows not ok; it is set in {_rows(bad, attempts)}")
    if {"end_time", "submit_time"} <= set(cols):
        _check_end_time(attempts, problems)
    if "device_hours" in cols and pd.api.types.is_numeric_dtype(attempts["device_hours"]):
        bad = (attempts["device_hours"] < 0).fillna(False).to_numpy(dtype=bool)
        if bad.any():
            problems.append(f"device_hours < 0 in {_rows(bad, attempts)}")
    if hardware is not None and "hardware_type" in cols and "hardware_type" in hardware.columns:
        known = set(hardware["hardware_type"].astype(str))
        unknown = sorted(set(attempts["hardware_type"].dropna().astype(str)) - known)
        if unknown:
            mask = attempts["hardware_type"].astype(str).isin(unknown).to_numpy()
            problems.append(
                f"hardware_type absent from the catalog: {unknown[:10]} in {_rows(mask, attempts)}"
            )
    if problems:
        raise SchemaError("the attempt log", problems)
    return attempts


def _check_end_time(attempts: pd.DataFrame, problems: list[str]) -> None:
    """An optional ``end_time``: a timestamp like ``submit_time``, never before it."""
    end, submit = attempts["end_time"], attempts["submit_time"]
    if not (pd.api.types.is_datetime64_any_dtype(end.dtype)
            and pd.api.types.is_datetime64_any_dtype(submit.dtype)):
        return  # named by the check of the columns' dtypes
    if (getattr(end.dtype, "tz", None) is None) != (getattr(submit.dtype, "tz", None) is None):
        problems.append("end_time and submit_time differ in time-zone awareness")
        return
    bad = (end < submit).to_numpy(dtype=bool)
    if bad.any():
        problems.append(f"end_time is before submit_time in {_rows(bad, attempts)}")


def validate_hardware(hardware: pd.DataFrame) -> pd.DataFrame:
    """Check a hardware catalog against the schema; return it unchanged if it passes.

    Parameters
    ----------
    hardware : DataFrame
        One row per hardware type, with the columns of :data:`HARDWARE_COLUMNS`.

    Returns
    -------
    DataFrame
        ``hardware``, the same object.

    Raises
    ------
    SchemaError
        Listing every problem: missing required columns, wrong dtypes, nulls
        in required columns, duplicate hardware types, non-positive memory,
        bandwidth, devices per host or cost, a type with no peak FLOP/s at
        any precision. The topology columns and the cost may be absent or
        null: prediction reads them as unknown, ranking needs the cost.
    TypeError
        If ``hardware`` is not a DataFrame.

    Examples
    --------
    >>> from leapml.fleet import hardware_catalog
    >>> from leapml.schema import validate_hardware
    >>> len(validate_hardware(hardware_catalog())) > 20
    True
    """
    if not isinstance(hardware, pd.DataFrame):
        raise TypeError(f"hardware must be a pandas DataFrame, got {type(hardware).__name__}")
    problems: list[str] = []
    if len(hardware) == 0:
        problems.append("the hardware catalog is empty")
    _check_columns(hardware, HARDWARE_COLUMNS, problems)
    cols = hardware.columns
    if "hardware_type" in cols:
        dup = hardware["hardware_type"].duplicated(keep=False).to_numpy()
        if dup.any():
            problems.append(f"duplicate hardware_type in {_rows(dup, hardware)}")
    for name in (
        "memory_gb",
        "memory_bw_gbps",
        "intra_node_bw_gbps",
        "inter_node_bw_gbps",
        "devices_per_host",
        "cost_per_device_hour",
    ):
        if name in cols and pd.api.types.is_numeric_dtype(hardware[name].dtype):
            values = hardware[name].to_numpy(dtype=float, na_value=np.nan)
            bad = ~(np.isfinite(values) & (values > 0)) & ~np.isnan(values)
            if bad.any():
                problems.append(f"{name} must be finite and > 0; it is not in {_rows(bad, hardware)}")
    peaks = [f"peak_{p}_tflops" for p in PRECISIONS if f"peak_{p}_tflops" in cols]
    if peaks and len(hardware):
        values = hardware[peaks].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        none = ~np.isfinite(values).any(axis=1)
        if none.any():
            problems.append(f"no peak FLOP/s at any precision in {_rows(none, hardware)}")
        bad = (np.nan_to_num(values, nan=1.0) <= 0).any(axis=1)
        if bad.any():
            problems.append(f"peak FLOP/s <= 0 in {_rows(bad, hardware)}")
    if problems:
        raise SchemaError("the hardware catalog", problems)
    return hardware


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
