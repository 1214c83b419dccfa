"""Benchmark: accuracy lost on a hardware type or a model family never seen, for every one.

Simulates ``window + 1`` days of a preset and, for each model, holds out every
hardware type and every model family in turn (:func:`leapml.evaluation.held_out.held_out`):
the model is trained on the window without the group and scored on the
group's attempts of the next day, against the same model trained on
everything. Prints one row per group and model (within +-20 %, in
distribution and held out, and the drop in points), then the median and
worst drop per model, next to the published drops (37 points for a new
hardware type, 49.7 for an unseen model family)::

    python benchmarks/bench_held_out.py --preset small

Writes the full table to ``results/held_out_<preset>.csv``. ``--leap-config``
fits the ``leap`` model with other parameters, named as in
``bench_method_levers.py`` (``--leap-config cold_start_hardware=0.3``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
from bench_method_levers import make_model

from leapml import PUBLISHED, LeapRegressor
from leapml.evaluation.baselines import single_model_reference
from leapml.evaluation.held_out import held_out
from leapml.fleet import simulate

RESULTS = Path(__file__).parent / "results"
PUBLISHED_DROP = {"hardware_type": 37.0, "model_family": 49.7}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--by", nargs="+", default=["hardware_type", "model_family"])
    parser.add_argument("--published", action=argparse.BooleanOptionalAction, default=False,
                        help="also hold out with LeapRegressor(**leapml.PUBLISHED)")
    parser.add_argument("--models", nargs="+", default=["leap", "single_lightgbm"],
                        choices=["leap", "single_lightgbm"],
                        help="which models to hold out with (default: both)")
    parser.add_argument("--groups", nargs="+", default=None,
                        help="hold out only these (default: every group of each --by); a long run "
                             "can go in chunks, each writing its own --out")
    parser.add_argument("--leap-config", default="default",
                        help="LeapRegressor parameters of the leap model, as bench_method_levers.py "
                             "names them (default: the default)")
    parser.add_argument("--out", type=Path, default=None,
                        help="CSV of the full table (default: results/held_out_<preset>.csv)")
    args = parser.parse_args()

    started = time.perf_counter()
    fleet = simulate(args.preset, days=args.window_days + 1, seed=args.seed)
    models = {"leap": make_model(args.leap_config, args.seed),
              "single_lightgbm": single_model_reference(random_state=args.seed)}
    models = {name: model for name, model in models.items() if name in args.models}
    if args.published:
        models["leap_published"] = LeapRegressor(random_state=args.seed, **PUBLISHED)
    frames = []
    for by in args.by:
        # every group; those without an attempt to score that day are skipped
        groups = args.groups or sorted(fleet.attempts[by].astype(str).unique())
        for name, model in models.items():
            table = held_out(fleet.attempts, fleet.hardware, by=by, groups=groups, model=model,
                             window_days=args.window_days, progress=False)
            frames.append(table.reset_index().assign(by=by, model=name))
    table = pd.concat(frames, ignore_index=True)
    out = args.out or RESULTS / f"held_out_{args.preset}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    pd.set_option("display.width", 200)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    summary = table.groupby(["by", "model"])["drop_points"].agg(["median", "max", "count"])
    summary["published_drop"] = [PUBLISHED_DROP[by] for by, _ in summary.index]
    # how far off the level of a group never seen is: |median log(predicted / measured)|
    summary["median_abs_log_bias"] = table["held_out_log_bias"].abs().groupby(
        [table["by"], table["model"]]).median()
    print("\ndrop in points within +-20% (held out vs in distribution), over every group")
    print(summary.to_string(float_format=lambda v: f"{v:.1f}"))
    print(f"\n{len(fleet.attempts):,} attempts, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
