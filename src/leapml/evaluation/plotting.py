"""Figures of a backtest (needs the ``plot`` extra: ``pip install leapml[plot]``).

Each function draws on a given or new matplotlib Axes and returns it, so
figures compose in notebooks and reports alike. Nothing in the core imports
this module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "MODEL_COLOURS",
    "model_colour",
    "plot_accuracy_by_decile",
    "plot_accuracy_by_night",
    "plot_predicted_vs_measured",
    "plot_regret",
]

#: One colour per model (and ranking policy), the same in every figure.
MODEL_COLOURS = {
    "leap": "tab:blue",
    "single_lightgbm": "tab:orange",
    "lookup_table": "tab:red",
    "persistence": "tab:purple",
    "ceiling": "tab:gray",
    "cheapest_feasible": "tab:brown",
    "stay_on_last_hardware": "tab:olive",
}

#: Colours for models not in :data:`MODEL_COLOURS`, taken in the order of their names.
_SPARE_COLOURS = ("tab:cyan", "tab:pink", "tab:green", "gold", "navy", "teal")

#: Legends sit outside the axes, on the right, so that they hide no data.
_LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0,
           "fontsize": "small"}


def model_colour(model: str) -> str:
    """The colour of ``model`` in every figure.

    Examples
    --------
    >>> model_colour("leap")
    'tab:blue'
    >>> model_colour("my_model") == model_colour("my_model")
    True
    """
    if model in MODEL_COLOURS:
        return MODEL_COLOURS[model]
    # a stable choice from the name alone, so a model keeps its colour in every figure
    return _SPARE_COLOURS[sum(map(ord, str(model))) % len(_SPARE_COLOURS)]


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plotting needs matplotlib: pip install 'leapml[plot]'"
        ) from err
    _, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    return ax


def _nights_pooled(predictions: pd.DataFrame) -> str:
    """``"3 nights pooled, 2026-01-31 to 2026-02-02"``, or "" without a night column."""
    if "night" not in predictions:
        return ""
    nights = pd.to_datetime(predictions["night"]).dropna().unique()
    if len(nights) == 0:
        return ""
    first, last = min(nights), max(nights)
    if len(nights) == 1:
        return f"1 night, {pd.Timestamp(first).date()}"
    return f"{len(nights)} nights pooled, {pd.Timestamp(first).date()} to {pd.Timestamp(last).date()}"


def plot_predicted_vs_measured(predictions: pd.DataFrame, *, model: str = "leap", ax=None):
    """Predicted against measured throughput on log-log axes, with +-20% bands.

    Every scored attempt of every night in ``predictions`` is one point; the
    title says which nights are pooled.

    Parameters
    ----------
    predictions : DataFrame
        :attr:`leapml.evaluation.backtest.BacktestResult.predictions`.
    model : str
        Which model's predictions to draw.
    ax : matplotlib Axes, optional

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> frame = pd.DataFrame({"throughput": [1.0, 10.0, 100.0], "predicted_leap": [1.1, 9.0, 130.0]})
    >>> plot_predicted_vs_measured(frame).get_xscale()
    'log'
    """
    column = f"predicted_{model}"
    if column not in predictions:
        raise ValueError(f"no predictions for model {model!r}; have {_models(predictions)}")
    ax = _axes(ax)
    frame = predictions[["throughput", column]].dropna()
    ax.scatter(frame["throughput"], frame[column], s=3, alpha=0.3, linewidths=0,
               color=model_colour(model), label=f"one attempt ({len(frame):,})")
    low = float(frame.min().min())
    high = float(frame.max().max())
    line = np.geomspace(low, high, 50)
    ax.plot(line, line, color="black", linewidth=1, label="exact")
    ax.fill_between(line, 0.8 * line, 1.2 * line, color="tab:green", alpha=0.2, label="within +-20%")
    pooled = _nights_pooled(predictions)
    ax.set(xscale="log", yscale="log", xlabel="measured throughput (samples/s)",
           ylabel="predicted throughput (samples/s)",
           title=f"{model}: predicted vs measured" + (f"\n({pooled})" if pooled else ""))
    legend = ax.legend(**_LEGEND)
    for handle in legend.legend_handles:  # the key shows a point, not a faint speck
        handle.set_alpha(1.0)
    return ax


def plot_accuracy_by_night(scores: pd.DataFrame, *, metric: str = "within_20", slice: str = "all", ax=None):
    """Accuracy of every model, night by night.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> scores = pd.DataFrame({"night": pd.to_datetime(["2026-02-01", "2026-02-02"]),
    ...                        "model": "leap", "slice": "all", "within_20": [0.76, 0.78]})
    >>> len(plot_accuracy_by_night(scores).get_lines())
    1
    """
    ax = _axes(ax)
    frame = scores[scores["slice"] == slice]
    # nights are whole days: label them by date, one tick each
    nights = sorted(frame["night"].unique())
    position = {night: i for i, night in enumerate(nights)}
    for model, rows in frame.groupby("model", sort=False, observed=True):
        ax.plot(rows["night"].map(position), 100 * rows[metric], marker="o", label=str(model),
                color=model_colour(str(model)))
    ax.set_xticks(range(len(nights)), [pd.Timestamp(n).strftime("%Y-%m-%d") for n in nights])
    ax.set(ylabel=_metric_label(metric), xlabel="night (day scored)",
           title=f"Accuracy by night ({slice.replace('_', ' ')})", ylim=(0, 100))
    ax.tick_params(axis="x", labelrotation=30)
    ax.legend(title="model (one point a night)", **_LEGEND)
    return ax


def plot_accuracy_by_decile(scores: pd.DataFrame, *, metric: str = "within_20", ax=None):
    """Accuracy per decile of measured throughput (1 = slowest jobs), median over nights.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> scores = pd.DataFrame({"slice": [f"decile_{d:02d}" for d in range(1, 11)],
    ...                        "model": "leap", "within_20": 0.7})
    >>> len(plot_accuracy_by_decile(scores).patches)
    10
    """
    ax = _axes(ax)
    frame = scores[scores["slice"].str.startswith("decile_")]
    table = frame.groupby(["slice", "model"], observed=True)[metric].median().unstack("model")
    table = table[[m for m in frame["model"].unique() if m in table.columns]]  # as in the other figures
    deciles = np.arange(1, len(table) + 1)
    width = 0.8 / max(1, table.shape[1])
    for i, model in enumerate(table.columns):
        ax.bar(deciles + i * width - 0.4 + width / 2, 100 * table[model], width=width,
               label=str(model), color=model_colour(str(model)))
    nights = frame["night"].nunique() if "night" in frame else 1
    ax.set(xticks=deciles, xlabel="decile of measured throughput (1 = slowest)", ylim=(0, 100),
           ylabel=_metric_label(metric),
           title=f"Accuracy by throughput decile (median over {nights} night(s))")
    ax.legend(title="model", **_LEGEND)
    return ax


def plot_regret(regret: pd.DataFrame, *, ax=None):
    """Distribution of placement regret per policy (box plot, 0 = best pick).

    Boxes span the middle half of the jobs, whiskers 1.5 times that range
    (jobs beyond are not drawn); the line is the median, the triangle the mean.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> regret = pd.DataFrame({"policy": ["leap", "leap", "cheapest_feasible"],
    ...                        "regret": [0.0, 0.1, 0.3]})
    >>> [t.get_text() for t in plot_regret(regret).get_yticklabels()]
    ['leap', 'cheapest_feasible']
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax = _axes(ax)
    order = regret.groupby("policy", observed=True)["regret"].mean().sort_values().index.tolist()
    data = [100 * regret.loc[regret["policy"] == p, "regret"].to_numpy() for p in order]
    parts = ax.boxplot(data, tick_labels=order, orientation="horizontal", showfliers=False,
                       showmeans=True, patch_artist=True,
                       medianprops={"color": "black"},
                       meanprops={"marker": "^", "markerfacecolor": "white",
                                  "markeredgecolor": "black"})
    for box, policy in zip(parts["boxes"], order, strict=True):
        box.set(facecolor=model_colour(str(policy)), alpha=0.6)
    ax.invert_yaxis()  # the best policy on top
    ax.set(xlabel="regret: throughput per cost lost against the best pick (%)",
           title="Placement regret by policy (best mean on top)")
    ax.legend(handles=[
        Patch(facecolor="lightgray", edgecolor="black", label="middle half of jobs"),
        Line2D([], [], color="black", label="median"),
        Line2D([], [], marker="^", linestyle="", markerfacecolor="white",
               markeredgecolor="black", label="mean"),
        Line2D([], [], color="black", linewidth=0.8, label="whiskers: 1.5 x box\n(outliers not drawn)"),
    ], **_LEGEND)
    return ax


def _metric_label(metric: str) -> str:
    """``within_20_by_device_hours`` -> ``within +-20% (% of device-hours)``."""
    tolerance = metric.split("_")[1]
    unit = "device-hours" if metric.endswith("_by_device_hours") else "attempts"
    return f"within +-{tolerance}% (% of {unit})"


def _models(predictions: pd.DataFrame) -> list[str]:
    return [c.removeprefix("predicted_") for c in predictions.columns if c.startswith("predicted_")]
