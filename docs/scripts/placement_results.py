"""Figures of the "Placements a scheduler can act on" section of docs/results.md.

Run: ``python docs/scripts/placement_results.py --preset small --days 40 --nights 3``
(prints markdown tables; ``--held-out TYPE`` measures a hardware type no
model trained on instead).
"""

from __future__ import annotations

import argparse

from leapml.evaluation.backtest import default_models
from leapml.evaluation.placement_backtest import placement_backtest
from leapml.fleet import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--jobs-per-night", type=int, default=300)
    parser.add_argument("--n-estimators", type=int, default=50)
    parser.add_argument("--held-out", default=None, help="a hardware type no model trains on")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    models = default_models(random_state=args.seed, n_estimators=args.n_estimators)
    keep = ("leap",) if args.held_out else ("leap", "single_lightgbm", "lookup_table", "persistence")
    result = placement_backtest(
        fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput,
        models={name: models[name] for name in keep}, window_days=args.window_days,
        nights=args.nights, jobs_per_night=args.jobs_per_night,
        held_out_hardware=args.held_out, random_state=args.seed,
    )
    print(_markdown(result.summary()))
    print()
    print(_markdown(result.feasibility_scores.drop(columns="night").mean().to_frame().T))
    print()
    intervals = result.intervals
    # pooled over nights: coverage weighted by attempts
    intervals = intervals.assign(inside=intervals["coverage"] * intervals["attempts"])
    pooled = intervals.groupby(["policy", "slice"], sort=False).agg(
        attempts=("attempts", "sum"), inside=("inside", "sum"),
        median_width=("median_width", "median"))
    pooled["coverage"] = pooled.pop("inside") / pooled["attempts"]
    print(_markdown(pooled.reset_index()))


def _markdown(frame) -> str:
    """A pipe table, numbers to three decimals."""
    def cell(value):
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
