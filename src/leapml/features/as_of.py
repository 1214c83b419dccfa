"""The history statistics of each row: the as-of join, and the state a ``HistoryIndex`` keeps.

Only rows whose outcome was known strictly before a row's submission count.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from leapml.features.inputs import _mixed
from leapml.features.rows import _Past

# ----------------------------------------------------------------------------
# the history statistics: as-of join, or the state a HistoryIndex keeps
# ----------------------------------------------------------------------------

#: Key columns of the history statistics.
_KEY_COLUMNS = {"job": "job_id", "model": "model_type", "family": "model_family"}

#: The history keys: key column, whether the hardware type is part of the key, the
#: quantities averaged over the key's rows and the latest row's values read. The
#: levels of :data:`_CONFIG_LEVELS` key on the launch configuration as well.
_LEVELS = {
    "config_same": ("job", True, ("log",), ()),
    "job_same": ("job", True, ("log",), ("throughput", "ns")),
    "job_any": ("job", False, ("log",), ("throughput", "ns", "trainers", "peak", "hardware")),
    "model_same": ("model", True, ("per_peak", "steps", "batch_known"), ()),
    "model_any": ("model", False, ("per_peak",), ()),
    "family_same": ("family", True, ("per_peak",), ()),
}


#: Levels whose key also holds the row's launch configuration: the job's runs in
#: this very configuration (trainers, batch, sequence length, precision, parallelism).
_CONFIG_LEVELS = frozenset({"config_same"})


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


def _level_keys(codes: dict[str, np.ndarray], hardware: np.ndarray, config: np.ndarray,
                n_types: int):
    """The composite key of each level: the key's code, times the hardware types where it counts.

    The job's levels fold in the model type's code, so that a job id given again
    for another model reads none of the first model's runs; the levels of
    :data:`_CONFIG_LEVELS` fold in ``config``
    (:func:`~leapml.features.inputs._config_codes`) instead, which holds the
    model type. Both folds are a hash. A negative code (a value absent from
    the history) stays negative.
    """
    # a job id given again for another model is another job: its runs are not these (the
    # model codes are small integers: scrambled first, or two keys' XOR would collide)
    model = _mixed(codes["model"].astype(np.uint64), np.uint64(0))
    keys = {}
    for level, (key, same_hardware, _, _) in _LEVELS.items():
        code = codes[key]
        composite = np.where(code >= 0, code * n_types + hardware, -1) if same_hardware else code
        if level in _CONFIG_LEVELS:  # the configuration's hash holds the model type already
            composite = _folded(composite, config)
        elif key == "job":
            composite = _folded(np.where(codes["model"] >= 0, composite, -1), model)
        keys[level] = composite
    return keys


def _folded(composite: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Keys folded with ``values`` (uint64 hashes) by a hash; a negative key stays -1."""
    folded = _mixed(composite.astype(np.uint64), values.astype(np.uint64))
    return np.where(composite >= 0, (folded >> np.uint64(1)).astype(np.int64), -1)


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
