"""Column names, dtypes and validation of attempt logs and hardware catalogs.

This module is the contract between the fleet simulator, the feature builder,
the baselines and the backtest: every attempt log (simulated or brought by a
user) and every hardware catalog goes through :func:`validate_attempts` and
:func:`validate_hardware` before anything else reads it.

Each validator collects *every* problem it finds and raises one
:class:`SchemaError` that lists them all, so a user fixes a file in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ATTEMPT_COLUMNS",
    "HARDWARE_COLUMNS",
    "LAUNCH_COLUMNS",
    "OPTIONAL_ATTEMPT_COLUMNS",
    "PRECISIONS",
    "STATUSES",
    "TRUTH_COLUMNS",
    "SchemaError",
    "coerce_attempts",
    "coerce_hardware",
    "validate_attempts",
    "validate_hardware",
]

#: Attempt statuses. Only ``ok`` attempts carry a throughput.
STATUSES = ("ok", "oom", "failed")

#: Numeric precisions a job may train in, from widest to narrowest.
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its kind and whether it may be null.

    ``kind`` is one of ``"int"``, ``"float"``, ``"time"``, ``"category"``
    (strings or pandas categoricals) and ``"id"`` (integers or strings).
    """

    name: str
    kind: str
    nullable: bool = False
    description: str = ""


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
    Column("batch_size", "int", description="per-trainer batch size, in samples"),
    Column("precision", "category", description="numeric precision: " + ", ".join(PRECISIONS)),
    Column("seq_len", "int", nullable=True, description="sequence length, where it applies"),
    Column("parallelism", "category", description="parallelism style (data, fsdp, ...)"),
    Column("hardware_type", "category", description="hardware type, a key of the catalog"),
    Column("status", "category", description="outcome: " + ", ".join(STATUSES)),
    Column(
        "throughput",
        "float",
        nullable=True,
        description="measured training throughput in samples/s; null unless status is ok",
    ),
    Column("device_hours", "float", description="device-hours the attempt used"),
)

#: Columns an attempt log may have; checked when present.
OPTIONAL_ATTEMPT_COLUMNS = (
    Column(
        "end_time",
        "time",
        nullable=True,
        description="when the run ended and its outcome became known (null: still running)",
    ),
)

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
    Column("memory_gb", "float", description="device memory, GB"),
    Column("memory_bw_gbps", "float", description="device memory bandwidth, GB/s"),
    Column("intra_node_bw_gbps", "float", description="per-device link bandwidth inside a host, GB/s"),
    Column("inter_node_bw_gbps", "float", description="per-device network bandwidth between hosts, GB/s"),
    Column("devices_per_host", "int", description="devices in one host"),
    Column("cost_per_device_hour", "float", description="cost of one device-hour, USD"),
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


def _rows(mask: pd.Series | np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    """Describe which rows a boolean mask selects: count and the first labels."""
    mask = np.asarray(mask, dtype=bool)
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def _check_columns(frame: pd.DataFrame, columns, problems: list[str]) -> None:
    missing = [c.name for c in columns if c.name not in frame.columns]
    if missing:
        problems.append(f"missing column(s): {missing}")
    for col in columns:
        if col.name not in frame.columns:
            continue
        series = frame[col.name]
        if not _KIND_CHECKS[col.kind](series):
            problems.append(f"column {col.name!r} has dtype {series.dtype}, expected {col.kind}")
            continue
        if not col.nullable:
            null = series.isna().to_numpy()
            if null.any():
                problems.append(f"column {col.name!r} is null in {_rows(null, frame)}")


def validate_attempts(attempts: pd.DataFrame, hardware: pd.DataFrame | None = None) -> pd.DataFrame:
    """Check an attempt log against the schema; return it unchanged if it passes.

    Parameters
    ----------
    attempts : DataFrame
        One row per attempt, with the columns of :data:`ATTEMPT_COLUMNS`.
        Extra columns are allowed and kept.
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
        required columns, unknown statuses or precisions, throughput <= 0 or
        non-finite on ``ok`` rows, throughput present on failed rows,
        non-positive trainer counts or batch sizes, duplicate attempt ids,
        hardware types absent from the catalog.
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
    _check_columns(attempts, ATTEMPT_COLUMNS, problems)
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
        bad = ~attempts["precision"].astype(object).isin(PRECISIONS).to_numpy()
        if bad.any():
            problems.append(f"precision not in {list(PRECISIONS)} in {_rows(bad, attempts)}")
    for name in ("trainer_count", "batch_size"):
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
    if not pd.api.types.is_datetime64_any_dtype(end.dtype):
        problems.append(f"column 'end_time' has dtype {end.dtype}, expected a timestamp")
        return
    if not pd.api.types.is_datetime64_any_dtype(submit.dtype):
        return  # named by the check of submit_time
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
        Listing every problem: missing columns, wrong dtypes, nulls, duplicate
        hardware types, non-positive memory, bandwidth or cost, a type with no
        peak FLOP/s at any precision.
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


_CATEGORY_ATTEMPT = [c.name for c in ATTEMPT_COLUMNS if c.kind == "category"]
_CATEGORY_HARDWARE = [c.name for c in HARDWARE_COLUMNS if c.kind == "category"]


def coerce_attempts(attempts: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of a user's attempt log with the schema's dtypes.

    Text columns become categoricals, ``submit_time`` and ``end_time`` timestamps,
    ``seq_len`` a nullable integer. Use it on logs read from CSV, then
    :func:`validate_attempts`. Values that cannot be converted are left as
    they are, so that validation names them.

    Examples
    --------
    >>> log = pd.DataFrame({"submit_time": ["2026-01-01 10:00"], "seq_len": [2048.0],
    ...                     "precision": ["bf16"]})
    >>> coerce_attempts(log).dtypes.astype(str).tolist()
    ['datetime64[us]', 'Int64', 'category']
    """
    out = attempts.copy()
    for name in ("submit_time", "end_time"):
        if name in out and not pd.api.types.is_datetime64_any_dtype(out[name]):
            converted = pd.to_datetime(out[name], errors="coerce")
            if converted.notna().sum() == out[name].notna().sum():
                out[name] = converted
    if "seq_len" in out and not pd.api.types.is_integer_dtype(out["seq_len"]):
        numeric = pd.to_numeric(out["seq_len"], errors="coerce")
        if numeric.notna().sum() == out["seq_len"].notna().sum() and (numeric.dropna() % 1 == 0).all():
            out["seq_len"] = numeric.astype("Int64")
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

    ``introduced`` becomes a timestamp; text columns stay text.

    Examples
    --------
    >>> catalog = pd.DataFrame({"hardware_type": ["H100"], "introduced": ["2026-01-01"]})
    >>> coerce_hardware(catalog)["introduced"].dt.year.tolist()
    [2026]
    """
    out = hardware.copy()
    if "introduced" in out and not pd.api.types.is_datetime64_any_dtype(out["introduced"]):
        converted = pd.to_datetime(out["introduced"], errors="coerce")
        if converted.notna().sum() == out["introduced"].notna().sum():
            out["introduced"] = converted
    for name in _CATEGORY_HARDWARE:
        if name in out and out[name].dtype == object:
            out[name] = out[name].astype(str)
    return out
