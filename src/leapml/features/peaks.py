"""What a job's earlier runs in a launch configuration measured of memory: ``PeakLog``.

A log's ``peak_memory_gb`` (optional) is the memory one trainer of a
completed run held at its peak. A job that ran before in the very
configuration it is submitted with has told the log what it needs: the
feasibility model reads that measured need where a log has one, and a need
predicted from the configuration where it has none. What one trainer needs
does not depend on the host's size when the model is replicated or sharded
over every trainer (:data:`HOST_FREE_PARALLELISM`), so such a measurement
carries to every hardware type; under any other parallelism (tensor
parallelism shards within a host) only to types with as many devices per host.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from leapml._calendar import read_time
from leapml.features.rows import outcome_known_time
from leapml.schema import normalize_precision
from leapml.schema.rules import require_frame

__all__ = ["HOST_FREE_PARALLELISM", "MEASURED_PEAK", "PeakLog"]

#: The column the feasibility model reads the measured need from: the largest
#: ``peak_memory_gb`` of the job's earlier completed runs in the row's launch
#: configuration, on any hardware under :data:`HOST_FREE_PARALLELISM`, else on
#: hardware with as many devices per host (NaN: none).
MEASURED_PEAK = "job_config_peak_memory_gb"
#: Parallelism styles whose memory per trainer does not depend on how many devices
#: share a host: ``data`` (each trainer holds the whole model), ``fsdp`` (training
#: state sharded over every trainer) and ``hybrid`` (embedding tables sharded over
#: every trainer, the dense part replicated). A peak measured under one of them
#: holds on a host of any size; under another (``tensor``, sharded within a host,
#: or a style not named here) only on hosts of as many devices.
HOST_FREE_PARALLELISM = ("data", "fsdp", "hybrid")

class PeakLog:
    """The peaks of a log's completed runs, keyed by job and launch configuration.

    Build one with :meth:`of`; :meth:`before` answers, for rows submitted at
    given times, the largest peak of the same key whose outcome was known
    strictly before (the rule of :func:`~leapml.features.build_features`).

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> peaks = PeakLog.of(fleet.attempts, fleet.hardware)
    >>> after = fleet.attempts["end_time"].max() + pd.Timedelta(minutes=1)
    >>> measured = peaks.before(fleet.attempts, fleet.hardware, after)
    >>> bool((measured[fleet.attempts["status"] == "ok"] > 0).all())  # each run measured its own
    True
    """

    def __init__(self, key: np.ndarray, known: np.ndarray, peak: np.ndarray):
        self.key = np.asarray(key, dtype=np.uint64)
        self.known = np.asarray(known, dtype=np.int64)
        self.peak = np.asarray(peak, dtype=float)
        self._index = None

    def __len__(self) -> int:
        return len(self.peak)

    def __repr__(self) -> str:
        return f"PeakLog({len(self):,} measured peaks)"

    @classmethod
    def of(cls, log: pd.DataFrame, hardware: pd.DataFrame, *,
           outcome_known: str | None = None) -> PeakLog:
        """The completed runs of ``log`` with a positive ``peak_memory_gb`` (none without the column).

        ``hardware`` gives each run's devices per host (unknown where it has
        no ``devices_per_host``); runs on types absent from it are left out.
        ``outcome_known`` is the rule of :func:`~leapml.features.outcome_known_time`.
        """
        require_frame(log, "log")
        if "peak_memory_gb" not in log.columns or len(log) == 0:
            return cls(np.empty(0), np.empty(0), np.empty(0))
        peak = pd.to_numeric(log["peak_memory_gb"], errors="coerce").to_numpy(
            dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            kept = (log["status"].astype(str) == "ok").to_numpy() & np.isfinite(peak) & (peak > 0)
        if not kept.any():
            return cls(np.empty(0), np.empty(0), np.empty(0))
        rows = log[kept]
        known = outcome_known_time(rows, outcome_known=outcome_known)
        key, placed = _keys(rows, hardware)
        return cls(key[placed], _nanoseconds(known)[placed], peak[kept][placed])

    def append(self, other: PeakLog) -> PeakLog:
        """A log of both logs' peaks."""
        return PeakLog(np.concatenate([self.key, other.key]),
                       np.concatenate([self.known, other.known]),
                       np.concatenate([self.peak, other.peak]))

    def before(self, rows: pd.DataFrame, hardware: pd.DataFrame, times=None) -> np.ndarray:
        """For each row, the largest peak of its key known strictly before its time (NaN: none).

        ``rows`` holds the key columns (``job_id``, the launch configuration)
        and ``hardware_type``; ``times`` (one timestamp, or one per row)
        defaults to the rows' ``submit_time``.
        """
        require_frame(rows, "rows")
        if times is None:
            times = rows["submit_time"]
        if np.ndim(times) == 0:
            times = [read_time(times)] * len(rows)
        key, placed = _keys(rows, hardware)
        out = np.full(len(rows), np.nan)
        if len(self) == 0 or len(rows) == 0:
            return out
        keys, known, composite, running = self._sorted()
        code = np.searchsorted(keys, key)
        found = placed & (code < len(keys))
        found[found] = keys[code[found]] == key[found]
        # runs known strictly before t: those whose time's rank is below t's
        span = np.int64(len(known) + 1)
        query = code[found].astype(np.int64) * span + np.searchsorted(
            known, _nanoseconds(times)[found], side="left")
        last = np.searchsorted(composite, query, side="left") - 1
        # the run found must be of the query's own key (its block starts at code * span)
        own = (last >= 0) & (composite[np.maximum(last, 0)] >= query - query % span)
        values = np.full(len(query), np.nan)
        values[own] = running[last[own]]
        out[found] = values
        return out

    def _sorted(self):
        """The distinct keys and known times, the runs' composite of key and time rank in
        order, and the running largest peak of each key in that order (kept once built)."""
        if self._index is None:
            keys, code = np.unique(self.key, return_inverse=True)
            known, rank = np.unique(self.known, return_inverse=True)
            composite = code.astype(np.int64) * np.int64(len(known) + 1) + rank
            order = np.argsort(composite, kind="stable")
            running = pd.Series(self.peak[order]).groupby(code[order], sort=False).cummax()
            self._index = (keys, known, composite[order], running.to_numpy(dtype=float))
        return self._index


