"""Held-out hardware: how well does LeapRegressor predict a type it never trained on?

A new accelerator type joins the fleet with no attempts in anyone's history.
For each of the hardware types with the most attempts, this example trains
LeapRegressor on a window from which every attempt on that type is removed
(its features rebuilt from a history without it, as for a type that just
arrived) and scores it on the type's attempts of the next day. The reference
is the same model trained on the whole window, scored on the same attempts.
The gap is the accuracy the model owes to having seen the type. The figure is
written to a folder the script prints (``LEAPML_EXAMPLE_OUT``, or a new
temporary folder).
"""

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from leapml import LeapRegressor
from leapml.evaluation.held_out import held_out
from leapml.evaluation.report import format_table
from leapml.fleet import simulate

PRESET = os.environ.get("LEAPML_EXAMPLE_PRESET", "small")
TREES = int(os.environ.get("LEAPML_EXAMPLE_TREES", "40"))
OUT = Path(os.environ.get("LEAPML_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="leapml-example-"))
OUT.mkdir(parents=True, exist_ok=True)
WINDOW_DAYS, N_TYPES = 5, 2

# %% Hold out each of the N_TYPES hardware types with the most attempts to score
fleet = simulate(PRESET, days=WINDOW_DAYS + 1, seed=0)
drops = held_out(
    fleet.attempts,
    fleet.hardware,
    by="hardware_type",
    n_groups=N_TYPES,
    model=LeapRegressor(n_estimators=TREES, random_state=0),
    window_days=WINDOW_DAYS,
    progress=False,
)
print(format_table(drops, percent=("in_distribution", "held_out")))

# %% Weighted by the attempts scored, over the held-out types
weights = drops["n_attempts"]
mean_drop = np.average(drops["drop_points"], weights=weights)
print(f"mean drop: {mean_drop:.1f} points of accuracy within +-20% "
      f"over {int(weights.sum())} attempts")

# %% In-distribution against held-out accuracy, per hardware type
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
positions = np.arange(len(drops))
ax.bar(positions - 0.2, 100 * drops["in_distribution"], width=0.4, label="seen in training")
ax.bar(positions + 0.2, 100 * drops["held_out"], width=0.4, label="held out")
ax.set_xticks(positions, drops["hardware_type"], rotation=20, ha="right")
ax.set(ylabel="within +-20% (% of attempts)", ylim=(0, 100),
       title="Accuracy on a hardware type never seen in training")
ax.legend()
figure = OUT / "held_out_hardware.png"
fig.savefig(figure, dpi=110)
print(f"figure written to {figure}")
