"""The synthetic training fleet: hardware and model catalogs, step-time physics, attempts.

Examples
--------
>>> from leapml.fleet import simulate, describe
>>> fleet = simulate("tiny", days=2, seed=0)
>>> int(fleet.attempts["hardware_type"].nunique()) > 5
True
"""

from .._moved import forward
from .describe import describe, format_description
from .fleet import Fleet, load_fleet
from .hardware import cost_per_device_hour, hardware_catalog
from .models import FAMILIES, model_catalog
from .simulator import CALIBRATION, PRESETS, simulate

__all__ = [
    "CALIBRATION",
    "FAMILIES",
    "PRESETS",
    "Fleet",
    "cost_per_device_hour",
    "describe",
    "format_description",
    "hardware_catalog",
    "load_fleet",
    "model_catalog",
    "simulate",
]

# the lookup table's score is evaluation; the old import path warns for one release
__getattr__ = forward(__name__, {"lookup_table_score": "leapml.evaluation.table_score"})
