"""The rows to describe, the hardware catalog and the completed history, as checked arrays.

Also when an attempt's outcome becomes known (:func:`outcome_known_time`): history
is read only from then on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from leapml._frames import some_values
from leapml.features.inputs import _OTHER_PRECISION, _config_codes, _time_ns, _whole
from leapml.features.names import (
    _JOB_COLUMNS,
    _SPEC_COLUMNS,
    _TEXT_COLUMNS,
    _UNIT_COLUMN,
    HISTORY_COLUMNS,
    OTHER_PRECISION_FALLBACK,
    OUTCOME_KNOWN_RULES,
    PRECISION_FALLBACK,
    QUERY_COLUMNS,
)
from leapml.schema import (
    PRECISIONS,
    RowsSchemaError,
    SchemaError,
)
from leapml.schema.rules import (
    absent_from_catalog,
    check_ends_after_submission,
    check_model_sizes,
    check_rows,
    check_status,
    check_time_zones,
    describe_rows,
    floats,
    hardware_codes,
    null_mask,
    ok_rows,
    require_frame,
)


class _Catalog:
    """The hardware catalog as arrays indexed by hardware-type code."""

    def __init__(self, hardware: pd.DataFrame):
        self.codes = hardware_codes(hardware)
        # categories of Python strings: scoring reads them back as a list on every call,
        # several times cheaper than from pandas' Arrow-backed text
        self.types = pd.Index([str(t) for t in hardware["hardware_type"].to_numpy(dtype=object)],
                              dtype=object)
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
        self.vendor_dtype = pd.CategoricalDtype(pd.Index(vendor_categories, dtype=object))
        self.vendor_code = pd.Index(vendor_categories).get_indexer([str(v) for v in vendors])
        self.introduced_ns = _time_ns(hardware["introduced"])[0]


class _Rows:
    """The rows to describe: checked, with the arrays the features are computed from."""

    def __init__(self, attempts: pd.DataFrame, catalog: _Catalog):
        problems: list[str] = []
        columns, parsed = check_rows(
            attempts, QUERY_COLUMNS, hardware_codes=catalog.codes, problems=problems,
            text_columns=_TEXT_COLUMNS,
        )
        #: the optional model-size columns (NaN where unknown)
        self.sizes = check_model_sizes(attempts, problems)
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
        self.config = _config_codes(self.trainers, self.batch, self.seq_len, self.precision,
                                    self.precision_dtype, self.text["parallelism"],
                                    self.text["model_type"])
        self.unit = attempts[_UNIT_COLUMN].array if _UNIT_COLUMN in attempts.columns else None

    @classmethod
    def candidates(
        cls, jobs: pd.DataFrame, names: list[str], times: pd.Series, catalog: _Catalog
    ) -> _Rows:
        """The rows :func:`candidate_rows` would build, checked, without building its frame.

        Raises SchemaError naming every problem of the jobs (by their own
        index) and the candidate types absent from the catalog.
        """
        problems: list[str] = []
        columns, parsed = check_rows(
            jobs, _JOB_COLUMNS, hardware_codes=catalog.codes, problems=problems,
            text_columns=_TEXT_COLUMNS,
        )
        sizes = check_model_sizes(jobs, problems)
        hardware = [catalog.codes.get(name, -1) for name in names]
        unknown = [name for name, code in zip(names, hardware, strict=True) if code < 0]
        if unknown:
            problems.append(absent_from_catalog(unknown, catalog_names=catalog.codes))
        if problems:
            raise RowsSchemaError("the jobs to score", problems)
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
        rows.sizes = {name: values[repeat] for name, values in sizes.items()}
        rows.config = _config_codes(parsed["trainer_count"], parsed["batch_size"], parsed["seq_len"],
                                    parsed["precision"], parsed["precision_dtype"],
                                    columns["parallelism"].array, columns["model_type"].array)[repeat]
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
    #: 0 where the batch size is unknown; ``batch_known``: 1 where it is known, else 0;
    #: ``config``: the code of the launch configuration, :func:`_config_codes`)
    FIELDS = (
        "ns", "hardware", "trainers", "throughput", "peak", "log", "per_peak", "steps", "batch_known",
        "config",
    )

    def __init__(self, aware: bool, **arrays: np.ndarray):
        self.aware = aware
        for name in self.FIELDS:
            setattr(self, name, arrays[name])

    @classmethod
    def read(cls, columns, parsed, ok: np.ndarray, catalog: _Catalog, known_ns: np.ndarray) -> _Past:
        """The ``ok`` rows of a checked history log (what :func:`~leapml.schema.rules.check_rows` returned)."""
        every = ok.all()

        def pick(values):
            return values if every else values[ok]

        aware = columns["submit_time"].dt.tz is not None
        hardware = pick(parsed["hardware_type"])
        trainers = pick(parsed["trainer_count"])
        throughput = pick(parsed["throughput"])
        peak = catalog.peak[hardware, np.minimum(pick(parsed["precision"]), _OTHER_PRECISION)]
        log = np.log(throughput)
        steps = log - np.log(trainers) - np.log(pick(parsed["batch_size"]))  # in logs: no overflow
        batch_known = ~np.isnan(steps)
        config = _config_codes(trainers, pick(parsed["batch_size"]), pick(parsed["seq_len"]),
                               pick(parsed["precision"]), parsed["precision_dtype"],
                               pick(columns["parallelism"].array), pick(columns["model_type"].array))
        return cls(
            aware,
            ns=pick(known_ns),
            hardware=hardware,
            trainers=trainers,
            throughput=throughput,
            peak=peak,
            log=log,
            per_peak=log - np.log(trainers) - np.log(peak),
            # the mean over rows with a batch size is mean(steps) / mean(batch_known)
            steps=np.where(batch_known, steps, 0.0),
            batch_known=batch_known.astype(float),
            config=config,
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
    ok = ok_rows(history["status"])
    problems: list[str] = []
    check_status(history["status"], history, problems)
    columns, parsed = check_rows(
        history, HISTORY_COLUMNS, hardware_codes=catalog.codes, problems=problems, rows=ok,
        text_columns=_TEXT_COLUMNS,
    )
    ids = attempt_ids(history)
    if ids is not None and not ids.is_unique:
        # an attempt given twice would be counted twice
        given = history["attempt_id"]
        dup = (given.duplicated(keep=False) & given.notna()).to_numpy()
        problems.append(f"duplicate attempt_id {some_values(ids[ids.duplicated()].unique())} "
                        f"in {describe_rows(dup, history)}")
    if not problems:
        try:
            known = _known_ns(history, columns, ok, outcome_known, problems)
        except SchemaError as err:
            raise SchemaError(what, err.problems) from None
    if problems:
        raise SchemaError(what, problems)
    return ok, columns, _Past.read(columns, parsed, ok, catalog, known)


def attempt_ids(log: pd.DataFrame) -> pd.Index | None:
    """The non-null ``attempt_id`` values of ``log``, or None when it has no such column."""
    if "attempt_id" not in log.columns:
        return None
    ids = log["attempt_id"]
    return pd.Index(ids[ids.notna()].array)


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
    require_frame(log, "log")
    rule = _outcome_known_rule(log.columns, outcome_known)
    if rule != "run_hours":
        return log[rule]
    hours = floats(log["device_hours"]) / floats(log["trainer_count"])
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
    if not check_time_zones(known, submit, problems):
        return None
    null = null_mask(known) & ok
    if null.any():
        problems.append(f"the time the outcome is known is null in {describe_rows(null, history)}")
    ns, _ = _time_ns(known)
    check_ends_after_submission(ok & ~null & (ns < _time_ns(submit)[0]), history, problems)
    columns["outcome_known"] = known
    return ns


def _check_time_zones(rows: _Rows, past: _Past) -> None:
    if len(past) and len(rows) and past.aware != rows.aware:
        which = ("aware in the rows to describe (their submit_time, or at=) and naive in the "
                 "history" if rows.aware else
                 "naive in the rows to describe (their submit_time, or at=) and aware in the history")
        raise SchemaError("the history log", [f"submit_time is time-zone {which}: give both a time "
                                              "zone or neither"])
