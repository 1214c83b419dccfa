"""Nightly backtest with plots: retrain every night, score the next day.

Replays the fleet's schedule on a simulated log: each night every model is
fitted on the completed attempts of the previous days and scored on the next
day's, and its ranking of every hardware type is scored by its regret against
the simulator's truth. Prints the summaries, draws the four standard figures
and writes a report folder, all under a folder the script prints
(``LEAPML_EXAMPLE_OUT``, or a new temporary folder).
"""

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from leapml.evaluation.backtest import default_models, nightly
from leapml.evaluation.plotting import (
    plot_accuracy_by_decile,
    plot_accuracy_by_night,
    plot_predicted_vs_measured,
    plot_regret,
)
from leapml.evaluation.report import format_table, write_report
from leapml.fleet import simulate

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))
OUT = Path(os.environ.get("LEAPML_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="leapml-example-"))
OUT.mkdir(parents=True, exist_ok=True)
WINDOW_DAYS, NIGHTS = 5, 3

# %% [markdown]
# ## Replay the nights
# `default_models` compares LeapRegressor with a single LightGBM regressor on
# log throughput (400 trees unless `n_estimators` says otherwise; here both
# models get `TREES`), the fleet's old lookup table, the job's last
# measurement (persistence) and the ceiling (the simulator's noiseless truth).

# %%
fleet = simulate(PRESET, days=WINDOW_DAYS + NIGHTS, seed=0)
result = nightly(
    fleet.attempts,
    fleet.hardware,
    models=default_models(random_state=0, n_estimators=TREES),
    window_days=WINDOW_DAYS,
    nights=NIGHTS,
    oracle=fleet.expected_throughput,
    regret_jobs=200,
    progress=False,
)

# %% Accuracy within +-20% over nights (median, worst, best), per model
summary = result.summary().reset_index()
print("Accuracy within +-20%, all attempts, over nights:")
print(format_table(summary, percent=("median", "min", "max")))

# %% On the attempts the lookup table covers: the head-to-head with the old method
print("\nAccuracy within +-20% on the attempts the lookup table covers:")
print(format_table(result.summary(slice="table_covered").reset_index(),
                   percent=("median", "min", "max")))

# %% Placement regret: throughput per cost lost against the best pick
regret = result.regret_summary().reset_index()
print("\nPlacement regret, per policy:")
print(format_table(regret, percent=("mean_regret", "p90_regret", "optimal_share")))

# %% The four figures
fig, axes = plt.subplots(2, 2, figsize=(13, 10), layout="constrained")
plot_predicted_vs_measured(result.predictions, model="leap", ax=axes[0, 0])
plot_accuracy_by_night(result.scores, ax=axes[0, 1])
plot_accuracy_by_decile(result.scores, ax=axes[1, 0])
plot_regret(result.regret, ax=axes[1, 1])
figure = OUT / "nightly_backtest.png"
fig.savefig(figure, dpi=100)
print(f"figure written to {figure}")

# %% The tables in a report folder: report.md, scores.csv, predictions.parquet, regret.csv
# (write_report also draws the figures above, one PNG each, unless plots=False)
report = write_report(result, OUT / "report", title=f"Nightly backtest ({PRESET} preset)", plots=False)
print(f"report written to {report}")
