"""Quickstart: fit LeapRegressor, predict throughput, rank hardware by throughput per cost.

Simulates eight days of a synthetic fleet, fits on the first seven, measures
the predictions on the eighth, and ranks every hardware type for three of that
day's jobs. Set ``LEAPML_EXAMPLE_PRESET=tiny`` for a run of a few seconds (the
default preset is ``small``).
"""

# %%
import os

from leapml import LeapRegressor, build_features, simulate, within_tolerance
from leapml.placement import place

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))  # trees per bin expert

# %% [markdown]
# Eight days of attempts. Each row's features read only completed attempts
# submitted strictly before it, so the whole log is featurised at once.

# %%
fleet = simulate(PRESET, days=8, seed=0)
attempts = fleet.attempts
X = build_features(attempts, fleet.hardware)
ok = (attempts["status"] == "ok").to_numpy()
last_day = (attempts["submit_time"] >= attempts["submit_time"].max().floor("D")).to_numpy()
y = attempts["throughput"].to_numpy()

# %% Fit on the first seven days, predict the eighth
model = LeapRegressor(n_estimators=TREES, random_state=0).fit(X[ok & ~last_day], y[ok & ~last_day])
predicted = model.predict(X[ok & last_day])
accuracy = within_tolerance(y[ok & last_day], predicted, tol=0.2)
print(f"{int((ok & last_day).sum())} attempts on the last day; within +-20%: {accuracy:.1%}")

# %% Three of today's jobs are resubmitted now: rank every hardware type by predicted throughput per cost
jobs = attempts[ok & last_day].drop_duplicates("job_id").head(3).drop(columns="submit_time")
ranking = place(model, jobs, fleet.hardware, history=attempts, top_k=3)
print(ranking[["job_id", "hardware_type", "predicted_throughput", "throughput_per_cost", "rank"]])
