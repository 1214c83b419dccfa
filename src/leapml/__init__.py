"""leapml: predict training throughput on every accelerator type, then rank.

The public names are loaded lazily, so ``import leapml`` stays cheap and a
scheduler that only ranks never imports the fleet simulator.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "LeapRegressor": "leapml.regressor",
    "PUBLISHED": "leapml.regressor",
    "rank_candidates": "leapml.ranking",
    "load": "leapml.model_file",
    "save": "leapml.model_file",
    "LookupTableRegressor": "leapml.evaluation.baselines",
    "build_features": "leapml.features",
    "candidate_rows": "leapml.features",
    "HistoryIndex": "leapml.features",
    "simulate": "leapml.fleet",
    "load_fleet": "leapml.fleet",
    "describe": "leapml.fleet",
    "within_tolerance": "leapml.evaluation.metrics",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'leapml' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
