"""How far the feasibility model's memory need misses next day, with and without need products.

Run from the repository root::

    python docs/scripts/need_model_error.py --preset small --days 34 --nights 3 --seed 0

Each night fits the default feasibility model (``fit_feasibility``) on the
30 days before it, once as it is and once with its need model also reading
the log of each product of ``--products`` (default: the FLOPs of one
trainer's step, ``flops_per_sample x batch_size``), then predicts the
memory one trainer needs (``FeasibilityClassifier.predict_memory_need``)
for the next day's completed runs and compares it with the peak each held.
It prints, by slice (every run; runs of new jobs; runs of new jobs whose
model type has fewer than ``--rare`` peaks in the window), the rows, the
median absolute log error and the share of runs whose need was
underpredicted by more than a factor of 1.5 (an underpredicted need is how
a job is let onto memory it does not fit), averaged over the nights. The
figures are quoted in ``docs/results.md`` ("Placements a scheduler can act
on").
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from placement_results import _markdown

from leapml.features import PeakLog, build_features
from leapml.fleet import simulate
from leapml.training import feasibility_model, fit_feasibility, with_measured_peaks

_DAY = pd.Timedelta(days=1)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--days", type=int, default=34)
    parser.add_argument("--nights", type=int, default=3)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rare", type=int, default=30,
                        help="a model type with fewer peaks than this in the window is rare")
    parser.add_argument("--products", nargs="+", default=["flops_per_sample*batch_size"],
                        help="products of columns, each written a*b")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    products = [tuple(p.split("*")) for p in args.products]
    if args.days < args.window_days + args.nights:
        parser.error("--days must cover --window-days and --nights")

    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    attempts, hardware = fleet.attempts.reset_index(drop=True), fleet.hardware
    peaks = PeakLog.of(attempts, hardware)
    first = attempts["submit_time"].dt.floor("D").min() + args.window_days * _DAY
    peak = pd.to_numeric(attempts["peak_memory_gb"]).to_numpy(dtype=float, na_value=np.nan)
    measured = (attempts["status"].astype(str) == "ok").to_numpy() & (peak > 0)
    rows = []
    for night in (first + i * _DAY for i in range(args.nights)):
        t = attempts["submit_time"]
        before = (t < night).to_numpy()
        window = before & (t >= night - args.window_days * _DAY).to_numpy() & measured
        scored = ((t >= night) & (t < night + _DAY)).to_numpy() & measured
        new = scored & ~attempts["job_id"].isin(attempts.loc[window, "job_id"]).to_numpy()
        counts = attempts.loc[window, "model_type"].astype(str).value_counts()
        rare = new & (attempts["model_type"].astype(str).map(counts).fillna(0).to_numpy()
                      < args.rare)
        slices = {"all": scored, "new jobs": new, f"new jobs, model type under {args.rare} peaks": rare}
        features = build_features(attempts[scored], hardware, history=attempts)
        for name, need_products in (("default", None), ("with products", products)):
            classifier = fit_feasibility(
                attempts[before], hardware, window_days=args.window_days, until=night,
                model=feasibility_model(memory_need_products=need_products, n_jobs=args.threads))
            X = with_measured_peaks(features, classifier, attempts[scored], peaks, hardware)
            error = pd.Series(np.nan, index=attempts.index)
            error[scored] = np.log(classifier.predict_memory_need(
                X[list(classifier.feature_names_in_)]) / peak[scored])
            for label, mask in slices.items():
                e = error[mask].to_numpy()
                rows.append({"need model": name, "slice": label, "night": night, "rows": mask.sum(),
                             "median_abs_log_error": np.median(np.abs(e)) if len(e) else np.nan,
                             "under_by_1.5x": np.mean(e < -np.log(1.5)) if len(e) else np.nan})
    table = (pd.DataFrame(rows).groupby(["slice", "need model"], sort=False)
             [["rows", "median_abs_log_error", "under_by_1.5x"]].mean().reset_index())
    table = table.sort_values("slice", kind="stable", key=lambda c: c.map(
        {name: i for i, name in enumerate(slices)}))
    print(f"{args.preset}, seed {args.seed}, {args.nights} nights, products {args.products}; "
          "mean over nights\n")
    print(_markdown(table))


if __name__ == "__main__":
    main()
