"""The feature columns, computed from checked rows and their history statistics."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from leapml._frames import frame_of_arrays as _frame
from leapml.features.as_of import _KeyStats, _take
from leapml.features.inputs import _OTHER_PRECISION, _as_category, _categorical, _whole
from leapml.features.names import _DAY_NS, _FEATURE_INDEX, _FEATURE_NAMES, FEATURE_GROUPS
from leapml.features.rows import _Catalog, _Rows

__all__ = ["FeatureColumns"]

_POSITION = {name: position for position, name in enumerate(_FEATURE_NAMES)}


class FeatureColumns(Mapping):
    """The feature matrix as named columns, before it becomes a DataFrame.

    A read-only mapping from each name of :func:`feature_names` (in order)
    to its column: a NumPy array, or a pandas Categorical for the text
    columns. :meth:`to_frame` gives the DataFrame :func:`build_features`
    returns; :meth:`leapml.LeapRegressor.predict` reads the columns as they
    are, which spares building that frame when scoring a few rows.

    Parameters
    ----------
    columns : list
        The columns, in the order of :func:`feature_names`, of equal length.
    index : Index
        The rows' labels.

    Attributes
    ----------
    columns : list
        As given.
    index : Index
        As given.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> from leapml.features import HistoryIndex
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> index = HistoryIndex(fleet.attempts, fleet.hardware)
    >>> columns = index.candidate_features(fleet.jobs.head(2), ["H100-80GB-SXM5", "MI300X-192GB"],
    ...                                    at=index.end + pd.Timedelta(minutes=5))
    >>> columns.n_rows, list(columns)[:2]
    (4, ['model_type', 'model_family'])
    >>> columns.to_frame().shape
    (4, 62)
    """

    def __init__(self, columns: list, index: pd.Index):
        if len(columns) != len(_FEATURE_NAMES):
            raise ValueError(f"expected {len(_FEATURE_NAMES)} columns, got {len(columns)}")
        self.columns = columns
        self.index = index

    def __getitem__(self, name: str):
        return self.columns[_POSITION[name]]

    def __iter__(self):
        return iter(_FEATURE_NAMES)

    def __len__(self) -> int:
        return len(_FEATURE_NAMES)

    def __repr__(self) -> str:
        return f"FeatureColumns({self.n_rows} rows x {len(self)} columns)"

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return len(self.index)

    def to_frame(self) -> pd.DataFrame:
        """The feature matrix as a DataFrame (a new one at each call)."""
        return _frame(self.columns, _FEATURE_INDEX, self.index)


def _assemble(rows: _Rows, catalog: _Catalog, stats: dict[str, _KeyStats]) -> pd.DataFrame:
    """The feature matrix: launch, hardware and derived columns, then the history's."""
    return FeatureColumns(_feature_columns(rows, catalog, stats), rows.index).to_frame()


#: Bytes per parameter of gradients and weights read, by precision code (the
#: last entry: a precision outside PRECISIONS, read as 16-bit).
_PARAMETER_BYTES = np.array([4.0, 4.0, 2.0, 2.0, 2.0, 2.0])


#: Units in logs, so that a datasheet's extreme figure cannot overflow on the way.
_LOG_GIGA, _LOG_TERA = np.log(1e9), np.log(1e12)

#: Bytes of training state per parameter: fp32 weights, gradients and Adam's two moments.
_STATE_BYTES = 16.0


