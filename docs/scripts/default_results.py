"""The default LeapRegressor next to the published configuration and single LightGBM models.

Reads the committed run of ``docs/scripts/results.py`` kept in
``docs/results-data/production-v2`` (``production``, seed 0, ten nights; the
command is in its ``run.json``) and prints the Markdown tables the first
section of docs/results.md quotes: accuracy per slice and metric (medians
over nights, in percent), the gap to the submission-time ceiling, and
placement regret with known feasibility, from the run's report. It first
checks that the run scored the same attempts as the earlier run kept in
``production-honest`` (the lookup table's, persistence's and both ceilings'
scores equal on every night and slice)::

    python docs/scripts/default_results.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from default_vs_published import slice_table

RUN = Path(__file__).resolve().parents[1] / "results-data" / "production-v2"
MODELS = {"leap": "default", "leap_published": "published", "single_lightgbm": "one LightGBM (L1)",
          "single_huber": "one LightGBM (Huber)"}


def check_same_attempts() -> None:
    """Raise if the baselines' scores differ from the earlier run's: another fleet, or other rows."""
    new = pd.read_csv(RUN / "scores.csv")
    old = pd.read_csv(RUN.parent / "production-honest" / "scores.csv")
    for model in ("lookup_table", "persistence", "ceiling", "submission_ceiling"):
        a = old[old["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
        b = new[new["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
        if not a.equals(b):
            raise SystemExit(f"the runs did not score the same attempts: {model} differs")


def table() -> str:
    """One row per slice and metric, one column per model."""
    return slice_table(pd.read_csv(RUN / "scores.csv"), MODELS)


def gap_table() -> str:
    """Each model's gap to the submission-time ceiling (points, median over nights), all attempts."""
    scores = pd.read_csv(RUN / "scores.csv")
    rows = scores[scores["slice"] == "all"].pivot_table(index="night", columns="model",
                                                         values="within_20")
    gaps = rows.sub(rows["submission_ceiling"], axis=0).median()
    lines = ["| model | gap to the submission ceiling, +-20% (points) |", "|---|---|"]
    lines += [f"| {label} | {100 * gaps[model]:.1f} |" for model, label in MODELS.items()]
    return "\n".join(lines)


def regret_table() -> str:
    """Mean and p90 regret among the types that truly fit, from the run's report."""
    report = (RUN / "report.md").read_text()
    known = report.split("## Placement regret with known feasibility", 1)[1].split("## ", 1)[0]
    lines = ["| model | mean regret | p90 regret |", "|---|---|---|"]
    for model, label in MODELS.items():
        row = next(line for line in known.splitlines() if line.startswith(f"| {model} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        lines.append(f"| {label} | {cells[1]} | {cells[2]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    check_same_attempts()
    print(table())
    print()
    print(gap_table())
    print()
    print(regret_table())
