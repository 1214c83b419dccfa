"""Keys of the memory rules of ``FeasibilityClassifier``: floors, ceilings and their backing.

A key is a tuple of columns (e.g. model type, precision, parallelism); the
rules remember, per value of a key, the smallest memory each configuration
fitted on (or the largest it ran out of memory on).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def require_columns(X, columns, option) -> None:
    """Check that ``X`` is a frame with every column of the tuples ``columns``; ``option``
    names the parameter that asks for them."""
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"{option}={columns!r} needs X as a DataFrame, got {type(X).__name__}")
    missing = sorted({c for key in columns for c in key} - set(X.columns))
    if missing:
        raise ValueError(f"X lacks the {option} column(s) {missing}")


def key_columns(X, columns, option):
    """Each tuple of ``columns``' columns of ``X``, as arrays of text; ``option`` names the parameter."""
    if not columns:
        return []
    require_columns(X, columns, option)
    return [[X[c].astype(str).to_numpy(dtype=object) for c in key] for key in columns]


def untried(seen: set, key) -> np.ndarray:
    """Rows whose value tuple of ``key`` is not in ``seen`` although its values but the last
    are, with another last value (a family seen fitting, not on this type).

    A value never seen with any last value (a model family new to the log) is
    no evidence against any type, and is not flagged.

    Examples
    --------
    >>> seen = {("cnn", "A"), ("cnn", "B"), ("gnn", "A")}
    >>> key = [np.array(["cnn", "gnn", "new"]), np.array(["B", "B", "B"])]
    >>> untried(seen, key).tolist()
    [False, True, False]
    """
    known = {pair[:-1] for pair in seen}
    return np.array([pair not in seen and pair[:-1] in known for pair in zip(*key, strict=True)],
                    dtype=bool)


def signed_keys(X, columns, load, memory_column, columns_option, load_option):
    """Each tuple of ``columns``' columns of ``X`` as text, ``memory_column`` as floats, and the
    ``load`` columns signed so that larger needs more memory (NaN: 0); the options name the
    parameters that ask for them."""
    bad = {k: v for k, v in load.items() if v not in (-1, 1)}
    if bad:
        raise ValueError(f"{load_option} values must be -1 or 1, got {bad}")
    keys = key_columns(X, [*columns, (memory_column, *load)], f"{columns_option} and {load_option}")
    numbers = [pd.to_numeric(X[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
               for c in (memory_column, *load)]
    signed = np.column_stack([np.zeros(len(X))] + [sign * np.nan_to_num(column) for sign, column
                                                    in zip(load.values(), numbers[1:], strict=True)])
    return keys[:-1], numbers[0], signed[:, 1:]


def smallest_memory(key, memory, load, fitted) -> dict:
    """By value tuple of ``key``: each load seen fitting and its smallest memory, as rows
    ``[*load, memory]``."""
    keep = fitted & ~np.isnan(memory)
    smallest: dict = {}
    for pair, row_load, value in zip(zip(*(column[keep] for column in key), strict=True),
                                     map(tuple, load[keep].tolist()), memory[keep].tolist(),
                                     strict=True):
        configs = smallest.setdefault(pair, {})
        configs[row_load] = min(value, configs.get(row_load, value))
    return {pair: [[*row_load, value] for row_load, value in configs.items()]
            for pair, configs in smallest.items()}


def positions_by_value(key) -> dict:
    """By value tuple of ``key`` (a list of aligned arrays): the positions of its rows."""
    rows: dict = {}
    for position, value in enumerate(zip(*key, strict=True)):
        rows.setdefault(value, []).append(position)
    return {value: np.asarray(positions) for value, positions in rows.items()}


def floors_of(limits, keys, load, *, backing=False) -> np.ndarray:
    """Each row's memory floor (NaN: none) from ``limits`` (``memory_floor_`` or, with
    ``backing``, ``memory_override_``), its ``keys`` and signed ``load``: the smallest memory
    on which a configuration of its key needing at least as much fitted, or, when none did,
    on which any configuration of its key fitted. With ``backing``, without the fall-back
    (NaN where none did), and every tuple must back the row."""
    # backing needs every tuple (NaN, unbacked, wins); a floor takes any (NaN, none, loses)
    floor = np.full(len(load), -np.inf if backing else np.nan)
    combine = np.maximum if backing else np.fmax
    for floors, key in zip(limits, keys, strict=True):
        for value, positions in positions_by_value(key).items():
            seen = floors.get(value)
            if seen is None:
                if backing:
                    floor[positions] = np.nan
                continue
            seen = np.asarray(seen, dtype=float).reshape(len(seen), -1)
            heavier = (seen[None, :, :-1] >= load[positions][:, None, :]).all(axis=2)
            here = np.where(heavier, seen[None, :, -1], np.inf).min(axis=1)
            here = np.where(np.isinf(here), np.nan if backing else seen[:, -1].min(), here)
            floor[positions] = combine(floor[positions], here)
    return floor


def ceilings_of(limits, keys, load) -> np.ndarray:
    """Each row's memory ceiling (NaN: none) from ``memory_ceiling_``: the largest memory on
    which a configuration of its key needing no more ran out of memory."""
    ceiling = np.full(len(load), np.nan)
    for ceilings, key in zip(limits, keys, strict=True):
        for value, positions in positions_by_value(key).items():
            seen = ceilings.get(value)
            if seen is None:
                continue
            seen = np.asarray(seen, dtype=float).reshape(len(seen), -1)
            lighter = (seen[None, :, :-1] <= load[positions][:, None, :]).all(axis=2)
            here = np.where(lighter, seen[None, :, -1], -np.inf).max(axis=1)
            ceiling[positions] = np.fmax(ceiling[positions],
                                         np.where(np.isinf(here), np.nan, here))
    return ceiling
