"""Deprecated: moved to :mod:`leapml.evaluation.baselines`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "LOOKUP_KEY": "leapml.evaluation.baselines",
    "LastMeasuredRegressor": "leapml.evaluation.baselines",
    "LookupTableRegressor": "leapml.evaluation.baselines",
    "SpecScalingRegressor": "leapml.evaluation.baselines",
    "single_model_reference": "leapml.evaluation.baselines",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
