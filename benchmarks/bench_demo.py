"""Benchmark: wall time of ``leapml demo`` and of ``leapml --help``, as a new user runs them.

Runs ``python -m leapml.cli demo --quiet`` (``--size standard`` by default;
``quick`` and ``full`` too) in a fresh process, as the README's command
does, and, as references measured in the same run on the same machine, a
LightGBM fit of fixed size (100 trees, every core) before and after it. The
demo's requirement is <= 120 s on two idle cores; on a busy machine compare
the ratio to the reference, and the demo's CPU seconds (which bound the
wall time on two idle cores from both sides). ``leapml --help`` must answer in under 0.5 s: it
is timed against a bare ``python -c pass`` (median of 7 runs each).

``--steps`` runs the demo in this process instead and prints the CPU seconds
of each of its steps (``time.process_time``: every thread of the process,
far less sensitive to other processes' load than wall time); with
``--previous`` it runs the configuration that was the default before the
standard size dropped the model-family held-out experiment.

Run: ``python benchmarks/bench_demo.py [--size standard|quick|full] [--skip-demo]``
or ``python benchmarks/bench_demo.py --steps [--previous]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REFERENCE = """
import numpy as np
from lightgbm import LGBMRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(100_000, 20))
y = X[:, 0] + np.sin(X[:, 1]) + rng.normal(scale=0.1, size=len(X))
LGBMRegressor(n_estimators=100, num_leaves=63, n_jobs=-1, verbose=-1).fit(X, y)
"""


def timed(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def cpu_seconds() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def steps(size: str, previous: bool) -> None:
    """Run the demo here, printing the CPU and wall seconds between its step lines."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command does
    from leapml.demo import run_demo

    last = [time.process_time(), time.perf_counter()]

    def echo(*parts):
        now = [time.process_time(), time.perf_counter()]
        line = " ".join(map(str, parts)).splitlines()[0] if parts and str(parts[0]) else ""
        print(f"cpu +{now[0] - last[0]:6.1f} s  wall +{now[1] - last[1]:6.1f} s | {line[:110]}", flush=True)
        last[:] = now

    # the previous default: each model's own trees, 3 nights, hardware types and model families held out
    settings = {"size": "full", "nights": 3, "held_out_groups": 1} if previous else {"size": size}
    with tempfile.TemporaryDirectory() as out:
        run_demo(out, progress=False, echo=echo, **settings)
    print(f"total CPU {time.process_time():.1f} s; load average at end: {load()}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("quick", "standard", "full"), default="standard")
    parser.add_argument("--skip-demo", action="store_true", help="time --help alone")
    parser.add_argument("--steps", action="store_true", help="CPU seconds of each step, in-process")
    parser.add_argument("--previous", action="store_true", help="with --steps: the previous default")
    args = parser.parse_args(argv)
    if args.steps:
        steps(args.size, args.previous)
        return 0
    # the same environment the command sets for itself (see leapml.cli.main)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    python = sys.executable

    bare = statistics.median(timed([python, "-c", "pass"], env) for _ in range(7))
    helptime = statistics.median(timed([python, "-m", "leapml.cli", "--help"], env) for _ in range(7))
    print(f"load average (1, 5, 15 min) at start: {load()}, cores: {os.cpu_count()}")
    print(f"leapml --help      {helptime:7.3f} s  (requirement: < 0.5 s); bare python {bare:.3f} s, "
          f"ratio {helptime / bare:.1f}")
    results = {"help_seconds": helptime, "bare_python_seconds": bare}
    if not args.skip_demo:
        before = timed([python, "-c", REFERENCE], env)
        flags = [] if args.size == "standard" else [f"--{args.size}"]
        cpu_before = cpu_seconds()
        with tempfile.TemporaryDirectory() as out:
            demo = timed([python, "-m", "leapml.cli", "demo", "--quiet", "--out", out, *flags], env)
        demo_cpu = cpu_seconds() - cpu_before
        after = timed([python, "-c", REFERENCE], env)
        reference = (before + after) / 2
        print(f"leapml demo ({args.size})  {demo:7.1f} s  (requirement, standard: <= 120 s on 2 idle cores)")
        # CPU seconds barely move with other processes' load: on two idle cores the
        # wall time lies between half of them (both cores busy throughout) and all of them
        print(f"  CPU time         {demo_cpu:7.1f} s  (idle 2-core wall time between "
              f"{demo_cpu / 2:.0f} and {demo_cpu:.0f} s)")
        print(f"reference          {reference:7.1f} s  (LightGBM, 100 trees, 100,000 x 20, every core; "
              f"{before:.1f} s before, {after:.1f} s after)")
        print(f"ratio              {demo / reference:7.1f} x reference")
        print(f"load average at end: {load()}")
        results.update(size=args.size, demo_seconds=demo, demo_cpu_seconds=demo_cpu,
                       reference_seconds=reference, ratio=demo / reference)
    folder = Path(__file__).parent / "results"
    folder.mkdir(exist_ok=True)
    (folder / "bench_demo.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
