"""The schema's vocabulary: statuses, precisions, the columns of attempt logs and catalogs, and its errors."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

#: Attempt statuses. Only ``ok`` attempts carry a throughput.
STATUSES = ("ok", "oom", "failed")
#: The largest count a log may hold: every whole number up to it is exact as a float.
MAX_COUNT = 2.0**53

#: Precision families the hardware catalog gives peaks for, from widest to narrowest.
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")

#: Spellings of each precision family that :func:`normalize_precision` maps onto it
#: (after lower-casing and turning spaces and hyphens into underscores). Automatic
#: mixed precision without a stated type (``amp``, ``mixed``) is the fp16 family: it
#: is what the frameworks mean by it unless told bf16.
PRECISION_ALIASES: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32", "float32", "float", "single", "full"),
    "tf32": ("tf32", "tensorfloat32", "tensor_float_32"),
    "bf16": ("bf16", "bfloat16", "amp_bf16", "mixed_bf16", "bf16_mixed"),
    "fp16": ("fp16", "float16", "half", "amp", "amp_fp16", "mixed", "mixed_fp16", "fp16_mixed"),
    "fp8": ("fp8", "float8", "fp8_e4m3", "fp8_e5m2", "fp8_mixed"),
}
_ALIAS_FAMILY = {alias: family for family, aliases in PRECISION_ALIASES.items() for alias in aliases}


def normalize_precision(value):
    """The normalised spelling of one precision value.

    Lower-cased and stripped, spaces and hyphens turned into underscores, then
    mapped onto its family of :data:`PRECISIONS` when
    :data:`PRECISION_ALIASES` lists it, or lists it once a separator between
    letters and digits is dropped (``FP-16``, ``BF 16``), or when its words
    name one family beside words that say only "mixed precision"; any other
    value is kept (normalised) as a category of its own. A null or empty value gives None.

    Examples
    --------
    >>> [normalize_precision(v) for v in ["AMP", "amp_fp16", "Mixed", " BF16 ", "FP-16", "int8", ""]]
    ['fp16', 'fp16', 'fp16', 'bf16', 'fp16', 'int8', None]

    Words around one family's name are read too; two families' names are not:

    >>> [normalize_precision(v) for v in ["Mixed Precision", "AMP (FP16)", "BF16 AMP", "FP32 (TF32)"]]
    ['fp16', 'fp16', 'bf16', 'fp32_(tf32)']
    """
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    text = "_".join(str(value).strip().lower().replace("-", " ").split())
    if not text:
        return None
    if text in _ALIAS_FAMILY:
        return _ALIAS_FAMILY[text]
    # "FP-16", "BF 16", "fp_8_e4m3": a family's name split before its width
    joined = re.sub(r"(?<=[a-z])_(?=\d)", "", text)
    if joined in _ALIAS_FAMILY:
        return _ALIAS_FAMILY[joined]
    # "Mixed Precision", "AMP (FP16)", "BF16 AMP": words around one family's name
    words = set(re.findall(r"[a-z][a-z\d]*", joined))
    named = {_ALIAS_FAMILY[w] for w in words if w in _ALIAS_FAMILY and w not in _MIXED}
    if len(named) == 1 and words <= set(_ALIAS_FAMILY) | _MIXED | _FILLER:
        return named.pop()
    if not named and words & _MIXED and words <= _MIXED | _FILLER:
        return "fp16"
    return text


#: Words that say mixed precision without its type, and words that say nothing of it.
_MIXED = frozenset({"amp", "mixed", "automatic"})
# words beside a family's name that say nothing of another family: an FP8 format, "true"
# (pure rather than mixed, as in "bf16-true")
_FILLER = frozenset({"precision", "training", "math", "mode", "e4m3", "e5m2", "true"})


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its kind and whether it may be null.

    ``kind`` is one of ``"int"``, ``"float"``, ``"time"``, ``"category"``
    (strings or pandas categoricals) and ``"id"`` (integers or strings).
    ``optional`` columns may be absent from the table (read as all null).
    """

    name: str
    kind: str
    nullable: bool = False
    description: str = ""
    optional: bool = False


#: The launch configuration of a job: what is known when it is submitted.
LAUNCH_COLUMNS = (
    "model_type",
    "model_family",
    "trainer_count",
    "batch_size",
    "precision",
    "seq_len",
    "parallelism",
)

#: Columns of an attempt log, in order.
ATTEMPT_COLUMNS = (
    Column("attempt_id", "id", description="unique id of the attempt"),
    Column("job_id", "id", description="stable id of the recurring job"),
    Column("submit_time", "time", description="when the attempt was submitted"),
    Column("model_type", "category", description="model type (e.g. 'llm-ft-042')"),
    Column("model_family", "category", description="family of the model type (e.g. 'llm')"),
    Column("trainer_count", "int", description="number of accelerator devices (trainers)"),
    Column(
        "batch_size", "int", nullable=True, description="per-trainer batch size, in samples; null if unknown"
    ),
    Column(
        "precision",
        "category",
        description="numeric precision: " + ", ".join(PRECISIONS) + " or any other (see below)",
    ),
    Column("seq_len", "int", nullable=True, description="sequence length, where it applies"),
    Column("parallelism", "category", description="parallelism style (data, fsdp, ...)"),
    Column("hardware_type", "category", description="hardware type, a key of the catalog"),
    Column("status", "category", description="outcome: " + ", ".join(STATUSES)),
    Column(
        "throughput",
        "float",
        nullable=True,
        description="measured training throughput (samples/s unless throughput_unit says otherwise); null unless status is ok",
    ),
    Column("device_hours", "float", nullable=True, description="device-hours the attempt used; null if unknown"),
)

