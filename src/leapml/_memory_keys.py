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
