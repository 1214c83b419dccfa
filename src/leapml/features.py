"""Submission-time features: launch configuration, hardware specs and as-of history.

:func:`build_features` turns attempts (rows of an attempt log, or candidate
rows from :func:`candidate_rows`) into the feature matrix ``X`` that
:class:`~leapml.LeapRegressor` reads. Every feature is known when the attempt
is submitted:

1. the launch configuration (model type, precision, trainer count, ...);
2. the hardware type's specifications at the job's precision;
3. derived quantities a performance engineer would compute (global batch,
   hosts used, total peak FLOP/s, ...);
4. what this same job measured in earlier completed runs, on this hardware
   type and on any other, with the earlier type's specs so that a model can
   transfer a measurement from one type to another;
5. what the job's model type (and model family) measured on this hardware
   type and on any hardware.

History is read *as of* each row's ``submit_time``: only completed (``ok``)
rows of the history log submitted strictly earlier are used, so rows with the
same ``submit_time`` never see each other. Columns the simulator adds for
evaluation (``expected_throughput``) and hidden columns (names starting with
``_``) are never read. ``docs/features.md`` describes every column.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from leapml.schema import LAUNCH_COLUMNS, PRECISIONS, TRUTH_COLUMNS, SchemaError, validate_hardware

__all__ = [
    "FEATURE_GROUPS",
    "HISTORY_COLUMNS",
    "PRECISION_FALLBACK",
    "QUERY_COLUMNS",
    "build_features",
    "candidate_rows",
    "feature_names",
]

#: For each precision a job asks for, the precisions whose peak FLOP/s is used,
#: in order, when a hardware type lacks it. The first one the type supports wins:
#: fp8 jobs fall back to bf16 (the usual mixed-precision recipe), bf16 and fp16
#: stand in for each other (same width), and fp32/tf32 stand in for each other.
PRECISION_FALLBACK: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32", "tf32", "bf16", "fp16", "fp8"),
    "tf32": ("tf32", "fp32", "bf16", "fp16", "fp8"),
    "bf16": ("bf16", "fp16", "fp32", "tf32", "fp8"),
    "fp16": ("fp16", "bf16", "fp32", "tf32", "fp8"),
    "fp8": ("fp8", "bf16", "fp16", "fp32", "tf32"),
}

#: The columns of ``X``, by group, in order.
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "launch": (
        "model_type",
        "model_family",
        "precision",
        "parallelism",
        "hardware_type",
        "vendor",
        "trainer_count",
        "batch_size",
        "seq_len",
    ),
    "hardware": (
        "peak_tflops",
        "precision_native",
        "memory_gb",
        "memory_bw_gbps",
        "intra_node_bw_gbps",
        "inter_node_bw_gbps",
        "devices_per_host",
        "hardware_age_days",
    ),
    "derived": (
        "global_batch_size",
        "hosts_used",
        "crosses_hosts",
        "communication_bw_gbps",
        "total_peak_tflops",
        "total_memory_bw_gbps",
        "total_memory_gb",
        "batch_tokens_per_memory_gb",
    ),
    "job_history": (
        "job_runs_same_hardware",
        "job_last_throughput_same_hardware",
        "job_mean_log_throughput_same_hardware",
        "job_days_since_last_run_same_hardware",
        "job_runs_any_hardware",
        "job_last_throughput_any_hardware",
        "job_last_throughput_per_trainer_any_hardware",
        "job_mean_log_throughput_any_hardware",
        "job_days_since_last_run_any_hardware",
        "job_last_hardware_type",
        "job_last_hardware_peak_tflops",
        "log_peak_tflops_ratio_to_last_hardware",
        "log_memory_bw_ratio_to_last_hardware",
        "job_last_throughput_scaled_by_peak",
    ),
    "model_history": (
        "model_type_runs_same_hardware",
        "model_type_mean_log_samples_per_peak_tflop_same_hardware",
        "model_type_mean_log_steps_per_second_same_hardware",
        "model_type_log_throughput_estimate_same_hardware",
        "model_type_runs_any_hardware",
        "model_type_mean_log_samples_per_peak_tflop_any_hardware",
        "model_type_log_throughput_estimate_any_hardware",
        "model_family_runs_same_hardware",
        "model_family_mean_log_samples_per_peak_tflop_same_hardware",
    ),
    "summary": (
        "history_log_throughput_estimate",
        "history_estimate_source",
    ),
}

#: Columns ``build_features`` needs on the rows it describes.
QUERY_COLUMNS = ("job_id", "submit_time", *LAUNCH_COLUMNS, "hardware_type")
#: Columns ``build_features`` needs on the history log.
HISTORY_COLUMNS = (
    "job_id",
    "submit_time",
    "model_type",
    "model_family",
    "trainer_count",
    "batch_size",
    "precision",
    "hardware_type",
    "status",
    "throughput",
)
# Outcome columns of an attempt that say nothing about a candidate to score.
_OUTCOME_COLUMNS = ("status", "throughput", "device_hours", *TRUTH_COLUMNS)
_DAY_NS = 86_400 * 10**9
_SPEC_COLUMNS = (
    "memory_gb",
    "memory_bw_gbps",
    "intra_node_bw_gbps",
    "inter_node_bw_gbps",
    "devices_per_host",
)


def feature_names() -> list[str]:
    """Return the names of the columns of ``X``, in order.

    Examples
    --------
    >>> from leapml.features import feature_names
    >>> names = feature_names()
    >>> names[:3]
    ['model_type', 'model_family', 'precision']
    >>> "job_last_throughput_same_hardware" in names
    True
    """
    return [name for group in FEATURE_GROUPS.values() for name in group]


# ----------------------------------------------------------------------------
# validation and conversion helpers
# ----------------------------------------------------------------------------


def _require_frame(frame, name: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")


def _describe_rows(mask: np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def _text_codes(series: pd.Series, categories: pd.Index) -> np.ndarray:
    """Position of each value of ``series`` in ``categories`` (-1: absent or null)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        # map the few categories once instead of every row
        mapping = categories.get_indexer(pd.Index([str(c) for c in series.cat.categories]))
        mapping = np.append(mapping, -1)  # code -1 (null) maps to the appended -1
        return mapping[series.cat.codes.to_numpy()]
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        codes = categories.get_indexer(series)
    else:
        values = series.to_numpy(dtype=object)
        codes = categories.get_indexer(pd.Index([str(v) for v in values], dtype=object))
    return np.where(series.isna().to_numpy(), -1, codes)


