"""The default LeapRegressor next to the published configuration and single LightGBM models.

Reads the committed run of ``docs/scripts/results.py`` kept in
``docs/results-data/production-v3`` (``production``, seed 0, ten nights; the
command is in its ``run.json``) and prints the Markdown tables the first
section of docs/results.md quotes: accuracy per slice and metric (medians
over nights, in percent), the gap to the submission-time ceiling, and
placement regret with known feasibility, from the run's report. Beside the
default it sets the default before its shared expert sampled its columns,
from the same command's earlier run kept in ``production-v2``. It first
checks that the runs scored the same attempts as the earlier run kept in
``production-honest`` (the lookup table's, persistence's and both ceilings'
scores equal on every night and slice)::

    python docs/scripts/default_results.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from default_vs_published import slice_table

DATA = Path(__file__).resolve().parents[1] / "results-data"
RUN = DATA / "production-v3"
#: The run of the default before its shared expert sampled its columns (the same command).
BEFORE = DATA / "production-v2"
#: The earlier run's default, under the name it has in the tables.
BEFORE_NAME = "leap_all_columns"
MODELS = {"leap": "default", BEFORE_NAME: "default, shared expert on all columns",
          "leap_published": "published", "single_lightgbm": "one LightGBM (L1)",
          "single_huber": "one LightGBM (Huber)"}


def check_same_attempts() -> None:
    """Raise if the baselines' scores differ from the earlier runs': another fleet, or other rows."""
    old = pd.read_csv(DATA / "production-honest" / "scores.csv")
    for run in (RUN, BEFORE):
        new = pd.read_csv(run / "scores.csv")
        for model in ("lookup_table", "persistence", "ceiling", "submission_ceiling"):
            a = old[old["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            b = new[new["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            if not a.equals(b):
                raise SystemExit(f"the runs did not score the same attempts: {model} differs "
                                 f"in {run.name}")


def scores() -> pd.DataFrame:
    """The run's scores, with the earlier run's default as :data:`BEFORE_NAME`."""
    before = pd.read_csv(BEFORE / "scores.csv")
    before = before[before["model"] == "leap"].assign(model=BEFORE_NAME)
    return pd.concat([pd.read_csv(RUN / "scores.csv"), before], ignore_index=True)


def table() -> str:
    """One row per slice and metric, one column per model."""
    return slice_table(scores(), MODELS)


def gap_table() -> str:
    """Each model's gap to the submission-time ceiling (points, median over nights), all attempts."""
    frame = scores()
    rows = frame[frame["slice"] == "all"].pivot_table(index="night", columns="model",
                                                       values="within_20")
    gaps = rows.sub(rows["submission_ceiling"], axis=0).median()
    lines = ["| model | gap to the submission ceiling, +-20% (points) |", "|---|---|"]
    lines += [f"| {label} | {100 * gaps[model]:.1f} |" for model, label in MODELS.items()]
    return "\n".join(lines)


def regret_table() -> str:
    """Mean and p90 regret among the types that truly fit, from the runs' reports."""
    known = {run: (run / "report.md").read_text()
             .split("## Placement regret with known feasibility", 1)[1].split("## ", 1)[0]
             for run in (RUN, BEFORE)}
    lines = ["| model | mean regret | p90 regret |", "|---|---|---|"]
    for model, label in MODELS.items():
        run, name = (BEFORE, "leap") if model == BEFORE_NAME else (RUN, model)
        row = next(line for line in known[run].splitlines() if line.startswith(f"| {name} |"))
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
