"""Print the Markdown tables of ``docs/guide/schema.md`` from ``leapml.schema``.

Run from the repository root::

    python docs/scripts/schema_tables.py

and paste the tables into the page; ``tests/test_docs.py`` fails when the
page and :mod:`leapml.schema` disagree.
"""

from __future__ import annotations

from leapml.schema import ATTEMPT_COLUMNS, HARDWARE_COLUMNS, OPTIONAL_ATTEMPT_COLUMNS


def column_table(columns) -> str:
    """One Markdown table row per schema column: name, kind, nullable, may be absent, meaning."""
    lines = ["| column | kind | may be null | may be absent | meaning |", "|---|---|---|---|---|"]
    for column in columns:
        nullable = "yes" if column.nullable else "no"
        optional = "yes" if column.optional else "no"
        lines.append(
            f"| `{column.name}` | {column.kind} | {nullable} | {optional} | {column.description} |"
        )
    return "\n".join(lines)


def tables() -> dict[str, str]:
    """The attempt-log (required and optional columns) and hardware-catalog tables, by name."""
    return {
        "attempts": column_table(ATTEMPT_COLUMNS),
        "optional attempts": column_table(OPTIONAL_ATTEMPT_COLUMNS),
        "hardware": column_table(HARDWARE_COLUMNS),
    }


if __name__ == "__main__":
    for name, table in tables().items():
        print(f"<!-- {name} table -->\n{table}\n")
