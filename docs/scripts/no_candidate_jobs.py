"""Which jobs the placement backtest leaves with no rankable hardware type, and what the log knew of them.

Run from the repository root::

    python docs/scripts/no_candidate_jobs.py --preset small --days 40 --nights 3 --seed 0

Runs the placement backtest of ``placement_results.py`` for the default
model alone and prints, for each job of the learned-feasibility,
throughput-per-cost picks that had no rankable candidate, its model family,
precision and model type, and how many completed runs of each the log held
before the night (``docs/results.md``, "Placements a scheduler can act on");
``--no-peak-memory`` reads a log without ``peak_memory_gb``.
"""

from __future__ import annotations

import argparse

import pandas as pd

from leapml.evaluation.backtest import default_models
from leapml.evaluation.placement_backtest import placement_backtest
from leapml.fleet import simulate


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--jobs-per-night", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="LightGBM threads per model")
    parser.add_argument("--no-peak-memory", action="store_true",
                        help="a log without peak_memory_gb: no memory need is learned")
    args = parser.parse_args(argv)
    fleet = simulate(args.preset, days=args.days, seed=args.seed,
                     peak_memory=not args.no_peak_memory)
    model = default_models(random_state=args.seed, n_jobs=args.threads)["leap"]
    result = placement_backtest(fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput,
                                models={"leap": model}, window_days=30, nights=args.nights,
                                jobs_per_night=args.jobs_per_night, random_state=args.seed)
    picks = result.picks
    picks = picks[(picks["feasibility"] == "learned") & (picks["objective"] == "throughput_per_cost")]
    stuck = picks[picks["no_candidate"]]
    attempts = fleet.attempts
    first = attempts.drop_duplicates("job_id").set_index("job_id")
    done = attempts[attempts["status"].astype(str) == "ok"]
    rows = []
    for _, pick in stuck.iterrows():
        job = first.loc[pick["job_id"]]
        before = done[done["end_time"] < pd.Timestamp(pick["night"])]
        rows.append({"night": pick["night"], "job_id": pick["job_id"],
                     **{name: str(job[name]) for name in ("model_family", "precision", "model_type")},
                     **{f"{name}_runs": int((before[name].astype(str) == str(job[name])).sum())
                        for name in ("model_family", "precision", "model_type")}})
    print(f"{len(stuck)} of {len(picks)} placements with no rankable candidate\n")
    if rows:
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
