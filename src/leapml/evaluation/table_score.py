"""The fleet's old lookup table scored on the day after a training window."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._calendar import read_time
from .baselines import LookupTableRegressor

__all__ = ["lookup_table_score"]


def lookup_table_score(attempts: pd.DataFrame, *, train_days: int = 30, start=None) -> dict:
    """Score the fleet's old lookup table on the day after a training window.

    The table (:class:`leapml.evaluation.baselines.LookupTableRegressor`, its default 19
    model types) is fitted on the completed attempts of the first
    ``train_days`` days and scored on the completed attempts of the next day.
    A log shorter than ``train_days + 1`` days trains on every day but its last.

    Returns
    -------
    dict
        ``coverage`` (share of the scored attempts the table answers),
        ``accuracy`` (share of those within +-20% of the measured throughput),
        ``n_scored``, ``train_days``.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> score = lookup_table_score(simulate("tiny", days=4, seed=0).attempts, train_days=3)
    >>> sorted(score)
    ['accuracy', 'coverage', 'n_scored', 'train_days']
    """
    times = attempts["submit_time"]
    first = pd.Timestamp(times.min()).normalize() if start is None else read_time(start)
    n_days = int(np.ceil((pd.Timestamp(times.max()) - first) / pd.Timedelta(days=1)))
    train_days = max(1, min(int(train_days), n_days - 1))
    cut = first + pd.Timedelta(days=train_days)
    ok = (attempts["status"].astype(str) == "ok").to_numpy()
    train = attempts[ok & (times < cut).to_numpy()]
    test = attempts[ok & ((times >= cut) & (times < cut + pd.Timedelta(days=1))).to_numpy()]
    if not len(train) or not len(test):
        return {"coverage": float("nan"), "accuracy": float("nan"), "n_scored": len(test), "train_days": train_days}
    table = LookupTableRegressor().fit(train, train["throughput"].to_numpy(float))
    pred = table.predict(test)
    covered = np.isfinite(pred)
    measured = test["throughput"].to_numpy(float)
    within = np.abs(pred[covered] / measured[covered] - 1) <= 0.20
    return {
        "coverage": float(covered.mean()),
        "accuracy": float(within.mean()) if covered.any() else float("nan"),
        "n_scored": int(len(test)),
        "train_days": train_days,
    }