def _time_ns(series: pd.Series) -> tuple[np.ndarray, bool]:
    """Nanoseconds since the epoch (UTC where the column has a time zone), and tz-awareness."""
    aware = getattr(series.dtype, "tz", None) is not None
    if aware:
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    return series.to_numpy(dtype="datetime64[ns]").view("int64"), aware


def _check_rows(
    frame: pd.DataFrame,
    required: Iterable[str],
    catalog_types: pd.Index,
    problems: list[str],
    rows: np.ndarray | None = None,
) -> None:
    """Collect problems with the columns ``build_features`` reads from ``frame``.

    ``rows`` restricts the value checks to a boolean mask (the ``ok`` rows of a
    history log: the only ones read).
    """
    required = list(required)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        problems.append(f"missing column(s): {missing}")
    present = [c for c in required if c in frame.columns]
    mask = np.ones(len(frame), dtype=bool) if rows is None else rows
    for name in present:
        if name in ("seq_len", "throughput", "status"):
            continue
        null = frame[name].isna().to_numpy() & mask
        if null.any():
            problems.append(f"column {name!r} is null in {_describe_rows(null, frame)}")
    if "submit_time" in present and not pd.api.types.is_datetime64_any_dtype(frame["submit_time"]):
        problems.append(
            f"column 'submit_time' has dtype {frame['submit_time'].dtype}, expected a timestamp "
            "(convert it with pandas.to_datetime or leapml.schema.coerce_attempts)"
        )
    for name in ("trainer_count", "batch_size", "seq_len"):
        if name not in present:
            continue
        if not pd.api.types.is_numeric_dtype(frame[name].dtype) or pd.api.types.is_bool_dtype(
            frame[name].dtype
        ):
            problems.append(f"column {name!r} has dtype {frame[name].dtype}, expected numbers")
            continue
        values = frame[name].to_numpy(dtype=float, na_value=np.nan)
        bad = mask & ~np.isnan(values) & ~(np.isfinite(values) & (values > 0))
        if bad.any():
            problems.append(
                f"{name} must be finite and > 0; it is not in {_describe_rows(bad, frame)}"
            )
    if "precision" in present:
        codes = _text_codes(frame["precision"], pd.Index(PRECISIONS))
        bad = mask & (codes < 0) & frame["precision"].notna().to_numpy()
        if bad.any():
            problems.append(f"precision not in {list(PRECISIONS)} in {_describe_rows(bad, frame)}")
    if "hardware_type" in present:
        codes = _text_codes(frame["hardware_type"], catalog_types)
        bad = mask & (codes < 0) & frame["hardware_type"].notna().to_numpy()
        if bad.any():
            unknown = sorted({str(v) for v in frame["hardware_type"].to_numpy(dtype=object)[bad]})
            problems.append(
                f"hardware_type absent from the catalog: {unknown[:10]} in {_describe_rows(bad, frame)}"
            )
    if "throughput" in present and rows is not None:
        if not pd.api.types.is_numeric_dtype(frame["throughput"].dtype):
            problems.append(
                f"column 'throughput' has dtype {frame['throughput'].dtype}, expected numbers"
            )
        else:
            values = frame["throughput"].to_numpy(dtype=float, na_value=np.nan)
            bad = mask & ~(np.isfinite(values) & (values > 0))
            if bad.any():
                problems.append(
                    f"throughput must be finite and > 0 on ok rows; it is not in {_describe_rows(bad, frame)}"
                )


