"""Figures a reader can trust at a glance: one colour per model, keys for every mark."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba

from leapml.evaluation.plotting import (
    model_colour,
    plot_accuracy_by_decile,
    plot_accuracy_by_night,
    plot_predicted_vs_measured,
    plot_regret,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODELS = ["leap", "single_lightgbm", "lookup_table", "my_model"]


@pytest.fixture
def scores():
    nights = pd.to_datetime(["2026-02-01", "2026-02-02"])
    slices = ["all"] + [f"decile_{d:02d}" for d in range(1, 11)]
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"night": n, "model": m, "slice": s, "within_20": rng.uniform()}
                         for n in nights for m in MODELS for s in slices])


@pytest.fixture
def regret():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"policy": np.repeat(MODELS, 20), "regret": rng.uniform(size=80)})


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _legend_outside(ax) -> bool:
    legend = ax.get_legend()
    return legend is not None and legend.get_bbox_to_anchor().x0 >= ax.get_window_extent().x1


def test_each_model_has_one_colour_in_every_figure(scores, regret):
    night = plot_accuracy_by_night(scores)
    lines = {line.get_label(): to_rgba(line.get_color()) for line in night.get_lines()}
    decile = plot_accuracy_by_decile(scores)
    bars = {container.get_label(): to_rgba(container.patches[0].get_facecolor(), 1.0)
            for container in decile.containers}
    boxes = plot_regret(regret)
    labels = [t.get_text() for t in boxes.get_yticklabels()]
    faces = {label: to_rgba(patch.get_facecolor(), 1.0)
             for label, patch in zip(labels, boxes.patches, strict=False)}
    for model in MODELS:
        expected = to_rgba(model_colour(model))
        assert lines[model] == expected and bars[model] == expected and faces[model] == expected
    assert len({lines[m] for m in MODELS}) == len(MODELS)


def test_legends_sit_outside_the_data_and_key_every_mark(scores, regret):
    for ax in (plot_accuracy_by_night(scores), plot_accuracy_by_decile(scores), plot_regret(regret)):
        ax.figure.canvas.draw()
        assert _legend_outside(ax)
    keys = [t.get_text() for t in plot_regret(regret).get_legend().get_texts()]
    assert {"median", "mean"} <= set(keys)


def test_scatter_says_which_nights_it_pools():
    predictions = pd.DataFrame({
        "night": pd.to_datetime(["2026-02-01", "2026-02-01", "2026-02-03"]),
        "throughput": [1.0, 10.0, 100.0], "predicted_leap": [1.1, 9.0, 130.0]})
    ax = plot_predicted_vs_measured(predictions)
    assert "2 nights pooled, 2026-02-01 to 2026-02-03" in ax.get_title()
    keys = [t.get_text() for t in ax.get_legend().get_texts()]
    assert keys == ["one attempt (3)", "exact", "within +-20%"]
