"""Reproduce docs/results.md: the nightly backtest on a simulated fleet.

    python docs/scripts/results.py --preset production --nights 10 --held-out 0 --out runs/results

writes the report folder and prints the Markdown tables that docs/results.md
quotes: the published figures, the nights' spread, accuracy on every slice
with both ceilings (the noiseless truth, and the submission-time ceiling that
estimates each job's hidden factor from its finished runs) and each model's
gap to the latter, and placement regret with known feasibility and among the
types each policy considers. Outcomes count from when runs end (the log's
``end_time``). The run is long on the production preset (each night fits
every model on ~750,000 attempts); --nights trades time for how many nights
the median covers. Progress goes to stderr, one line per night.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import leapml
from leapml.evaluation.backtest import default_models, nightly
from leapml.evaluation.baselines import single_model_reference
from leapml.evaluation.held_out import held_out
from leapml.evaluation.regret import SUBMISSION_CEILING
from leapml.evaluation.report import format_table, write_report
from leapml.fleet import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=int, default=3, help="groups held out of each kind")
    parser.add_argument("--out", default="runs/results")
    parser.add_argument("--models", nargs="+", default=None,
                        help="score only these of default_models() (e.g. leap lookup_table)")
    parser.add_argument("--threads", type=int, default=None, help="LightGBM threads per model")
    parser.add_argument("--published", action=argparse.BooleanOptionalAction, default=True,
                        help="also score LeapRegressor(**leapml.PUBLISHED) as 'leap_published'")
    parser.add_argument("--single-huber", action="store_true",
                        help="also score the single model on the Huber loss as 'single_huber'")
    args = parser.parse_args()

    started = time.perf_counter()
    commit = _commit()  # the code the run starts from, not where HEAD is when it ends
    fleet = simulate(args.preset, days=args.window_days + args.nights, seed=args.seed)
    models = default_models(random_state=args.seed, n_jobs=args.threads)
    if args.models:
        models = {name: models[name] for name in args.models}
    if args.published:
        models["leap_published"] = leapml.LeapRegressor(random_state=args.seed, n_jobs=args.threads,
                                                        **leapml.PUBLISHED)
    if args.single_huber:
        models["single_huber"] = single_model_reference(random_state=args.seed, objective="huber",
                                                        n_jobs=1 if args.threads is None else args.threads)
    print(f"simulated {len(fleet.attempts):,} attempts in {time.perf_counter() - started:.0f} s", flush=True)
    result = nightly(fleet.attempts, fleet.hardware, models=models, window_days=args.window_days,
                     nights=args.nights, oracle=fleet.expected_throughput,
                     submission_oracle=fleet.expected_at_submission, random_state=args.seed)
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
            "commit": commit, "command": "python docs/scripts/results.py " + " ".join(sys.argv[1:])}
    Path(args.out, "run.json").write_text(json.dumps(meta, indent=2))
    print(format_table(result.published_comparison(), percent=("ours", "published")))
    print()
    summary = result.summary().reset_index()
    summary["spread_points"] = 100 * (summary["max"] - summary["min"])
    print("accuracy within +-20%, all attempts, over nights (spread = best - worst night)")
    print(format_table(summary, percent=("median", "min", "max")))
    print()
    models = [str(m) for m in result.scores["model"].unique()]
    print("accuracy within +-20% on every slice (median over nights)")
    print(format_table(result.slice_summary().reset_index(), percent=tuple(models)))
    print()
    gaps = result.gap_to(SUBMISSION_CEILING)
    print("gap to the submission-time ceiling, within +-20%, in percentage points (median over nights)")
    print(format_table(gaps.reset_index(), percent=tuple(gaps.columns)))
    print()
    print(format_table(result.summary(metric="within_20_by_device_hours").reset_index(),
                       percent=("median", "min", "max")))
    print()
    for candidates in ("known_feasible", "considered"):
        print(f"placement regret, candidates: {candidates}")
        print(format_table(result.regret_summary(candidates=candidates).reset_index(),
                           percent=("mean_regret", "p90_regret", "optimal_share")))
        print()
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
