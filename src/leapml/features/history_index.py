"""``HistoryIndex``: the history features of a log, kept ready for scoring new submissions."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from leapml._frames import some_values
from leapml.features.as_of import (
    _KEY_COLUMNS,
    _LEVELS,
    _interleaved,
    _joined,
    _level_keys,
    _level_state,
    _looked_up,
    _merged,
)
from leapml.features.build import (
    _check_job_columns,
    _submission_times,
    hardware_type_names,
)
from leapml.features.columns import FeatureColumns, _feature_columns
from leapml.features.inputs import _keyed, _value_codes
from leapml.features.names import (
    _UNIT_COLUMN,
)
from leapml.features.peaks import PeakLog
from leapml.features.rows import (
    _Catalog,
    _check_time_zones,
    _Past,
    _read_history,
    _Rows,
    attempt_ids,
)
from leapml.features.sizes import ModelSizes
from leapml.schema import (
    SchemaError,
    validate_hardware,
)
from leapml.schema.rules import require_frame


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
    peaks : PeakLog
        The completed attempts' ``peak_memory_gb`` (where the log has the
        column), for the feasibility model's :data:`MEASURED_PEAK`.

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
        require_frame(history, "history")
        require_frame(hardware, "hardware")
        validate_hardware(hardware)
        self._catalog = _Catalog(hardware)
        #: the catalog the index was built with (its features read it, not one given later)
        self.hardware = hardware
        self._outcome_known = outcome_known
        self._devices = hardware[[c for c in ("hardware_type", "devices_per_host")
                                  if c in hardware.columns]].copy()
        ok, columns, past = _read_history(history, self._catalog, outcome_known=outcome_known)
        self._past = past
        self._attempt_ids = attempt_ids(history)  # None: the log has no attempt_id column
        self._values: dict[str, dict] = {}
        self._codes: dict[str, np.ndarray] = {}
        unit = history[_UNIT_COLUMN].array if _UNIT_COLUMN in history.columns else None
        for key, name in _KEY_COLUMNS.items():
            codes, uniques = pd.factorize(_key_values(_keyed(columns[name], unit))[ok])
            uniques = np.asarray(uniques, dtype=object).tolist()
            self._values[key] = dict(zip(uniques, range(len(uniques)), strict=True))
            self._codes[key] = codes.astype(np.int64)
        keys = _level_keys(self._codes, past.hardware, past.config, len(self._catalog.types))
        self._state = {
            level: _level_state(keys[level], past, averaged, latest)
            for level, (_, _, averaged, latest) in _LEVELS.items()
        }
        self._aware = columns["submit_time"].dt.tz is not None
        self.end = None
        self.last_submit = None
        self._advance(columns, ok)
        self.peaks = PeakLog.of(history, self._devices, outcome_known=outcome_known)
        #: the model sizes the log records, for jobs submitted without theirs
        self.model_sizes = ModelSizes.of(history)

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
        >>> from leapml.features import candidate_rows
        >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
        >>> rows = candidate_rows(fleet.jobs.head(1), ["H100-80GB-SXM5", "MI300X-192GB"],
        ...                       at=index.end + pd.Timedelta(hours=1))
        >>> X = index.features(rows)
        >>> X[["hardware_type", "job_runs_any_hardware"]].shape
        (2, 2)
        """
        require_frame(attempts, "attempts")
        rows = _Rows(attempts, self._catalog)
        return FeatureColumns(self._columns(rows), rows.index).to_frame()

    def candidate_features(self, jobs: pd.DataFrame, hardware_types, *, at=None) -> FeatureColumns:
        """The features of every candidate of ``jobs``, as named columns.

        Equal, column by column, to ``self.features(candidate_rows(jobs,
        hardware_types, at=at))``, without building the candidate rows' frame
        or the feature frame: scoring one submission spends more on frames
        than on reading the index.

        Parameters
        ----------
        jobs, hardware_types, at
            As for :func:`candidate_rows`.

        Returns
        -------
        FeatureColumns
            ``len(jobs) * len(hardware_types)`` rows, job by job, each job's
            candidates in the order of ``hardware_types``;
            :meth:`FeatureColumns.to_frame` gives the feature frame.

        Raises
        ------
        TypeError
            If ``jobs`` is not a DataFrame.
        SchemaError
            Naming every problem of ``jobs`` (rows by its own index), the
            candidate types absent from the catalog, or a time zone that
            differs from the log's.
        ValueError
            As :func:`candidate_rows` raises it for ``hardware_types`` and ``at``.

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> from leapml.features import candidate_rows
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
        >>> types, at = ["H100-80GB-SXM5", "MI300X-192GB"], index.end + pd.Timedelta(hours=1)
        >>> columns = index.candidate_features(fleet.jobs.head(2), types, at=at)
        >>> columns.to_frame().equals(index.features(candidate_rows(fleet.jobs.head(2), types, at=at)))
        True
        """
        require_frame(jobs, "jobs")
        _check_job_columns(jobs)
        names = hardware_type_names(hardware_types)
        rows = _Rows.candidates(jobs, names, _submission_times(jobs, at), self._catalog)
        return FeatureColumns(self._columns(rows), rows.index)

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
            keys = _level_keys(codes, rows.hardware, rows.config, n_types)
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
                rows.config[early],
                n_types,
            ),
            rows.ns[early],
            _level_keys(self._codes, past.hardware, past.config, n_types),
            past,
        )
        keys = _level_keys({k: c[late] for k, c in codes.items()}, rows.hardware[late],
                           rows.config[late], n_types)
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
            log is; they may be older than :attr:`end`, but none may be in the
            index already (by ``attempt_id``, where both have the column).

        Returns
        -------
        HistoryIndex
            ``self``.

        Raises
        ------
        TypeError
            If ``new_attempts`` is not a DataFrame.
        SchemaError
            With the problems found in ``new_attempts`` (a duplicate
            ``attempt_id`` among them), if some are in the index already, or
            if their ``submit_time`` is time-zone aware where the log's is
            naive (or the reverse).

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> log = fleet.attempts
        >>> index = HistoryIndex(log.iloc[:-50], fleet.hardware).update(log.iloc[-50:])
        >>> index.end == HistoryIndex(log, fleet.hardware).end
        True
        """
        require_frame(new_attempts, "new_attempts")
        catalog = self._catalog
        ok, columns, new = _read_history(
            new_attempts, catalog, "the new attempts", outcome_known=self._outcome_known
        )
        aware = columns["submit_time"].dt.tz is not None
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
        ids = self._new_ids(new_attempts)
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
        self.model_sizes = self.model_sizes.updated(new_attempts)
        self.peaks = self.peaks.append(PeakLog.of(new_attempts, self._devices,
                                                  outcome_known=self._outcome_known))
        self._attempt_ids = ids
        return self

    def _new_ids(self, new_attempts: pd.DataFrame) -> pd.Index | None:
        """The attempt ids known once ``new_attempts`` are folded in; an error naming those
        already in the index (folded in twice, an attempt would count twice)."""
        known, new = getattr(self, "_attempt_ids", None), attempt_ids(new_attempts)
        if new is None and len(new_attempts):
            warnings.warn("new_attempts has no attempt_id: an attempt folded in twice would count "
                          "twice; give the column to have such attempts refused", UserWarning,
                          stacklevel=3)
        if new is None or known is None:
            return known if new is None else new
        again = new[new.isin(known)]
        if len(again):
            raise SchemaError("the new attempts", [
                f"{len(again)} attempt(s) already in the index, attempt_id "
                f"{some_values(again)}: update with the attempts not folded in before"])
        return known.append(new)

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
        keys = _level_keys(codes, past.hardware, past.config, n_types)
        touched_keys = _level_keys(new_codes, new.hardware, new.config, n_types)
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
