"""A backtest report folder: Markdown tables, CSV/Parquet results and PNG plots."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..files import atomic_path, write_table
from .backtest import BacktestResult
from .regret import CEILING, SUBMISSION_CEILING

__all__ = [
    "MATCH_POINTS",
    "PUBLISHED_NIGHTS",
    "SLICES",
    "format_table",
    "model_trees",
    "summarize",
    "write_report",
]

#: Slices of the "by slice" table, in the order shown, with their labels.
SLICES = {
    "all": "all attempts",
    "table_covered": "attempts the lookup table covers",
    "job_seen_before": "jobs seen before",
    "job_new": "new jobs",
    "decile_01": "slowest decile of throughput",
    "decile_10": "fastest decile of throughput",
}

#: Nights behind the published figures the report compares with.
PUBLISHED_NIGHTS = 30

#: Two figures closer than this (in points of a share) are said to match.
MATCH_POINTS = 0.5

_NAMES = {
    "leap": "LeapRegressor",
    "single_lightgbm": "the single LightGBM",
    "lookup_table": "the lookup table",
    "persistence": "persistence",
    "ceiling": "the ceiling",
    "cheapest_feasible": "the cheapest feasible type",
    "stay_on_last_hardware": "staying on the last hardware",
}


def _cell(value, *, percent: bool = False, digits: int = 3) -> str:
    """One value as a table cell; the summary's figures are written the same way."""
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        if percent:
            return f"{100 * value:.1f}%"
        return f"{value:.{digits}g}"
    return str(value)


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
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = [
        "| " + " | ".join(_cell(v, percent=c in percent, digits=digits)
                          for c, v in zip(frame.columns, row, strict=True)) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


def _by_slice(result: BacktestResult, metric: str = "within_20") -> pd.DataFrame:
    """Median of ``metric`` over nights: one row per slice of :data:`SLICES`, one column per model."""
    scores = result.scores[result.scores["slice"].isin(list(SLICES))]
    table = scores.groupby(["slice", "model"], observed=True)[metric].median().unstack("model")
    models = [m for m in result.scores["model"].unique() if m in table.columns]
    table = table.reindex(index=[s for s in SLICES if s in table.index], columns=models)
    return table.rename(index=SLICES).rename_axis(index="slice", columns=None).reset_index()


def _fit_seconds(result: BacktestResult) -> pd.DataFrame:
    return result.fit_seconds.groupby("model", observed=True, sort=False)["seconds"].median().reset_index()


def _tables(result: BacktestResult, held_out: dict[str, pd.DataFrame]) -> list[tuple[str, pd.DataFrame, tuple]]:
    """Every table of the report, in order: (heading, frame, percentage columns).

    The summary reads its figures from these same frames.
    """
    shares = ("median", "min", "max")
    tables = [("Against the published figures", result.published_comparison(), ("ours", "published"))]
    for metric, label in (("within_20", "within +-20%, by attempts"),
                          ("within_20_by_device_hours", "within +-20%, by device-hours"),
                          ("within_10", "within +-10%, by attempts")):
        tables.append((f"Accuracy {label} (over nights)",
                       result.summary(metric=metric).reset_index(), shares))
    if "table_covered" in set(result.scores["slice"]):
        tables.append(("On the attempts the lookup table covers",
                       result.summary(slice="table_covered").reset_index(), shares))
    slices = _by_slice(result)
    tables.append(("Accuracy within +-20% by slice (median over nights)", slices,
                   tuple(c for c in slices.columns if c != "slice")))
    if SUBMISSION_CEILING in set(result.scores["model"].astype(str)):
        gaps = result.gap_to(SUBMISSION_CEILING)
        tables.append(("Gap to the submission-time ceiling, within +-20%, in percentage points "
                       "(median over nights)", gaps.reset_index(), ()))
    if result.regret is not None:
        tables.append(("Placement regret with known feasibility (throughput per cost lost "
                       "against the best pick)",
                       result.regret_summary().reset_index(),
                       ("mean_regret", "p90_regret", "optimal_share")))
        if "candidates" in result.regret.columns:
            tables.append(("Placement regret among the types each policy considers",
                           result.regret_summary(candidates="considered").reset_index(),
                           ("mean_regret", "p90_regret", "optimal_share")))
    for name, frame in held_out.items():
        tables.append((f"Held out: {name}", frame, ("in_distribution", "held_out")))
    if not result.fit_seconds.empty:
        tables.append(("Fit time (median seconds per night)", _fit_seconds(result), ()))
    return tables


def summarize(
    result: BacktestResult,
    *,
    preset: str | None = None,
    window_days: int | None = None,
    trees: Mapping[str, int] | None = None,
    held_out: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """A short written summary of a backtest, every figure read from the report's tables.

    It says what was run, the headline comparison, where ``leap`` wins and
    where a baseline matches or beats it (within :data:`MATCH_POINTS` points
    or better), and the caveats that apply. Only the models, slices and tables
    the result holds are described.

    Parameters
    ----------
    result : BacktestResult
    preset : str, optional
        The fleet preset the log was simulated with (None for a real log).
    window_days : int, optional
        Training window of each night.
    trees : mapping of str to int, optional
        Trees per LightGBM model, by model name (see :func:`model_trees`).
    held_out : mapping of str to DataFrame, optional
        The held-out experiments shown in the report.

    Returns
    -------
    str
        Markdown paragraphs.
    """
    tables = {heading: frame for heading, frame, _ in _tables(result, dict(held_out or {}))}
    accuracy = tables["Accuracy within +-20%, by attempts (over nights)"].set_index("model")
    nights = int(result.scores["night"].nunique())
    paragraphs = [_what_was_run(result, preset, window_days, trees, nights)]
    if "leap" in accuracy.index:
        paragraphs.append(_headline(accuracy, nights))
        paragraphs += _wins_and_losses(tables)
    paragraphs.append(_caveats(result, preset, nights, held_out or {}))
    return "\n\n".join(p for p in paragraphs if p)


def _name(model: str) -> str:
    return f"{_NAMES.get(model, model)} (`{model}`)"


def _what_was_run(result, preset, window_days, trees, nights) -> str:
    first, last = result.scores["night"].min(), result.scores["night"].max()
    dates = f"{pd.Timestamp(first).date()}" + ("" if nights == 1 else f" to {pd.Timestamp(last).date()}")
    source = f"the synthetic fleet's `{preset}` preset" if preset else "the given attempt log"
    window = f"the previous {window_days} days" if window_days else "its training window"
    models = []
    for model in result.scores["model"].unique():
        count = (trees or {}).get(model)
        models.append(_NAMES.get(model, model) + f" (`{model}`" + (f", {count} trees a LightGBM model)" if count else ")"))
    return (f"**What was run.** {nights} night(s) of {source} ({dates}); each night every model is "
            f"fitted on the completed attempts of {window} and scored on the next day's. "
            f"Models: {'; '.join(models)}.")


def _headline(accuracy: pd.DataFrame, nights: int) -> str:
    leap = accuracy.loc["leap", "median"]
    others = accuracy.drop(index=[m for m in ("leap", CEILING) if m in accuracy.index])["median"].dropna()
    text = (f"**Headline.** LeapRegressor is within +-20% of the measured throughput on "
            f"{_cell(leap, percent=True)} of attempts (median over {nights} night(s))")
    if not others.empty:
        best = others.idxmax()
        text += f"; the best baseline, {_name(best)}, on {_cell(others[best], percent=True)}"
    if CEILING in accuracy.index:
        text += (f"; the ceiling (the simulator's noiseless truth, the best any model can do) on "
                 f"{_cell(accuracy.loc[CEILING, 'median'], percent=True)}")
    return text + "."


def _comparisons(tables: dict[str, pd.DataFrame]) -> list[tuple[float, str]]:
    """(points ``leap`` is ahead of the best baseline, the figures in words), per slice and regret."""
    out = []
    slices = tables["Accuracy within +-20% by slice (median over nights)"].set_index("slice")
    baselines = [m for m in slices.columns if m not in ("leap", CEILING)]
    for label, row in slices.iterrows():
        values = row[baselines].dropna()
        if pd.isna(row.get("leap")) or values.empty:
            continue
        best = values.idxmax()
        out.append((100 * (row["leap"] - values[best]),
                    f"{label}: {_cell(row['leap'], percent=True)} against "
                    f"{_cell(values[best], percent=True)} for {_NAMES.get(best, best)}"))
    regret = tables.get("Placement regret with known feasibility (throughput per cost lost "
                        "against the best pick)")
    if regret is not None and "leap" in set(regret["policy"]):
        regret = regret.set_index("policy")["mean_regret"]
        others = regret.drop(index=[p for p in ("leap", CEILING) if p in regret.index]).dropna()
        if not others.empty:
            best = others.idxmin()  # lower regret is better
            out.append((100 * (others[best] - regret["leap"]),
                        f"placement regret: mean {_cell(regret['leap'], percent=True)} against "
                        f"{_cell(others[best], percent=True)} for {_NAMES.get(best, best)}"))
    return out


def _wins_and_losses(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Where ``leap`` leads every baseline, where one matches it, where one beats it."""
    comparisons = _comparisons(tables)
    groups = (
        ("**Where LeapRegressor leads every baseline**",
         [text for gap, text in comparisons if gap > MATCH_POINTS]),
        (f"**Where a baseline matches it** (within {MATCH_POINTS} points)",
         [text for gap, text in comparisons if abs(gap) <= MATCH_POINTS]),
        ("**Where a baseline beats it**", [text for gap, text in comparisons if gap < -MATCH_POINTS]),
    )
    out = []
    if comparisons:
        out.append("Accuracy within +-20% below is the median over nights, by slice of the "
                   "scored attempts; each figure is set against the best baseline there.")
    for heading, items in groups:
        if comparisons:
            out.append(f"{heading}: " + ("; ".join(items) if items else "none") + ".")
    fit = tables.get("Fit time (median seconds per night)")
    if fit is not None and "leap" in set(fit["model"]):
        seconds = fit.set_index("model")["seconds"]
        others = [f"{_NAMES.get(m, m)} {_cell(v)} s" for m, v in seconds.items() if m != "leap"]
        out.append(f"**Fit time** (median seconds per night): LeapRegressor {_cell(seconds['leap'])} s"
                   + (f"; {', '.join(others)}" if others else "") + ".")
    return out


def _caveats(result, preset, nights, held_out) -> str:
    from ..fleet import CALIBRATION

    notes = []
    if nights < PUBLISHED_NIGHTS:
        notes.append(f"{nights} night(s) scored, where the published figures come from "
                     f"{PUBLISHED_NIGHTS} production nights: medians, worst and best nights are "
                     f"over {nights}, and the spread is narrower than {PUBLISHED_NIGHTS} nights "
                     "would show.")
    if preset in CALIBRATION:
        notes.append(f"Preset `{preset}` is {CALIBRATION[preset]}.")
    elif preset is None:
        notes.append("A log that is not from the simulator: no ceiling or calibration applies.")
    if result.regret is not None:
        notes.append("The regret quoted here uses oracle feasibility: every policy ranks only the "
                     "hardware types the simulator says the job can run on, so it leaves out the "
                     "cost of predicting feasibility (out of memory, missing software); "
                     "where the report has it, the table of regret among the types each policy "
                     "considers shows that cost.")
    if held_out:
        groups = sum(len(frame) for frame in held_out.values())
        notes.append(f"The held-out experiments cover {groups} group(s), one night each.")
    return "**Caveats.** " + " ".join(notes) if notes else ""


def model_trees(models: Mapping[str, object]) -> dict[str, int]:
    """Trees per LightGBM model of each model that has them, read from its parameters.

    Examples
    --------
    >>> from leapml.evaluation.backtest import default_models
    >>> model_trees(default_models(n_estimators=30))
    {'leap': 30, 'single_lightgbm': 30}
    """
    out = {}
    for name, model in models.items():
        params = model.get_params() if hasattr(model, "get_params") else {}
        count = params.get("n_estimators", params.get("regressor__n_estimators"))
        if count is not None:
            out[name] = int(count)
    return out


def write_report(
    result: BacktestResult,
    directory: str | os.PathLike,
    *,
    title: str = "leapml backtest",
    preamble: str = "",
    held_out: dict[str, pd.DataFrame] | None = None,
    plots: bool = True,
    preset: str | None = None,
    window_days: int | None = None,
    trees: Mapping[str, int] | None = None,
) -> Path:
    """Write ``report.md``, result tables and plots into ``directory``.

    The report opens with :func:`summarize`'s summary, then ``preamble``, the
    tables and the figures. Every file is written atomically. Plots need
    matplotlib (the ``plot`` extra); without it the report says so and
    carries the tables alone.

    Parameters
    ----------
    result : BacktestResult
    directory : path
        Folder to write into (created if missing).
    title : str
        First heading of ``report.md``.
    preamble : str
        Markdown placed after the summary.
    held_out : mapping of str to DataFrame, optional
        Held-out experiments (:func:`leapml.evaluation.held_out.held_out`), by name.
    plots : bool, default=True
        Draw the figures.
    preset, window_days, trees
        What was run, for the summary (see :func:`summarize`).

    Returns
    -------
    Path
        The path of ``report.md``.

    Examples
    --------
    >>> import tempfile
    >>> from leapml.fleet import simulate
    >>> from leapml.evaluation.backtest import default_models, nightly
    >>> fleet = simulate("tiny", days=5, seed=0)
    >>> result = nightly(fleet.attempts, fleet.hardware, window_days=4, nights=1,
    ...                  models=default_models(n_estimators=5), progress=False)
    >>> path = write_report(result, tempfile.mkdtemp(), plots=False, preset="tiny")
    >>> path.read_text().splitlines()[:3]
    ['# leapml backtest', '', '## Summary']
    """
    if not len(result.scores) or (result.regret is not None and not len(result.regret)):
        # a report of no night would read as one: "0 night(s) (NaT to NaT)"
        raise ValueError("the result scores no night (or ranks no job): nothing to report")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_table(result.scores, directory / "scores.csv")
    write_table(result.predictions, directory / "predictions.parquet")
    if result.regret is not None:
        write_table(result.regret, directory / "regret.csv")

    held_out = dict(held_out or {})
    lines = [f"# {title}", "", "## Summary", "",
             summarize(result, preset=preset, window_days=window_days, trees=trees,
                       held_out=held_out), ""]
    if preamble:
        lines += [preamble.strip(), ""]
    for heading, frame, percent in _tables(result, held_out):
        lines += [f"## {heading}", ""]
        if heading == "Against the published figures":
            lines += [_published_note(result, preset), ""]
        lines += [format_table(frame, percent=percent), ""]
    if plots:
        lines += _write_plots(result, directory)
    with atomic_path(directory / "report.md") as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return directory / "report.md"


def _published_note(result: BacktestResult, preset: str | None) -> str:
    from ..fleet import CALIBRATION

    nights = int(result.scores["night"].nunique())
    ours = f"the `{preset}` preset" if preset else "this log"
    text = (f"'ours': {ours}, median over {nights} night(s); 'published': the production fleet "
            f"of the LEAP paper, {PUBLISHED_NIGHTS} nights.")
    if preset in CALIBRATION and preset != "production":
        text += f" `{preset}` is {CALIBRATION[preset].split(':')[0]}: read this as a reference point."
    return text


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
