"""Draw the held-out figures of docs/results.md from the kept runs of ``bench_held_out.py``.

Run from the repository root::

    python docs/scripts/held_out_figure.py

It reads ``docs/results-data/method-levers/held_out_small_hardware.csv`` and
``held_out_small_family.csv`` (the tables ``python benchmarks/bench_held_out.py
--preset small --by hardware_type`` and ``--by model_family`` write) and
writes ``docs/img/held_out_hardware.svg`` and ``docs/img/held_out_family.svg``:
for every group held out, the points lost within +-20% by each model, sorted
by the default model's drop, with the published drop as a line. It also
prints each model's median, mean and worst drop and how many groups lose more
than the published figure.

``--preset production`` reads ``held_out_production_hardware.csv`` and
``held_out_production_family.csv`` instead (the tables of ``bench_held_out.py
--preset production``, whichever models they hold) and writes
``held_out_production_hardware.svg`` and ``held_out_production_family.svg``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

plt.rcParams["svg.hashsalt"] = "leapml-docs"
plt.rcParams["font.family"] = "DejaVu Sans"

DOCS = Path(__file__).resolve().parents[1]
DATA = DOCS / "results-data" / "method-levers"
#: The published drop within +-20% for a new hardware type and an unseen model family.
PUBLISHED_DROP = {"hardware_type": 37.0, "model_family": 49.7}
LABELS = {"leap": "default LeapRegressor", "single_lightgbm": "single LightGBM (400 trees)",
          "leap_published": "published configuration"}


def summary(table: pd.DataFrame, by: str) -> pd.DataFrame:
    """Median, mean and worst drop per model, and the groups that lose more than published."""
    drops = table.groupby("model", sort=False)["drop_points"]
    out = pd.DataFrame({"median": drops.median(), "mean": drops.mean(), "least": drops.min(),
                        "worst": drops.max(),
                        "groups": drops.size(),
                        "above_published": drops.apply(lambda d: int((d > PUBLISHED_DROP[by]).sum()))})
    return out.round(1)


def versus(table: pd.DataFrame, by: str) -> dict:
    """The default against the single model, group by group: medians in distribution and
    held out, and on how many groups the default is the more accurate held out (or level)."""
    wide = table.pivot(index=by, columns="model", values=["in_distribution", "held_out"])
    held = wide["held_out"]
    if "single_lightgbm" not in held:
        return {"in_leap": round(100 * float(wide["in_distribution"]["leap"].median()), 1),
                "held_leap": round(100 * float(held["leap"].median()), 1)}
    def median(values) -> float:
        return round(100 * float(values.median()), 1)
    return {"in_leap": median(wide["in_distribution"]["leap"]),
            "in_single": median(wide["in_distribution"]["single_lightgbm"]),
            "held_leap": median(held["leap"]), "held_single": median(held["single_lightgbm"]),
            "higher": int((held["leap"] > held["single_lightgbm"] + 1e-12).sum()),
            "level": int(np.isclose(held["leap"], held["single_lightgbm"]).sum())}


def markdown(table: pd.DataFrame, by: str) -> str:
    """One row per group held out: attempts, then each model's in / held out / drop."""
    def cell(row) -> str:
        return (f"{100 * row.in_distribution:.1f}% / {100 * row.held_out:.1f}% / "
                f"{row.drop_points:.1f}")
    what = "hardware type" if by == "hardware_type" else "model family"
    leap = table[table["model"] == "leap"].set_index(by)
    single = table[table["model"] == "single_lightgbm"].set_index(by)
    with_single = not single.empty
    lines = [f"| {what} held out | attempts | default: in / held out / drop |"
             + (" single LightGBM: in / held out / drop |" if with_single else ""),
             "|---|---|---|" + ("---|" if with_single else "")]
    for group in sorted(leap.index):
        lines.append(f"| {group} | {int(leap.loc[group, 'n_attempts'])} | {cell(leap.loc[group])} |"
                     + (f" {cell(single.loc[group])} |" if with_single else ""))
    return "\n".join(lines)


def draw(table: pd.DataFrame, by: str, out: Path, fleet: str = "small fleet, seed 0") -> None:
    """One horizontal bar per group and model: the points lost within +-20%."""
    wide = table.pivot(index=by, columns="model", values="drop_points")
    wide = wide.sort_values(wide.columns[0] if "leap" not in wide else "leap")
    models = [m for m in LABELS if m in wide] + [m for m in wide if m not in LABELS]
    height = 0.8 / len(models)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(wide) + 1.4))
    positions = np.arange(len(wide))
    for k, model in enumerate(models):
        ax.barh(positions + (k - (len(models) - 1) / 2) * height, wide[model], height=height,
                label=LABELS.get(model, model))
    ax.axvline(PUBLISHED_DROP[by], color="black", linestyle="--", linewidth=1,
               label=f"published drop ({PUBLISHED_DROP[by]:g} points)")
    ax.set_yticks(positions, wide.index)
    ax.set_xlabel("points lost within +-20% when held out (in distribution minus held out)")
    what = "hardware type" if by == "hardware_type" else "model family"
    ax.set_title(f"Every {what} held out in turn ({fleet})", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, metadata={"Date": None})
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--img", type=Path, default=DOCS / "img")
    parser.add_argument("--preset", choices=["small", "production"], default="small")
    args = parser.parse_args(argv)
    for by, name in (("hardware_type", "hardware"), ("model_family", "family")):
        path = args.data / f"held_out_{args.preset}_{name}.csv"
        if not path.exists():
            print(f"{by}: no table at {path}\n")
            continue
        table = pd.read_csv(path)
        table = table[table["by"] == by]
        print(f"{by}:\n{summary(table, by).to_string()}\n{versus(table, by)}\n")
        print(markdown(table, by) + "\n")
        if args.preset == "small":
            draw(table, by, args.img / f"held_out_{name}.svg")
        else:
            draw(table, by, args.img / f"held_out_{args.preset}_{name}.svg",
                 fleet=f"{args.preset} fleet, seed 0")


if __name__ == "__main__":
    main()
