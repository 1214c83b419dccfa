"""The synthetic training fleet: hardware and model catalogs, step-time physics, attempts.

Examples
--------
>>> from leapml.fleet import simulate, describe
>>> fleet = simulate("tiny", days=2, seed=0)
>>> int(fleet.attempts["hardware_type"].nunique()) > 5
True
"""

from .hardware import cost_per_device_hour, hardware_catalog
from .models import FAMILIES, model_catalog
from .simulator import (
    CALIBRATION,
    PRESETS,
    Fleet,
    describe,
    format_description,
    load_fleet,
    lookup_table_score,
    simulate,
)

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
    "lookup_table_score",
    "model_catalog",
    "simulate",
]
