"""How well a job's own runs in its configuration predict its next run (docs/features.md).

Simulates ``small`` (31 days, seed 0), builds the features of every attempt
and, for the completed attempts of the last day whose job ran on the same
hardware type before, prints the share whose configuration ran there before
and how often the mean of those runs is within +-20% of the measured
throughput, next to the job's last run on the type (persistence)::

    python docs/scripts/repeat_runs.py
"""

from __future__ import annotations

import argparse

import numpy as np

from leapml.evaluation.metrics import within_tolerance
from leapml.features import build_features
from leapml.fleet import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=31)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    log = fleet.attempts
    X = build_features(log, fleet.hardware)
    last_day = log["submit_time"] >= log["submit_time"].max().floor("D")
    scored = (last_day & (log["status"] == "ok")).to_numpy() & (X["job_runs_same_hardware"] > 0).to_numpy()
    y = log.loc[scored, "throughput"].to_numpy(float)
    rows = X[scored]
    same = (rows["job_config_runs_same_hardware"] > 0).to_numpy()
    mean = np.exp(rows["job_config_mean_log_throughput_same_hardware"].to_numpy(float))
    last = rows["job_last_throughput_same_hardware"].to_numpy(float)
    print(f"{scored.sum():,} completed attempts on the last day of jobs seen on the type before")
    print(f"  with runs of this very configuration there: {same.mean():.1%}")
    print(f"  on those, mean of the configuration's runs within +-20%: "
          f"{within_tolerance(y[same], mean[same], tol=0.2):.1%}")
    print(f"  on those, the job's last run on the type within +-20%: "
          f"{within_tolerance(y[same], last[same], tol=0.2):.1%}")


if __name__ == "__main__":
    main()
