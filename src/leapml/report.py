"""A backtest report folder: Markdown tables, CSV/Parquet results and PNG plots."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .backtest import SUBMISSION_CEILING, BacktestResult
from .io import atomic_path, write_table

__all__ = ["format_table", "write_report"]


def format_table(frame: pd.DataFrame, *, percent: tuple[str, ...] = (), digits: int = 3) -> str:
    """A DataFrame as a GitHub-flavoured Markdown table (no extra dependency).

    Columns named in ``percent`` are shown as percentages with one decimal.

    Examples
    --------
    >>> print(format_table(pd.DataFrame({"model": ["leap"], "within_20": [0.81234]}),
    ...                    percent=("within_20",)))
    | model | within_20 |
    |---|---|
    | leap | 81.2% |
    """
    def cell(column, value):
        if isinstance(value, float):
            if value != value:  # NaN
                return "-"
            if column in percent:
                return f"{100 * value:.1f}%"
            return f"{value:.{digits}g}"
        return str(value)

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = [
        "| " + " | ".join(cell(c, v) for c, v in zip(frame.columns, row, strict=True)) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


def write_report(
    result: BacktestResult,
    directory: str | os.PathLike,
    *,
    title: str = "leapml backtest",
    preamble: str = "",
    held_out: dict[str, pd.DataFrame] | None = None,
    plots: bool = True,
) -> Path:
    """Write ``report.md``, result tables and plots into ``directory``.

    Every file is written atomically. Plots need matplotlib (the ``plot``
    extra); without it the report says so and carries the tables alone.

    Returns
    -------
    Path
        The path of ``report.md``.

    Examples
    --------
    >>> import tempfile
    >>> from leapml.fleet import simulate
    >>> from leapml.backtest import default_models, nightly
    >>> fleet = simulate("tiny", days=5, seed=0)
    >>> result = nightly(fleet.attempts, fleet.hardware, window_days=4, nights=1,
    ...                  models=default_models(n_estimators=5), progress=False)
    >>> path = write_report(result, tempfile.mkdtemp(), plots=False)
    >>> path.read_text().splitlines()[0]
    '# leapml backtest'
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_table(result.scores, directory / "scores.csv")
    write_table(result.predictions, directory / "predictions.parquet")
    if result.regret is not None:
        write_table(result.regret, directory / "regret.csv")

    lines = [f"# {title}", ""]
    if preamble:
        lines += [preamble.strip(), ""]
    comparison = result.published_comparison()
    lines += ["## Against the published figures", "",
              format_table(comparison, percent=("ours", "published")), ""]
    for metric, label in (("within_20", "within +-20%, by attempts"),
                          ("within_20_by_device_hours", "within +-20%, by device-hours"),
                          ("within_10", "within +-10%, by attempts")):
        summary = result.summary(metric=metric).reset_index()
        lines += [f"## Accuracy {label} (over nights)", "",
                  format_table(summary, percent=("median", "min", "max")), ""]
    covered = result.summary(slice="table_covered") if "table_covered" in set(result.scores["slice"]) else None
    if covered is not None:
        lines += ["## On the attempts the lookup table covers", "",
                  format_table(covered.reset_index(), percent=("median", "min", "max")), ""]
    models = [str(m) for m in result.scores["model"].unique()]
    lines += ["## Accuracy within +-20% on every slice (median over nights)", "",
              format_table(result.slice_summary().reset_index(), percent=tuple(models)), ""]
    if SUBMISSION_CEILING in models:
        gaps = result.gap_to(SUBMISSION_CEILING)
        lines += ["## Gap to the submission-time ceiling, within +-20%, in percentage points (median over nights)", "",
                  format_table(gaps.reset_index(), percent=tuple(gaps.columns)), ""]
    if result.regret is not None:
        for candidates, label in (("known_feasible", "with known feasibility"),
                                  ("considered", "among the types each policy considers")):
            lines += [f"## Placement regret {label} (throughput per cost lost against the best pick)", "",
                      format_table(result.regret_summary(candidates=candidates).reset_index(),
                                   percent=("mean_regret", "p90_regret", "optimal_share")), ""]
    for name, frame in (held_out or {}).items():
        lines += [f"## Held out: {name}", "",
                  format_table(frame, percent=("in_distribution", "held_out")), ""]
    if not result.fit_seconds.empty:
        seconds = result.fit_seconds.groupby("model", observed=True)["seconds"].median().reset_index()
        lines += ["## Fit time (median seconds per night)", "", format_table(seconds), ""]

    if plots:
        lines += _write_plots(result, directory)
    with atomic_path(directory / "report.md") as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return directory / "report.md"


def _write_plots(result: BacktestResult, directory: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["_Plots skipped: matplotlib is not installed (pip install 'leapml[plot]')._", ""]
    from . import plotting

    figures = [
        ("predicted_vs_measured.png", "Predicted vs measured (leap)",
         lambda ax: plotting.plot_predicted_vs_measured(result.predictions, model="leap", ax=ax)),
        ("accuracy_by_night.png", "Accuracy by night",
         lambda ax: plotting.plot_accuracy_by_night(result.scores, ax=ax)),
        ("accuracy_by_decile.png", "Accuracy by throughput decile",
         lambda ax: plotting.plot_accuracy_by_decile(result.scores, ax=ax)),
    ]
    if result.regret is not None and not result.regret.empty:
        figures.append(("regret.png", "Placement regret",
                        lambda ax: plotting.plot_regret(_known_feasible(result.regret), ax=ax)))
    lines = ["## Figures", ""]
    for filename, caption, draw in figures:
        if filename == "predicted_vs_measured.png" and "predicted_leap" not in result.predictions:
            continue
        fig, ax = plt.subplots(figsize=(7, 5), layout="constrained")
        draw(ax)
        with atomic_path(directory / filename, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        lines += [f"![{caption}]({filename})", ""]
    return lines


def _known_feasible(regret: pd.DataFrame) -> pd.DataFrame:
    """The regret rows ranked among the types that truly fit (all rows of an older table)."""
    if "candidates" not in regret.columns:
        return regret
    return regret[regret["candidates"] == "known_feasible"]
