"""Figures of the "Placements a scheduler can act on" section of docs/results.md.

Run: ``python docs/scripts/placement_results.py --preset small --days 40 --nights 3``
(prints markdown tables; ``--held-out TYPE`` measures a hardware type no
model trained on instead; ``--seed 0 1 2`` repeats the run on several
simulated fleets and adds the mean over them; ``--min-fit-probability 0.5
0.9`` scores learned feasibility at each threshold; ``--policies leap``
keeps the run to the cascade; ``--no-memory-floors`` measures the
feasibility model as it was before its memory floors and ceilings;
``--no-memory-ceilings`` the default one less its memory ceilings;
``--memory-floor-override none`` the default one with its floors kept whole
(``0.99``: a lower bar), ``--no-override-backing`` with the override on the
classifier's word alone; ``--no-memory-need`` without the memory need learned
from the runs' peak memory (nor the job's own earlier peak),
``--no-measured-need`` without the job's own earlier peak alone,
``--need-products`` with the FLOPs of a trainer's step in the need model,
``--memory-need-quantile 0.8`` with a smaller margin below the floors;
``--if-none-fit most_likely`` gives a job no type is likely enough to fit
its most likely type instead of a failed launch; ``--rule-factor 0`` lets
the memory floors and ceilings set a probability to 0, as before they
scaled it by ``RULE_FACTOR``).
Each policy is also placed with feasibility ``submission``, a bound: a new
job's probability of fitting over the simulator's prior of its hidden
factors (``Fleet.fit_probability_at_submission``), the truth for the others.
"""

from __future__ import annotations

import argparse

import pandas as pd

from leapml.evaluation.backtest import default_models
from leapml.evaluation.placement_backtest import placement_backtest
from leapml.feasibility import FeasibilityClassifier
from leapml.fleet import simulate
from leapml.ranking import DEFAULT_OBJECTIVE, IF_NONE_FIT
from leapml.training import (
    EVIDENCE_COLUMNS,
    MEMORY_FLOOR_OVERRIDE,
    MONOTONE_FEATURES,
    feasibility_model,
)

_POLICIES = ("leap", "single_lightgbm", "lookup_table", "persistence")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--jobs-per-night", type=int, default=300)
    parser.add_argument("--n-estimators", type=int, default=None,
                        help="trees of every LightGBM model (default: each model's own)")
    parser.add_argument("--threads", type=int, default=None, help="LightGBM threads per model")
    parser.add_argument("--held-out", default=None, help="a hardware type no model trains on")
    parser.add_argument("--seed", type=int, nargs="+", default=[0])
    parser.add_argument("--min-fit-probability", type=float, nargs="+", default=[0.5])
    parser.add_argument("--no-memory-floors", action="store_true",
                        help="the feasibility model without memory floors, as before them")
    parser.add_argument("--memory-floor-ratio", type=float, default=None,
                        help="the default feasibility model keeping out only memory below this "
                             "share of a floor (FeasibilityClassifier(memory_floor_ratio=...))")
    parser.add_argument("--memory-floor-override", type=_override, default=MEMORY_FLOOR_OVERRIDE,
                        help="the classifier's probability at or above which a job below a memory "
                             "floor keeps it (FeasibilityClassifier(memory_floor_override=...); "
                             f"default {MEMORY_FLOOR_OVERRIDE}, fit_feasibility's; 'none': the "
                             "floors kept whole)")
    parser.add_argument("--no-override-backing", action="store_true",
                        help="the override on the classifier's word alone, without the default's "
                             "backing by the family's completed work (memory_override_columns)")
    parser.add_argument("--no-memory-need", action="store_true",
                        help="the default feasibility model without the memory need it learns from "
                             "the runs' peak memory, nor the job's own earlier peak "
                             "(memory_need_features=None, measured_need_column=None)")
    parser.add_argument("--memory-need-quantile", type=float, default=None,
                        help="the quantile of measured over predicted need a row below its floor "
                             "must clear (FeasibilityClassifier(memory_need_quantile=...); "
                             "default 0.9)")
    parser.add_argument("--no-measured-need", action="store_true",
                        help="the default feasibility model without the job's own earlier peak "
                             "in its configuration (measured_need_column=None)")
    parser.add_argument("--need-products", action="store_true",
                        help="the default feasibility model, its need model also reading the "
                             "FLOPs of a trainer's step (memory_need_products="
                             "[('flops_per_sample', 'batch_size')])")
    parser.add_argument("--no-memory-ceilings", action="store_true",
                        help="the default feasibility model without its memory ceilings")
    parser.add_argument("--if-none-fit", choices=IF_NONE_FIT, default=IF_NONE_FIT[0],
                        help="a job with no type likely enough to fit: a failed launch, or its most likely type")
    parser.add_argument("--rule-factor", type=float, default=None,
                        help="what a memory rule multiplies a probability by (default: "
                             "RULE_FACTOR; 0: the rules set it to 0)")
    parser.add_argument("--policies", nargs="+", choices=_POLICIES, default=None,
                        help="default: all four, or leap alone with --held-out")
    args = parser.parse_args()
    keep = args.policies or (("leap",) if args.held_out else _POLICIES)
    runs = {seed: _run(args, seed, keep) for seed in args.seed}
    for seed, result in runs.items():
        print(f"seed {seed}\n")
        _print_run(result)
    if len(runs) > 1:
        print(f"mean over seeds {args.seed}\n")
        summaries = pd.concat([result.summary() for result in runs.values()])
        keys = [c for c in summaries.columns
                if c not in ("jobs", "mean_regret", "p90_regret", "infeasible_pick_rate",
                             "no_candidate_rate")]
        print(_markdown(summaries.groupby(keys, dropna=False, sort=False)
                        .mean(numeric_only=True).reset_index()))
        print()
        scores = pd.concat([result.feasibility_scores for result in runs.values()])
        print(_markdown(scores.drop(columns="night").groupby("min_fit_probability")
                        .mean().reset_index()))
        print()
        intervals = pd.concat([result.intervals.assign(seed=seed)
                               for seed, result in runs.items()], ignore_index=True)
        print(f"interval coverage pooled over seeds {args.seed}\n")
        print(_markdown(_pooled(intervals)))
        print()
        print("overall coverage of each night\n")
        overall = intervals[intervals["slice"] == "all"] if "slice" in intervals else intervals
        print(_markdown(_pooled(overall, by=("policy", "seed", "night"))))


