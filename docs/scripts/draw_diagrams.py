"""Draw the documentation's diagrams into ``docs/img/``.

Run from the repository root::

    python docs/scripts/draw_diagrams.py

It writes ``docs/img/pipeline.svg`` (the home page's picture: from a
submission to a ranked list of hardware types) and
``docs/img/binning_cascade.svg`` (the method: equal-frequency bins on log
throughput, the reassignment loop and the router). Both are schematic: the
histogram is drawn from a fixed synthetic sample to show how equal-frequency
bins look, not from any fleet.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

# Fixed hash salt and no date: re-running the script gives identical files.
plt.rcParams["svg.hashsalt"] = "leapml-docs"
plt.rcParams["font.family"] = "DejaVu Sans"

INK = "#263238"
BLUE = "#3949ab"
LIGHT = "#e8eaf6"
GREEN = "#2e7d32"
LIGHT_GREEN = "#e8f5e9"
ORANGE = "#ef6c00"
LIGHT_ORANGE = "#fff3e0"
GREY = "#eceff1"


def _box(ax, x, y, w, h, title, body="", *, face=LIGHT, edge=BLUE, size=10):
    ax.add_patch(
        FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06",
            facecolor=face, edgecolor=edge, linewidth=1.4,
        )
    )
    if body:
        ax.text(x + w / 2, y + h - 0.16, title, ha="center", va="top",
                fontsize=size, fontweight="bold", color=INK)
        ax.text(x + w / 2, y + h - 0.46, body, ha="center", va="top",
                fontsize=size - 2, color=INK, linespacing=1.35)
    else:
        ax.text(x + w / 2, y + h / 2, title, ha="center", va="center",
                fontsize=size, fontweight="bold", color=INK)


def _arrow(ax, start, end, *, color=INK, style="-|>", rad=0.0, lw=1.4):
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle=style, mutation_scale=14, color=color,
            linewidth=lw, connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2,
        )
    )


def draw_pipeline(path: Path) -> None:
    """Submission -> candidates -> features -> bin classifier -> expert -> rank."""
    fig, ax = plt.subplots(figsize=(13, 4.1))
    ax.set(xlim=(0, 13), ylim=(0, 4.1))
    ax.axis("off")

    _box(ax, 0.1, 1.15, 1.9, 1.9, "Submission",
         "job_id, model type\ntrainers x batch\nprecision, seq_len\nparallelism")
    ax.text(1.05, 0.95, "+ earlier runs of\nthe same job", ha="center", va="top",
            fontsize=8, color=INK, style="italic")

    # One row per candidate hardware type.
    names = ["type A", "type B", "type C", "...", "type N"]
    for i, name in enumerate(names):
        y = 3.0 - i * 0.45
        _box(ax, 2.55, y, 1.25, 0.36, name, face=GREY, edge="#90a4ae", size=8)
        _arrow(ax, (2.02, 2.1), (2.53, y + 0.18), lw=0.9)
    ax.text(3.18, 3.62, "every candidate\nhardware type", ha="center", va="bottom",
            fontsize=8, color=INK)

    _box(ax, 4.3, 1.15, 1.9, 1.9, "Features",
         "launch configuration\nhardware datasheet\njob's history\n(strictly before\nsubmission)")
    for i in range(len(names)):
        _arrow(ax, (3.82, 3.18 - i * 0.45), (4.28, 2.1), lw=0.9)

    _box(ax, 6.6, 1.5, 1.6, 1.2, "Bin classifier", "which of 13\nthroughput bins?",
         face=LIGHT_ORANGE, edge=ORANGE)
    _arrow(ax, (6.22, 2.1), (6.58, 2.1))

    # Thirteen experts, the routed one highlighted.
    chosen = 8
    for k in range(13):
        y = 0.45 + k * 0.245
        face, edge = (LIGHT_ORANGE, ORANGE) if k == chosen else (GREY, "#90a4ae")
        ax.add_patch(FancyBboxPatch((8.75, y), 0.95, 0.19,
                                    boxstyle="round,pad=0.01,rounding_size=0.03",
                                    facecolor=face, edgecolor=edge, linewidth=1.0))
        ax.text(9.225, y + 0.095, f"expert {k + 1}", ha="center", va="center", fontsize=6.5,
                color=INK)
    ax.text(9.225, 3.75, "per-bin median\nregressors", ha="center", va="bottom", fontsize=8,
            color=INK)
    _arrow(ax, (8.22, 2.1), (8.73, 0.45 + chosen * 0.245 + 0.095), color=ORANGE)

    _box(ax, 10.15, 1.5, 1.2, 1.2, "Throughput", "samples/s\nper candidate",
         face=LIGHT_GREEN, edge=GREEN, size=9)
    _arrow(ax, (9.72, 0.45 + chosen * 0.245 + 0.095), (10.13, 2.1), color=ORANGE)

    _box(ax, 11.65, 1.0, 1.3, 2.2, "Rank",
         "throughput\nper cost\n\n1. type C\n2. type A\n3. type N\n...",
         face=LIGHT_GREEN, edge=GREEN, size=10)
    _arrow(ax, (11.37, 2.1), (11.63, 2.1))
    ax.text(12.3, 0.85, "cost per\ndevice-hour\nx trainers", ha="center", va="top", fontsize=8,
            color=INK, style="italic")

    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)


def draw_binning_cascade(path: Path) -> None:
    """Equal-frequency bins on log throughput, the hard-EM loop, the router."""
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [1.15, 1]}
    )

    # A fixed synthetic mixture spanning seven decades, only to show the shape.
    rng = np.random.default_rng(7)
    log10_y = np.concatenate([
        rng.normal(0.3, 0.5, 900),
        rng.normal(2.2, 0.6, 1600),
        rng.normal(3.6, 0.5, 1300),
        rng.normal(5.4, 0.6, 700),
        rng.normal(6.6, 0.35, 250),
    ])
    edges = np.quantile(log10_y, np.linspace(0, 1, 14))
    colors = plt.cm.viridis(np.linspace(0.05, 0.95, 13))
    # Histogram cells cut at the bin edges too, so each bar has one bin's colour.
    grid = np.union1d(np.linspace(edges[0], edges[-1], 90), edges)
    counts, _ = np.histogram(log10_y, bins=grid)
    widths = np.diff(grid)
    bar_bin = np.clip(np.searchsorted(edges, grid[:-1], side="right") - 1, 0, 12)
    heights = counts / widths / len(log10_y)
    left.bar(grid[:-1], heights, width=widths, align="edge", color=colors[bar_bin],
             edgecolor="none")
    # Slivers between a grid line and a bin edge are noisy; do not let one set the scale.
    left.set_ylim(0, 1.25 * np.percentile(heights, 98))
    for edge in edges[1:-1]:
        left.axvline(edge, color=INK, linewidth=0.6, linestyle=":")
    left.set(
        xlabel="log10 throughput (samples/s)",
        ylabel="share of attempts (density)",
        title="1. Split log throughput into 13 equal-frequency bins",
    )
    left.title.set_fontsize(11)
    left.text(0.02, 0.96, "each colour holds the same\nnumber of training rows",
              transform=left.transAxes, va="top", fontsize=9, color=INK)
    left.spines[["top", "right"]].set_visible(False)

    ax = right
    ax.set(xlim=(0, 6.2), ylim=(0, 4.6))
    ax.axis("off")
    ax.set_title("2-4. Refine the bins, then learn to route", fontsize=11)
    _box(ax, 0.1, 3.1, 2.6, 1.1, "Fit one expert per bin",
         "LightGBM median regressor\non the bin's rows (log y)")
    _box(ax, 3.4, 3.1, 2.7, 1.1, "Reassign every row",
         "to the expert with the smallest\n|log error| on it")
    _box(ax, 3.4, 1.55, 2.7, 1.05, "Share of rows moved",
         "below tol, or max_iter\nreached?", face=GREY, edge="#78909c")
    _box(ax, 0.1, 1.55, 2.6, 1.05, "Bin classifier",
         "LightGBM multiclass: features\n-> final bin", face=LIGHT_ORANGE, edge=ORANGE)
    _box(ax, 0.1, 0.05, 6.0, 1.05, "Predict",
         "hard: the expert of the most probable bin     "
         "soft: experts blended in log space\nby the classifier's probabilities",
         face=LIGHT_GREEN, edge=GREEN)
    _arrow(ax, (2.72, 3.65), (3.38, 3.65))
    _arrow(ax, (4.75, 3.08), (4.75, 2.62))
    _arrow(ax, (3.6, 2.62), (2.4, 3.08), rad=-0.35, color=BLUE)
    ax.text(3.05, 2.86, "no:\nrepeat", fontsize=8, color=BLUE, ha="center", va="center")
    _arrow(ax, (3.38, 1.85), (2.72, 1.85), color=ORANGE)
    ax.text(3.05, 1.93, "yes", fontsize=8.5, color=ORANGE, ha="center", va="bottom")
    _arrow(ax, (1.4, 1.53), (1.4, 1.12))

    fig.tight_layout()
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "img"),
                        help="folder for the SVG files (default: docs/img)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    draw_pipeline(out / "pipeline.svg")
    draw_binning_cascade(out / "binning_cascade.svg")
    print(f"wrote {out / 'pipeline.svg'} and {out / 'binning_cascade.svg'}")


if __name__ == "__main__":
    main()
