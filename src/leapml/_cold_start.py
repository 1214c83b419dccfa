"""Training rows copied as if their model were new to the fleet (``LeapRegressor(cold_start=...)``).

A job of a model family the log never saw has no model type, no family and
no history the model knows: its category is unseen (read as missing) and
every history feature is empty. Trees fitted only on rows that carry those
columns never learn what to do without them, and such a job lands wherever
a missing category happens to fall. A copy of some training rows with those
columns blanked, as ``leapml.features`` would build them for a model of a
new family, teaches the model to predict from what is left: the launch
configuration, the hardware and the model's size.
"""

from __future__ import annotations

import numpy as np

#: The feature columns (as ``leapml.features`` names them) a job of a new model family
#: has empty: the model's identity, the job's own runs, its model type's and family's
#: runs, and the estimate made from them.
COLD_START_COLUMNS = (
    "model_type", "model_family",
    "job_config_runs_same_hardware", "job_config_mean_log_throughput_same_hardware",
    "job_runs_same_hardware", "job_last_throughput_same_hardware",
    "job_mean_log_throughput_same_hardware", "job_days_since_last_run_same_hardware",
    "job_runs_any_hardware", "job_last_throughput_any_hardware",
    "job_last_throughput_per_trainer_any_hardware", "job_mean_log_throughput_any_hardware",
    "job_days_since_last_run_any_hardware", "job_last_hardware_type",
    "job_last_hardware_peak_tflops", "log_peak_tflops_ratio_to_last_hardware",
    "log_memory_bw_ratio_to_last_hardware", "job_last_throughput_scaled_by_peak",
    "model_type_runs_same_hardware", "model_type_mean_log_samples_per_peak_tflop_same_hardware",
    "model_type_mean_log_steps_per_second_same_hardware",
    "model_type_log_throughput_estimate_same_hardware", "model_type_runs_any_hardware",
    "model_type_mean_log_samples_per_peak_tflop_any_hardware",
    "model_type_log_throughput_estimate_any_hardware", "model_family_runs_same_hardware",
    "model_family_mean_log_samples_per_peak_tflop_same_hardware",
    "history_log_throughput_estimate", "history_estimate_source",
)

#: The feature columns a hardware type new to the fleet has empty: its identity and every
#: run on it. The history estimate of such a row falls back to what the job or its model
#: type measured elsewhere (levels 4 and 5 of ``leapml.features``), recomputed in the copy.
NEW_HARDWARE_COLUMNS = (
    "hardware_type",
    *(name for name in COLD_START_COLUMNS if name.endswith("_same_hardware")),
)
#: The estimate a new type's row gets, in the order ``leapml.features`` tries them: the
#: column, the source number it records, and whether the column holds a throughput (to
#: take the log of) rather than a log throughput. The job's last run scaled by peak
#: FLOP/s first, then the model type's runs on any type.
_ESTIMATE_FALLBACKS = (("job_last_throughput_scaled_by_peak", 4, True),
                       ("model_type_log_throughput_estimate_any_hardware", 5, False))

#: Those of :data:`COLD_START_COLUMNS` that count runs (or name the estimate's source,
#: 0 for none): 0 when there is no history, where every other one is missing.
_ZERO_WITHOUT_HISTORY = frozenset(name for name in COLD_START_COLUMNS
                                  if "_runs_" in name or name == "history_estimate_source")


def cold_start_positions(names, columns=COLD_START_COLUMNS) -> np.ndarray:
    """Positions among ``names`` (the fitted feature names, or None) of the ``columns`` a
    cold-start copy blanks; empty without names."""
    if names is None:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(np.isin(np.asarray(names, dtype=object), columns))


def with_cold_copies(X, log_y, sample_weight, *, share, names, seed, hardware_share=0.0):
    """``X``, ``log_y`` and ``sample_weight`` with a ``share`` of the rows appended once more,
    their :data:`COLD_START_COLUMNS` blanked (counts 0, the rest missing), and a
    ``hardware_share`` of them appended as if their hardware type were new
    (:data:`NEW_HARDWARE_COLUMNS` blanked, the history estimate recomputed without them).

    ``X`` is the encoded matrix (a missing category is NaN), in the fit's
    canonical row order, so the rows picked depend on ``seed`` and the rows'
    contents only. Returns the inputs unchanged when both shares are 0 or
    ``names`` has none of the columns.
    """
    parts = [(X, log_y, sample_weight)]
    kinds = ((share, seed, COLD_START_COLUMNS, None),
             (hardware_share, seed + 1, NEW_HARDWARE_COLUMNS, _fall_back_estimate))
    for kind_share, kind_seed, columns, finish in kinds:
        positions = cold_start_positions(names, columns)
        if kind_share == 0 or positions.size == 0:
            continue
        picked = np.flatnonzero(np.random.default_rng(kind_seed).random(len(X)) < kind_share)
        copies = X[picked]
        for j in positions:
            copies[:, j] = 0.0 if names[j] in _ZERO_WITHOUT_HISTORY else np.nan
        if finish is not None:
            finish(copies, list(names))
        parts.append((copies, log_y[picked], None if sample_weight is None else sample_weight[picked]))
    if len(parts) == 1:
        return X, log_y, sample_weight
    weight = None if sample_weight is None else np.concatenate([w for _, _, w in parts])
    return (np.vstack([c for c, _, _ in parts]), np.concatenate([y for _, y, _ in parts]), weight)


def _fall_back_estimate(copies, names):
    """Recompute the history estimate of new-hardware copies from what is measured elsewhere."""
    if "history_log_throughput_estimate" not in names or "history_estimate_source" not in names:
        return
    estimate_at = names.index("history_log_throughput_estimate")
    source_at = names.index("history_estimate_source")
    estimate = np.full(len(copies), np.nan)
    source = np.zeros(len(copies))
    for name, level, in_throughput in _ESTIMATE_FALLBACKS:
        if name not in names:
            continue
        candidate = copies[:, names.index(name)]
        if in_throughput:
            with np.errstate(divide="ignore", invalid="ignore"):
                candidate = np.log(candidate)
        use = np.isnan(estimate) & np.isfinite(candidate)
        estimate[use] = candidate[use]
        source[use] = level
    copies[:, estimate_at] = estimate
    copies[:, source_at] = source
