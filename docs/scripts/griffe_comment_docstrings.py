"""A Griffe extension: ``#:`` comments above a module constant become its docstring.

The modules document their public constants the Sphinx way::

    #: Attempt statuses. Only ``ok`` attempts carry a throughput.
    STATUSES = ("ok", "oom", "failed")

Griffe reads only string literals placed after an assignment, so without this
extension those constants would appear in the API reference with no text.
``mkdocs.yml`` loads it in the mkdocstrings options.
"""

from __future__ import annotations

import griffe


class CommentDocstrings(griffe.Extension):
    """Give an attribute without a docstring the ``#:`` lines right above it."""

    def on_attribute_instance(self, *, node, attr: griffe.Attribute, **kwargs) -> None:
        if attr.docstring is not None or attr.lineno is None:
            return
        lines = attr.module.lines
        comment = []
        index = attr.lineno - 2  # the line above the assignment, 0-based
        while index >= 0 and lines[index].lstrip().startswith("#:"):
            comment.append(lines[index].lstrip()[2:].strip())
            index -= 1
        if comment:
            attr.docstring = griffe.Docstring(
                "\n".join(reversed(comment)), lineno=index + 2, parent=attr
            )