def _model_size_columns(rows: _Rows, out: dict) -> dict:
    """What the model's size implies on this hardware: a roofline of one step, and its state.

    Seconds per step the device would spend at its peak on the FLOPs, reading
    the weights once at full memory bandwidth, and all-reducing the gradients
    over its link (one trainer: none); their sum gives a throughput no run can
    beat. The training state one device holds: 16 bytes a parameter, sharded
    across the trainers under ``fsdp``, plus the embedding tables sharded
    across all trainers (activations are not counted). Unknown (NaN) where a
    size or the batch size is.
    """
    sizes = rows.sizes
    params, flops = sizes["param_count"], sizes["flops_per_sample"]
    if np.isnan(params).all() and np.isnan(flops).all() and np.isnan(sizes["embedding_gb"]).all():
        # no size known (a log without the columns): every column below is unknown
        unknown = np.full(len(params), np.nan)
        return {name: unknown.copy() for name in FEATURE_GROUPS["model_size"]}
    trainers, batch = rows.trainers, rows.batch
    sharded = np.asarray(rows.text["parallelism"].to_numpy(dtype=object) == "fsdp")
    state_gb = (params * _STATE_BYTES / np.where(sharded, trainers, 1.0) / 1e9
                + np.nan_to_num(sizes["embedding_gb"]) / trainers)
    with np.errstate(divide="ignore", invalid="ignore"):
        # in logs: a valid but tiny size (1e-300 FLOPs) must not underflow a step to 0 s
        log_weight_bytes = np.log(params) + np.log(_PARAMETER_BYTES[
            np.minimum(rows.precision, _OTHER_PRECISION)])
        log_compute = np.log(flops) + np.log(batch) - np.log(out["peak_tflops"]) - _LOG_TERA
        log_weights = log_weight_bytes - np.log(out["memory_bw_gbps"]) - _LOG_GIGA
        ring = 2 * (trainers - 1) / trainers
        log_gradients = np.where(trainers > 1, log_weight_bytes + np.log(ring)
                                 - np.log(out["communication_bw_gbps"]) - _LOG_GIGA, np.nan)
        log_step = np.logaddexp(log_compute, log_weights)
        log_step = np.where(trainers > 1, np.logaddexp(log_step, log_gradients), log_step)
        return {
            "param_count": params,
            "flops_per_sample": flops,
            "embedding_gb": sizes["embedding_gb"],
            "log_compute_seconds_per_step": log_compute,
            "log_weight_seconds_per_step": log_weights,
            "log_gradient_seconds_per_step": log_gradients,
            "log_roofline_throughput": np.log(trainers) + np.log(batch) - log_step,
            "embedding_gb_per_memory_gb": sizes["embedding_gb"] / out["total_memory_gb"],
            "model_state_gb_per_device": state_gb,
            "model_state_gb_per_memory_gb": state_gb / out["memory_gb"],
        }


