"""The feature matrix's column names and the columns the features read."""

from __future__ import annotations

import pandas as pd

from leapml.schema import (
    LAUNCH_COLUMNS,
    TRUTH_COLUMNS,
)

#: For each precision a job asks for, the precisions whose peak FLOP/s is used,
#: in order, when a hardware type lacks it. The first one the type supports wins:
#: fp8 jobs fall back to bf16 (the usual mixed-precision recipe), bf16 and fp16
#: stand in for each other (same width), and fp32/tf32 stand in for each other.
PRECISION_FALLBACK: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32", "tf32", "bf16", "fp16", "fp8"),
    "tf32": ("tf32", "fp32", "bf16", "fp16", "fp8"),
    "bf16": ("bf16", "fp16", "fp32", "tf32", "fp8"),
    "fp16": ("fp16", "bf16", "fp32", "tf32", "fp8"),
    "fp8": ("fp8", "bf16", "fp16", "fp32", "tf32"),
}

#: The peaks read, in order, for a precision outside :data:`~leapml.schema.PRECISIONS`
#: (``int8``, ``fp4``, a log's ``unknown``): a 16-bit tensor peak first, the usual
#: training recipe; ``precision_native`` is 0 for such rows.
OTHER_PRECISION_FALLBACK: tuple[str, ...] = ("fp16", "bf16", "fp8", "tf32", "fp32")

#: The columns of ``X``, by group, in order.
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "launch": (
        "model_type",
        "model_family",
        "precision",
        "parallelism",
        "hardware_type",
        "vendor",
        "trainer_count",
        "batch_size",
        "seq_len",
    ),
    "hardware": (
        "peak_tflops",
        "precision_native",
        "memory_gb",
        "memory_bw_gbps",
        "intra_node_bw_gbps",
        "inter_node_bw_gbps",
        "devices_per_host",
        "hardware_age_days",
    ),
    "derived": (
        "global_batch_size",
        "hosts_used",
        "crosses_hosts",
        "communication_bw_gbps",
        "total_peak_tflops",
        "total_memory_bw_gbps",
        "total_memory_gb",
        "batch_tokens_per_memory_gb",
    ),
    "model_size": (
        "param_count",
        "flops_per_sample",
        "embedding_gb",
        "log_compute_seconds_per_step",
        "log_weight_seconds_per_step",
        "log_gradient_seconds_per_step",
        "log_roofline_throughput",
        "embedding_gb_per_memory_gb",
        "model_state_gb_per_device",
        "model_state_gb_per_memory_gb",
    ),
    "job_history": (
        "job_config_runs_same_hardware",
        "job_config_mean_log_throughput_same_hardware",
        "job_runs_same_hardware",
        "job_last_throughput_same_hardware",
        "job_mean_log_throughput_same_hardware",
        "job_days_since_last_run_same_hardware",
        "job_runs_any_hardware",
        "job_last_throughput_any_hardware",
        "job_last_throughput_per_trainer_any_hardware",
        "job_mean_log_throughput_any_hardware",
        "job_days_since_last_run_any_hardware",
        "job_last_hardware_type",
        "job_last_hardware_peak_tflops",
        "log_peak_tflops_ratio_to_last_hardware",
        "log_memory_bw_ratio_to_last_hardware",
        "job_last_throughput_scaled_by_peak",
    ),
    "model_history": (
        "model_type_runs_same_hardware",
        "model_type_mean_log_samples_per_peak_tflop_same_hardware",
        "model_type_mean_log_steps_per_second_same_hardware",
        "model_type_log_throughput_estimate_same_hardware",
        "model_type_runs_any_hardware",
        "model_type_mean_log_samples_per_peak_tflop_any_hardware",
        "model_type_log_throughput_estimate_any_hardware",
        "model_family_runs_same_hardware",
        "model_family_mean_log_samples_per_peak_tflop_same_hardware",
    ),
    "summary": (
        "history_log_throughput_estimate",
        "history_estimate_source",
    ),
}

#: Columns ``build_features`` needs on the rows it describes.
QUERY_COLUMNS = ("job_id", "submit_time", *LAUNCH_COLUMNS, "hardware_type")
# Columns a job to score needs (its time and hardware type come with its candidates).
_JOB_COLUMNS = ("job_id", *LAUNCH_COLUMNS)
#: Columns ``build_features`` needs on the history log.
HISTORY_COLUMNS = (
    "job_id",
    "submit_time",
    "model_type",
    "model_family",
    "trainer_count",
    "batch_size",
    "precision",
    "seq_len",
    "parallelism",
    "hardware_type",
    "status",
    "throughput",
)
# Outcome columns of an attempt that say nothing about a candidate to score.
_OUTCOME_COLUMNS = ("status", "throughput", "device_hours", "end_time", *TRUTH_COLUMNS)
#: The rules :func:`outcome_known_time` can read the time an outcome becomes known by.
OUTCOME_KNOWN_RULES = ("end_time", "run_hours", "submit_time")
_DAY_NS = 86_400 * 10**9
_SPEC_COLUMNS = (
    "memory_gb",
    "memory_bw_gbps",
    "intra_node_bw_gbps",
    "inter_node_bw_gbps",
    "devices_per_host",
)


def feature_names() -> list[str]:
    """Return the names of the columns of ``X``, in order.

    Examples
    --------
    >>> from leapml.features import feature_names
    >>> names = feature_names()
    >>> names[:3]
    ['model_type', 'model_family', 'precision']
    >>> "job_last_throughput_same_hardware" in names
    True
    """
    return [name for group in FEATURE_GROUPS.values() for name in group]


_FEATURE_NAMES = tuple(feature_names())
_FEATURE_INDEX = pd.Index(_FEATURE_NAMES)
#: Text columns of the rows described, read as they are (keys and categories).
_TEXT_COLUMNS = ("job_id", "model_type", "model_family", "parallelism")
#: The optional column that keys the history by unit (see :func:`_keyed`).
_UNIT_COLUMN = "throughput_unit"
