"""The default LeapRegressor next to the published configuration and single LightGBM models.

First, the default of now (``production-v7``: the shared expert learning at
rate 0.2 on a log of this size) against the default before it
(``production-v6``, at rate 0.1, the same code otherwise) and the single
LightGBM models of ``production-v3``: accuracy per slice, the gap to the
submission-time ceiling and regret among the types that truly fit
(:func:`rate_table`, :func:`rate_gap_table`, :func:`rate_regret_table`).
Then the tables of the default before it, as below.

Reads the committed runs of ``docs/scripts/results.py`` kept in
``docs/results-data/production-v5`` (the default with its hardware copies,
and the ceilings), ``production-v4`` (the default before its hardware
copies) and ``production-v3`` (the default before its cold-start copies,
the published configuration and the single LightGBM models), all
``production``, seed 0, ten nights (the commands are in their ``run.json``),
and prints the Markdown tables the first section of docs/results.md quotes:
accuracy per slice and metric (medians over nights, in percent), the gap to
the submission-time ceiling, and placement regret with known feasibility,
from the runs' reports. It first checks that the runs scored the same
attempts as the earlier run kept in ``production-honest`` (the scores of
every baseline a run holds, of the lookup table, persistence and both
ceilings, equal on every night and slice that both hold). The tables keep
the slices every model was scored on: the runs of the default did not fit
the lookup table, so they have no table-covered slice::

    python docs/scripts/default_results.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from default_vs_published import slice_table

DATA = Path(__file__).resolve().parents[1] / "results-data"
#: The run of the default (``leap``) and the ceilings.
RUN = DATA / "production-v5"
#: Earlier runs whose ``leap`` was an earlier default, under the name it has in the tables.
EARLIER = {"leap_no_hardware_copies": DATA / "production-v4",
           "leap_no_cold_start": DATA / "production-v3"}
#: The run of the other models (the same command with more ``--models``).
BEFORE = DATA / "production-v3"
MODELS = {"leap": "default", "leap_no_hardware_copies": "default without hardware copies",
          "leap_no_cold_start": "default without any copies",
          "leap_published": "published", "single_lightgbm": "one LightGBM (L1)",
          "single_huber": "one LightGBM (Huber)"}


#: The run of the default of now, and of the default before it (the shared expert at 0.1).
RATE_RUN, RATE_BEFORE = DATA / "production-v7", DATA / "production-v6"
RATE_MODELS = {"leap": "default (rate 0.2)", "leap_rate_0_1": "default before (rate 0.1)",
               "leap_published": "published", "single_lightgbm": "one LightGBM (L1)",
               "single_huber": "one LightGBM (Huber)"}


def rate_scores() -> pd.DataFrame:
    """The run of now, the default before it as ``leap_rate_0_1`` and the other models of
    :data:`BEFORE`, on the slices all of them were scored on."""
    return _combined(RATE_RUN, {"leap_rate_0_1": RATE_BEFORE})


def rate_table() -> str:
    """One row per slice and metric: the default of now, the one before it, the others."""
    return slice_table(rate_scores(), RATE_MODELS)


def rate_gap_table() -> str:
    """Each model's gap to the submission-time ceiling (points, median over nights)."""
    return _gaps(rate_scores(), RATE_MODELS)


def rate_regret_table() -> str:
    """Mean and p90 regret among the types that truly fit, a job's candidates ranked together
    (the runs of the default; the other models were ranked one candidate at a time)."""
    lines = ["| model | mean regret | p90 regret |", "|---|---|---|"]
    for run, label in ((RATE_RUN, RATE_MODELS["leap"]), (RATE_BEFORE, RATE_MODELS["leap_rate_0_1"])):
        known = (run / "report.md").read_text().split(
            "## Placement regret with known feasibility", 1)[1].split("## ", 1)[0]
        row = next(line for line in known.splitlines() if line.startswith("| leap |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        lines.append(f"| {label} | {cells[1]} | {cells[2]} |")
    return "\n".join(lines)


def _gaps(frame: pd.DataFrame, models: dict) -> str:
    rows = frame[frame["slice"] == "all"].pivot_table(index="night", columns="model",
                                                       values="within_20")
    gaps = rows.sub(rows["submission_ceiling"], axis=0).median()
    lines = ["| model | gap to the submission ceiling, +-20% (points) |", "|---|---|"]
    lines += [f"| {label} | {100 * gaps[model]:.1f} |" for model, label in models.items()]
    return "\n".join(lines)


def check_same_attempts() -> None:
    """Raise if the baselines' scores differ from the earlier runs': another fleet, or other rows."""
    old = pd.read_csv(DATA / "production-honest" / "scores.csv")
    for run in (RUN, *EARLIER.values(), RATE_RUN, RATE_BEFORE):
        new = pd.read_csv(run / "scores.csv")
        for model in {"lookup_table", "persistence", "ceiling", "submission_ceiling"} & set(new["model"]):
            a = old[old["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            b = new[new["model"] == model].set_index(["night", "slice"])["within_20"].sort_index()
            if b.empty or not b.index.isin(a.index).all() or not a.loc[b.index].equals(b):
                raise SystemExit(f"the runs did not score the same attempts: {model} differs "
                                 f"in {run.name}")


def scores() -> pd.DataFrame:
    """The run's scores, with the other run's models and the earlier defaults under :data:`EARLIER`'s names."""
    return _combined(RUN, EARLIER)


def _combined(path: Path, earlier: dict) -> pd.DataFrame:
    """The scores of the run at ``path``, the models of :data:`BEFORE` it lacks, and the
    ``leap`` of each run of ``earlier`` under its name there."""
    run, before = pd.read_csv(path / "scores.csv"), pd.read_csv(BEFORE / "scores.csv")
    leaps = [pd.read_csv(p / "scores.csv").query("model == 'leap'").assign(model=name)
             for name, p in earlier.items()]
    frame = pd.concat([run, before[~before["model"].isin(set(run["model"]))], *leaps],
                      ignore_index=True)
    # a slice every model was scored on (the run without the lookup table has no table-covered one)
    shared = frame.groupby("slice")["model"].nunique() == frame["model"].nunique()
    return frame[frame["slice"].isin(shared[shared].index)]


def table() -> str:
    """One row per slice and metric, one column per model."""
    return slice_table(scores(), MODELS)


def gap_table() -> str:
    """Each model's gap to the submission-time ceiling (points, median over nights), all attempts."""
    return _gaps(scores(), MODELS)


def regret_table() -> str:
    """Mean and p90 regret among the types that truly fit, from the runs' reports."""
    known = {run: (run / "report.md").read_text()
             .split("## Placement regret with known feasibility", 1)[1].split("## ", 1)[0]
             for run in (RUN, BEFORE, *EARLIER.values())}
    lines = ["| model | mean regret | p90 regret |", "|---|---|---|"]
    for model, label in MODELS.items():
        run, name = ((EARLIER[model], "leap") if model in EARLIER
                     else (RUN, model) if f"| {model} |" in known[RUN] else (BEFORE, model))
        row = next(line for line in known[run].splitlines() if line.startswith(f"| {name} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        lines.append(f"| {label} | {cells[1]} | {cells[2]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    check_same_attempts()
    for rate in (rate_table, rate_gap_table, rate_regret_table):
        print(rate())
        print()
    print(table())
    print()
    print(gap_table())
    print()
    print(regret_table())
