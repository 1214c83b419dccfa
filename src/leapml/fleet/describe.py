"""A fleet's calibration properties against the production fleet's targets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation.table_score import lookup_table_score
from .fleet import Fleet

__all__ = ["describe", "format_description"]


def describe(fleet: Fleet, *, train_days: int = 30) -> pd.DataFrame:
    """The calibration properties of a simulated fleet, with targets and pass/fail.

    Targets are those of the design of the production fleet: attempts a day
    within 10% of the configured rate, more than 660 model types and more than
    20 hardware types seen, throughput spanning at least seven orders of
    magnitude, and the lookup table (trained on ``train_days`` days, scored on
    the next) covering 10-16% of the completed attempts, within +-20% on
    45-60% of those. Rows without a target inform only.

    Parameters
    ----------
    fleet : Fleet
    train_days : int, default=30
        Training window of the lookup table.

    Returns
    -------
    DataFrame
        Columns ``property``, ``value`` (float), ``target`` (text) and
        ``passed`` (nullable boolean; NA where there is no target).

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> table = describe(simulate("tiny", days=3, seed=0), train_days=2)
    >>> list(table.columns)
    ['property', 'value', 'target', 'passed']
    """
    att = fleet.attempts
    days = fleet.params.get("days") or max(1, (att["submit_time"].max() - att["submit_time"].min()).days + 1)
    per_day = fleet.params.get("attempts_per_day")
    ok = att["status"].astype(str) == "ok"
    thr = att.loc[ok, "throughput"].to_numpy(float)
    span = float(np.log10(thr.max() / thr.min())) if len(thr) else float("nan")
    score = lookup_table_score(att, train_days=train_days, start=fleet.params.get("start"))
    earlier = att["job_id"].duplicated(keep="first").mean()
    rows = [
        ("attempts a day", len(att) / days, f"~{per_day:,}" if per_day else "~25,000",
         None if not per_day else abs(len(att) / days / per_day - 1) <= 0.10),
        ("model types seen", att["model_type"].nunique(), "> 660", att["model_type"].nunique() > 660),
        ("hardware types seen", att["hardware_type"].nunique(), "> 20", att["hardware_type"].nunique() > 20),
        ("throughput range, log10(max/min) over completed attempts", span, ">= 7", span >= 7),
        (f"lookup-table coverage (train {score['train_days']} days, score the next)",
         score["coverage"], "0.10-0.16", 0.10 <= score["coverage"] <= 0.16),
        ("lookup-table accuracy at +-20% on covered attempts", score["accuracy"], "0.45-0.60",
         0.45 <= score["accuracy"] <= 0.60),
        ("share of attempts with an earlier run of their job", earlier, "", None),
        ("share of attempts out of memory", (att["status"].astype(str) == "oom").mean(), "", None),
        ("share of attempts failed", (att["status"].astype(str) == "failed").mean(), "", None),
        ("hardware types per job (median)",
         att.groupby("job_id", observed=True)["hardware_type"].nunique().median(), "", None),
    ]
    return pd.DataFrame({
        "property": [r[0] for r in rows],
        "value": np.array([r[1] for r in rows], dtype=float),
        "target": [r[2] for r in rows],
        "passed": pd.array([r[3] if r[3] is None else bool(r[3]) for r in rows], dtype="boolean"),
    })


def format_description(table: pd.DataFrame) -> str:
    """Format :func:`describe`'s table as a Markdown table.

    Examples
    --------
    >>> print(format_description(pd.DataFrame({"property": ["model types seen"], "value": [700.0],
    ...     "target": ["> 660"], "passed": pd.array([True], dtype="boolean")})))
    | property | value | target | pass |
    |---|---|---|---|
    | model types seen | 700 | > 660 | yes |
    """
    lines = ["| property | value | target | pass |", "|---|---|---|---|"]
    for row in table.itertuples(index=False):
        value = row.value
        if not np.isfinite(value):
            text = "n/a"
        elif float(value).is_integer() and abs(value) >= 1:
            text = f"{int(value):,}"
        elif abs(value) >= 100:
            text = f"{value:,.0f}"
        elif abs(value) >= 1:
            text = f"{value:.2f}"
        else:
            text = f"{value:.3f}"
        passed = "" if pd.isna(row.passed) else ("yes" if row.passed else "no")
        lines.append(f"| {row.property} | {text} | {row.target} | {passed} |")
    return "\n".join(lines)
