"""Deprecated: moved to :mod:`leapml.evaluation.plotting`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "MODEL_COLOURS": "leapml.evaluation.plotting",
    "model_colour": "leapml.evaluation.plotting",
    "plot_accuracy_by_decile": "leapml.evaluation.plotting",
    "plot_accuracy_by_night": "leapml.evaluation.plotting",
    "plot_predicted_vs_measured": "leapml.evaluation.plotting",
    "plot_regret": "leapml.evaluation.plotting",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
