"""Benchmark: simulate the production fleet (60 days, ~1.5M attempts).

Prints the wall time and peak resident memory of ``simulate("production")``
and, as a reference measured in the same run on the same machine, the time
to draw the same number of lognormal random numbers five times over (the
simulator draws a handful per attempt and evaluates the physics on top).
The requirement is under 2 minutes on 2 cores.

Run: ``python benchmarks/bench_simulate.py [--preset production] [--days 60]``
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from leapml.fleet import simulate


def peak_rss_mb() -> float:
    """Peak resident set size of this process, MB."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 / 1024 if sys.platform == "darwin" else rss / 1024


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    wall = time.perf_counter() - t0
    n = len(fleet.attempts)

    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(5):
        rng.lognormal(0.0, 0.1, n)
    reference = time.perf_counter() - t0

    print(f"simulate({args.preset!r}, days={args.days}): {n:,} attempts, {len(fleet.jobs):,} jobs")
    print(f"  wall time        {wall:8.1f} s  (requirement: < 120 s on 2 cores)")
    print(f"  peak RSS         {peak_rss_mb():8.0f} MB")
    print(f"  reference        {reference:8.2f} s  (5 x {n:,} lognormal draws)")
    print(f"  ratio            {wall / reference:8.0f} x reference")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
