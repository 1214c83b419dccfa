"""Where the regret between learned and true feasibility comes from, by what the log knew of each job.

Run from the repository root::

    python docs/scripts/regret_gap.py --preset small --days 40 --nights 3 --seed 0

Runs the placement backtest of ``placement_results.py`` for the default
model alone (``--if-none-fit most_likely`` by default, the setting that
meets the infeasible-pick target) and splits its jobs by
:data:`~leapml.evaluation.placement_backtest.JOB_HISTORY`: new jobs, jobs
that ran before in other launch configurations only, and jobs that ran in
the configuration they are submitted with. For each it prints the jobs'
share, their mean regret ranked by throughput per cost with learned and
with true feasibility, and the points of the overall mean regret between
the two that the group carries, split into failed launches (a pick where
the job does not fit) and picks that fit but are worse than the best type
(a better type kept out, or ranked below). The figures are quoted in
``docs/results.md`` ("Placements a scheduler can act on").
"""

from __future__ import annotations

import argparse

import pandas as pd

from leapml.evaluation.backtest import default_models
from leapml.evaluation.placement_backtest import JOB_HISTORY, placement_backtest
from leapml.fleet import simulate
from leapml.ranking import IF_NONE_FIT, OBJECTIVES


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--jobs-per-night", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="LightGBM threads per model")
    parser.add_argument("--if-none-fit", choices=IF_NONE_FIT, default="most_likely")
    parser.add_argument("--objective", choices=OBJECTIVES, default="throughput_per_cost",
                        help="what ranks the learned-feasibility picks (the true ones: "
                             "throughput per cost, every type there fitting for sure)")
    args = parser.parse_args(argv)
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    model = default_models(random_state=args.seed, n_jobs=args.threads)["leap"]
    result = placement_backtest(fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput,
                                models={"leap": model}, window_days=args.window_days, nights=args.nights,
                                jobs_per_night=args.jobs_per_night, random_state=args.seed,
                                if_none_fit=args.if_none_fit)
    table = gap_table(result.picks, objective=args.objective)
    print("| " + " | ".join(table.columns) + " |\n|" + "---|" * table.shape[1])
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row) + " |")


def gap_table(picks: pd.DataFrame, objective: str = "throughput_per_cost") -> pd.DataFrame:
    """Per job history, the regret with learned and true feasibility and the points between them."""
    keys = ["night", "job_id"]
    learned = picks[(picks["feasibility"] == "learned")
                    & (picks["objective"] == objective)].set_index(keys)
    true = picks[(picks["feasibility"] == "true")
                 & (picks["objective"] == "throughput_per_cost")].set_index(keys)
    jobs = learned[["job_history", "regret", "infeasible"]].join(
        true[["regret"]].rename(columns={"regret": "regret_true"}), how="inner")
    gap = jobs["regret"] - jobs["regret_true"]
    total = len(jobs)
    rows = []
    for name in (*JOB_HISTORY, "all"):
        mine = jobs["job_history"] == name if name != "all" else pd.Series(True, index=jobs.index)
        rows.append({
            "jobs": name, "share %": 100 * mine.mean(),
            "regret learned %": 100 * jobs.loc[mine, "regret"].mean(),
            "regret true %": 100 * jobs.loc[mine, "regret_true"].mean(),
            "failed launches %": 100 * jobs.loc[mine, "infeasible"].mean(),
            "points of the gap": 100 * gap[mine].sum() / total,
            "of which failed launches": 100 * gap[mine & jobs["infeasible"]].sum() / total,
            "of which picks that fit": 100 * gap[mine & ~jobs["infeasible"]].sum() / total,
        })
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main()
