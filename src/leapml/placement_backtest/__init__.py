"""Deprecated: moved to :mod:`leapml.evaluation.placement_backtest`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "PlacementBacktest": "leapml.evaluation.placement_backtest",
    "placement_backtest": "leapml.evaluation.placement_backtest",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
