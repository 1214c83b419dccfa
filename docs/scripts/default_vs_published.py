"""The default LeapRegressor next to the published configuration and one LightGBM model, ten nights.

Reads two committed runs of ``docs/scripts/results.py`` on the same simulated
fleet (``production``, seed 0, ten nights): ``production-honest`` (the
published configuration, then the default, and the single LightGBM model)
and ``production-default`` (today's default alone, with the same baselines).
Their lookup-table, persistence and ceiling scores are checked equal night
by night, which shows both runs scored the same attempts; then it prints the
Markdown table docs/results.md quotes (medians over nights, in percent)::

    python docs/scripts/default_vs_published.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "results-data"
SLICES = {"all": "all attempts", "job_new": "new jobs", "job_seen_before": "jobs seen before",
          "table_covered": "table-covered attempts"}
METRICS = {"within_20": "+-20%", "within_10": "+-10%",
           "within_20_by_device_hours": "+-20%, by device-hours",
           "within_10_by_device_hours": "+-10%, by device-hours"}
MODELS = {"default": "default (ordinal, soft)", "published": "published (multiclass, hard)",
          "single_lightgbm": "one LightGBM, 400 trees"}


def scores() -> pd.DataFrame:
    """Both runs' scores, the models named ``default``, ``published`` and ``single_lightgbm``."""
    old = pd.read_csv(DATA / "production-honest" / "scores.csv")
    new = pd.read_csv(DATA / "production-default" / "scores.csv")
    for model in ("lookup_table", "persistence", "ceiling", "submission_ceiling"):
        a = old[old["model"] == model].set_index(["night", "slice"])["within_20"]
        b = new[new["model"] == model].set_index(["night", "slice"])["within_20"]
        if not a.sort_index().equals(b.sort_index()):
            raise SystemExit(f"the runs did not score the same attempts: {model} differs")
    old = old[old["model"].isin(["leap", "single_lightgbm"])].replace({"model": {"leap": "published"}})
    new = new[new["model"] == "leap"].replace({"model": {"leap": "default"}})
    return pd.concat([old, new], ignore_index=True)


def table() -> str:
    """The Markdown table: one row per slice and metric, one column per model."""
    return slice_table(scores(), MODELS)


def slice_table(frame: pd.DataFrame, models: dict) -> str:
    """Medians over nights of ``frame`` (a run's scores): a row per slice and metric, a column per model."""
    lines = ["| slice | accuracy within | " + " | ".join(models.values()) + " |",
             "|---|---|" + "---|" * len(models)]
    for slice_, slice_name in SLICES.items():
        rows = frame[frame["slice"] == slice_]
        if rows.empty:  # a slice the runs did not score
            continue
        for metric, metric_name in METRICS.items():
            medians = rows.groupby("model")[metric].median()
            cells = " | ".join(f"{100 * medians[m]:.1f}%" for m in models)
            lines.append(f"| {slice_name} | {metric_name} | {cells} |")
    return "\n".join(lines)


def regret_table() -> str:
    """Mean and p90 regret among the types that truly fit, from both runs' reports."""
    lines = ["| model | mean regret | p90 regret |", "|---|---|---|"]
    for run, model, label in (("production-default", "leap", MODELS["default"]),
                              ("production-honest", "leap", MODELS["published"]),
                              ("production-honest", "single_lightgbm", MODELS["single_lightgbm"])):
        report = (DATA / run / "report.md").read_text()
        known = report.split("## Placement regret with known feasibility", 1)[1].split("## ", 1)[0]
        row = next(line for line in known.splitlines() if line.startswith(f"| {model} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        lines.append(f"| {label} | {cells[1]} | {cells[2]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
    print()
    print(regret_table())