def _joint_codes(
    query: pd.Series, history: pd.Series, subset: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column, consistent between the query rows and the history.

    ``subset`` is given when the history is ``query[subset]`` (the training case),
    so the column is factorized once.
    """
    if subset is not None:
        codes = pd.factorize(query)[0]
        return codes, codes[subset]
    history_codes, uniques = pd.factorize(history)
    # look the (usually few) query rows up among the history's values, by value
    known = pd.Index(np.asarray(uniques, dtype=object))
    query_codes = known.get_indexer(_as_object(query))
    # a value the history lacks gets a code no history row has
    query_codes[query_codes < 0] = len(known)
    return query_codes, history_codes


def _as_object(series: pd.Series) -> np.ndarray:
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = np.append(series.cat.categories.to_numpy(dtype=object), None)
        return categories[series.cat.codes.to_numpy()]
    return series.to_numpy(dtype=object)


def _as_category(series: pd.Series) -> pd.Categorical:
    """Keep a categorical's categories (stable across row subsets); otherwise sort the values."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return pd.Categorical(series)
    return pd.Categorical(series.to_numpy(dtype=object))


class _Catalog:
    """The hardware catalog as arrays indexed by hardware-type code."""

    def __init__(self, hardware: pd.DataFrame):
        self.types = pd.Index([str(t) for t in hardware["hardware_type"].to_numpy(dtype=object)])
        peaks = np.column_stack(
            [
                hardware[f"peak_{p}_tflops"].to_numpy(dtype=float, na_value=np.nan)
                for p in PRECISIONS
            ]
        )
        peaks[~(peaks > 0)] = np.nan
        n_types = len(self.types)
        #: peak TFLOP/s used for (type, asked precision), after the fallback
        self.peak = np.full((n_types, len(PRECISIONS)), np.nan)
        self.native = peaks > 0
        for j, asked in enumerate(PRECISIONS):
            for fallback in reversed(PRECISION_FALLBACK[asked]):
                column = peaks[:, PRECISIONS.index(fallback)]
                self.peak[:, j] = np.where(np.isnan(column), self.peak[:, j], column)
        self.specs = {
            name: hardware[name].to_numpy(dtype=float, na_value=np.nan) for name in _SPEC_COLUMNS
        }
        vendors = hardware["vendor"].to_numpy(dtype=object)
        self.vendor_categories = sorted({str(v) for v in vendors})
        self.vendor_code = pd.Index(self.vendor_categories).get_indexer([str(v) for v in vendors])
        self.introduced_ns = _time_ns(hardware["introduced"])[0]


# ----------------------------------------------------------------------------
# the as-of join
# ----------------------------------------------------------------------------


def _as_of(
    history_key: np.ndarray,
    history_rank: np.ndarray,
    query_key: np.ndarray,
    query_rank: np.ndarray,
    values: dict[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Statistics of the history rows with the query's key and a strictly smaller time rank.

    Returns, for every query row, the number of such rows, the position (in the
    history arrays) of the latest one (-1 when there is none; ties in time go to
    the later history row) and the mean of each array of ``values`` over them.
    """
    n_query = len(query_key)
    if len(history_key) == 0:
        empty = np.full(n_query, np.nan)
        return np.zeros(n_query, dtype=np.int64), np.full(n_query, -1), dict.fromkeys(values, empty)
    span = np.int64(max(history_rank.max(initial=0), query_rank.max(initial=0)) + 2)
    largest_key = max(history_key.max(initial=0), query_key.max(initial=0)) + 1
    if largest_key >= np.iinfo(np.int64).max // span:
        # dense keys keep key * span + rank inside int64
        _, inverse = np.unique(np.concatenate([history_key, query_key]), return_inverse=True)
        history_key, query_key = inverse[: len(history_key)], inverse[len(history_key) :]
        largest_key = int(inverse.max(initial=0)) + 1
    # only whole keys the query asks for, and only rows older than its latest
    # time, can matter: dropping the rest (cheap) speeds up scoring a few jobs
    if largest_key <= 8 * (len(history_key) + n_query) + 1024:
        wanted = np.zeros(largest_key + 1, dtype=bool)
        wanted[query_key] = True
        keep = wanted[history_key]
    else:
        keep = np.isin(history_key, query_key)
    keep &= history_rank < query_rank.max(initial=0)
    if not keep.all():
        kept = np.flatnonzero(keep)
        count, last, means = _as_of(
            history_key[kept],
            history_rank[kept],
            query_key,
            query_rank,
            {name: array[kept] for name, array in values.items()},
        )
        # position -1 (no earlier row) picks the appended -1
        return count, np.append(kept, -1)[last], means
    # lexsort is stable, so rows with equal key and time keep their history order
    order = np.lexsort((history_rank, history_key))
    sorted_key = history_key[order]
    sorted_composite = sorted_key * span + history_rank[order]
    # sorted needles make searchsorted walk memory in order: several times faster
    query_composite = query_key * span + query_rank
    query_order = np.argsort(query_composite, kind="stable")
    end = np.empty(n_query, dtype=np.int64)
    start = np.empty(n_query, dtype=np.int64)
    end[query_order] = np.searchsorted(sorted_composite, query_composite[query_order], side="left")
    start[query_order] = np.searchsorted(
        sorted_composite, query_key[query_order] * span, side="left"
    )
    count = end - start
    found = count > 0
    last_sorted = np.where(found, end - 1, 0)
    last = np.where(found, order[last_sorted], -1)
    means = {}
    for name, array in values.items():
        # a per-group running sum depends only on that group's earlier rows
        running = (
            pd.Series(array[order]).groupby(sorted_key, sort=False).cumsum().to_numpy(dtype=float)
        )
        means[name] = np.where(found, running[last_sorted] / np.maximum(count, 1), np.nan)
    return count, last, means


def _take(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``array[index]`` as floats, NaN where ``index`` is -1."""
    if len(array) == 0:
        return np.full(len(index), np.nan)
    return np.where(index >= 0, array[np.maximum(index, 0)].astype(float), np.nan)


# ----------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------


def build_features(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    history: pd.DataFrame | None = None,
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
        of ``attempts``, only rows of ``history`` with ``status == "ok"`` and a
        ``submit_time`` strictly earlier than the row's are read.

    Returns
    -------
    DataFrame
        One row per row of ``attempts``, with the same index and order, and
        the columns of :func:`feature_names` (documented in
        ``docs/features.md``). Text columns are pandas categoricals, counts
        are integers, everything else is float with NaN where unknown (for
        instance the history of a job never run before).

    Raises
    ------
    TypeError
        If an input is not a DataFrame.
    SchemaError
        Naming every problem found: missing columns, nulls, non-timestamp
        ``submit_time``, unknown precisions, hardware types absent from the
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
    _require_frame(attempts, "attempts")
    _require_frame(hardware, "hardware")
    same = history is None or history is attempts
    history = attempts if history is None else history
    _require_frame(history, "history")
    validate_hardware(hardware)
    catalog = _Catalog(hardware)

    problems: list[str] = []
    _check_rows(attempts, QUERY_COLUMNS, catalog.types, problems)
    if problems:
        raise SchemaError("the attempts to describe", problems)
    missing = [c for c in HISTORY_COLUMNS if c not in history.columns]
    if missing:
        raise SchemaError("the history log", [f"missing column(s): {missing}"])
    ok = _text_codes(history["status"], pd.Index(["ok"])) == 0
    _check_rows(history, HISTORY_COLUMNS, catalog.types, problems, rows=ok)
    if problems:
        raise SchemaError("the history log", problems)

    # -- the rows to describe ------------------------------------------------
    query_ns, query_aware = _time_ns(attempts["submit_time"])
    hardware_code = _text_codes(attempts["hardware_type"], catalog.types)
    precision_code = _text_codes(attempts["precision"], pd.Index(PRECISIONS))
    trainers = attempts["trainer_count"].to_numpy(dtype=float)
    batch = attempts["batch_size"].to_numpy(dtype=float)
    seq_len = attempts["seq_len"].to_numpy(dtype=float, na_value=np.nan)

    out: dict[str, object] = {
        "model_type": _as_category(attempts["model_type"]),
        "model_family": _as_category(attempts["model_family"]),
        "precision": pd.Categorical.from_codes(precision_code, categories=list(PRECISIONS)),
        "parallelism": _as_category(attempts["parallelism"]),
        "hardware_type": pd.Categorical.from_codes(hardware_code, categories=catalog.types),
        "vendor": pd.Categorical.from_codes(
            catalog.vendor_code[hardware_code], categories=catalog.vendor_categories
        ),
        "trainer_count": attempts["trainer_count"].to_numpy(dtype=np.int64),
        "batch_size": attempts["batch_size"].to_numpy(dtype=np.int64),
        "seq_len": seq_len,
    }

    # -- hardware specs at the job's precision -------------------------------
    peak = catalog.peak[hardware_code, precision_code]
    specs = {name: values[hardware_code] for name, values in catalog.specs.items()}
    out["peak_tflops"] = peak
    out["precision_native"] = catalog.native[hardware_code, precision_code].astype(np.int64)
    out.update(specs)
    out["devices_per_host"] = specs["devices_per_host"].astype(np.int64)
    out["hardware_age_days"] = (query_ns - catalog.introduced_ns[hardware_code]) / _DAY_NS

    # -- derived quantities --------------------------------------------------
    crosses = trainers > specs["devices_per_host"]
    out["global_batch_size"] = trainers * batch
    out["hosts_used"] = np.ceil(trainers / specs["devices_per_host"]).astype(np.int64)
    out["crosses_hosts"] = crosses.astype(np.int64)
    out["communication_bw_gbps"] = np.where(
        crosses, specs["inter_node_bw_gbps"], specs["intra_node_bw_gbps"]
    )
    out["total_peak_tflops"] = peak * trainers
    out["total_memory_bw_gbps"] = specs["memory_bw_gbps"] * trainers
    out["total_memory_gb"] = specs["memory_gb"] * trainers
    out["batch_tokens_per_memory_gb"] = (
        batch * np.where(np.isnan(seq_len), 1.0, seq_len) / (specs["memory_gb"])
    )

    # -- the completed history rows, as arrays -------------------------------
    past = history.loc[ok] if not ok.all() else history
    history_ns, history_aware = _time_ns(past["submit_time"])
    if len(past) and len(attempts) and history_aware != query_aware:
        raise SchemaError(
            "the history log",
            ["submit_time is time-zone aware in one of attempts/history and naive in the other"],
        )
    past_hardware = _text_codes(past["hardware_type"], catalog.types)
    past_precision = _text_codes(past["precision"], pd.Index(PRECISIONS))
    past_trainers = past["trainer_count"].to_numpy(dtype=float)
    past_throughput = past["throughput"].to_numpy(dtype=float, na_value=np.nan)
    past_log_throughput = np.log(past_throughput)
    past_peak = catalog.peak[past_hardware, past_precision]
    past_log_per_peak = past_log_throughput - np.log(past_trainers * past_peak)
    past_log_steps = past_log_throughput - np.log(
        past_trainers * past["batch_size"].to_numpy(dtype=float)
    )

    # one time axis for both sides: ranks compare exactly like the timestamps
    times = np.sort(np.concatenate([query_ns, history_ns]))
    times = times[np.concatenate([[True], times[1:] != times[:-1]])] if len(times) else times
    query_rank = np.searchsorted(times, query_ns)
    history_rank = np.searchsorted(times, history_ns)

    n_types = np.int64(len(catalog.types))
    subset = ok if same else None
    job_q, job_h = _joint_codes(attempts["job_id"], past["job_id"], subset)
    model_q, model_h = _joint_codes(attempts["model_type"], past["model_type"], subset)
    family_q, family_h = _joint_codes(attempts["model_family"], past["model_family"], subset)

    def as_of(key_q, key_h, values):
        return _as_of(key_h, history_rank, key_q, query_rank, values)

    # -- this job's history --------------------------------------------------
    count, last, means = as_of(
        job_q * n_types + hardware_code,
        job_h * n_types + past_hardware,
        {"log": past_log_throughput},
    )
    out["job_runs_same_hardware"] = count
    out["job_last_throughput_same_hardware"] = _take(past_throughput, last)
    out["job_mean_log_throughput_same_hardware"] = job_same_log = means["log"]
    out["job_days_since_last_run_same_hardware"] = (query_ns - _take(history_ns, last)) / _DAY_NS

    count, last, means = as_of(job_q, job_h, {"log": past_log_throughput})
    last_throughput = _take(past_throughput, last)
    last_per_trainer = last_throughput / _take(past_trainers, last)
    last_peak = _take(past_peak, last)
    last_hardware = np.where(last >= 0, past_hardware[np.maximum(last, 0)] if len(past) else -1, -1)
    out["job_runs_any_hardware"] = count
    out["job_last_throughput_any_hardware"] = last_throughput
    out["job_last_throughput_per_trainer_any_hardware"] = last_per_trainer
    out["job_mean_log_throughput_any_hardware"] = means["log"]
    out["job_days_since_last_run_any_hardware"] = (query_ns - _take(history_ns, last)) / _DAY_NS
    out["job_last_hardware_type"] = pd.Categorical.from_codes(
        last_hardware, categories=catalog.types
    )
    out["job_last_hardware_peak_tflops"] = last_peak
    out["log_peak_tflops_ratio_to_last_hardware"] = np.log(peak) - np.log(last_peak)
    out["log_memory_bw_ratio_to_last_hardware"] = np.log(specs["memory_bw_gbps"]) - np.log(
        _take(catalog.specs["memory_bw_gbps"], last_hardware)
    )
    out["job_last_throughput_scaled_by_peak"] = job_scaled = (
        last_per_trainer * trainers * (peak / last_peak)
    )

    # -- the model type's and family's history -------------------------------
    log_total_peak = np.log(peak * trainers)
    count, _, means = as_of(
        model_q * n_types + hardware_code,
        model_h * n_types + past_hardware,
        {"per_peak": past_log_per_peak, "steps": past_log_steps},
    )
    out["model_type_runs_same_hardware"] = count
    out["model_type_mean_log_samples_per_peak_tflop_same_hardware"] = means["per_peak"]
    out["model_type_mean_log_steps_per_second_same_hardware"] = means["steps"]
    out["model_type_log_throughput_estimate_same_hardware"] = model_same = (
        means["per_peak"] + log_total_peak
    )
    count, _, means = as_of(model_q, model_h, {"per_peak": past_log_per_peak})
    out["model_type_runs_any_hardware"] = count
    out["model_type_mean_log_samples_per_peak_tflop_any_hardware"] = means["per_peak"]
    out["model_type_log_throughput_estimate_any_hardware"] = model_any = (
        means["per_peak"] + log_total_peak
    )
    count, _, means = as_of(
        family_q * n_types + hardware_code,
        family_h * n_types + past_hardware,
        {"per_peak": past_log_per_peak},
    )
    out["model_family_runs_same_hardware"] = count
    out["model_family_mean_log_samples_per_peak_tflop_same_hardware"] = means["per_peak"]

    # -- one estimate from the most telling history available ----------------
    # the model type on this very hardware goes before the job's run elsewhere:
    # scaling by peak FLOP/s alone misses memory- and network-bound jobs
    estimate = np.full(len(attempts), np.nan)
    source = np.zeros(len(attempts), dtype=np.int64)
    candidates = (job_same_log, model_same, np.log(job_scaled), model_any)
    for level, candidate in enumerate(candidates, start=1):
        use = np.isnan(estimate) & ~np.isnan(candidate)
        estimate[use] = candidate[use]
        source[use] = level
    out["history_log_throughput_estimate"] = estimate
    out["history_estimate_source"] = source

    frame = pd.DataFrame(out, index=attempts.index)
    return frame[feature_names()]


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
    _require_frame(jobs, "jobs")
    required = ("job_id", *LAUNCH_COLUMNS)
    missing = [c for c in required if c not in jobs.columns]
    if missing:
        raise SchemaError("the jobs to score", [f"missing column(s): {missing}"])
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
    repeated = sorted({t for t in names if names.count(t) > 1})
    if repeated:
        raise ValueError(f"hardware_types repeats {repeated}; give each type once")
    n_jobs, n_types = len(jobs), len(names)
    if at is None:
        if "submit_time" not in jobs.columns:
            raise ValueError(
                "give the submission time: at=<timestamp>, or a submit_time column in jobs"
            )
        times = jobs["submit_time"]
    elif pd.api.types.is_scalar(at):
        times = pd.Series(pd.Timestamp(at), index=jobs.index)
    else:
        values = at.to_numpy() if isinstance(at, pd.Series | pd.Index) else at
        times = pd.Series(
            pd.to_datetime(values), index=jobs.index if len(values) == n_jobs else None
        )
        if len(times) != n_jobs:
            raise ValueError(f"at has {len(times)} timestamps for {n_jobs} jobs; give one per job")
    if times.isna().any():
        raise ValueError(f"the submission time is null for {int(times.isna().sum())} job(s)")

    dropped = {*_OUTCOME_COLUMNS, "hardware_type", "submit_time"}
    keep = [c for c in jobs.columns if c not in dropped and not str(c).startswith("_")]
    repeat = np.repeat(np.arange(n_jobs), n_types)
    rows = jobs[keep].iloc[repeat].reset_index(drop=True)
    rows["hardware_type"] = pd.Categorical(
        np.tile(np.array(names, dtype=object), n_jobs), categories=names
    )
    rows["submit_time"] = times.iloc[repeat].reset_index(drop=True)
    first = ["job_id", "submit_time", *LAUNCH_COLUMNS, "hardware_type"]
    return rows[first + [c for c in rows.columns if c not in first]]
