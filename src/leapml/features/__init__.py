"""Submission-time features: launch configuration, hardware specs and as-of history.

:func:`build_features` turns attempts (rows of an attempt log, or candidate
rows from :func:`candidate_rows`) into the feature matrix ``X`` that
:class:`~leapml.LeapRegressor` reads. Every feature is known when the attempt
is submitted:

1. the launch configuration (model type, precision, trainer count, ...);
2. the hardware type's specifications at the job's precision;
3. derived quantities a performance engineer would compute (global batch,
   hosts used, total peak FLOP/s, ...);
4. what this same job measured in earlier completed runs, on this hardware
   type and on any other, with the earlier type's specs so that a model can
   transfer a measurement from one type to another;
5. what the job's model type (and model family) measured on this hardware
   type and on any hardware.

History is read *as of* each row's ``submit_time``: only completed (``ok``)
rows of the history log whose outcome was known strictly earlier are used (a
run's throughput is known when it ends: :func:`outcome_known_time`), so a run
still going when a row is submitted is invisible to it. Where the rows state a
``throughput_unit`` (an optional column), the history is keyed by unit too:
no mean mixes tokens/s with images/s. Columns the simulator adds for
evaluation (``expected_throughput``) and hidden columns (names starting with
``_``) are never read. ``docs/features.md`` describes every column.

Apart from the matrix, :class:`PeakLog` keeps what a job's earlier runs in a
launch configuration measured of memory (``peak_memory_gb``), which the
feasibility model reads as :data:`MEASURED_PEAK`.
"""
from __future__ import annotations

from leapml.features.build import build_features, candidate_rows, check_jobs, hardware_type_names
from leapml.features.columns import FeatureColumns
from leapml.features.history_index import HistoryIndex
from leapml.features.names import (
    FEATURE_GROUPS,
    HISTORY_COLUMNS,
    OTHER_PRECISION_FALLBACK,
    OUTCOME_KNOWN_RULES,
    PRECISION_FALLBACK,
    QUERY_COLUMNS,
    feature_names,
)
from leapml.features.peaks import HOST_FREE_PARALLELISM, MEASURED_PEAK, PeakLog
from leapml.features.rows import outcome_known_time
from leapml.features.sizes import ModelSizes

__all__ = [
    "FEATURE_GROUPS",
    "FeatureColumns",
    "HISTORY_COLUMNS",
    "OUTCOME_KNOWN_RULES",
    "HistoryIndex",
    "HOST_FREE_PARALLELISM",
    "MEASURED_PEAK",
    "ModelSizes",
    "OTHER_PRECISION_FALLBACK",
    "PRECISION_FALLBACK",
    "PeakLog",
    "QUERY_COLUMNS",
    "build_features",
    "candidate_rows",
    "check_jobs",
    "feature_names",
    "hardware_type_names",
    "outcome_known_time",
]
