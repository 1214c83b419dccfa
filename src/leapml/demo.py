"""The demo: simulate a fleet, replay nightly retraining, write a report.

``leapml demo`` on the command line calls :func:`run_demo`. Three sizes
(:data:`SIZES`): ``"standard"`` (meant to take about two minutes on two idle
cores), ``"quick"`` (one night, nothing held out) and
``"full"`` (seven nights, hardware types and model families held out);
``benchmarks/bench_demo.py`` measures them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["SIZES", "run_demo"]

#: What each size of the demo runs; arguments given to :func:`run_demo` override them.
#: Every size keeps each model's own tree count (``n_estimators=None``): giving
#: ``leap`` and the 400-tree ``single_lightgbm`` one count would tilt the comparison.
SIZES = {
    "quick": {"preset": "small", "nights": 1, "window_days": 14, "n_estimators": None,
              "held_out_groups": 0, "held_out_by": ()},
    "standard": {"preset": "small", "nights": 2, "window_days": 14, "n_estimators": None,
                 "held_out_groups": 1, "held_out_by": ("hardware_type",)},
    "full": {"preset": "small", "nights": 7, "window_days": 30, "n_estimators": None,
             "held_out_groups": 2, "held_out_by": ("hardware_type", "model_family")},
}


def run_demo(
    out: str | os.PathLike = "leapml-report",
    *,
    size: str = "standard",
    preset: str | None = None,
    nights: int | None = None,
    window_days: int | None = None,
    seed: int = 0,
    n_estimators: int | None = None,
    held_out_groups: int | None = None,
    n_jobs: int = -1,
    progress: bool = True,
    echo=print,
) -> Path:
    """Simulate ``preset``, backtest ``nights`` nights, and write a report folder.

    Every option left as None takes the value of ``size`` (:data:`SIZES`).
    The arguments are checked before anything is simulated.

    Parameters
    ----------
    out : path
        Folder for ``report.md``, the result tables and the plots.
    size : {"quick", "standard", "full"}, default="standard"
        How much to run.
    preset : str, optional
        Fleet preset (see :func:`leapml.fleet.simulate`).
    nights : int, optional
        Nights to score after the first ``window_days`` days (at least 1).
    window_days : int, optional
        Training window of each night (at least 1).
    seed : int, default=0
        Seed of the fleet and of every model.
    n_estimators : int, optional
        Trees of every LightGBM model, ``leap``'s and ``single_lightgbm``'s
        alike; fewer make a faster, rougher demo. None keeps each model's own
        (100 for ``leap``, 400 for ``single_lightgbm``).
    held_out_groups : int, optional
        Groups to hold out in each held-out experiment (0 skips them): hardware
        types for ``"standard"``, hardware types and model families for ``"full"``.
    n_jobs : int, default=-1
        Threads each model fits with (-1: every core); nights run one after
        another, which on a few cores is faster than running them in parallel.
    progress : bool, default=True
        Show progress bars (which night, which model, time left).
    echo : callable, default=print
        Where the steps and the summary tables go.

    Returns
    -------
    Path
        The path of ``report.md``.

    Raises
    ------
    ValueError
        For an unknown size or preset, or nights, window or held-out groups
        out of range.

    Examples
    --------
    >>> import tempfile
    >>> path = run_demo(tempfile.mkdtemp(), preset="tiny", nights=1, window_days=3,
    ...                 n_estimators=5, held_out_groups=0, progress=False, echo=lambda *a: None)
    >>> path.name
    'report.md'
    """
    settings = _settings(size, preset=preset, nights=nights, window_days=window_days,
                         n_estimators=n_estimators, held_out_groups=held_out_groups)
    from .evaluation.backtest import default_models, nightly
    from .evaluation.held_out import held_out
    from .evaluation.report import format_table, model_trees, write_report
    from .fleet import CALIBRATION, describe, format_description, simulate

    preset, nights, window_days = settings["preset"], settings["nights"], settings["window_days"]
    groups = settings["held_out_groups"]
    kinds = settings["held_out_by"] if groups > 0 else ()
    steps = 4 + len(kinds)
    clock = _Steps(steps, echo)
    days = window_days + nights
    clock.start(f"Simulating the '{preset}' fleet ({CALIBRATION[preset].split(':')[0]}): "
                f"{days} days, seed {seed}")
    fleet = simulate(preset, days=days, seed=seed)
    clock.done(f"{len(fleet.attempts):,} attempts on {fleet.attempts['hardware_type'].nunique()} "
               "hardware types")
    models = default_models(random_state=seed, n_estimators=settings["n_estimators"], n_jobs=n_jobs)
    trees = model_trees(models)
    clock.start(f"Backtesting {nights} night(s), each trained on the previous {window_days} days: "
                f"{', '.join(models)}")
    result = nightly(fleet.attempts, fleet.hardware, models=models, window_days=window_days,
                     nights=nights, oracle=fleet.expected_throughput, random_state=seed,
                     progress=progress)
    clock.done(f"{result.scores['night'].nunique()} night(s) scored")
    experiments = {}
    for by in kinds:
        name = by.replace("_", " ")
        clock.start(f"Holding out {groups} {name}(s): leap refitted without each")
        experiments[name] = held_out(fleet.attempts, fleet.hardware, by=by, n_groups=groups,
                                     model=models["leap"], window_days=window_days,
                                     progress=progress)
        clock.done(f"{len(experiments[name])} {name}(s)")
    clock.start("Describing the fleet")
    preamble = (
        f"Synthetic fleet: preset `{preset}`, seed {seed}, {days} days, "
        f"{len(fleet.attempts):,} attempts.\n\n"
        "### The simulated fleet\n\n" + format_description(describe(fleet))
    )
    clock.done("")
    clock.start("Writing the report and its figures")
    path = write_report(result, out, title="leapml demo", preamble=preamble, held_out=experiments,
                        preset=preset, window_days=window_days, trees=trees)
    clock.done(str(path))
    echo("")
    echo(f"Against the published figures ('ours': preset '{preset}', {nights} night(s); "
         "'published': the production fleet, 30 nights):")
    echo(format_table(result.published_comparison(), percent=("ours", "published")))
    echo("")
    echo(format_table(result.regret_summary().reset_index(),
                      percent=("mean_regret", "p90_regret", "optimal_share")))
    echo(f"\nReport written to {path} ({clock.elapsed():.0f} s); it opens with a written summary.")
    return path


def _settings(size: str, **given) -> dict:
    """The size's settings with the given ones over them, checked."""
    from .fleet import PRESETS

    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    settings = {**SIZES[size], **{k: v for k, v in given.items() if v is not None}}
    if settings["preset"] not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {settings['preset']!r}")
    for name, least in (("nights", 1), ("window_days", 1), ("held_out_groups", 0)):
        if int(settings[name]) != settings[name] or settings[name] < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {settings[name]!r}")
    if settings["held_out_groups"] > 0 and not settings["held_out_by"]:
        settings["held_out_by"] = ("hardware_type",)  # groups asked of a size that holds none out
    if settings["n_estimators"] is not None and settings["n_estimators"] < 1:
        raise ValueError(f"n_estimators must be >= 1, got {settings['n_estimators']}")
    return settings


class _Steps:
    """Numbered steps on ``echo``, each with the seconds it took."""

    def __init__(self, total: int, echo):
        self.total, self.echo, self.number = total, echo, 0
        self.started = self.step_started = time.perf_counter()

    def start(self, what: str) -> None:
        self.number += 1
        self.step_started = time.perf_counter()
        self.echo(f"[{self.number}/{self.total}] {what} ...")

    def done(self, what: str) -> None:
        seconds = time.perf_counter() - self.step_started
        self.echo(f"      {what + ', ' if what else ''}{seconds:.0f} s")

    def elapsed(self) -> float:
        return time.perf_counter() - self.started
