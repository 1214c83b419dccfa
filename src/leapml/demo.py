"""The demo: simulate a fleet, replay nightly retraining, write a report.

``leapml demo`` on the command line calls :func:`run_demo`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .backtest import default_models, held_out, nightly
from .report import format_table, write_report

__all__ = ["run_demo"]


def run_demo(
    out: str | os.PathLike = "leapml-report",
    *,
    preset: str = "small",
    nights: int = 3,
    window_days: int = 30,
    seed: int = 0,
    n_estimators: int | None = None,
    held_out_groups: int = 1,
    n_jobs: int = -1,
    progress: bool = True,
    echo=print,
) -> Path:
    """Simulate ``preset``, backtest ``nights`` nights, and write a report folder.

    Parameters
    ----------
    out : path
        Folder for ``report.md``, the result tables and the plots.
    preset : str, default="small"
        Fleet preset (see :func:`leapml.fleet.simulate`).
    nights : int, default=3
        Nights to score after the first ``window_days`` days.
    window_days : int, default=30
        Training window of each night.
    seed : int, default=0
        Seed of the fleet and of every model.
    n_estimators : int, optional
        Trees per LightGBM model; fewer make a faster, rougher demo.
    held_out_groups : int, default=1
        Hardware types and model families to hold out (0 skips the experiment).
    n_jobs : int, default=-1
        Threads each model fits with (-1: every core); nights run one after
        another, which on a few cores is faster than running them in parallel.
    progress : bool, default=True
        Show progress bars.
    echo : callable, default=print
        Where the summary tables go.

    Returns
    -------
    Path
        The path of ``report.md``.

    Examples
    --------
    >>> import tempfile
    >>> path = run_demo(tempfile.mkdtemp(), preset="tiny", nights=1, window_days=3,
    ...                 n_estimators=5, held_out_groups=0, progress=False, echo=lambda *a: None)
    >>> path.name
    'report.md'
    """
    from .fleet import describe, format_description, simulate

    started = time.perf_counter()
    days = window_days + nights
    echo(f"Simulating the '{preset}' fleet: {days} days, seed {seed} ...")
    fleet = simulate(preset, days=days, seed=seed)
    echo(f"  {len(fleet.attempts):,} attempts on {fleet.attempts['hardware_type'].nunique()} hardware types")
    models = default_models(random_state=seed, n_estimators=n_estimators, n_jobs=n_jobs)
    echo(f"Backtesting {nights} night(s), each trained on the previous {window_days} days ...")
    result = nightly(
        fleet.attempts,
        fleet.hardware,
        models=models,
        window_days=window_days,
        nights=nights,
        oracle=fleet.expected_throughput,
        random_state=seed,
        progress=progress,
    )
    experiments = {}
    if held_out_groups > 0:
        for by in ("hardware_type", "model_family"):
            echo(f"Holding out {held_out_groups} {by.replace('_', ' ')}(s) ...")
            experiments[by.replace("_", " ")] = held_out(
                fleet.attempts,
                fleet.hardware,
                by=by,
                n_groups=held_out_groups,
                model=models["leap"],
                window_days=window_days,
                progress=progress,
            )
    description = describe(fleet)
    preamble = (
        f"Synthetic fleet: preset `{preset}`, seed {seed}, {days} days, "
        f"{len(fleet.attempts):,} attempts. Each night every model is fitted on the completed "
        f"attempts of the previous {window_days} days and scored on the next day's.\n\n"
        "### The simulated fleet\n\n" + format_description(description)
    )
    path = write_report(result, out, title="leapml demo", preamble=preamble, held_out=experiments)
    echo("")
    echo(format_table(result.published_comparison(), percent=("ours", "published")))
    echo("")
    echo(format_table(result.regret_summary().reset_index(),
                      percent=("mean_regret", "p90_regret", "optimal_share")))
    echo(f"\nReport written to {path} ({time.perf_counter() - started:.0f} s)")
    return path
