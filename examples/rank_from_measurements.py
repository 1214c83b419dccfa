"""From a CSV of throughput measurements to a ranked hardware recommendation.

A team has measured its training jobs on a few hardware types, as a table of
one row per measurement, and wants to know where a new configuration runs
best for its money. This example writes such a table (and a table of
hardware figures) as CSV, maps them onto an attempt log and a hardware
catalog with ``leapml.datasets.from_measurements`` (which names every value it
had to assume), fits a model, and ranks every costed hardware type for a new
submission. Set ``LEAPML_MEASUREMENTS`` to a folder of tables in the same
layout (for instance the public ones, with ``hardware_specs.csv`` next to
the folder) to use those instead. Files go to the folder the script prints
(``LEAPML_EXAMPLE_OUT``, or a new temporary folder).
"""

# %%
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from leapml import LeapRegressor, build_features
from leapml.datasets import PUBLIC_JOB_COLUMNS, from_measurements, read_measurements
from leapml.placement import place

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))
OUT = Path(os.environ.get("LEAPML_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="leapml-example-"))
OUT.mkdir(parents=True, exist_ok=True)
print(f"working folder: {OUT}")

# %% [markdown]
# ## The measurements
# Without ``LEAPML_MEASUREMENTS`` the script writes a small table: six vision
# and language workloads at two batch sizes and two precisions on five
# hardware types (datasheet figures), throughput from a simple roofline-like
# rule with 5 % noise: illustrative numbers, not measurements of these types.

# %%
SPECS = pd.DataFrame(
    {
        "hardware": ["T4-16GB", "V100-16GB-SXM2", "A100-40GB-SXM4", "L4", "H100-80GB-SXM5"],
        "vendor": "NVIDIA",
        "release_year": [2018, 2017, 2020, 2023, 2022],
        "peak_fp32_tflops": [8.1, 15.7, 19.5, 30.3, 67.0],
        "peak_fp16_tensor_tflops": [65.0, 125.0, 312.0, 121.0, 989.0],
        "peak_bf16_tensor_tflops": [np.nan, np.nan, 312.0, 121.0, 989.0],
        "memory_gb": [16.0, 16.0, 40.0, 24.0, 80.0],
        "memory_bw_gbps": [320.0, 900.0, 1555.0, 300.0, 3350.0],
        "cloud_usd_per_gpu_hour": [0.35, 3.06, 4.10, 0.80, 12.29],
    }
)


def write_example_table(folder: Path) -> None:
    """One measurement per (workload, batch, precision, hardware type), with 5 % noise."""
    rng = np.random.default_rng(0)
    workloads = {"ResNet-50": ("vision", 1.0), "ViT-B": ("vision", 0.4), "EfficientNet": ("vision", 1.6),
                 "BERT-base": ("nlp", 0.5), "GPT-small": ("nlp", 0.2), "T5-small": ("nlp", 0.35)}
    rows = []
    for model, (task, speed) in workloads.items():
        for batch in (32, 128):
            for precision in ("fp32", "amp"):
                for spec in SPECS.itertuples():
                    peak = spec.peak_fp32_tflops if precision == "fp32" else spec.peak_fp16_tensor_tflops
                    rate = speed * min(12 * peak, 3.0 * spec.memory_bw_gbps) * batch / (batch + 16)
                    rows.append(("example", model, task, batch, batch, 1, spec.hardware, precision,
                                 rate * np.exp(rng.normal(0, 0.05)), "samples/s"))
    columns = ["source", "model", "task", "batch_size", "per_device_batch_size", "num_devices",
               "hardware", "precision", "throughput", "throughput_unit"]
    pd.DataFrame(rows, columns=columns).to_csv(folder / "example.csv", index=False)


FOLDER = os.environ.get("LEAPML_MEASUREMENTS")
if FOLDER:
    folder, specs = Path(FOLDER), pd.read_csv(Path(FOLDER).parent / "hardware_specs.csv")
    print(f"measurements: the tables of {folder}")
else:
    folder, specs = OUT / "measurements", SPECS
    folder.mkdir(exist_ok=True)
    write_example_table(folder)
    SPECS.to_csv(OUT / "hardware_specs.csv", index=False)
    print(f"measurements: a small illustrative table written to {folder / 'example.csv'}")

# %% [markdown]
# ## Into the schema
# One attempt per measurement; jobs are launch configurations; submit times
# put older hardware first. The notes list every value assumed.

# %%
log = from_measurements(read_measurements(folder), specs, job_columns=PUBLIC_JOB_COLUMNS)
attempts, hardware = log.attempts, log.hardware
print(f"{len(attempts)} attempts of {attempts['job_id'].nunique()} jobs on "
      f"{attempts['hardware_type'].nunique()} hardware types")
for note in log.notes:
    print(f"  note: {note}")

# %% Fit on every measurement
X = build_features(attempts, hardware)
model = LeapRegressor(n_estimators=TREES, random_state=0).fit(X, attempts["throughput"])

# %% [markdown]
# ## A new submission, ranked
# A configuration the table does not have: the most measured workload at a new
# batch size, in mixed precision (``amp``, the fp16 family), on one device, one second after the last
# measurement. Only hardware types with a cost can be ranked.

# %%
workload = attempts["model_type"].value_counts().index[0]
like = attempts[attempts["model_type"] == workload].iloc[-1]
submission = pd.DataFrame({
    "job_id": ["new-job"], "model_type": [workload], "model_family": [like["model_family"]],
    "trainer_count": [1], "batch_size": [64], "precision": ["amp"],
    "seq_len": pd.array([like["seq_len"]], dtype="Int64"),
    "parallelism": [like["parallelism"]], "throughput_unit": [like["throughput_unit"]],
})
costed = hardware.loc[hardware["cost_per_device_hour"].notna(), "hardware_type"].tolist()
now = attempts["submit_time"].max() + pd.Timedelta(seconds=1)
ranking = place(model, submission, hardware, history=attempts, at=now, hardware_types=costed)
print(f"{workload}, batch 64, amp, one device; {len(costed)} of {len(hardware)} types have a cost")
print(ranking[["rank", "hardware_type", "predicted_throughput", "cost_per_hour",
               "throughput_per_cost"]].head(10).to_string(index=False))
ranking.to_csv(OUT / "ranking.csv", index=False)
print(f"recommended: {ranking['hardware_type'].iloc[0]}")
