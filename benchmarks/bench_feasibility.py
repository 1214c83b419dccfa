"""Benchmark: the nightly fit of the feasibility model, with and without what peak memory gives.

Simulates ``days=31`` of a preset and fits :func:`leapml.placement.fit_feasibility`
on the first 30 days three times per round, in turn: the default model (which
learns the memory need from ``peak_memory_gb`` and reads each job's own
earlier peak), the same model without the job's own peak
(``measured_need_column=None``), and without either (the reference, measured
in the same run). It prints each fit's wall time, its ratio to the reference
(median of the rounds' ratios) and the peak RSS of the process.

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
    models = {"memory need and the job's own peak (default)": feasibility_model(n_jobs=args.threads),
              "memory need alone": feasibility_model(n_jobs=args.threads,
                                                     measured_need_column=None),
              "without either (reference)": feasibility_model(
                  n_jobs=args.threads, memory_need_features=None, measured_need_column=None)}
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
    reference = np.array(seconds["without either (reference)"])
    for name, values in seconds.items():
        ratio = np.median(np.array(values) / reference)  # round by round: the pair ran together
        print(f"| {name} | {np.median(values):.1f} | {ratio:.2f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"peak RSS: {peak:.2f} GB")


if __name__ == "__main__":
    main()
