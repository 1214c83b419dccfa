"""The public builders: :func:`build_features` and :func:`candidate_rows`."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from leapml._calendar import read_time
from leapml._frames import cached_index
from leapml._frames import frame_of_arrays as _frame
from leapml.features.as_of import _KEY_COLUMNS, _joined, _level_keys
from leapml.features.columns import _assemble
from leapml.features.inputs import _categorical, _joint_codes, _keyed
from leapml.features.names import (
    _JOB_COLUMNS,
    _OUTCOME_COLUMNS,
    _TEXT_COLUMNS,
    _UNIT_COLUMN,
)
from leapml.features.rows import (
    _Catalog,
    _check_time_zones,
    _read_history,
    _Rows,
)
from leapml.schema import (
    LAUNCH_COLUMNS,
    RowsSchemaError,
    SchemaError,
    validate_hardware,
)
from leapml.schema.rules import check_model_sizes, check_rows, null_mask, require_frame
from leapml.schema.times import parse_times, time_problem

# ----------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------


def build_features(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    history: pd.DataFrame | None = None,
    outcome_known: str | None = None,
) -> pd.DataFrame:
    """Build the submission-time feature matrix of a set of attempts.

    Parameters
    ----------
    attempts : DataFrame
        The rows to describe: an attempt log (training) or candidate rows from
        :func:`candidate_rows` (scoring). Needs ``job_id``, ``submit_time``,
        the launch columns of :data:`leapml.schema.LAUNCH_COLUMNS` and
        ``hardware_type``; ``status`` and ``throughput`` are not read from it
        unless it is also the history.
    hardware : DataFrame
        The hardware catalog (:data:`leapml.schema.HARDWARE_COLUMNS`); every
        hardware type of ``attempts`` and of the completed history rows must
        be in it.
    history : DataFrame, optional
        The log past measurements are read from, with the columns of
        :data:`HISTORY_COLUMNS`. Defaults to ``attempts`` itself. For each row
        of ``attempts``, only rows of ``history`` with ``status == "ok"``
        whose outcome was known strictly before the row's ``submit_time``
        are read. To score submissions against the same log many times,
        build a :class:`HistoryIndex` once instead.
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When a history row's outcome becomes known (:func:`outcome_known_time`):
        by default its ``end_time``, else its submission plus its run's
        length (``device_hours / trainer_count`` hours).

    Returns
    -------
    DataFrame
        One row per row of ``attempts``, with the same index and order, and
        the columns of :func:`feature_names` (documented in
        ``docs/features.md``). Text columns are pandas categoricals, counts
        are integers, everything else is float with NaN where unknown (for
        instance the history of a job never run before). Never infinite: a
        value that valid but extreme figures overflow (a datasheet figure of
        1e300, a size of 1e-300) is NaN, with a warning naming its columns.

    Raises
    ------
    TypeError
        If an input is not a DataFrame.
    SchemaError
        Naming every problem found: missing columns, nulls, non-timestamp
        ``submit_time``, empty precisions, hardware types absent from the
        catalog, non-positive trainer counts, batch sizes or throughputs on
        the completed history rows, time zones that differ between
        ``attempts`` and ``history``; or a catalog that fails
        :func:`leapml.schema.validate_hardware`.

    Examples
    --------
    >>> import pandas as pd
    >>> from leapml.features import build_features
    >>> hardware = pd.DataFrame({
    ...     "hardware_type": ["A100", "H100"], "vendor": ["NVIDIA", "NVIDIA"],
    ...     "peak_fp32_tflops": [19.5, 67.0], "peak_tf32_tflops": [156.0, 495.0],
    ...     "peak_bf16_tflops": [312.0, 989.0], "peak_fp16_tflops": [312.0, 989.0],
    ...     "peak_fp8_tflops": [float("nan"), 1979.0], "memory_gb": [80.0, 80.0],
    ...     "memory_bw_gbps": [2039.0, 3350.0], "intra_node_bw_gbps": [300.0, 450.0],
    ...     "inter_node_bw_gbps": [25.0, 50.0], "devices_per_host": [8, 8],
    ...     "cost_per_device_hour": [2.0, 4.0],
    ...     "introduced": pd.to_datetime(["2020-05-14", "2022-09-20"])})
    >>> log = pd.DataFrame({
    ...     "attempt_id": [1, 2, 3], "job_id": ["j1", "j1", "j1"],
    ...     "submit_time": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"]),
    ...     "model_type": "llm-ft-001", "model_family": "llm", "trainer_count": 16,
    ...     "batch_size": 4, "precision": "fp8", "seq_len": 4096, "parallelism": "fsdp",
    ...     "hardware_type": ["A100", "A100", "H100"], "status": ["ok", "ok", "ok"],
    ...     "throughput": [50.0, 54.0, 140.0], "device_hours": 16.0})
    >>> X = build_features(log, hardware)
    >>> X["job_runs_same_hardware"].tolist()
    [0, 1, 0]
    >>> X["job_last_throughput_any_hardware"].tolist()
    [nan, 50.0, 54.0]
    >>> X["peak_tflops"].tolist()  # fp8 falls back to bf16 on the A100
    [312.0, 312.0, 1979.0]
    """
    require_frame(attempts, "attempts")
    require_frame(hardware, "hardware")
    same = history is None or history is attempts
    history = attempts if history is None else history
    require_frame(history, "history")
    validate_hardware(hardware)
    catalog = _Catalog(hardware)
    rows = _Rows(attempts, catalog)
    ok, columns, past = _read_history(history, catalog, outcome_known=outcome_known)
    _check_time_zones(rows, past)

    subset = ok if same else None
    history_unit = history[_UNIT_COLUMN].array if _UNIT_COLUMN in history.columns else None
    query_codes, past_codes = {}, {}
    for key, name in _KEY_COLUMNS.items():
        # the training case factorizes the one column once
        past_values = _keyed(columns[name], history_unit)
        past_values = None if same else past_values if ok.all() else past_values[ok]
        query_codes[key], past_codes[key] = _joint_codes(
            _keyed(rows.columns[name], rows.unit), past_values, subset
        )
    n_types = len(catalog.types)
    stats = _joined(
        _level_keys(query_codes, rows.hardware, rows.config, n_types),
        rows.ns,
        _level_keys(past_codes, past.hardware, past.config, n_types),
        past,
    )
    return _assemble(rows, catalog, stats)


def candidate_rows(
    jobs: pd.DataFrame,
    hardware_types,
    *,
    at=None,
) -> pd.DataFrame:
    """Rows for scoring submissions on every candidate hardware type.

    Parameters
    ----------
    jobs : DataFrame
        One row per submission to score, with ``job_id`` and the launch
        columns of :data:`leapml.schema.LAUNCH_COLUMNS`. Its other columns
        (``attempt_id`` for instance) are copied to every candidate row,
        except attempt outcomes (``status``, ``throughput``,
        ``device_hours``), evaluation-only truth (``expected_throughput``),
        hidden columns (names starting with ``_``) and ``hardware_type``.
    hardware_types : list of str or DataFrame
        The candidate hardware types, or a hardware catalog (all its types).
    at : timestamp or array-like of timestamps, optional
        The submission time: one timestamp for every row, or one per job (in
        the order of ``jobs``'s rows, a Series is read by position). When
        omitted, ``jobs`` must have a ``submit_time`` column and each job keeps
        its own (useful to replay a day of a log). When given, it replaces any
        ``submit_time`` column of ``jobs``.

    Returns
    -------
    DataFrame
        ``len(jobs) * len(hardware_types)`` rows, job by job, each job's
        candidates in the order of ``hardware_types``, with a fresh
        ``RangeIndex``; columns ``job_id``, ``submit_time``, the launch
        columns, ``hardware_type`` (categorical over ``hardware_types``) and
        the other columns of ``jobs`` kept as described above. Pass it to
        :func:`build_features` with ``history=`` the past log.

    Raises
    ------
    TypeError
        If ``jobs`` is not a DataFrame.
    SchemaError
        If ``jobs`` lacks a required column (all are named).
    ValueError
        If ``hardware_types`` is empty or repeats a type, or if the
        submission time is missing, null or has the wrong length.

    Examples
    --------
    >>> import pandas as pd
    >>> from leapml.features import candidate_rows
    >>> jobs = pd.DataFrame({
    ...     "job_id": ["j1"], "model_type": "llm-ft-001", "model_family": "llm",
    ...     "trainer_count": 16, "batch_size": 4, "precision": "bf16",
    ...     "seq_len": 4096, "parallelism": "fsdp"})
    >>> rows = candidate_rows(jobs, ["A100", "H100"], at="2024-01-04")
    >>> rows[["job_id", "hardware_type"]].values.tolist()
    [['j1', 'A100'], ['j1', 'H100']]
    >>> str(rows["submit_time"].iloc[0])
    '2024-01-04 00:00:00'
    """
    check_jobs(jobs)
    names = hardware_type_names(hardware_types)
    times = _submission_times(jobs, at)
    n_jobs, n_types = len(jobs), len(names)

    dropped = {*_OUTCOME_COLUMNS, "hardware_type", "submit_time"}
    keep = [c for c in jobs.columns.tolist() if c not in dropped and not str(c).startswith("_")]
    first = ["job_id", "submit_time", *LAUNCH_COLUMNS, "hardware_type"]
    # column by column from the arrays: a frame-wide take and reorder costs several times more
    order = tuple(first + [c for c in keep if c not in first])
    repeat = np.repeat(np.arange(n_jobs), n_types)
    arrays = []
    for name in order:
        if name == "hardware_type":
            codes = np.tile(np.arange(n_types), n_jobs)
            arrays.append(_categorical(codes, _type_dtype(tuple(names))))
            continue
        series = times if name == "submit_time" else jobs[name]
        dtype = series.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "biufcO":  # NumPy numbers, objects
            arrays.append(series.to_numpy()[repeat])
        else:  # extension arrays, and timestamps (their array skips re-inferring a NumPy one)
            arrays.append(series.array.take(repeat))
    return _frame(arrays, cached_index(order), pd.RangeIndex(n_jobs * n_types))


def _check_job_columns(jobs: pd.DataFrame) -> None:
    missing = [c for c in _JOB_COLUMNS if c not in jobs.columns]
    if missing:
        raise SchemaError("the jobs to score", [f"missing column(s): {missing}"])


def hardware_type_names(hardware_types) -> list[str]:
    """The candidate hardware types as text: from a list, a single name or a catalog.

    Raises
    ------
    SchemaError
        If a catalog lacks its ``hardware_type`` column.
    ValueError
        If there is no type, or a type comes twice.

    Examples
    --------
    >>> hardware_type_names("H100-80GB-SXM5")
    ['H100-80GB-SXM5']
    """
    if isinstance(hardware_types, pd.DataFrame):
        if "hardware_type" not in hardware_types.columns:
            raise SchemaError("the hardware catalog", ["missing column(s): ['hardware_type']"])
        names = [str(t) for t in hardware_types["hardware_type"].to_numpy(dtype=object)]
    elif isinstance(hardware_types, str):
        names = [hardware_types]
    else:
        names = [str(t) for t in hardware_types]
    if not names:
        raise ValueError("hardware_types is empty: give at least one candidate hardware type")
    if len(set(names)) < len(names):
        repeated = sorted({t for t in names if names.count(t) > 1})
        raise ValueError(f"hardware_types repeats {repeated}; give each type once")
    return names


def check_jobs(jobs: pd.DataFrame) -> None:
    """Refuse jobs to score that lack a launch column or hold a bad value, naming their rows.

    Raises
    ------
    TypeError
        If ``jobs`` is not a DataFrame.
    SchemaError
        (a :class:`~leapml.schema.RowsSchemaError`) listing every problem.
    """
    require_frame(jobs, "jobs")
    _check_job_columns(jobs)
    problems: list[str] = []  # the jobs' values, named by the jobs' own rows
    check_rows(jobs, _JOB_COLUMNS, hardware_codes={}, problems=problems, text_columns=_TEXT_COLUMNS)
    check_model_sizes(jobs, problems)
    if problems:
        raise RowsSchemaError("the jobs to score", problems)


def _submission_times(jobs: pd.DataFrame, at) -> pd.Series:
    """Each job's submission time: ``at`` (one for all, or one per job) or its ``submit_time``."""
    n_jobs = len(jobs)
    if at is None:
        if "submit_time" not in jobs.columns:
            raise ValueError(
                "give the submission time: at=<timestamp>, or a submit_time column in jobs"
            )
        times = jobs["submit_time"]
    elif pd.api.types.is_scalar(at):
        times = pd.Series(read_time(at), index=jobs.index)
    else:
        values = at.to_numpy() if isinstance(at, pd.Series | pd.Index) else at
        if pd.api.types.is_numeric_dtype(np.asarray(values)):
            raise ValueError("cannot read at= as one time per job: numbers have no unit; give "
                             "dates (text such as '2026-01-02') or pandas.Timestamps")
        values = pd.Series(values if np.ndim(values) else [values])
        if not pd.api.types.is_datetime64_any_dtype(values.dtype):
            # read as a log's column is: day/month never guessed, one time zone or none
            values = parse_times(values.astype(object))
        if not pd.api.types.is_datetime64_any_dtype(values.dtype):
            why = time_problem(values, lambda bad: f"positions {np.flatnonzero(bad)[:5].tolist()}")
            raise ValueError(f"cannot read at= as one time per job: {why}")
        values = values.to_numpy()
        times = pd.Series(values, index=jobs.index if len(values) == n_jobs else None)
        if len(times) != n_jobs:
            raise ValueError(f"at has {len(times)} timestamps for {n_jobs} jobs; give one per job")
    null = null_mask(times)
    if null.any():
        raise ValueError(f"the submission time is null for {int(null.sum())} job(s)")
    return times


# Candidates come again and again with the same types and columns: build those once.
@lru_cache(maxsize=64)
def _type_dtype(names: tuple[str, ...]) -> pd.CategoricalDtype:
    return pd.CategoricalDtype(list(names))
