"""Figures of the "Placements a scheduler can act on" section of docs/results.md.

Run: ``python docs/scripts/placement_results.py --preset small --days 40 --nights 3``
(prints the markdown tables).
"""

from __future__ import annotations

import argparse

from leapml.backtest import default_models
from leapml.fleet import simulate
from leapml.placement_backtest import placement_backtest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--jobs-per-night", type=int, default=300)
    parser.add_argument("--n-estimators", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    models = {name: model for name, model in
              default_models(random_state=args.seed, n_estimators=args.n_estimators).items()
              if not isinstance(model, str)}
    result = placement_backtest(
        fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput, models=models,
        window_days=args.window_days, nights=args.nights, jobs_per_night=args.jobs_per_night,
        random_state=args.seed,
    )
    print(_markdown(result.summary()))
    print()
    print(_markdown(result.feasibility_scores.drop(columns="night").mean().to_frame().T))


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