def _feature_columns(rows: _Rows, catalog: _Catalog, stats: dict[str, _KeyStats]) -> list:
    """The columns of the feature matrix, in the order of :func:`feature_names`."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflows: read as unknown below
        columns = _computed_columns(rows, catalog, stats)
    return _overflows_unknown(columns)


def _computed_columns(rows: _Rows, catalog: _Catalog, stats: dict[str, _KeyStats]) -> list:
    """The columns of the feature matrix, in the order of :func:`feature_names`."""
    text = rows.text
    hardware_code, precision_code = rows.hardware, rows.precision
    peak_code = np.minimum(precision_code, _OTHER_PRECISION)
    trainers, batch, seq_len, query_ns = rows.trainers, rows.batch, rows.seq_len, rows.ns
    out: dict[str, object] = {
        "model_type": _as_category(text["model_type"]),
        "model_family": _as_category(text["model_family"]),
        "precision": _categorical(precision_code, rows.precision_dtype),
        "parallelism": _as_category(text["parallelism"]),
        "hardware_type": _categorical(hardware_code, catalog.dtype),
        "vendor": _categorical(catalog.vendor_code[hardware_code], catalog.vendor_dtype),
        "trainer_count": rows.trainer_count,
        "batch_size": rows.batch_size,
        "seq_len": seq_len,
    }

    # -- hardware specs at the job's precision -------------------------------
    peak = catalog.peak[hardware_code, peak_code]
    specs = {name: values[hardware_code] for name, values in catalog.specs.items()}
    out["peak_tflops"] = peak
    out["precision_native"] = catalog.native[hardware_code, peak_code].astype(np.int64)
    out.update(specs)
    per_host = specs["devices_per_host"]
    out["devices_per_host"] = _whole(per_host)
    out["hardware_age_days"] = (query_ns - catalog.introduced_ns[hardware_code]) / _DAY_NS

    # -- derived quantities --------------------------------------------------
    crosses = trainers > per_host
    out["global_batch_size"] = trainers * batch
    out["hosts_used"] = _whole(np.ceil(trainers / per_host))
    # unknown where the catalog does not know the type's devices per host
    out["crosses_hosts"] = _whole(np.where(np.isnan(per_host), np.nan, crosses))
    out["communication_bw_gbps"] = np.where(
        crosses, specs["inter_node_bw_gbps"], specs["intra_node_bw_gbps"]
    )
    out["total_peak_tflops"] = peak * trainers
    out["total_memory_bw_gbps"] = specs["memory_bw_gbps"] * trainers
    out["total_memory_gb"] = specs["memory_gb"] * trainers
    out["batch_tokens_per_memory_gb"] = (
        batch * np.where(np.isnan(seq_len), 1.0, seq_len) / (specs["memory_gb"])
    )

    out.update(_model_size_columns(rows, out))

    # -- this job's history --------------------------------------------------
    config = stats["config_same"]
    out["job_config_runs_same_hardware"] = config.count
    out["job_config_mean_log_throughput_same_hardware"] = config_log = config.means["log"]
    same = stats["job_same"]
    out["job_runs_same_hardware"] = same.count
    out["job_last_throughput_same_hardware"] = same.last["throughput"]
    out["job_mean_log_throughput_same_hardware"] = job_same_log = same.means["log"]
    out["job_days_since_last_run_same_hardware"] = (query_ns - same.last["ns"]) / _DAY_NS

    anywhere = stats["job_any"]
    last_throughput = anywhere.last["throughput"]
    last_per_trainer = last_throughput / anywhere.last["trainers"]
    last_peak = anywhere.last["peak"]
    last_hardware = anywhere.last["hardware"]
    out["job_runs_any_hardware"] = anywhere.count
    out["job_last_throughput_any_hardware"] = last_throughput
    out["job_last_throughput_per_trainer_any_hardware"] = last_per_trainer
    out["job_mean_log_throughput_any_hardware"] = anywhere.means["log"]
    out["job_days_since_last_run_any_hardware"] = (query_ns - anywhere.last["ns"]) / _DAY_NS
    out["job_last_hardware_type"] = _categorical(last_hardware, catalog.dtype)
    out["job_last_hardware_peak_tflops"] = last_peak
    out["log_peak_tflops_ratio_to_last_hardware"] = np.log(peak) - np.log(last_peak)
    out["log_memory_bw_ratio_to_last_hardware"] = np.log(specs["memory_bw_gbps"]) - np.log(
        _take(catalog.specs["memory_bw_gbps"], last_hardware)
    )
    out["job_last_throughput_scaled_by_peak"] = job_scaled = (
        last_per_trainer * trainers * (peak / last_peak)
    )

    # -- the model type's and family's history -------------------------------
    log_total_peak = np.log(peak) + np.log(trainers)
    model = stats["model_same"]
    out["model_type_runs_same_hardware"] = model.count
    out["model_type_mean_log_samples_per_peak_tflop_same_hardware"] = model.means["per_peak"]
    with np.errstate(invalid="ignore"):  # 0 / 0: no earlier row with a batch size
        steps = model.means["steps"] / model.means["batch_known"]
    out["model_type_mean_log_steps_per_second_same_hardware"] = steps
    out["model_type_log_throughput_estimate_same_hardware"] = model_same = (
        model.means["per_peak"] + log_total_peak
    )
    model = stats["model_any"]
    out["model_type_runs_any_hardware"] = model.count
    out["model_type_mean_log_samples_per_peak_tflop_any_hardware"] = model.means["per_peak"]
    out["model_type_log_throughput_estimate_any_hardware"] = model_any = (
        model.means["per_peak"] + log_total_peak
    )
    family = stats["family_same"]
    out["model_family_runs_same_hardware"] = family.count
    out["model_family_mean_log_samples_per_peak_tflop_same_hardware"] = family.means["per_peak"]

    # -- one estimate from the most telling history available ----------------
    # the job's runs in this very configuration first; the model type on this
    # very hardware goes before the job's run elsewhere: scaling by peak FLOP/s
    # alone misses memory- and network-bound jobs
    estimate = np.full(len(rows), np.nan)
    source = np.zeros(len(rows), dtype=np.int64)
    candidates = (config_log, job_same_log, model_same, np.log(job_scaled), model_any)
    for level, candidate in enumerate(candidates, start=1):
        use = np.isnan(estimate) & ~np.isnan(candidate)
        estimate[use] = candidate[use]
        source[use] = level
    out["history_log_throughput_estimate"] = estimate
    out["history_estimate_source"] = source

    return [out[name] for name in _FEATURE_NAMES]


def _overflows_unknown(columns: list) -> list:
    """Read a value that overflowed as unknown (NaN), with a warning naming its columns.

    Every input is finite, but products of extreme ones (a datasheet figure
    of 1e300, a size of 1e-300) can leave the floats; a model cannot use an
    infinity, and refusing valid rows would be worse than not knowing.
    """
    overflowed = []
    for position, values in enumerate(columns):
        if isinstance(values, np.ndarray) and values.dtype.kind == "f":
            infinite = np.isinf(values)
            if infinite.any():
                columns[position] = np.where(infinite, np.nan, values)
                overflowed.append(f"{_FEATURE_NAMES[position]} ({int(infinite.sum())} rows)")
    if overflowed:
        warnings.warn("the inputs' extreme sizes or specs overflowed "
                      f"{', '.join(overflowed)}; read as unknown (NaN)", UserWarning,
                      stacklevel=_caller_level())
    return columns


def _caller_level() -> int:
    """The ``stacklevel`` of the first caller outside this package (the paths here differ)."""
    package = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
