"""The class labels ``FeasibilityClassifier`` learns: read as they are meant, booleans kept boolean."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array, column_or_1d

__all__ = ["fitting_class", "read_labels"]


def read_labels(y) -> np.ndarray:
    """``y`` as a 1-D NumPy array of labels.

    A pandas nullable or Arrow column of booleans (what ``status.eq("ok")``
    gives on a string column) stays boolean, and one of integers stays
    integer, where scikit-learn's conversion would give floats (``True``
    becoming ``1.0``); a missing label is an error.

    Examples
    --------
    >>> import pandas as pd
    >>> read_labels(pd.Series(["ok", "oom"], dtype="string").eq("ok")).tolist()
    [True, False]
    """
    dtype = getattr(y, "dtype", None)
    if (dtype is not None and not isinstance(dtype, (np.dtype, pd.CategoricalDtype))
            and np.ndim(y) == 1):
        kind = ("bool" if pd.api.types.is_bool_dtype(dtype)
                else "int64" if pd.api.types.is_integer_dtype(dtype) else None)
        if kind is not None:
            series = y if isinstance(y, pd.Series) else pd.Series(y, copy=False)
            missing = int(series.isna().sum())
            if missing:
                raise ValueError(f"y has {missing} missing label(s) of {len(series)}: every row "
                                 "needs a class")
            y = series.to_numpy(dtype=kind)
    return column_or_1d(check_array(y, ensure_2d=False, dtype=None, input_name="y"), warn=True)


def fitting_class(labels):
    """The label that means "it fitted": ``True`` or ``"ok"``, or None."""
    return next((fitted for fitted in (True, "ok")
                 if any(c == fitted and type(c) is type(fitted) for c in labels)), None)
