"""Figures of a backtest (needs the ``plot`` extra: ``pip install leapml[plot]``).

Each function draws on a given or new matplotlib Axes and returns it, so
figures compose in notebooks and reports alike. Nothing in the core imports
this module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "plot_accuracy_by_decile",
    "plot_accuracy_by_night",
    "plot_predicted_vs_measured",
    "plot_regret",
]


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plotting needs matplotlib: pip install 'leapml[plot]'"
        ) from err
    _, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
    return ax


def plot_predicted_vs_measured(predictions: pd.DataFrame, *, model: str = "leap", ax=None):
    """Predicted against measured throughput on log-log axes, with +-20% bands.

    Parameters
    ----------
    predictions : DataFrame
        :attr:`leapml.backtest.BacktestResult.predictions`.
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
    ax.scatter(frame["throughput"], frame[column], s=3, alpha=0.3, linewidths=0)
    low = float(frame.min().min())
    high = float(frame.max().max())
    line = np.geomspace(low, high, 50)
    ax.plot(line, line, color="black", linewidth=1, label="exact")
    ax.fill_between(line, 0.8 * line, 1.2 * line, color="tab:green", alpha=0.2, label="within +-20%")
    ax.set(xscale="log", yscale="log", xlabel="measured throughput (samples/s)",
           ylabel="predicted throughput (samples/s)", title=f"{model}: predicted vs measured")
    ax.legend(loc="upper left")
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
        ax.plot(rows["night"].map(position), 100 * rows[metric], marker="o", label=str(model))
    ax.set_xticks(range(len(nights)), [pd.Timestamp(n).strftime("%Y-%m-%d") for n in nights])
    ax.set(ylabel=_metric_label(metric), xlabel="night (day scored)",
           title=f"Accuracy by night ({slice.replace('_', ' ')})", ylim=(0, 100))
    ax.tick_params(axis="x", labelrotation=30)
    ax.legend(fontsize="small")
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
    deciles = np.arange(1, len(table) + 1)
    width = 0.8 / max(1, table.shape[1])
    for i, model in enumerate(table.columns):
        ax.bar(deciles + i * width - 0.4 + width / 2, 100 * table[model], width=width, label=str(model))
    ax.set(xticks=deciles, xlabel="decile of measured throughput", ylim=(0, 100),
           ylabel=_metric_label(metric), title="Accuracy by throughput decile")
    ax.legend(fontsize="small")
    return ax


def plot_regret(regret: pd.DataFrame, *, ax=None):
    """Distribution of placement regret per policy (box plot, 0 = best pick).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> regret = pd.DataFrame({"policy": ["leap", "leap", "cheapest_feasible"],
    ...                        "regret": [0.0, 0.1, 0.3]})
    >>> [t.get_text() for t in plot_regret(regret).get_yticklabels()]
    ['leap', 'cheapest_feasible']
    """
    ax = _axes(ax)
    order = regret.groupby("policy", observed=True)["regret"].mean().sort_values().index.tolist()
    data = [100 * regret.loc[regret["policy"] == p, "regret"].to_numpy() for p in order]
    ax.boxplot(data, tick_labels=order, orientation="horizontal", showfliers=False, showmeans=True)
    ax.set(xlabel="regret: throughput per cost lost against the best pick (%)",
           title="Placement regret by policy")
    return ax


def _metric_label(metric: str) -> str:
    """``within_20_by_device_hours`` -> ``within +-20% (% of device-hours)``."""
    tolerance = metric.split("_")[1]
    unit = "device-hours" if metric.endswith("_by_device_hours") else "attempts"
    return f"within +-{tolerance}% (% of {unit})"


def _models(predictions: pd.DataFrame) -> list[str]:
    return [c.removeprefix("predicted_") for c in predictions.columns if c.startswith("predicted_")]