def _run(args, seed, keep):
    fleet = simulate(args.preset, days=args.days, seed=seed)
    models = default_models(random_state=seed, n_estimators=args.n_estimators, n_jobs=args.threads)
    return placement_backtest(
        fleet.attempts, fleet.hardware, oracle=fleet.expected_throughput,
        models={name: models[name] for name in keep}, window_days=args.window_days,
        nights=args.nights, jobs_per_night=args.jobs_per_night,
        min_fit_probability=args.min_fit_probability, feasibility=_feasibility(args),
        held_out_hardware=args.held_out, random_state=seed, if_none_fit=args.if_none_fit,
        fit_at_submission=fleet.fit_probability_at_submission,
    )


def _override(value: str):
    return None if value == "none" else float(value)


def _feasibility(args):
    """fit_feasibility's default model, or that model with the levers of the options."""
    if args.no_memory_floors:
        return FeasibilityClassifier(evidence_columns=list(EVIDENCE_COLUMNS),
                                     monotone=dict(MONOTONE_FEATURES), random_state=0)
    levers = {"memory_floor_ratio": args.memory_floor_ratio or 1.0,
              "memory_floor_override": args.memory_floor_override}
    if args.no_memory_ceilings:
        levers["memory_ceiling_columns"] = None
    if args.rule_factor is not None:
        levers["rule_factor"] = args.rule_factor
    if args.no_memory_need:
        levers.update(memory_need_features=None, measured_need_column=None)
    if args.no_measured_need:
        levers["measured_need_column"] = None
    if args.need_products:
        levers["memory_need_products"] = [("flops_per_sample", "batch_size")]
    if args.memory_need_quantile is not None:
        levers["memory_need_quantile"] = args.memory_need_quantile
    if args.no_override_backing:
        levers.update(memory_override_columns=None, memory_override_load=None)
    return feasibility_model(**levers)


def _print_run(result) -> None:
    """The run's regret table, feasibility scores and interval coverage."""
    print(_markdown(result.summary()))
    print()
    print("by what the log knew of the job (learned and submission: the default objective)\n")
    split = result.summary(by="job_history")
    print(_markdown(split[(split["objective"] == DEFAULT_OBJECTIVE) | (split["feasibility"] == "true")]))
    print()
    print(_markdown(result.feasibility_scores.drop(columns="night")
                    .groupby("min_fit_probability").mean().reset_index()))
    print()
    print(_markdown(_pooled(result.intervals)))
    print()


def _pooled(intervals, by=("policy", "slice")):
    """Coverage pooled over nights (weighted by attempts), median width, per ``by``
    (no rows where no policy gives intervals, such as the single model alone)."""
    if "coverage" not in intervals:
        return pd.DataFrame(columns=[*by, "attempts", "median_width", "coverage"])
    intervals = intervals.assign(inside=intervals["coverage"] * intervals["attempts"])
    pooled = intervals.groupby(list(by), sort=False).agg(
        attempts=("attempts", "sum"), inside=("inside", "sum"),
        median_width=("median_width", "median"))
    pooled["coverage"] = pooled.pop("inside") / pooled["attempts"]
    return pooled.reset_index()


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
