"""Column names, dtypes and validation of attempt logs and hardware catalogs.

This package is the contract between the fleet simulator, the feature builder,
the baselines and the backtest: every attempt log (simulated or brought by a
user) and every hardware catalog goes through :func:`validate_attempts` and
:func:`validate_hardware` before anything else reads it.

Each validator collects *every* problem it finds and raises one
:class:`SchemaError` that lists them all, so a user fixes a file in one pass.

Precision is an open vocabulary. :func:`normalize_precision` lower-cases a
value, strips it, turns spaces and hyphens into underscores and maps the
usual spellings onto the five families the hardware catalog has peaks for
(:data:`PRECISION_ALIASES`: ``amp``, ``amp_fp16`` and ``mixed`` are the fp16
mixed-precision family, ``amp_bf16`` is bf16, ``float32`` is fp32, ...).
Any other value (``int8``, ``fp4``, ``unknown``) is kept, normalised, as a
category of its own: validation never refuses it, and the features read it
as described in ``docs/features.md``.

The row rules (a precision is never blank, counts and model sizes are finite and > 0, an
``ok`` row's throughput is finite and > 0, every hardware type is in the
catalog, required columns are never null) are written once, in
``leapml.schema.rules``: the validators apply them to whole logs, and the
features apply the same functions to the columns they read.
"""

from __future__ import annotations

from leapml.schema.coerce import coerce_attempts, coerce_hardware, parse_times
from leapml.schema.columns import (
    ATTEMPT_COLUMNS,
    DEFAULT_THROUGHPUT_UNIT,
    HARDWARE_COLUMNS,
    LAUNCH_COLUMNS,
    MODEL_SIZE_COLUMNS,
    OPTIONAL_ATTEMPT_COLUMNS,
    PRECISION_ALIASES,
    PRECISIONS,
    STATUSES,
    TRUTH_COLUMNS,
    RowsSchemaError,
    SchemaError,
    normalize_precision,
)
from leapml.schema.columns import (
    Column as Column,  # the type of the column declarations
)
from leapml.schema.validate import validate_attempts, validate_hardware

__all__ = [
    "ATTEMPT_COLUMNS",
    "HARDWARE_COLUMNS",
    "LAUNCH_COLUMNS",
    "DEFAULT_THROUGHPUT_UNIT",
    "MODEL_SIZE_COLUMNS",
    "OPTIONAL_ATTEMPT_COLUMNS",
    "PRECISIONS",
    "PRECISION_ALIASES",
    "STATUSES",
    "TRUTH_COLUMNS",
    "RowsSchemaError",
    "SchemaError",
    "coerce_attempts",
    "coerce_hardware",
    "normalize_precision",
    "parse_times",
    "validate_attempts",
    "validate_hardware",
]
