"""Benchmark: one submission's ``place`` in two source trees, timed in turn.

Two source trees of leapml (two checkouts, e.g. ``git worktree add``) each
run in their own process, with their own ``src`` on ``PYTHONPATH`` and their
own ``benchmarks/bench_submission.py`` to fit their model (``--model-a``,
``--model-b``: names of that tree's ``MODELS``). Each process fits once,
then the two take turns: A times one pass of ``place`` over the same
``--jobs`` submissions of day 31, then B, then A again, ``--rounds`` times.
Taking turns pass by pass keeps both trees on the same machine state, so the
ratio of each pair holds where a shared machine's speed drifts between whole
runs. Printed: each tree's median over the rounds of the pass's p50, p99
and mean per call, and the median (min, max) of the pairwise ratios B / A
(below 1: B is faster).

Run::

    git worktree add /tmp/before 755578e
    python benchmarks/bench_trees.py /tmp/before . --model-a ordinal --model-b ordinal_hard
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

FIGURES = ("p50", "p99", "mean")


def child(args) -> int:
    """Fit the tree's model, then time one pass of ``place`` for each line read on stdin."""
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    from bench_submission import add_scoring_arguments, scored_day

    from leapml.features import HistoryIndex
    from leapml.placement import place

    parser = argparse.ArgumentParser()
    add_scoring_arguments(parser)
    day = scored_day(parser.parse_args(["--preset", args.preset, "--seed", str(args.seed),
                                        "--routers", args.model]))
    index = HistoryIndex(day.history, day.hardware)
    model = day.models[args.model]
    jobs = [day.jobs.iloc[[i]] for i in range(min(args.jobs, len(day.jobs)))]

    def one_pass() -> list[float]:
        seconds = []
        for job in jobs:
            start = time.perf_counter()
            place(model, job, day.hardware, history=index, hardware_types=day.types)
            seconds.append(time.perf_counter() - start)
        return sorted(seconds)

    one_pass()  # warm
    print("ready", flush=True)
    for _ in sys.stdin:
        s = one_pass()
        figures = {"p50": s[len(s) // 2], "p99": s[int(len(s) * 0.99)], "mean": sum(s) / len(s)}
        print(json.dumps(figures), flush=True)
    return 0


def start(tree: Path, model: str, args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), OMP_WAIT_POLICY="PASSIVE")
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child", "--model", model,
         "--preset", args.preset, "--seed", str(args.seed), "--jobs", str(args.jobs)],
        cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    if process.stdout.readline().strip() != "ready":
        raise SystemExit(f"{tree}: the model did not fit (see the error above)")
    return process


def turn(process: subprocess.Popen) -> dict:
    process.stdin.write("go\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree_a", type=Path, nargs="?")
    parser.add_argument("tree_b", type=Path, nargs="?")
    parser.add_argument("--model-a", default="ordinal_hard")
    parser.add_argument("--model-b", default="ordinal_hard")
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=400, help="submissions per pass")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.tree_a is None or args.tree_b is None:
        parser.error("give two source trees")
    # one fits, then the other: nothing is timed while a model fits
    a = start(args.tree_a.resolve(), args.model_a, args)
    b = start(args.tree_b.resolve(), args.model_b, args)
    rounds = [(turn(a), turn(b)) for _ in range(args.rounds)]
    for process in (a, b):
        process.stdin.close()
        process.wait()
    print(f"{args.preset}, {args.jobs} submissions a pass, {args.rounds} rounds; "
          f"A = {args.tree_a} ({args.model_a}), B = {args.tree_b} ({args.model_b})")
    print(f"{'figure':8} {'A ms':>8} {'B ms':>8} {'B / A':>7} {'min':>6} {'max':>6}")
    for name in FIGURES:
        ratios = [y[name] / x[name] for x, y in rounds]
        print(f"{name:8} {statistics.median(x[name] for x, _ in rounds) * 1e3:8.3f} "
              f"{statistics.median(y[name] for _, y in rounds) * 1e3:8.3f} "
              f"{statistics.median(ratios):7.3f} {min(ratios):6.3f} {max(ratios):6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
