"""Deprecated: moved to :mod:`leapml.evaluation.backtest` and its neighbours.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "BacktestResult": "leapml.evaluation.backtest",
    "CEILING": "leapml.evaluation.regret",
    "PUBLISHED": "leapml.evaluation.backtest",
    "REGRET_CANDIDATES": "leapml.evaluation.regret",
    "SUBMISSION_CEILING": "leapml.evaluation.regret",
    "default_models": "leapml.evaluation.backtest",
    "held_out": "leapml.evaluation.held_out",
    "nightly": "leapml.evaluation.backtest",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
