"""Deprecated: moved to :mod:`leapml.evaluation.report`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "MATCH_POINTS": "leapml.evaluation.report",
    "PUBLISHED_NIGHTS": "leapml.evaluation.report",
    "SLICES": "leapml.evaluation.report",
    "format_table": "leapml.evaluation.report",
    "model_trees": "leapml.evaluation.report",
    "summarize": "leapml.evaluation.report",
    "write_report": "leapml.evaluation.report",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
