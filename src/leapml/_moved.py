"""Old import paths kept for one release: a module-level ``__getattr__`` that warns and forwards.

A shim module lists where each of its names lives now; reading a name from
the old place returns the new object and warns with a
:class:`DeprecationWarning` that names the new place.
"""

from __future__ import annotations

import importlib
import warnings

#: The release that removes the old import paths.
REMOVED_IN = "0.3"


def forward(old_module: str, new_places: dict[str, str]):
    """A module ``__getattr__`` that forwards each name of ``new_places`` to its new module.

    Parameters
    ----------
    old_module : str
        The deprecated module's name, as users import it.
    new_places : dict of str to str
        Each public name the old module had, mapped to the module that holds it now.

    Examples
    --------
    >>> import warnings
    >>> getter = forward("leapml.old", {"read_table": "leapml.files"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     function = getter("read_table")
    >>> function.__module__, caught[0].category.__name__
    ('leapml.files', 'DeprecationWarning')
    """

    def __getattr__(name: str):
        new_module = new_places.get(name)
        if new_module is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        warnings.warn(
            f"{old_module}.{name} moved to {new_module}.{name}; import it from there "
            f"(the old path goes in leapml {REMOVED_IN})",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new_module), name)

    return __getattr__