def _keys(rows: pd.DataFrame, hardware: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's key (a hash of the job, its model type and configuration and, unless its
    parallelism is in :data:`HOST_FREE_PARALLELISM`, its hardware's devices per host, NaN where
    the catalog does not say) and whether its hardware type is in the catalog."""
    names = hardware["hardware_type"].astype(str)
    per_host = (pd.to_numeric(hardware["devices_per_host"], errors="coerce")
                if "devices_per_host" in hardware.columns else pd.Series(np.nan, index=names.index))
    types = rows["hardware_type"].astype(str)
    devices = types.map(dict(zip(names, per_host, strict=True))).to_numpy(dtype=float)
    parallelism = _spelled(rows["parallelism"], lambda v: str(v).strip().lower())
    # the host's size is part of the key only where the need depends on it
    devices = np.where(np.isin(parallelism, HOST_FREE_PARALLELISM), 0.0, devices)
    parts = {"job_id": rows["job_id"].astype(str).to_numpy(dtype=object),
             "model_type": rows["model_type"].astype(str).to_numpy(dtype=object),
             **{c: pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                for c in ("trainer_count", "batch_size", "seq_len")},
             "precision": _spelled(rows["precision"], normalize_precision),
             "parallelism": parallelism, "devices_per_host": devices}
    key = pd.util.hash_pandas_object(pd.DataFrame(parts), index=False).to_numpy(dtype=np.uint64)
    return key, types.isin(set(names)).to_numpy()


def _spelled(column: pd.Series, spell) -> np.ndarray:
    """A text column with each distinct value spelled once by ``spell`` (aliases alike)."""
    codes, uniques = pd.factorize(column.astype(str))
    return np.asarray([spell(v) for v in uniques], dtype=object)[codes]


def _nanoseconds(times) -> np.ndarray:
    """Timestamps as int64 nanoseconds (UTC for time-zone aware ones)."""
    return pd.DatetimeIndex(times).as_unit("ns").asi8
