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
rows of the history log whose outcome was known strictly earlier are used (a
run's throughput is known when it ends: :func:`outcome_known_time`), so a run
still going when a row is submitted is invisible to it. Where the rows state a
``throughput_unit`` (an optional column), the history is keyed by unit too:
no mean mixes tokens/s with images/s. Columns the simulator adds for
evaluation (``expected_throughput``) and hidden columns (names starting with
``_``) are never read. ``docs/features.md`` describes every column.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from leapml._frames import cached_index
from leapml._frames import frame_of_arrays as _frame
from leapml.schema import (
    DEFAULT_THROUGHPUT_UNIT,
    LAUNCH_COLUMNS,
    PRECISIONS,
    TRUTH_COLUMNS,
    RowsSchemaError,
    SchemaError,
    normalize_precision,
    validate_hardware,
)

__all__ = [
    "FEATURE_GROUPS",
    "HISTORY_COLUMNS",
    "OUTCOME_KNOWN_RULES",
    "HistoryIndex",
    "OTHER_PRECISION_FALLBACK",
    "PRECISION_FALLBACK",
    "QUERY_COLUMNS",
    "build_features",
    "candidate_rows",
    "feature_names",
    "outcome_known_time",
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

#: The peaks read, in order, for a precision outside :data:`~leapml.schema.PRECISIONS`
#: (``int8``, ``fp4``, a log's ``unknown``): a 16-bit tensor peak first, the usual
#: training recipe; ``precision_native`` is 0 for such rows.
OTHER_PRECISION_FALLBACK: tuple[str, ...] = ("fp16", "bf16", "fp8", "tf32", "fp32")

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
# Columns a job to score needs (its time and hardware type come with its candidates).
_JOB_COLUMNS = ("job_id", *LAUNCH_COLUMNS)
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
_OUTCOME_COLUMNS = ("status", "throughput", "device_hours", "end_time", *TRUTH_COLUMNS)
#: The rules :func:`outcome_known_time` can read the time an outcome becomes known by.
OUTCOME_KNOWN_RULES = ("end_time", "run_hours", "submit_time")
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


_FEATURE_NAMES = tuple(feature_names())
_FEATURE_INDEX = pd.Index(_FEATURE_NAMES)


# ----------------------------------------------------------------------------
# validation and conversion helpers
# ----------------------------------------------------------------------------

_PRECISION_CODES = {name: code for code, name in enumerate(PRECISIONS)}
_PRECISION_DTYPE = pd.CategoricalDtype(list(PRECISIONS))
# the column of the catalog's peak table that precisions outside PRECISIONS read
_OTHER_PRECISION = len(PRECISIONS)
_normalized_precision = lru_cache(maxsize=1024)(normalize_precision)
_OK_CODES = {"ok": 0}
# Below this many rows a Python loop over values beats a pandas hash table.
_FEW_ROWS = 256


def _require_frame(frame, name: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")


def _describe_rows(mask: np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def _null(series: pd.Series) -> np.ndarray:
    """Where ``series`` is null, read from its array (a Series would cost more than the test)."""
    return np.asarray(series.array.isna(), dtype=bool)


def _floats(series: pd.Series) -> np.ndarray:
    """A numeric column as floats, NaN where null."""
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(dtype=float)  # NaN already: no null mask to build
    return series.to_numpy(dtype=float, na_value=np.nan)


def _text_codes(series: pd.Series, codes: dict[str, int]) -> np.ndarray:
    """The code of each value of ``series`` by its text (-1: absent from ``codes``, or null)."""
    values = series.array
    if isinstance(values, pd.Categorical):
        # map the few categories once instead of every row; code -1 (null) picks the appended -1
        mapping = [codes.get(str(c), -1) for c in values.categories.tolist()]
        return np.array([*mapping, -1], dtype=np.int64)[values.codes]
    if (
        len(values) > _FEW_ROWS
        and pd.api.types.is_string_dtype(series.dtype)
        and series.dtype != object
    ):
        # text already: look the distinct values up once
        found, uniques = pd.factorize(values)
        mapping = [codes.get(u, -1) for u in uniques]
        return np.array([*mapping, -1], dtype=np.int64)[found]
    found = np.fromiter(
        (codes.get(str(v), -1) for v in values.to_numpy(dtype=object)), np.int64, len(values)
    )
    return np.where(_null(series), -1, found)


def _precision_codes(series: pd.Series) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """Each value's precision code and the categories of the ``precision`` feature.

    Values are read through :func:`~leapml.schema.normalize_precision`: a
    family of :data:`~leapml.schema.PRECISIONS` gets its position, any other
    value a code past them (its own category, after the five, sorted), a null
    or blank value -1.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        raw, uniques = values.codes, values.categories.tolist()
    elif len(values) <= _FEW_ROWS:
        uniques = values.to_numpy(dtype=object).tolist()
        raw = np.arange(len(uniques))
    else:
        raw, uniques = pd.factorize(values)
        uniques = np.asarray(uniques, dtype=object).tolist()
    names = [_normalized_precision(u) if isinstance(u, str) else None for u in uniques]
    extra = sorted({n for n in names if n is not None and n not in _PRECISION_CODES})
    codes = {**_PRECISION_CODES, **{n: len(PRECISIONS) + i for i, n in enumerate(extra)}}
    mapping = np.array([*(codes.get(n, -1) for n in names), -1], dtype=np.int64)
    dtype = pd.CategoricalDtype([*PRECISIONS, *extra]) if extra else _PRECISION_DTYPE
    return mapping[raw], dtype


def _keyed(values, unit):
    """A history key's values, with the throughput unit where a row states one other than samples/s.

    History aggregates never mix units: a model type measured in tokens/s and
    in images/s is two keys. Rows in samples/s (or stating no unit) keep their
    value, so a log without the column keys as before. ``values`` is a Series
    or a pandas array; the result is of the same kind.
    """
    if unit is None:
        return values
    units = pd.Series(unit).astype(object).to_numpy()
    other = pd.notna(units) & (units != DEFAULT_THROUGHPUT_UNIT)
    if not other.any():
        return values
    keyed = (values.array if isinstance(values, pd.Series) else values).to_numpy(dtype=object).copy()
    keyed[other] = [f"{v}\x1f{u}" for v, u in zip(keyed[other], units[other], strict=True)]
    if isinstance(values, pd.Series):
        return pd.Series(keyed, index=values.index)
    return pd.array(keyed, dtype=object)


def _time_ns(series: pd.Series) -> tuple[np.ndarray, bool]:
    """Nanoseconds since the epoch (UTC where the column has a time zone), and tz-awareness."""
    aware = getattr(series.dtype, "tz", None) is not None
    if aware:
        series = series.dt.tz_convert(None)
    if np.datetime_data(series.dtype)[0] != "ns" and len(series):
        # a coarser unit holds years a nanosecond count cannot: numpy would wrap them silently
        outside = (series < pd.Timestamp.min) | (series > pd.Timestamp.max)
        if outside.any():
            raise ValueError(
                f"column {series.name!r} holds {int(outside.sum())} time(s) outside "
                f"{pd.Timestamp.min.date()} .. {pd.Timestamp.max.date()} (e.g. "
                f"{series[outside].iloc[0]}), the range leapml computes times in"
            )
    return series.to_numpy(dtype="datetime64[ns]").view("int64"), aware


def _check_rows(
    frame: pd.DataFrame,
    required: Iterable[str],
    type_codes: dict[str, int],
    problems: list[str],
    rows: np.ndarray | None = None,
) -> tuple[dict[str, pd.Series], dict[str, np.ndarray]]:
    """Collect problems with the columns ``build_features`` reads from ``frame``.

    ``rows`` restricts the value checks to a boolean mask (the ``ok`` rows of a
    history log: the only ones read). Returns the columns it read and what it
    parsed on the way (hardware-type and precision codes, numbers as floats),
    so that callers read each column once.
    """
    required = list(required)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        problems.append(f"missing column(s): {missing}")
    columns = {c: frame[c] for c in required if c in frame.columns}
    for name in _TEXT_COLUMNS:
        if name in columns:
            columns[name] = _as_text(columns[name])
    parsed: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    for name, series in columns.items():
        if name in ("seq_len", "batch_size", "throughput", "status"):
            continue
        null = nulls[name] = _null(series)
        if rows is not None:
            null = null & rows
        if null.any():
            problems.append(f"column {name!r} is null in {_describe_rows(null, frame)}")
    if "submit_time" in columns and not pd.api.types.is_datetime64_any_dtype(
        columns["submit_time"].dtype
    ):
        problems.append(
            f"column 'submit_time' has dtype {columns['submit_time'].dtype}, expected a timestamp "
            "(convert it with pandas.to_datetime or leapml.schema.coerce_attempts)"
        )
    for name in ("trainer_count", "batch_size", "seq_len"):
        if name not in columns:
            continue
        dtype = columns[name].dtype
        if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            problems.append(f"column {name!r} has dtype {dtype}, expected numbers")
            continue
        values = parsed[name] = _floats(columns[name])
        bad = ~np.isnan(values) & ~(np.isfinite(values) & (values > 0))
        if rows is not None:
            bad &= rows
        if bad.any():
            problems.append(
                f"{name} must be finite and > 0; it is not in {_describe_rows(bad, frame)}"
            )
    if "precision" in columns:
        codes, parsed["precision_dtype"] = _precision_codes(columns["precision"])
        parsed["precision"] = codes
        bad = (codes < 0) & ~nulls["precision"]
        if rows is not None:
            bad &= rows
        if bad.any():
            problems.append(f"precision is blank in {_describe_rows(bad, frame)}")
    if "hardware_type" in columns:
        codes = parsed["hardware_type"] = _text_codes(columns["hardware_type"], type_codes)
        bad = (codes < 0) & ~nulls["hardware_type"]
        if rows is not None:
            bad &= rows
        if bad.any():
            unknown = sorted({str(v) for v in columns["hardware_type"].to_numpy(dtype=object)[bad]})
            problems.append(
                f"hardware_type absent from the catalog: {unknown[:10]} in {_describe_rows(bad, frame)}"
            )
    if "throughput" in columns and rows is not None:
        if not pd.api.types.is_numeric_dtype(columns["throughput"].dtype):
            problems.append(
                f"column 'throughput' has dtype {columns['throughput'].dtype}, expected numbers"
            )
        else:
            values = parsed["throughput"] = _floats(columns["throughput"])
            bad = rows & ~(np.isfinite(values) & (values > 0))
            if bad.any():
                problems.append(
                    f"throughput must be finite and > 0 on ok rows; it is not in {_describe_rows(bad, frame)}"
                )
    return columns, parsed


def _joint_codes(
    query: pd.Series, history: pd.Series | None, subset: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column, consistent between the query rows and the history.

    ``subset`` is given when the history is ``query[subset]`` (the training case),
    so the column is factorized once (and ``history`` is not read).
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


def _as_text(series: pd.Series) -> pd.Series:
    """An id or category column as text, so that 413 in one table matches "413" in another.

    A float column of whole numbers reads as the integers (a log with a
    missing id turns its ids into floats); nulls stay null.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        categories = values.categories
        if pd.api.types.infer_dtype(categories, skipna=False) == "string":
            return series
        names = [str(c) for c in _as_text(pd.Series(categories.to_numpy(dtype=object)))]
        if len(set(names)) == len(names):
            return pd.Series(pd.Categorical.from_codes(values.codes, categories=names),
                             index=series.index, name=series.name)
    elif pd.api.types.is_string_dtype(series.dtype) and (
        series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    ):
        return series
    null = _null(series)
    if series.dtype.kind == "f" and (series[~null] % 1 == 0).all():
        series = series.astype("Int64")
    # str() value by value: several times cheaper than astype(str) on the few rows of a submission
    text = np.array([str(v) for v in series.tolist()], dtype=object)
    text[null] = None
    return pd.Series(text, index=series.index, name=series.name, dtype=object, copy=False)


def _as_object(series: pd.Series) -> np.ndarray:
    values = series.array
    if isinstance(values, pd.Categorical):
        categories = np.append(values.categories.to_numpy(dtype=object), None)
        return categories[values.codes]
    return series.to_numpy(dtype=object)


def _value_codes(values, codes: dict) -> np.ndarray:
    """The code in ``codes`` of each of ``values`` (a Categorical or objects), by value (-1: absent)."""
    if isinstance(values, pd.Categorical):
        # only the categories in use: a categorical may carry thousands
        used = np.unique(values.codes)
        used = used[used >= 0]
        categories = values.categories
        # one job's rows use one category: indexing it alone beats converting them all
        if len(used) <= 8:
            found = [codes.get(categories[c], -1) for c in used]
        else:
            found = [codes.get(v, -1) for v in categories.take(used).to_numpy(dtype=object)]
        mapping = np.full(len(categories) + 1, -1, dtype=np.int64)
        mapping[used] = found
        return mapping[values.codes]
    if len(values) <= _FEW_ROWS:
        return np.fromiter((codes.get(v, -1) for v in values), np.int64, len(values))
    found, uniques = pd.factorize(values)
    mapping = [codes.get(v, -1) for v in uniques]
    return np.array([*mapping, -1], dtype=np.int64)[found]


def _as_category(values) -> pd.Categorical:
    """Keep a categorical's categories (stable across row subsets); otherwise sort the values.

    ``values`` is a column's pandas array.
    """
    if isinstance(values, pd.Categorical):
        return values.copy()
    return pd.Categorical(values.to_numpy(dtype=object))


class _Catalog:
    """The hardware catalog as arrays indexed by hardware-type code."""

    def __init__(self, hardware: pd.DataFrame):
        self.types = pd.Index([str(t) for t in hardware["hardware_type"].to_numpy(dtype=object)])
        self.codes = {name: code for code, name in enumerate(self.types)}
        self.dtype = pd.CategoricalDtype(self.types)
        peaks = np.column_stack(
            [
                hardware[f"peak_{p}_tflops"].to_numpy(dtype=float, na_value=np.nan)
                for p in PRECISIONS
            ]
        )
        peaks[~(peaks > 0)] = np.nan
        n_types = len(self.types)
        #: peak TFLOP/s used for (type, asked precision), after the fallback; the
        #: last column is what a precision outside PRECISIONS reads (never native)
        self.peak = np.full((n_types, len(PRECISIONS) + 1), np.nan)
        self.native = np.column_stack([peaks > 0, np.zeros(n_types, dtype=bool)])
        orders = [PRECISION_FALLBACK[asked] for asked in PRECISIONS] + [OTHER_PRECISION_FALLBACK]
        for j, order in enumerate(orders):
            for fallback in reversed(order):
                column = peaks[:, PRECISIONS.index(fallback)]
                self.peak[:, j] = np.where(np.isnan(column), self.peak[:, j], column)
        # topology columns a catalog may lack are unknown (NaN) for every type
        self.specs = {
            name: hardware[name].to_numpy(dtype=float, na_value=np.nan)
            if name in hardware.columns
            else np.full(n_types, np.nan)
            for name in _SPEC_COLUMNS
        }
        vendors = hardware["vendor"].to_numpy(dtype=object)
        vendor_categories = sorted({str(v) for v in vendors})
        self.vendor_dtype = pd.CategoricalDtype(vendor_categories)
        self.vendor_code = pd.Index(vendor_categories).get_indexer([str(v) for v in vendors])
        self.introduced_ns = _time_ns(hardware["introduced"])[0]


#: Text columns of the rows described, read as they are (keys and categories).
_TEXT_COLUMNS = ("job_id", "model_type", "model_family", "parallelism")
#: The optional column that keys the history by unit (see :func:`_keyed`).
_UNIT_COLUMN = "throughput_unit"


class _Rows:
    """The rows to describe: checked, with the arrays the features are computed from."""

    def __init__(self, attempts: pd.DataFrame, catalog: _Catalog):
        problems: list[str] = []
        columns, parsed = _check_rows(attempts, QUERY_COLUMNS, catalog.codes, problems)
        if problems:
            raise RowsSchemaError("the attempts to describe", problems)
        self.index = attempts.index
        #: the columns as read (build_features factorizes its keys from them)
        self.columns = columns
        #: the text columns' pandas arrays
        self.text = {name: columns[name].array for name in _TEXT_COLUMNS}
        self.ns, self.aware = _time_ns(columns["submit_time"])
        self.hardware = parsed["hardware_type"]
        self.precision = parsed["precision"]
        self.precision_dtype = parsed["precision_dtype"]
        self.trainers = parsed["trainer_count"]
        self.batch = parsed["batch_size"]
        self.seq_len = parsed["seq_len"]
        self.trainer_count = columns["trainer_count"].to_numpy(dtype=np.int64)
        self.batch_size = _whole(self.batch)
        self.unit = attempts[_UNIT_COLUMN].array if _UNIT_COLUMN in attempts.columns else None

    @classmethod
    def candidates(
        cls, jobs: pd.DataFrame, names: list[str], times: pd.Series, catalog: _Catalog
    ) -> _Rows | None:
        """The rows :func:`candidate_rows` would build, without building its frame.

        Only for the plain case: ``None`` when a job fails a check or a type
        is not in the catalog, so that the frame path raises its own errors.
        """
        problems: list[str] = []
        columns, parsed = _check_rows(jobs, _JOB_COLUMNS, catalog.codes, problems)
        hardware = [catalog.codes.get(name, -1) for name in names]
        if problems or min(hardware) < 0:
            return None
        n_jobs, n_types = len(jobs), len(names)
        repeat = np.repeat(np.arange(n_jobs), n_types)
        rows = cls.__new__(cls)
        rows.index = pd.RangeIndex(n_jobs * n_types)
        rows.columns = None  # no frame: only HistoryIndex reads these rows
        rows.text = {name: columns[name].array.take(repeat) for name in _TEXT_COLUMNS}
        ns, rows.aware = _time_ns(times)
        rows.ns = ns[repeat]
        rows.hardware = np.tile(np.asarray(hardware, dtype=np.int64), n_jobs)
        for name, source in (("precision", parsed["precision"]), ("trainers", parsed["trainer_count"]),
                             ("batch", parsed["batch_size"]), ("seq_len", parsed["seq_len"])):
            setattr(rows, name, source[repeat])
        rows.precision_dtype = parsed["precision_dtype"]
        rows.trainer_count = columns["trainer_count"].to_numpy(dtype=np.int64)[repeat]
        rows.batch_size = _whole(parsed["batch_size"])[repeat]
        rows.unit = jobs[_UNIT_COLUMN].array.take(repeat) if _UNIT_COLUMN in jobs.columns else None
        return rows

    def __len__(self) -> int:
        return len(self.ns)


class _Past:
    """Completed history rows as arrays, with the quantities the history features read."""

    #: the arrays, one value per row (``ns``: when the outcome became known; ``log``: log
    #: throughput; ``per_peak``: log samples per peak TFLOP; ``steps``: log steps per second,
    #: 0 where the batch size is unknown; ``batch_known``: 1 where it is known, else 0)
    FIELDS = (
        "ns", "hardware", "trainers", "throughput", "peak", "log", "per_peak", "steps", "batch_known"
    )

    def __init__(self, aware: bool, **arrays: np.ndarray):
        self.aware = aware
        for name in self.FIELDS:
            setattr(self, name, arrays[name])

    @classmethod
    def read(cls, columns, parsed, ok: np.ndarray, catalog: _Catalog, known_ns: np.ndarray) -> _Past:
        """The ``ok`` rows of a checked history log (what :func:`_check_rows` returned)."""
        every = ok.all()

        def pick(values):
            return values if every else values[ok]

        aware = getattr(columns["submit_time"].dtype, "tz", None) is not None
        hardware = pick(parsed["hardware_type"])
        trainers = pick(parsed["trainer_count"])
        throughput = pick(parsed["throughput"])
        peak = catalog.peak[hardware, np.minimum(pick(parsed["precision"]), _OTHER_PRECISION)]
        log = np.log(throughput)
        steps = log - np.log(trainers * pick(parsed["batch_size"]))
        batch_known = ~np.isnan(steps)
        return cls(
            aware,
            ns=pick(known_ns),
            hardware=hardware,
            trainers=trainers,
            throughput=throughput,
            peak=peak,
            log=log,
            per_peak=log - np.log(trainers * peak),
            # the mean over rows with a batch size is mean(steps) / mean(batch_known)
            steps=np.where(batch_known, steps, 0.0),
            batch_known=batch_known.astype(float),
        )

    def take(self, rows: np.ndarray) -> _Past:
        return _Past(self.aware, **{name: getattr(self, name)[rows] for name in self.FIELDS})

    def append(self, other: _Past) -> _Past:
        aware = other.aware if len(other) else self.aware
        return _Past(
            aware,
            **{n: np.concatenate([getattr(self, n), getattr(other, n)]) for n in self.FIELDS},
        )

    def __len__(self) -> int:
        return len(self.ns)


def _read_history(
    history: pd.DataFrame, catalog: _Catalog, what: str = "the history log", outcome_known=None
) -> tuple[np.ndarray, dict[str, pd.Series], _Past]:
    """Check a history log; return its ``ok`` mask, the columns read and its completed rows.

    The completed rows are timed by when their outcome became known
    (:func:`outcome_known_time` with ``outcome_known``).
    """
    missing = [c for c in HISTORY_COLUMNS if c not in history.columns]
    if missing:
        raise SchemaError(what, [f"missing column(s): {missing}"])
    ok = _text_codes(history["status"], _OK_CODES) == 0
    problems: list[str] = []
    columns, parsed = _check_rows(history, HISTORY_COLUMNS, catalog.codes, problems, rows=ok)
    if not problems:
        try:
            known = _known_ns(history, columns, ok, outcome_known, problems)
        except SchemaError as err:
            raise SchemaError(what, err.problems) from None
    if problems:
        raise SchemaError(what, problems)
    return ok, columns, _Past.read(columns, parsed, ok, catalog, known)


def outcome_known_time(log: pd.DataFrame, *, outcome_known: str | None = None) -> pd.Series:
    """When each attempt's outcome (its throughput, or its failure) becomes known.

    A run's throughput is known once the run has ended, not when it was
    submitted: history features and nightly training windows read an attempt
    only from this time on.

    Parameters
    ----------
    log : DataFrame
        An attempt log.
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        The rule. ``"end_time"`` reads the log's ``end_time`` column (the
        simulator writes it). ``"run_hours"`` takes ``submit_time`` plus
        ``device_hours / trainer_count`` hours: the run's length when every
        trainer runs from start to end (queueing time is not counted).
        ``"submit_time"`` takes the outcome as known at submission: right
        only for logs whose runs end before anything is submitted after them,
        and a leak otherwise. By default: ``"end_time"`` when the log has
        that column, else ``"run_hours"`` when it has ``device_hours``; a log
        with neither must name its rule.

    Returns
    -------
    Series
        Timestamps, on the log's index, with the time zone of ``submit_time``.

    Raises
    ------
    ValueError
        If ``outcome_known`` is not one of :data:`OUTCOME_KNOWN_RULES`.
    SchemaError
        If the columns the rule reads are missing, or the log has neither
        ``end_time`` nor ``device_hours`` and no rule is given.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"submit_time": pd.to_datetime(["2024-01-01 00:00"]),
    ...                     "trainer_count": [8], "device_hours": [16.0]})
    >>> str(outcome_known_time(log).iloc[0])
    '2024-01-01 02:00:00'
    >>> str(outcome_known_time(log, outcome_known="submit_time").iloc[0])
    '2024-01-01 00:00:00'
    """
    _require_frame(log, "log")
    rule = _outcome_known_rule(log.columns, outcome_known)
    if rule != "run_hours":
        return log[rule]
    hours = _floats(log["device_hours"]) / _floats(log["trainer_count"])
    duration = pd.to_timedelta(hours, unit="h").to_numpy()
    return pd.Series(log["submit_time"].array + duration, index=log.index, name="outcome_known")


def _outcome_known_rule(columns, outcome_known: str | None) -> str:
    """The rule named, or the default one for a log with these columns."""
    if outcome_known is None:
        if "end_time" in columns:
            return "end_time"
        if "device_hours" in columns:
            return "run_hours"
        raise SchemaError(
            "the history log",
            [
                "no end_time or device_hours column: say when outcomes become known with "
                "outcome_known='submit_time' (runs end before the next submission) or add "
                "an end_time column"
            ],
        )
    if outcome_known not in OUTCOME_KNOWN_RULES:
        raise ValueError(
            f"outcome_known must be one of {list(OUTCOME_KNOWN_RULES)} or None, got {outcome_known!r}"
        )
    needed = {"end_time": ["end_time"], "run_hours": ["submit_time", "device_hours", "trainer_count"],
              "submit_time": ["submit_time"]}[outcome_known]
    missing = [c for c in needed if c not in columns]
    if missing:
        raise SchemaError(
            "the history log", [f"outcome_known={outcome_known!r} reads missing column(s) {missing}"]
        )
    return outcome_known


def _known_ns(
    history: pd.DataFrame, columns: dict, ok: np.ndarray, outcome_known, problems: list[str]
) -> np.ndarray | None:
    """Nanoseconds at which each row's outcome is known (None, with problems, if unreadable).

    Also keeps the times read in ``columns["outcome_known"]``.
    """
    known = outcome_known_time(history, outcome_known=outcome_known)
    if not pd.api.types.is_datetime64_any_dtype(known.dtype):
        problems.append(f"column 'end_time' has dtype {known.dtype}, expected a timestamp")
        return None
    submit = columns["submit_time"]
    if (getattr(known.dtype, "tz", None) is None) != (getattr(submit.dtype, "tz", None) is None):
        problems.append("end_time and submit_time differ in time-zone awareness")
        return None
    null = _null(known) & ok
    if null.any():
        problems.append(f"the time the outcome is known is null in {_describe_rows(null, history)}")
    ns, _ = _time_ns(known)
    early = ok & ~null & (ns < _time_ns(submit)[0])
    if early.any():
        problems.append(f"end_time is before submit_time in {_describe_rows(early, history)}")
    columns["outcome_known"] = known
    return ns


def _check_time_zones(rows: _Rows, past: _Past) -> None:
    if len(past) and len(rows) and past.aware != rows.aware:
        raise SchemaError(
            "the history log",
            ["submit_time is time-zone aware in one of attempts/history and naive in the other"],
        )


# ----------------------------------------------------------------------------
# the history statistics: as-of join, or the state a HistoryIndex keeps
# ----------------------------------------------------------------------------

#: Key columns of the history statistics.
_KEY_COLUMNS = {"job": "job_id", "model": "model_type", "family": "model_family"}

#: The five history keys: key column, whether the hardware type is part of the
#: key, the quantities averaged over the key's rows and the latest row's values read.
_LEVELS = {
    "job_same": ("job", True, ("log",), ("throughput", "ns")),
    "job_any": ("job", False, ("log",), ("throughput", "ns", "trainers", "peak", "hardware")),
    "model_same": ("model", True, ("per_peak", "steps", "batch_known"), ()),
    "model_any": ("model", False, ("per_peak",), ()),
    "family_same": ("family", True, ("per_peak",), ()),
}


class _KeyStats(NamedTuple):
    """What the earlier completed rows of one key give each row described."""

    #: how many rows
    count: np.ndarray
    #: mean of each quantity over them (NaN where there is none)
    means: dict[str, np.ndarray]
    #: the latest row's values (NaN where there is none; hardware code -1)
    last: dict[str, np.ndarray]


def _running_sums(values: np.ndarray, sorted_key: np.ndarray) -> np.ndarray:
    """Per-key running sums of rows sorted by key (each key's sums read its rows alone).

    Both the as-of join and :class:`HistoryIndex` sum through here, so that
    their means agree to the bit (pandas compensates the rounding of its sums).
    """
    return pd.Series(values).groupby(sorted_key, sort=False).cumsum().to_numpy(dtype=float)


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
    Keys are >= 0.
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
        running = _running_sums(array[order], sorted_key)
        means[name] = np.where(found, running[last_sorted] / np.maximum(count, 1), np.nan)
    return count, last, means


def _take(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``array[index]`` as floats, NaN where ``index`` is -1."""
    if len(array) == 0:
        return np.full(len(index), np.nan)
    return np.where(index >= 0, array[np.maximum(index, 0)].astype(float), np.nan)


def _level_keys(codes: dict[str, np.ndarray], hardware: np.ndarray, n_types: int):
    """The composite key of each level: the key's code, times the hardware types where it counts.

    A negative code (a value absent from the history) stays negative.
    """
    keys = {}
    for level, (key, same_hardware, _, _) in _LEVELS.items():
        code = codes[key]
        keys[level] = np.where(code >= 0, code * n_types + hardware, -1) if same_hardware else code
    return keys


def _joined(
    query_keys: dict[str, np.ndarray],
    query_ns: np.ndarray,
    past_keys: dict[str, np.ndarray],
    past: _Past,
) -> dict[str, _KeyStats]:
    """The history statistics of every level by the as-of join (keys >= 0)."""
    # one time axis for both sides: ranks compare exactly like the timestamps
    times = np.sort(np.concatenate([query_ns, past.ns]))
    times = times[np.concatenate([[True], times[1:] != times[:-1]])] if len(times) else times
    query_rank = np.searchsorted(times, query_ns)
    history_rank = np.searchsorted(times, past.ns)
    stats = {}
    for level, (_, _, averaged, latest) in _LEVELS.items():
        count, last, means = _as_of(
            past_keys[level],
            history_rank,
            query_keys[level],
            query_rank,
            {name: getattr(past, name) for name in averaged},
        )
        values = {}
        for name in latest:
            if name == "hardware":
                picked = past.hardware[np.maximum(last, 0)] if len(past) else -1
                values[name] = np.where(last >= 0, picked, -1)
            else:
                values[name] = _take(getattr(past, name), last)
        stats[level] = _KeyStats(count, means, values)
    return stats


def _level_state(key: np.ndarray, past: _Past, averaged, latest) -> dict:
    """Each key's statistics over all its rows: what a row submitted after them all reads.

    ``key`` holds the keys, sorted; every other array has one entry more, last:
    what a key absent from the log reads (no row: count 0, NaN, hardware -1),
    so that lookups need no masking. The rows of a key are summed in the order
    the as-of join sums them (time, then history order): the means agree to the bit.
    """
    if len(key):
        order = np.lexsort((past.ns, key))
        sorted_key = key[order]
        ends = np.flatnonzero(np.append(sorted_key[1:] != sorted_key[:-1], True))
    else:
        order = sorted_key = ends = np.zeros(0, dtype=np.int64)
    last = order[ends]
    sums = {
        name: np.append(_running_sums(getattr(past, name)[order], sorted_key)[ends], np.nan)
        for name in averaged
    }
    values = {
        name: np.append(past.hardware[last], -1)
        if name == "hardware"
        else np.append(getattr(past, name)[last].astype(float), np.nan)
        for name in latest
    }
    count = np.append(np.diff(ends, prepend=-1), 0).astype(np.int64)
    return {"key": sorted_key[ends], "count": count, "sum": sums, "last": values}


def _looked_up(state: dict, key: np.ndarray) -> _KeyStats:
    """The statistics of a :func:`_level_state` for rows submitted after every history row."""
    keys = state["key"]
    position = np.searchsorted(keys, key)
    if len(keys):
        found = keys[np.minimum(position, len(keys) - 1)] == key
        position = np.where(found, position, len(keys))
    count = state["count"][position]
    means = {name: sums[position] / np.maximum(count, 1) for name, sums in state["sum"].items()}
    last = {name: values[position] for name, values in state["last"].items()}
    return _KeyStats(count, means, last)


# ----------------------------------------------------------------------------
# the features, from the rows and their history statistics
# ----------------------------------------------------------------------------


def _assemble(rows: _Rows, catalog: _Catalog, stats: dict[str, _KeyStats]) -> pd.DataFrame:
    """The feature matrix: launch, hardware and derived columns, then the history's."""
    return _frame(_feature_columns(rows, catalog, stats), _FEATURE_INDEX, rows.index)


def _feature_columns(rows: _Rows, catalog: _Catalog, stats: dict[str, _KeyStats]) -> list:
    """The columns of the feature matrix, in the order of :func:`feature_names`."""
    text = rows.text
    hardware_code, precision_code = rows.hardware, rows.precision
    peak_code = np.minimum(precision_code, _OTHER_PRECISION)
    trainers, batch, seq_len, query_ns = rows.trainers, rows.batch, rows.seq_len, rows.ns
    out: dict[str, object] = {
        "model_type": _as_category(text["model_type"]),
        "model_family": _as_category(text["model_family"]),
        "precision": _categorical(precision_code, rows.precision_dtype),
        "parallelism": _as_category(text["parallelism"]),
        "hardware_type": _categorical(hardware_code, catalog.dtype),
        "vendor": _categorical(catalog.vendor_code[hardware_code], catalog.vendor_dtype),
        "trainer_count": rows.trainer_count,
        "batch_size": rows.batch_size,
        "seq_len": seq_len,
    }

    # -- hardware specs at the job's precision -------------------------------
    peak = catalog.peak[hardware_code, peak_code]
    specs = {name: values[hardware_code] for name, values in catalog.specs.items()}
    out["peak_tflops"] = peak
    out["precision_native"] = catalog.native[hardware_code, peak_code].astype(np.int64)
    out.update(specs)
    per_host = specs["devices_per_host"]
    out["devices_per_host"] = _whole(per_host)
    out["hardware_age_days"] = (query_ns - catalog.introduced_ns[hardware_code]) / _DAY_NS

    # -- derived quantities --------------------------------------------------
    crosses = trainers > per_host
    out["global_batch_size"] = trainers * batch
    out["hosts_used"] = _whole(np.ceil(trainers / per_host))
    # unknown where the catalog does not know the type's devices per host
    out["crosses_hosts"] = _whole(np.where(np.isnan(per_host), np.nan, crosses))
    out["communication_bw_gbps"] = np.where(
        crosses, specs["inter_node_bw_gbps"], specs["intra_node_bw_gbps"]
    )
    out["total_peak_tflops"] = peak * trainers
    out["total_memory_bw_gbps"] = specs["memory_bw_gbps"] * trainers
    out["total_memory_gb"] = specs["memory_gb"] * trainers
    out["batch_tokens_per_memory_gb"] = (
        batch * np.where(np.isnan(seq_len), 1.0, seq_len) / (specs["memory_gb"])
    )

    # -- this job's history --------------------------------------------------
    same = stats["job_same"]
    out["job_runs_same_hardware"] = same.count
    out["job_last_throughput_same_hardware"] = same.last["throughput"]
    out["job_mean_log_throughput_same_hardware"] = job_same_log = same.means["log"]
    out["job_days_since_last_run_same_hardware"] = (query_ns - same.last["ns"]) / _DAY_NS

    anywhere = stats["job_any"]
    last_throughput = anywhere.last["throughput"]
    last_per_trainer = last_throughput / anywhere.last["trainers"]
    last_peak = anywhere.last["peak"]
    last_hardware = anywhere.last["hardware"]
    out["job_runs_any_hardware"] = anywhere.count
    out["job_last_throughput_any_hardware"] = last_throughput
    out["job_last_throughput_per_trainer_any_hardware"] = last_per_trainer
    out["job_mean_log_throughput_any_hardware"] = anywhere.means["log"]
    out["job_days_since_last_run_any_hardware"] = (query_ns - anywhere.last["ns"]) / _DAY_NS
    out["job_last_hardware_type"] = _categorical(last_hardware, catalog.dtype)
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
    model = stats["model_same"]
    out["model_type_runs_same_hardware"] = model.count
    out["model_type_mean_log_samples_per_peak_tflop_same_hardware"] = model.means["per_peak"]
    with np.errstate(invalid="ignore"):  # 0 / 0: no earlier row with a batch size
        steps = model.means["steps"] / model.means["batch_known"]
    out["model_type_mean_log_steps_per_second_same_hardware"] = steps
    out["model_type_log_throughput_estimate_same_hardware"] = model_same = (
        model.means["per_peak"] + log_total_peak
    )
    model = stats["model_any"]
    out["model_type_runs_any_hardware"] = model.count
    out["model_type_mean_log_samples_per_peak_tflop_any_hardware"] = model.means["per_peak"]
    out["model_type_log_throughput_estimate_any_hardware"] = model_any = (
        model.means["per_peak"] + log_total_peak
    )
    family = stats["family_same"]
    out["model_family_runs_same_hardware"] = family.count
    out["model_family_mean_log_samples_per_peak_tflop_same_hardware"] = family.means["per_peak"]

    # -- one estimate from the most telling history available ----------------
    # the model type on this very hardware goes before the job's run elsewhere:
    # scaling by peak FLOP/s alone misses memory- and network-bound jobs
    estimate = np.full(len(rows), np.nan)
    source = np.zeros(len(rows), dtype=np.int64)
    candidates = (job_same_log, model_same, np.log(job_scaled), model_any)
    for level, candidate in enumerate(candidates, start=1):
        use = np.isnan(estimate) & ~np.isnan(candidate)
        estimate[use] = candidate[use]
        source[use] = level
    out["history_log_throughput_estimate"] = estimate
    out["history_estimate_source"] = source

    return [out[name] for name in _FEATURE_NAMES]


def _whole(values: np.ndarray) -> np.ndarray:
    """Whole numbers as integers; as floats when some are unknown (NaN)."""
    return values if np.isnan(values).any() else values.astype(np.int64)


def _categorical(codes: np.ndarray, dtype: pd.CategoricalDtype) -> pd.Categorical:
    """A categorical of codes checked already (-1 or a category's position)."""
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


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
        instance the history of a job never run before).

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
    _require_frame(attempts, "attempts")
    _require_frame(hardware, "hardware")
    same = history is None or history is attempts
    history = attempts if history is None else history
    _require_frame(history, "history")
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
        _level_keys(query_codes, rows.hardware, n_types),
        rows.ns,
        _level_keys(past_codes, past.hardware, n_types),
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
    _require_frame(jobs, "jobs")
    _check_job_columns(jobs)
    names = _candidate_names(hardware_types)
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


def _candidate_names(hardware_types) -> list[str]:
    """The candidate hardware types as text: a list, a single name or a catalog."""
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
        times = pd.Series(pd.Timestamp(at), index=jobs.index)
    else:
        values = at.to_numpy() if isinstance(at, pd.Series | pd.Index) else at
        times = pd.Series(
            pd.to_datetime(values), index=jobs.index if len(values) == n_jobs else None
        )
        if len(times) != n_jobs:
            raise ValueError(f"at has {len(times)} timestamps for {n_jobs} jobs; give one per job")
    null = _null(times)
    if null.any():
        raise ValueError(f"the submission time is null for {int(null.sum())} job(s)")
    return times


# Candidates come again and again with the same types and columns: build those once.
@lru_cache(maxsize=64)
def _type_dtype(names: tuple[str, ...]) -> pd.CategoricalDtype:
    return pd.CategoricalDtype(list(names))


class HistoryIndex:
    """The history features of an attempt log, kept ready for scoring new submissions.

    :func:`build_features` with ``history=log`` re-reads the whole log at every
    call. A ``HistoryIndex`` reads it once (say, every night) and keeps, for
    each of the five keys the history features group by (the job on a hardware
    type, the job, the model type on a hardware type, the model type, the
    model family on a hardware type), the count of completed attempts, the
    sums behind the mean features and the latest attempt's values. Rows
    submitted after the latest outcome of the log became known (:attr:`end`:
    the outcome of a run counts from when it ended) are then described by
    looking their keys up, in time independent of the log's length.

    :meth:`features` returns exactly what ``build_features(attempts, hardware,
    history=log)`` returns, bit for bit, for any rows: rows submitted at or
    before :attr:`end` are described by the same as-of join over the
    completed attempts the index keeps. :meth:`update` folds newly finished
    attempts in.

    Parameters
    ----------
    history : DataFrame
        The attempt log, with the columns of :data:`HISTORY_COLUMNS`, checked
        as :func:`build_features` checks its ``history`` (only its completed
        rows are kept).
    hardware : DataFrame
        The hardware catalog; rows to describe must use its types.
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an attempt's outcome becomes known, as for :func:`build_features`;
        :meth:`update` reads new attempts by the same rule.

    Attributes
    ----------
    end : Timestamp or None
        The latest time an outcome of a completed (``ok``) attempt of the log
        became known (None when there is none): rows submitted strictly after
        it are answered from the kept statistics.
    last_submit : Timestamp or None
        The latest ``submit_time`` of any attempt of the log, whatever its
        status (None when there is none).

    Raises
    ------
    TypeError
        If ``history`` or ``hardware`` is not a DataFrame.
    SchemaError
        With the problems :func:`build_features` names for the same log and
        catalog.

    Notes
    -----
    The index pickles (plain attributes) and :meth:`features` changes
    nothing in it, so several threads may score with one index at once;
    :meth:`update` must not run while they do.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml.features import HistoryIndex, build_features, candidate_rows
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
    >>> rows = candidate_rows(fleet.jobs.head(2), fleet.hardware,
    ...                       at=index.end + pd.Timedelta(minutes=5))
    >>> X = index.features(rows)
    >>> X.equals(build_features(rows, fleet.hardware, history=fleet.attempts))
    True
    """

    def __init__(self, history: pd.DataFrame, hardware: pd.DataFrame, *, outcome_known: str | None = None):
        _require_frame(history, "history")
        _require_frame(hardware, "hardware")
        validate_hardware(hardware)
        self._catalog = _Catalog(hardware)
        self._outcome_known = outcome_known
        ok, columns, past = _read_history(history, self._catalog, outcome_known=outcome_known)
        self._past = past
        self._values: dict[str, dict] = {}
        self._codes: dict[str, np.ndarray] = {}
        unit = history[_UNIT_COLUMN].array if _UNIT_COLUMN in history.columns else None
        for key, name in _KEY_COLUMNS.items():
            codes, uniques = pd.factorize(_key_values(_keyed(columns[name], unit))[ok])
            uniques = np.asarray(uniques, dtype=object).tolist()
            self._values[key] = dict(zip(uniques, range(len(uniques)), strict=True))
            self._codes[key] = codes.astype(np.int64)
        keys = _level_keys(self._codes, past.hardware, len(self._catalog.types))
        self._state = {
            level: _level_state(keys[level], past, averaged, latest)
            for level, (_, _, averaged, latest) in _LEVELS.items()
        }
        self._aware = getattr(columns["submit_time"].dtype, "tz", None) is not None
        self.end = None
        self.last_submit = None
        self._advance(columns, ok)

    def __repr__(self) -> str:
        return f"HistoryIndex({len(self._past):,} completed attempts, end={self.end})"

    def _advance(self, columns: dict, ok: np.ndarray) -> None:
        """Move :attr:`end` and :attr:`last_submit` to the latest of the log's times read."""
        known, submitted = columns["outcome_known"].array, columns["submit_time"].array
        for name, latest in (("end", known[ok].max()), ("last_submit", submitted.max())):
            if not pd.isna(latest):
                current = getattr(self, name)
                setattr(self, name, latest if current is None else max(current, latest))
        self._end_ns = int(self._past.ns.max()) if len(self._past) else np.iinfo(np.int64).min

    def features(self, attempts: pd.DataFrame) -> pd.DataFrame:
        """Build the feature matrix of ``attempts`` against the indexed log.

        Parameters
        ----------
        attempts : DataFrame
            The rows to describe, as for :func:`build_features` (usually
            :func:`candidate_rows`).

        Returns
        -------
        DataFrame
            Equal, to the bit, to ``build_features(attempts, hardware,
            history=log)`` with the log and catalog of the index (after its
            updates).

        Raises
        ------
        TypeError
            If ``attempts`` is not a DataFrame.
        SchemaError
            As :func:`build_features` raises it: missing columns, nulls,
            empty precisions, unknown hardware types, non-positive counts, or a
            ``submit_time`` time-zone aware where the log's is naive (or the
            reverse).

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
        >>> rows = candidate_rows(fleet.jobs.head(1), ["H100-80GB-SXM5", "MI300X-192GB"],
        ...                       at=index.end + pd.Timedelta(hours=1))
        >>> X = index.features(rows)
        >>> X[["hardware_type", "job_runs_any_hardware"]].shape
        (2, 2)
        """
        _require_frame(attempts, "attempts")
        rows = _Rows(attempts, self._catalog)
        return _frame(self._columns(rows), _FEATURE_INDEX, rows.index)

    def _candidate_columns(self, jobs: pd.DataFrame, hardware_types, at) -> tuple[list, list] | None:
        """The feature columns of ``candidate_rows(jobs, hardware_types, at=at)``, without its frames.

        Returns the candidate types' names and the columns (in the order of
        :func:`feature_names`), equal to those of :meth:`features`; or None
        where a check fails or a job's time is not after :attr:`end`, for
        the frame path to answer (and raise its own errors). Scoring one
        submission spends more on building frames than on reading the index.
        """
        if not isinstance(jobs, pd.DataFrame) or any(c not in jobs.columns for c in _JOB_COLUMNS):
            return None
        names = _candidate_names(hardware_types)
        rows = _Rows.candidates(jobs, names, _submission_times(jobs, at), self._catalog)
        if rows is None or not (rows.ns > self._end_ns).all():
            return None
        return names, self._columns(rows)

    def _columns(self, rows: _Rows) -> list:
        """The feature columns of checked rows."""
        catalog, past = self._catalog, self._past
        _check_time_zones(rows, past)
        n_types = len(catalog.types)
        codes = {
            key: _value_codes(_key_values(_keyed(rows.text[name], rows.unit)), self._values[key])
            for key, name in _KEY_COLUMNS.items()
        }
        late = rows.ns > self._end_ns
        if late.all():
            keys = _level_keys(codes, rows.hardware, n_types)
            stats = {level: _looked_up(self._state[level], keys[level]) for level in _LEVELS}
            return _feature_columns(rows, catalog, stats)
        # rows at or before the end: the as-of join over the completed rows kept,
        # with a code no kept row has for values the log lacks
        early = ~late
        joined = _joined(
            _level_keys(
                {
                    k: np.where(c[early] >= 0, c[early], len(self._values[k]))
                    for k, c in codes.items()
                },
                rows.hardware[early],
                n_types,
            ),
            rows.ns[early],
            _level_keys(self._codes, past.hardware, n_types),
            past,
        )
        keys = _level_keys({k: c[late] for k, c in codes.items()}, rows.hardware[late], n_types)
        stats = {
            level: _interleaved(late, _looked_up(self._state[level], keys[level]), joined[level])
            for level in _LEVELS
        }
        return _feature_columns(rows, catalog, stats)

    def update(self, new_attempts: pd.DataFrame) -> HistoryIndex:
        """Fold newly finished attempts into the index.

        Afterwards the index describes every row as a fresh
        ``HistoryIndex(pd.concat([log, new_attempts]), hardware)`` would. Only
        the keys the new completed attempts touch are recomputed.

        Parameters
        ----------
        new_attempts : DataFrame
            Attempts of any status (only ``ok`` ones are kept), checked as the
            log is; they may be older than :attr:`end`.

        Returns
        -------
        HistoryIndex
            ``self``.

        Raises
        ------
        TypeError
            If ``new_attempts`` is not a DataFrame.
        SchemaError
            With the problems found in ``new_attempts``, or if their
            ``submit_time`` is time-zone aware where the log's is naive (or
            the reverse).

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> log = fleet.attempts
        >>> index = HistoryIndex(log.iloc[:-50], fleet.hardware).update(log.iloc[-50:])
        >>> index.end == HistoryIndex(log, fleet.hardware).end
        True
        """
        _require_frame(new_attempts, "new_attempts")
        catalog = self._catalog
        ok, columns, new = _read_history(
            new_attempts, catalog, "the new attempts", outcome_known=self._outcome_known
        )
        aware = getattr(columns["submit_time"].dtype, "tz", None) is not None
        if (
            aware != self._aware
            and self.last_submit is not None
            and columns["submit_time"].notna().any()
        ):
            raise SchemaError(
                "the new attempts",
                [
                    "submit_time is time-zone aware in one of the log and the new attempts "
                    "and naive in the other"
                ],
            )
        if self.last_submit is None:
            self._aware = aware
        if len(new):
            unit = new_attempts[_UNIT_COLUMN].array if _UNIT_COLUMN in new_attempts.columns else None
            self._fold(
                new,
                {
                    key: _key_values(_keyed(columns[name], unit))[ok]
                    for key, name in _KEY_COLUMNS.items()
                },
            )
        self._advance(columns, ok)
        return self

    def _fold(self, new: _Past, key_values: dict) -> None:
        """Append completed rows and recompute the statistics of the keys they touch."""
        values, new_codes = {}, {}
        for key, found_in in key_values.items():
            table = self._values[key]
            codes = _value_codes(found_in, table)
            unseen = codes < 0
            if unseen.any():
                # values the log lacks get the next codes, in order of appearance
                extra, uniques = pd.factorize(np.asarray(found_in[unseen], dtype=object))
                uniques = np.asarray(uniques, dtype=object).tolist()
                table = {
                    **table,
                    **dict(zip(uniques, range(len(table), len(table) + len(uniques)), strict=True)),
                }
                codes[unseen] = extra + len(self._values[key])
            values[key], new_codes[key] = table, codes
        past = self._past.append(new)
        codes = {key: np.concatenate([self._codes[key], new_codes[key]]) for key in new_codes}
        n_types = len(self._catalog.types)
        keys = _level_keys(codes, past.hardware, n_types)
        touched_keys = _level_keys(new_codes, new.hardware, n_types)
        state = {}
        for level, (_, _, averaged, latest) in _LEVELS.items():
            touched = np.unique(touched_keys[level])
            rows = np.flatnonzero(np.isin(keys[level], touched))
            fresh = _level_state(keys[level][rows], past.take(rows), averaged, latest)
            state[level] = _merged(
                self._state[level], ~np.isin(self._state[level]["key"], touched), fresh
            )
        self._past, self._codes, self._values, self._state = past, codes, values, state


def _key_values(values):
    """A key column's values (a Series or its array), to match by value: its Categorical, or objects."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        return values
    return values.to_numpy(dtype=object)


def _interleaved(first: np.ndarray, a: _KeyStats, b: _KeyStats) -> _KeyStats:
    """Statistics for all rows from those of the rows where ``first`` holds (``a``) and the others."""

    def put(x, y):
        out = np.empty(len(first), dtype=np.result_type(x, y))
        out[first], out[~first] = x, y
        return out

    return _KeyStats(
        put(a.count, b.count),
        {name: put(a.means[name], b.means[name]) for name in a.means},
        {name: put(a.last[name], b.last[name]) for name in a.last},
    )


def _merged(old: dict, keep: np.ndarray, fresh: dict) -> dict:
    """A level state: the kept entries of ``old`` and all of ``fresh``, sorted by key."""
    key = np.concatenate([old["key"][keep], fresh["key"]])
    order = np.argsort(key, kind="stable")

    def join(a, b):
        # each side without its entry for absent keys, then one such entry again
        return np.append(np.concatenate([a[:-1][keep], b[:-1]])[order], a[-1:])

    return {
        "key": key[order],
        "count": join(old["count"], fresh["count"]),
        "sum": {name: join(old["sum"][name], fresh["sum"][name]) for name in old["sum"]},
        "last": {name: join(old["last"][name], fresh["last"][name]) for name in old["last"]},
    }
