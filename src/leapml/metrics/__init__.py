"""Deprecated: moved to :mod:`leapml.evaluation.metrics`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "coverage": "leapml.evaluation.metrics",
    "median_absolute_percentage_error": "leapml.evaluation.metrics",
    "within_tolerance": "leapml.evaluation.metrics",
    "within_tolerance_scorer": "leapml.evaluation.metrics",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