#: Columns an attempt log may add: validated when present, read as null when absent.
OPTIONAL_ATTEMPT_COLUMNS = (
    Column(
        "end_time",
        "time",
        nullable=True,
        optional=True,
        description="when the run ended and its outcome became known (null: still running)",
    ),
    Column(
        "throughput_unit",
        "category",
        nullable=True,
        optional=True,
        description="unit of throughput (samples/s, tokens/s, ...); absent or null: samples/s",
    ),
    Column("nodes", "int", nullable=True, optional=True, description="hosts the attempt ran on"),
    Column("data_parallel_degree", "int", nullable=True, optional=True, description="data-parallel replicas"),
    Column("tensor_parallel_degree", "int", nullable=True, optional=True, description="tensor-parallel degree"),
    Column(
        "pipeline_parallel_degree", "int", nullable=True, optional=True, description="pipeline stages"
    ),
    Column(
        "param_count", "float", nullable=True, optional=True,
        description="the model's parameters, as its definition gives them (dense; > 0)",
    ),
    Column(
        "flops_per_sample", "float", nullable=True, optional=True,
        description="training FLOPs per sample (forward and backward) at the job's sequence length (> 0)",
    ),
    Column(
        "embedding_gb", "float", nullable=True, optional=True,
        description="size of the model's embedding tables, GB (>= 0; 0: none)",
    ),
    Column(
        "peak_memory_gb", "float", nullable=True, optional=True,
        description="device memory one trainer held at its peak, GB (> 0); null unless status is ok",
    ),
)

#: Model-size columns a model registry knows at submission (optional, read as unknown when absent).
MODEL_SIZE_COLUMNS = ("param_count", "flops_per_sample", "embedding_gb")
#: The largest value a model-size column may hold.
MAX_MODEL_SIZE = 1e30

#: The throughput unit of rows that state none.
DEFAULT_THROUGHPUT_UNIT = "samples/s"

#: Columns only the simulator writes and only evaluation may read.
TRUTH_COLUMNS = ("expected_throughput",)

#: Columns of a hardware catalog, in order.
HARDWARE_COLUMNS = (
    Column("hardware_type", "category", description="unique name of the hardware type"),
    Column("vendor", "category", description="vendor (NVIDIA, AMD, Intel, ...)"),
    Column("peak_fp32_tflops", "float", nullable=True, description="dense fp32 peak, TFLOP/s"),
    Column("peak_tf32_tflops", "float", nullable=True, description="dense tf32 tensor peak"),
    Column("peak_bf16_tflops", "float", nullable=True, description="dense bf16 tensor peak"),
    Column("peak_fp16_tflops", "float", nullable=True, description="dense fp16 tensor peak"),
    Column("peak_fp8_tflops", "float", nullable=True, description="dense fp8 tensor peak"),
    Column("memory_gb", "float", nullable=True, description="device memory, GB"),
    Column("memory_bw_gbps", "float", nullable=True, description="device memory bandwidth, GB/s"),
    Column(
        "intra_node_bw_gbps",
        "float",
        nullable=True,
        optional=True,
        description="per-device link bandwidth inside a host, GB/s",
    ),
    Column(
        "inter_node_bw_gbps",
        "float",
        nullable=True,
        optional=True,
        description="per-device network bandwidth between hosts, GB/s",
    ),
    Column("devices_per_host", "int", nullable=True, optional=True, description="devices in one host"),
    Column(
        "cost_per_device_hour",
        "float",
        nullable=True,
        optional=True,
        description="cost of one device-hour, USD; ranking needs it, prediction does not",
    ),
    Column("introduced", "time", description="first day the type is in the fleet"),
)

_KIND_CHECKS = {
    "int": lambda s: pd.api.types.is_integer_dtype(s.dtype),
    "float": lambda s: pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype),
    "time": lambda s: pd.api.types.is_datetime64_any_dtype(s.dtype),
    "category": lambda s: isinstance(s.dtype, pd.CategoricalDtype)
    or pd.api.types.is_string_dtype(s.dtype)
    or s.dtype == object,
    "id": lambda s: pd.api.types.is_integer_dtype(s.dtype)
    or pd.api.types.is_string_dtype(s.dtype)
    or s.dtype == object,
}


class SchemaError(ValueError):
    """An attempt log or hardware catalog does not follow the schema.

    ``problems`` lists every problem found, one string each.

    Examples
    --------
    >>> err = SchemaError("the log", ["missing column(s): ['job_id']"])
    >>> err.problems
    ["missing column(s): ['job_id']"]
    """

    def __init__(self, what: str, problems: list[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{what} does not follow the schema ({len(problems)} problem(s)):\n{lines}")


class RowsSchemaError(SchemaError):
    """A :class:`SchemaError` of the rows passed to be described (submissions), not the history or catalog."""
