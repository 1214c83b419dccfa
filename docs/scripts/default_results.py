"""The default LeapRegressor next to the published configuration and single LightGBM models.

Reads the committed runs of ``docs/scripts/results.py`` kept in
``docs/results-data/production-v4`` (the default with its cold-start copies,
and the ceilings) and ``production-v3`` (the default before them, the
published configuration and the single LightGBM models), both ``production``,
seed 0, ten nights (the commands are in their ``run.json``), and prints the
Markdown tables the first section of docs/results.md quotes: accuracy per
slice and metric (medians over nights, in percent), the gap to the
submission-time ceiling, and placement regret with known feasibility, from
the runs' reports. It first checks that the runs scored the same attempts
as the earlier run kept in ``production-honest`` (the scores of every
baseline a run holds, of the lookup table, persistence and both ceilings,
equal on every night and slice that both hold). The tables keep the slices
every model was scored on: the run of the default did not fit the lookup
table, so it has no table-covered slice::

    python docs/scripts/default_results.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from default_vs_published import slice_table

DATA = Path(__file__).resolve().parents[1] / "results-data"
#: The run of the default (``leap``) and the ceilings.
RUN = DATA / "production-v4"
#: The run of the default before its cold-start copies, and of the other models (the same command
#: with more ``--models``).
BEFORE = DATA / "production-v3"
#: The earlier run's default, under the name it has in the tables.
BEFORE_NAME = "leap_no_cold_start"
MODELS = {"leap": "default", BEFORE_NAME: "default without cold-start copies",
          "leap_published": "published", "single_lightgbm": "one LightGBM (L1)",
          "single_huber": "one LightGBM (Huber)"}


def check_same_attempts() -> None:
    """Raise if the baselines' scores differ from the earlier runs': another fleet, or other rows."""
    old = pd.read_csv(DATA / "production-honest" / "scores.csv")
    for run in (RUN, BEFORE):
        new = pd.read_csv(run / "scores.csv")
        for model in {"lookup_table", "persistence", "ceiling", "submission_ceiling"} & set(new["model"]):
            a = old[old["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            b = new[new["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            if b.empty or not b.index.isin(a.index).all() or not a.loc[b.index].equals(b):
                raise SystemExit(f"the runs did not score the same attempts: {model} differs "
                                 f"in {run.name}")


def scores() -> pd.DataFrame:
    """The run's scores, with the earlier run's models and its default as :data:`BEFORE_NAME`."""
    run, before = pd.read_csv(RUN / "scores.csv"), pd.read_csv(BEFORE / "scores.csv")
    earlier = before[before["model"] == "leap"].assign(model=BEFORE_NAME)
    frame = pd.concat([run, before[~before["model"].isin(set(run["model"]))], earlier],
                      ignore_index=True)
    # a slice every model was scored on (the run without the lookup table has no table-covered one)
    shared = frame.groupby("slice")["model"].nunique() == frame["model"].nunique()
    return frame[frame["slice"].isin(shared[shared].index)]


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
        run, name = ((BEFORE, "leap") if model == BEFORE_NAME
                     else (RUN, model) if f"| {model} |" in known[RUN] else (BEFORE, model))
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
