"""Building small DataFrames fast: scoring one submission builds several of them."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

try:
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pandas < 3: the plain constructor
    _from_blocks = None

__all__ = ["cached_index", "column_values", "frame_of_arrays", "require_unique_columns",
           "some_values", "taken"]


def some_values(values, limit: int = 5, *, bare: bool = False) -> str:
    """Up to ``limit`` of ``values`` as a list, saying how many more there are (``bare``:
    each as its text, unquoted: ``[0, 1]`` for the texts ``"0"``, ``"1"``)."""
    values = list(values)
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    shown = f"[{', '.join(map(str, values[:limit]))}]" if bare else f"{values[:limit]}"
    return f"{shown}{more}"


def require_unique_columns(frame, name: str) -> None:
    """Raise ValueError naming the columns a DataFrame ``frame`` has more than once.

    Reading such a column gives a frame, not a column: which one was meant
    is ambiguous. ``name`` says which argument ``frame`` is; anything but a
    DataFrame passes.
    """
    if isinstance(frame, pd.DataFrame) and not frame.columns.is_unique:
        repeated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise ValueError(f"{name} has column(s) {repeated} more than once: keep one of each")


def frame_of_arrays(arrays: list, columns: pd.Index, index: pd.Index) -> pd.DataFrame:
    """A DataFrame of 1-D arrays, one block per dtype (as the constructor consolidates them).

    Built from its blocks where pandas allows it: scoring a few rows would
    otherwise spend most of its time in the DataFrame constructor.
    """
    if _from_blocks is None:
        return pd.DataFrame(dict(zip(columns, arrays, strict=True)), index=index)
    blocks, grouped = [], {}
    for position, values in enumerate(arrays):
        if isinstance(values, np.ndarray):
            grouped.setdefault(values.dtype, []).append(position)
        else:
            blocks.append((values, np.array([position])))
    for positions in grouped.values():
        # stacking copies: no column shares memory with an input or another column
        blocks.append((np.stack([arrays[p] for p in positions]), np.array(positions)))
    # a frame of its own: renaming one frame's columns must not rename the next one's
    return _from_blocks(blocks, index=index, columns=columns.copy())


def column_values(column: pd.Series, order: np.ndarray | None = None):
    """A column's values (at ``order``), as a NumPy array where it holds one, else its pandas array.

    What :func:`frame_of_arrays` takes: NumPy columns go into shared blocks,
    extension arrays (text, categoricals, time zones, nullable numbers) stay
    as they are.
    """
    if isinstance(column.dtype, np.dtype):
        values = column.to_numpy()
        return values if order is None else values[order]
    return column.array if order is None else column.array.take(order)


def taken(values, order: np.ndarray):
    """``values`` (a NumPy or pandas array) at the positions ``order``."""
    return values[order] if isinstance(values, np.ndarray) else values.take(order)


@lru_cache(maxsize=64)
def cached_index(names: tuple) -> pd.Index:
    """``pd.Index(names)``, built once per tuple of names.

    Scoring sees the same columns and hardware types again and again. Share
    the index only where nothing renames it (:func:`frame_of_arrays` copies it).
    """
    return pd.Index(list(names))
