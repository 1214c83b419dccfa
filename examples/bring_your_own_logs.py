"""Bring your own logs: CSV -> schema -> fit -> save -> load -> rank.

Your fleet's attempt log and hardware catalog come out of a job database as
CSV files, with your own column names. This example plays that part with a
simulated fleet: it writes the CSV files into a working folder first, then
does what you would do with real ones: rename the columns to the schema's,
convert and validate them, keep them as Parquet, fit a model, save it to a
safe model file, load it back (as a scheduler would) and rank the candidate
hardware of two new submissions read from a CSV file. Everything is written
under one folder the script prints (``LEAPML_EXAMPLE_OUT``, or a new temporary
folder).
"""

# %%
import os
import tempfile
from pathlib import Path

import pandas as pd

import leapml
from leapml import LeapRegressor
from leapml.files import read_table, write_table
from leapml.fleet import simulate
from leapml.placement import fit_window, place
from leapml.schema import (
    LAUNCH_COLUMNS,
    coerce_attempts,
    coerce_hardware,
    validate_attempts,
    validate_hardware,
)

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))
OUT = Path(os.environ.get("LEAPML_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="leapml-example-"))
OUT.mkdir(parents=True, exist_ok=True)
print(f"working folder: {OUT}")

# %% [markdown]
# ## Stand-in for your export
# Two CSV files with a database's own column names, and the truth column a
# real log does not have dropped.

# %%
fleet = simulate(PRESET, days=8, seed=2)
YOUR_NAMES = {"job_id": "workflow_run", "hardware_type": "accelerator", "throughput": "samples_per_sec"}
export = fleet.attempts.drop(columns="expected_throughput").rename(columns=YOUR_NAMES)
export.to_csv(OUT / "attempts_export.csv", index=False)
fleet.hardware.rename(columns={"hardware_type": "accelerator"}).to_csv(
    OUT / "hardware_export.csv", index=False
)

# %% [markdown]
# ## Read, rename, convert, validate
# CSV has no dtypes: `coerce_*` turns text into timestamps and categoricals,
# and the validators name every problem at once if anything is off.

# %%
TO_SCHEMA = {yours: ours for ours, yours in YOUR_NAMES.items()}
hardware = coerce_hardware(read_table(OUT / "hardware_export.csv").rename(columns=TO_SCHEMA))
attempts = coerce_attempts(read_table(OUT / "attempts_export.csv").rename(columns=TO_SCHEMA))
hardware = validate_hardware(hardware)
attempts = validate_attempts(attempts, hardware)
print(f"{len(attempts)} attempts, {attempts['job_id'].nunique()} jobs, "
      f"{attempts['hardware_type'].nunique()} hardware types: the log follows the schema")

# %% Keep them as Parquet, which keeps the dtypes
write_table(attempts, OUT / "attempts.parquet")
write_table(hardware, OUT / "hardware.parquet")

# %% Fit on the last seven days and save a safe model file (no pickle inside)
model = fit_window(attempts, hardware, window_days=7,
                   model=LeapRegressor(n_estimators=TREES, random_state=0))
model_path = leapml.save(model, OUT / "model.leap")
print(f"model written to {model_path} ({model_path.stat().st_size / 1e6:.1f} MB)")

# %% [markdown]
# ## The scheduler side
# Load the model, read the day's submissions (here two jobs from the log,
# resubmitted) and rank every hardware type for each.

# %%
served = leapml.load(model_path)
submissions = attempts.drop_duplicates("job_id").tail(2)[["job_id", *LAUNCH_COLUMNS]]
submissions.to_csv(OUT / "submissions.csv", index=False)

history = read_table(OUT / "attempts.parquet")
incoming = read_table(OUT / "submissions.csv")
now = history["submit_time"].max() + pd.Timedelta(minutes=1)
ranking = place(served, incoming, read_table(OUT / "hardware.parquet"), history=history, at=now, top_k=3)
write_table(ranking, OUT / "ranking.csv")
print(ranking[["job_id", "hardware_type", "predicted_throughput", "throughput_per_cost", "rank"]])
print(f"ranking written to {OUT / 'ranking.csv'}")
