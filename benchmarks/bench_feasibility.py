"""Benchmark: the nightly fit of the feasibility model, with and without the memory need.

Simulates ``days=31`` of a preset and fits :func:`leapml.placement.fit_feasibility`
on the first 30 days twice per round, alternating: the default model (which
learns the memory need from ``peak_memory_gb``) and the same model with
``memory_need_features=None`` (the reference, measured in the same run). It
prints each fit's wall time, the ratio of the two (median of the rounds' ratios) and
the peak RSS of the process.

Run::

    python benchmarks/bench_feasibility.py                  # production, 2 threads, 2 rounds
    python benchmarks/bench_feasibility.py --preset small --rounds 5
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from leapml.fleet import simulate
from leapml.training import feasibility_model, fit_feasibility


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    fleet = simulate(args.preset, days=31, seed=args.seed)
    models = {"memory need (default)": feasibility_model(n_jobs=args.threads),
              "without it (reference)": feasibility_model(n_jobs=args.threads,
                                                          memory_need_features=None)}
    seconds = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, model in models.items():
            start = time.perf_counter()
            fit_feasibility(fleet.attempts, fleet.hardware, window_days=30, model=model)
            seconds[name].append(time.perf_counter() - start)
    rows = len(fleet.attempts)
    print(f"{args.preset}, seed {args.seed}, {rows:,} attempts, {args.threads} threads, "
          f"{args.rounds} rounds")
    print("| model | median seconds | ratio to the reference |")
    print("|---|---|---|")
    reference = np.array(seconds["without it (reference)"])
    for name, values in seconds.items():
        ratio = np.median(np.array(values) / reference)  # round by round: the pair ran together
        print(f"| {name} | {np.median(values):.1f} | {ratio:.2f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"peak RSS: {peak:.2f} GB")


if __name__ == "__main__":
    main()
