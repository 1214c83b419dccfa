"""Deprecated: use :mod:`leapml.files` (tables, atomic writes) and :mod:`leapml.model_file`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from leapml._moved import forward

_NEW_PLACES = {
    "atomic_path": "leapml.files",
    "read_table": "leapml.files",
    "write_table": "leapml.files",
    "MODEL_FORMAT": "leapml.model_file",
    "MODEL_FORMAT_VERSION": "leapml.model_file",
    "ModelFileError": "leapml.model_file",
    "load": "leapml.model_file",
    "load_feasibility": "leapml.model_file",
    "save": "leapml.model_file",
}

# no __dir__: tools that list a module's names (doctest collection) would warn
__all__: list[str] = []
__getattr__ = forward(__name__, _NEW_PLACES)
