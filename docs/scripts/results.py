"""Reproduce docs/results.md: the nightly backtest on a simulated fleet.

    python docs/scripts/results.py --preset production --nights 3 --out runs/results

writes the report folder and prints the Markdown tables that docs/results.md
quotes. The run is long on the production preset (each night fits every
model on ~750,000 attempts); --nights trades time for how many nights the
median covers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import leapml
from leapml.backtest import default_models, held_out, nightly
from leapml.fleet import simulate
from leapml.report import format_table, write_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=int, default=3, help="groups held out of each kind")
    parser.add_argument("--out", default="runs/results")
    args = parser.parse_args()

    started = time.perf_counter()
    commit = _commit()  # the code the run starts from, not where HEAD is when it ends
    fleet = simulate(args.preset, days=args.window_days + args.nights, seed=args.seed)
    models = default_models(random_state=args.seed)
    result = nightly(fleet.attempts, fleet.hardware, models=models, window_days=args.window_days,
                     nights=args.nights, oracle=fleet.expected_throughput, random_state=args.seed)
    experiments = {}
    for by in ("hardware_type", "model_family"):
        if args.held_out:
            experiments[by] = held_out(fleet.attempts, fleet.hardware, by=by, n_groups=args.held_out,
                                       model=models["leap"], window_days=args.window_days)
    path = write_report(result, args.out, title=f"leapml results ({args.preset})",
                        held_out=experiments)
    elapsed = time.perf_counter() - started
    meta = {"preset": args.preset, "nights": args.nights, "seed": args.seed,
            "attempts": len(fleet.attempts), "seconds": round(elapsed),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores", "leapml": leapml.__version__,
            "commit": commit}
    Path(args.out, "run.json").write_text(json.dumps(meta, indent=2))
    print(format_table(result.published_comparison(), percent=("ours", "published")))
    print()
    print(format_table(result.summary().reset_index(), percent=("median", "min", "max")))
    print()
    print(format_table(result.summary(metric="within_20_by_device_hours").reset_index(),
                       percent=("median", "min", "max")))
    print()
    print(format_table(result.regret_summary().reset_index(),
                       percent=("mean_regret", "p90_regret", "optimal_share")))
    for by, frame in experiments.items():
        print()
        print(f"held out: {by}")
        print(format_table(frame, percent=("in_distribution", "held_out")))
    print(f"\n{meta}; report: {path}")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    main()
