"""Rank one submission over every candidate hardware type.

A scheduler receives one job and must choose where it runs. This example fits
a model on eight days of a synthetic fleet (holding the last day back to
calibrate its prediction intervals) and a model of where jobs fit, learned
from the log's ``ok`` and ``oom`` attempts. It then takes one job that is
about to be resubmitted, predicts its throughput on every hardware type in
the fleet with an 80% interval and a probability of fitting, ranks the
candidates by expected utility (probability of fitting x the interval's low
end per cost), prints the reasons behind the pick, and (because the fleet is
simulated) puts the true expected throughput next to each prediction to show
whether the pick was right. The figure is written to a folder the script
prints (``LEAPML_EXAMPLE_OUT``, or a new temporary folder).
"""

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from leapml import LeapRegressor, rank_candidates, simulate
from leapml.placement import explain_picks, fit_feasibility, fit_window, predict_candidates

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))
OUT = Path(os.environ.get("LEAPML_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="leapml-example-"))
OUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## Train on eight days of the fleet
# `fit_window` fits on the completed attempts of the last `window_days` days,
# here all but the last, on which it calibrates the prediction intervals.
# `fit_feasibility` learns where a job fits from the attempts that ran (`ok`)
# and those that ran out of memory (`oom`).

# %%
fleet = simulate(PRESET, days=8, seed=1)
model = fit_window(fleet.attempts, fleet.hardware, window_days=8, calibration_days=1,
                   model=LeapRegressor(n_estimators=TREES, random_state=0))
feasibility = fit_feasibility(fleet.attempts, fleet.hardware, window_days=8)

# %% [markdown]
# ## The submission
# The job with the most completed runs in the log comes back one minute after
# the log ends. Its launch configuration is all the scheduler knows, plus the
# history of its earlier runs, which the features read from the log.

# %%
ok = fleet.attempts[fleet.attempts["status"] == "ok"]
job_id = ok["job_id"].value_counts().index[0]
submission = ok[ok["job_id"] == job_id].tail(1).drop(columns="submit_time")
now = fleet.attempts["submit_time"].max() + pd.Timedelta(minutes=1)
print(submission[["job_id", "model_type", "trainer_count", "batch_size", "precision",
                  "parallelism", "hardware_type"]].to_string(index=False))
print(f"earlier completed runs: {int((ok['job_id'] == job_id).sum())} on "
      f"{ok.loc[ok['job_id'] == job_id, 'hardware_type'].nunique()} hardware type(s)")

# %% Predict on every hardware type available now, then rank by expected utility
candidates = predict_candidates(model, submission, fleet.hardware, history=fleet.attempts, at=now,
                                feasibility=feasibility)
truth = fleet.expected_throughput(submission, candidates["hardware_type"].tolist())
candidates = candidates.merge(
    truth[["hardware_type", "expected_throughput", "feasible"]].astype({"hardware_type": str}),
    on="hardware_type",
)
hardware_types = fleet.hardware["hardware_type"].astype(str)
cost = dict(zip(hardware_types, fleet.hardware["cost_per_device_hour"], strict=True))
ranked = rank_candidates(candidates, cost=cost, objective="expected_utility")
ranked["true_per_cost"] = ranked["expected_throughput"] / ranked["cost_per_hour"]
with pd.option_context("display.width", 160, "display.max_columns", 20):
    print(ranked[["rank", "hardware_type", "predicted_throughput", "throughput_low",
                  "throughput_high", "fit_probability", "reason", "expected_throughput",
                  "feasible", "score", "true_per_cost"]].to_string(index=False))

# %% Why this pick: the features that weighed most in its predicted throughput
reasons = explain_picks(model, ranked, submission.assign(submit_time=now), fleet.hardware,
                        history=fleet.attempts)
print(reasons.to_string(index=False))

# %% Was the pick right?
feasible = ranked[ranked["feasible"]]
best = feasible.loc[feasible["true_per_cost"].idxmax(), "hardware_type"]
pick = ranked.iloc[0]
# a pick where the job cannot run is a failed launch: regret 100%
launched = pick["feasible"] and pick["rankable"]
regret = 1 - (pick["true_per_cost"] if launched else 0.0) / feasible["true_per_cost"].max()
print(f"picked {pick['hardware_type']}; truly best {best}; regret {regret:.1%}")

# %% Predicted against true throughput per cost, for every candidate
order = ranked.sort_values("throughput_per_cost", ascending=True, na_position="first")
fig, ax = plt.subplots(figsize=(7, 0.28 * len(order) + 1.5), layout="constrained")
rows = range(len(order))
ax.barh([r + 0.2 for r in rows], order["throughput_per_cost"], height=0.4, label="predicted")
ax.barh([r - 0.2 for r in rows], order["true_per_cost"], height=0.4, label="true (simulator)")
labels = [name if fits else f"{name} (infeasible)"
          for name, fits in zip(order["hardware_type"], order["feasible"], strict=True)]
ax.set_yticks(list(rows), labels, fontsize=8)
ax.set(xscale="log", xlabel="throughput per cost (samples/s per cost-unit-hour)",
       title=f"Job {job_id}: candidates ranked by predicted throughput per cost")
ax.legend(loc="lower right")
figure = OUT / "rank_one_submission.png"
fig.savefig(figure, dpi=110)
print(f"figure written to {figure}")
