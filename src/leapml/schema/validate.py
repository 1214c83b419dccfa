"""The validators of attempt logs and hardware catalogs: every problem named at once."""

from __future__ import annotations

import numpy as np
import pandas as pd

from leapml.schema.coerce import read_numbers
from leapml.schema.columns import (
    _KIND_CHECKS,
    ATTEMPT_COLUMNS,
    HARDWARE_COLUMNS,
    OPTIONAL_ATTEMPT_COLUMNS,
    PRECISIONS,
    SchemaError,
)
from leapml.schema.rules import (
    COUNT_COLUMNS,
    check_count,
    check_ends_after_submission,
    check_hardware_types,
    check_model_sizes,
    check_nulls,
    check_ok_throughput,
    check_positive,
    check_precision,
    check_status,
    check_time_zones,
    describe_rows,
    hardware_codes,
    null_mask,
    ok_rows,
    require_frame,
)
from leapml.schema.times import time_problem


def _bad_values(series: pd.Series, frame: pd.DataFrame, kind: str) -> str:
    """For a column of the wrong dtype, which of its values do not read as its kind (else "")."""
    if kind == "time":
        why = time_problem(series, lambda bad: describe_rows(bad, frame))
        return f"; {why}" if why else ""
    if kind in ("int", "float") and not pd.api.types.is_numeric_dtype(series.dtype):
        _, bad = read_numbers(series)
        if bad.any():
            return (f"; not a number in {describe_rows(bad, frame)}, such as {series[bad].iloc[0]!r} "
                    "(write plain numbers: no units, currency signs or decimal commas)")
    return ""


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
            elif col.kind == "time" and not pd.api.types.is_numeric_dtype(series.dtype):
                hint = " (times as text: coerce_attempts or coerce_hardware parses them)"
            problems.append(f"column {col.name!r} has dtype {series.dtype}, expected {col.kind}{hint}"
                            + _bad_values(series, frame, col.kind))
        # nulls are a problem of their own: report them in the same pass as the dtype
        if not col.nullable:
            check_nulls(col.name, null_mask(series), frame, problems)


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
        or non-finite on ``ok`` rows, throughput or ``peak_memory_gb`` present
        on failed rows, a ``peak_memory_gb`` <= 0, non-positive trainer counts, batch sizes, nodes or parallel degrees,
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
    require_frame(attempts, "attempts")
    problems: list[str] = []
    if len(attempts) == 0:
        problems.append("the attempt log is empty")
    _check_columns(attempts, ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS, problems)
    cols = attempts.columns

    if "attempt_id" in cols:
        dup = attempts["attempt_id"].duplicated(keep=False).to_numpy()
        if dup.any():
            problems.append(f"duplicate attempt_id in {describe_rows(dup, attempts)}")
    if "status" in cols:
        check_status(attempts["status"], attempts, problems)
    if "precision" in cols:
        check_precision(attempts["precision"], attempts, problems)
    for name in COUNT_COLUMNS:
        if name in cols and pd.api.types.is_numeric_dtype(attempts[name].dtype):
            check_count(name, attempts[name], attempts, problems)
    check_model_sizes(attempts, problems, check_dtypes=False)
    if {"status", "throughput"} <= set(cols) and pd.api.types.is_numeric_dtype(attempts["throughput"]):
        ok = ok_rows(attempts["status"])
        thr = check_ok_throughput(attempts["throughput"], ok, attempts, problems)
        bad = ~ok & ~np.isnan(thr)
        if bad.any():
            problems.append(
                f"throughput must be null on rows not ok; it is set in {describe_rows(bad, attempts)}"
            )
    if "peak_memory_gb" in cols and pd.api.types.is_numeric_dtype(attempts["peak_memory_gb"]):
        peak = check_positive("peak_memory_gb", attempts["peak_memory_gb"], attempts, problems)
        if "status" in cols:
            bad = ~ok_rows(attempts["status"]) & ~np.isnan(peak)
            if bad.any():
                problems.append(f"peak_memory_gb must be null on rows not ok; it is set in "
                                f"{describe_rows(bad, attempts)}")
    if {"end_time", "submit_time"} <= set(cols):
        _check_end_time(attempts, problems)
    if "device_hours" in cols and pd.api.types.is_numeric_dtype(attempts["device_hours"]):
        bad = (attempts["device_hours"] < 0).fillna(False).to_numpy(dtype=bool)
        if bad.any():
            problems.append(f"device_hours < 0 in {describe_rows(bad, attempts)}")
    if hardware is not None and "hardware_type" in cols and "hardware_type" in hardware.columns:
        check_hardware_types(attempts["hardware_type"], hardware_codes(hardware), attempts, problems)
    if problems:
        raise SchemaError("the attempt log", problems)
    return attempts


def _check_end_time(attempts: pd.DataFrame, problems: list[str]) -> None:
    """An optional ``end_time``: a timestamp like ``submit_time``, never before it."""
    end, submit = attempts["end_time"], attempts["submit_time"]
    if not (pd.api.types.is_datetime64_any_dtype(end.dtype)
            and pd.api.types.is_datetime64_any_dtype(submit.dtype)):
        return  # named by the check of the columns' dtypes
    if check_time_zones(end, submit, problems):
        check_ends_after_submission((end < submit).to_numpy(dtype=bool), attempts, problems)


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
    require_frame(hardware, "hardware")
    problems: list[str] = []
    if len(hardware) == 0:
        problems.append("the hardware catalog is empty")
    _check_columns(hardware, HARDWARE_COLUMNS, problems)
    cols = hardware.columns
    if "hardware_type" in cols:
        dup = hardware["hardware_type"].duplicated(keep=False).to_numpy()
        if dup.any():
            problems.append(f"duplicate hardware_type in {describe_rows(dup, hardware)}")
    for name in (
        "memory_gb",
        "memory_bw_gbps",
        "intra_node_bw_gbps",
        "inter_node_bw_gbps",
        "devices_per_host",
        "cost_per_device_hour",
    ):
        if name in cols and pd.api.types.is_numeric_dtype(hardware[name].dtype):
            check_positive(name, hardware[name], hardware, problems)
    peaks = [f"peak_{p}_tflops" for p in PRECISIONS if f"peak_{p}_tflops" in cols]
    if peaks and len(hardware):
        values = hardware[peaks].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        none = ~np.isfinite(values).any(axis=1)
        if none.any():
            problems.append(f"no peak FLOP/s at any precision in {describe_rows(none, hardware)}")
        for name in peaks:  # blank where the type lacks the precision; never inf or <= 0
            if pd.api.types.is_numeric_dtype(hardware[name].dtype):
                check_positive(name, hardware[name], hardware, problems)
    if problems:
        raise SchemaError("the hardware catalog", problems)
    return hardware
