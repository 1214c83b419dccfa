"""Held-out experiments: accuracy on a hardware type or model family that training never saw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from tqdm.auto import tqdm

from .._calendar import add_days, day_start, on_clock
from ..features import build_features
from ..schema.rules import require_whole
from ..training import completed_between
from .metrics import within_tolerance

__all__ = ["held_out"]


def held_out(
    attempts: pd.DataFrame,
    hardware: pd.DataFrame,
    *,
    by: str = "hardware_type",
    groups: list | None = None,
    n_groups: int = 5,
    model=None,
    night: str | pd.Timestamp | None = None,
    window_days: int = 30,
    test_days: int = 1,
    n_jobs: int = 1,
    outcome_known: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """How much accuracy is lost on a hardware type or model family never seen.

    For each group (a hardware type, or a model family), a model is trained
    on the window without any of the group's attempts and scored on the
    group's attempts of the next ``test_days`` days, with features built from
    a history that lacks the group too, as for a type that just arrived in the
    fleet. The in-distribution reference is the same model trained on the
    whole window and scored on the same attempts with the full history.

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog.
    by : {"hardware_type", "model_family"}
        What to hold out.
    groups : list, optional
        Which values to hold out; by default the ``n_groups`` with the most
        attempts to score.
    n_groups : int, default=5
        How many groups when ``groups`` is None.
    model : estimator, optional
        Defaults to :class:`~leapml.LeapRegressor`.
    night : timestamp, optional
        First scored day; defaults to the log's first day plus ``window_days``.
    window_days, test_days : int
        Training window (attempts whose outcome became known in it) and scored days.
    n_jobs : int, default=1
        Groups held out in parallel with joblib (one task per group).
    outcome_known : {"end_time", "run_hours", "submit_time"}, optional
        When an attempt's outcome becomes known (:func:`leapml.features.outcome_known_time`).
    progress : bool
        Show a progress bar.

    Returns
    -------
    DataFrame
        One row per group: ``n_attempts``, ``in_distribution`` and
        ``held_out`` accuracy within +-20%, ``drop_points``, and
        ``held_out_log_bias``: the median of ``log(predicted / measured)``
        over the group's attempts held out (above 0: the model over-predicts
        the group; ``exp`` of it is the typical factor), which tells a miss
        of the whole group's level from a spread around the right one.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml import LeapRegressor
    >>> fleet = simulate("tiny", days=5, seed=0)
    >>> table = held_out(fleet.attempts, fleet.hardware, by="hardware_type", n_groups=1,
    ...                  model=LeapRegressor(n_estimators=5, random_state=0),
    ...                  window_days=4, progress=False)
    >>> list(table.columns)
    ['hardware_type', 'n_attempts', 'in_distribution', 'held_out', 'drop_points', 'held_out_log_bias']
    """
    if by not in ("hardware_type", "model_family"):
        raise ValueError(f"by must be 'hardware_type' or 'model_family', got {by!r}")
    if model is None:
        from ..regressor import LeapRegressor

        model = LeapRegressor()
    attempts = attempts.reset_index(drop=True)
    t = attempts["submit_time"]
    if night is None:
        first = add_days(t.min(), window_days)
    else:
        first = day_start(on_clock(night, t.dt.tz))
    ok = (attempts["status"].astype(str) == "ok").to_numpy()
    train = completed_between(attempts, start=add_days(first, -window_days), end=first,
                              outcome_known=outcome_known)
    test = ok & (t >= first).to_numpy() & (t < add_days(first, test_days)).to_numpy()
    if not train.any() or not test.any():
        raise ValueError("no training or test rows around the chosen night; check the dates")
    key = attempts[by].astype(str)
    if groups is None:
        n_groups = require_whole("n_groups", n_groups)
        counts = key[test].value_counts()
        groups = counts.index[:n_groups].tolist()
    groups = list(groups)
    if not groups:
        raise ValueError(f"no {by} value to hold out: give groups at least one")
    unknown = sorted(set(map(str, groups)) - set(key.unique()))
    if unknown:
        raise ValueError(f"{by} value(s) not in the log: {unknown}")

    features = build_features(attempts, hardware, outcome_known=outcome_known)
    y = attempts["throughput"].to_numpy(float)
    reference = clone(model).fit(features[train], y[train])
    experiment = _HeldOut(attempts, hardware, features, y, key, train, test, model, reference, by,
                          outcome_known)
    tasks = (delayed(_held_out_group)(experiment, group) for group in groups)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    bar = tqdm(results, total=len(groups), desc=f"held-out {by}", disable=not progress)
    return pd.DataFrame([row for row in bar if row is not None])


@dataclass
class _HeldOut:
    attempts: pd.DataFrame
    hardware: pd.DataFrame
    features: pd.DataFrame
    y: np.ndarray
    key: pd.Series
    train: np.ndarray
    test: np.ndarray
    model: object
    reference: object
    by: str
    outcome_known: str | None = None


def _held_out_group(ctx: _HeldOut, group) -> dict | None:
    """One held-out experiment: the group's attempts scored with and without it in training."""
    attempts, hardware, y = ctx.attempts, ctx.hardware, ctx.y
    member = (ctx.key == str(group)).to_numpy()
    scored = ctx.test & member
    if not scored.any():
        return None
    inside = within_tolerance(y[scored], ctx.reference.predict(ctx.features[scored]))
    # Rebuild every feature from a history without the group, training rows
    # included: a type that just arrived has left no trace in anyone's history.
    others = attempts[~member]
    X_others = build_features(others, hardware, outcome_known=ctx.outcome_known)
    keep = (ctx.train & ~member)[~member]
    outside_model = clone(ctx.model).fit(X_others[keep], y[~member][keep])
    X_out = build_features(attempts[scored], hardware, history=others,
                           outcome_known=ctx.outcome_known)
    predicted = outside_model.predict(X_out)
    outside = within_tolerance(y[scored], predicted)
    return {
        ctx.by: str(group),
        "n_attempts": int(scored.sum()),
        "in_distribution": inside,
        "held_out": outside,
        "drop_points": 100.0 * (inside - outside),
        "held_out_log_bias": float(np.median(np.log(predicted / y[scored]))),
    }
