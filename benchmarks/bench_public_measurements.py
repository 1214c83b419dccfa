"""Real measurements: LeapRegressor and the baselines on published training-throughput tables.

Data: the tidy tables of ``--data`` (the public folder holds Lambda's
TensorFlow benchmarks, Gavel's profiles, NVIDIA DeepLearningExamples tables
and MLPerf Training results; sources and licences in its ``README.md``) and
the hardware figures of ``--specs``, mapped onto the attempt-log schema by
``leapml.datasets.from_measurements`` with ``PUBLIC_JOB_COLUMNS`` (the notes
it returns are printed). The data stays outside the package.

Two protocols:

- **jobs**: ``GroupKFold`` over ``job_id`` (5 folds, shuffled, seed 0): a
  test job never trains a model. Training rows' features read only training
  rows; a test row's features read every measurement submitted before it,
  the same job's earlier runs (on older hardware) included, as a scheduler
  would.
- **hardware**: leave one hardware type out, for every type with at least
  ``--min-rows`` measurements: train on the other types; the held-out rows'
  features read only the other types' measurements.

Models: the default ``LeapRegressor``; the published configuration (13 bins,
multiclass router, hard routing: fitted once when it is the default); one
LightGBM median regressor (``leapml.evaluation.baselines.single_model_reference``, 400
trees) and the same model on the Huber loss; spec scaling of the job's last measurement by peak FLOP/s and by
memory bandwidth (``SpecScalingRegressor``); the lookup table (19 most
frequent model types). Accuracy is the share of measurements predicted
within +-20 % and +-10 %; an abstention (spec scaling without an earlier
measurement, a key the table lacks) is a miss, and coverage is printed.

``--monotone-levers`` scores, instead of the published configuration and the
baselines, the default beside the default without monotone constraints
(``leap_not_monotone``) and two wider ones: also in the
job's log ratios of peak FLOP/s and bandwidth to the type it last ran on
(``leap_monotone_ratios``), and in those and the features that estimate the
throughput itself (``leap_monotone_estimates``: :data:`THROUGHPUT_ESTIMATES`).

``--configs base_all_columns`` scores, instead, the default beside
configurations named as in ``bench_method_levers.py`` and the single
reference.

Run: ``python benchmarks/bench_public_measurements.py --data ../shared/data/public``
(``--threads``, ``--min-rows``, ``--folds``; writes
``benchmarks/results/public_measurements.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from functools import partial
from pathlib import Path

import pandas as pd
from bench_method_levers import make_model
from sklearn.model_selection import GroupKFold

from leapml import PUBLISHED, LeapRegressor
from leapml.datasets import PUBLIC_JOB_COLUMNS, from_measurements, read_measurements
from leapml.evaluation.baselines import (
    LookupTableRegressor,
    SpecScalingRegressor,
    single_model_reference,
)
from leapml.evaluation.metrics import coverage, within_tolerance
from leapml.features import build_features
from leapml.regressor import FASTER_HARDWARE

#: How much faster the candidate type is than the one the job last ran on.
SPEC_RATIOS = ("log_peak_tflops_ratio_to_last_hardware", "log_memory_bw_ratio_to_last_hardware")
#: Features that estimate the throughput itself: the prediction should not fall as they rise.
THROUGHPUT_ESTIMATES = (
    "job_config_mean_log_throughput_same_hardware", "job_last_throughput_same_hardware",
    "job_mean_log_throughput_same_hardware", "job_last_throughput_any_hardware",
    "job_mean_log_throughput_any_hardware", "job_last_throughput_scaled_by_peak",
    "model_type_log_throughput_estimate_same_hardware",
    "model_type_log_throughput_estimate_any_hardware", "log_roofline_throughput",
    "history_log_throughput_estimate",
)


def monotone_levers(threads: int) -> dict:
    """The default and the default with wider monotone constraints (``--monotone-levers``)."""
    return {
        "leap_default": LeapRegressor(random_state=0, n_jobs=threads),
        "leap_not_monotone": LeapRegressor(random_state=0, n_jobs=threads, monotone_increasing=None),
        "leap_monotone_ratios": LeapRegressor(random_state=0, n_jobs=threads,
                                              monotone_increasing=FASTER_HARDWARE + SPEC_RATIOS),
        "leap_monotone_estimates": LeapRegressor(
            random_state=0, n_jobs=threads,
            monotone_increasing=FASTER_HARDWARE + SPEC_RATIOS + THROUGHPUT_ESTIMATES),
        "single_lightgbm": single_model_reference(n_jobs=threads),
    }


def configurations(names: list[str], threads: int) -> dict:
    """The default, the LeapRegressor configurations named as in ``bench_method_levers.py``, and
    the single reference (``--configs``)."""
    out = {"leap_default": LeapRegressor(random_state=0, n_jobs=threads)}
    for name in names:
        out[name] = make_model(name, 0).set_params(n_jobs=threads)
    out["single_lightgbm"] = single_model_reference(n_jobs=threads)
    return out


def models(threads: int) -> dict:
    """The models compared, by name (the published configuration only when it is not the default)."""
    default = LeapRegressor(random_state=0, n_jobs=threads)
    published = LeapRegressor(random_state=0, n_jobs=threads, **PUBLISHED)
    out = {"leap_default": default}
    if published.get_params() != default.get_params():
        out["leap_published"] = published
    out.update({
        "single_lightgbm": single_model_reference(n_jobs=threads),
        # the same single model on the Huber loss the default's shared expert uses
        "single_huber": single_model_reference(n_jobs=threads, objective="huber"),
        "spec_scaling_peak": SpecScalingRegressor(by="peak_tflops"),
        "spec_scaling_bandwidth": SpecScalingRegressor(by="memory_bw_gbps"),
        "lookup_table": LookupTableRegressor(),
    })
    return out


def job_splits(attempts: pd.DataFrame, folds: int):
    """(name, training rows, test rows, history of the test rows) of the job folds."""
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=0)
    for i, (train, test) in enumerate(splitter.split(attempts, groups=attempts["job_id"])):
        yield f"jobs fold {i}", attempts.iloc[train], attempts.iloc[test], attempts


def hardware_splits(attempts: pd.DataFrame, min_rows: int):
    """(name, training rows, test rows, history of the test rows) holding out one hardware type."""
    counts = attempts["hardware_type"].astype(str).value_counts()
    for name in sorted(counts.index[counts >= min_rows]):
        held = (attempts["hardware_type"].astype(str) == name).to_numpy()
        train = attempts[~held]
        yield f"held out {name}", train, attempts[held], train


def score_split(split, catalog, threads: int, make_models=None) -> tuple[pd.DataFrame, dict]:
    """Fit every model on one split; the test rows' predictions and each model's fit seconds."""
    name, train, test, history = split
    X_train = build_features(train, catalog)
    X_test = build_features(test, catalog, history=history)
    y_train = train["throughput"].to_numpy(dtype=float)
    rows = pd.DataFrame({"split": name, "source": test["source"].to_numpy(),
                         "throughput": test["throughput"].to_numpy(dtype=float)})
    seconds = {}
    for model_name, model in (make_models or models)(threads).items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds[model_name] = time.perf_counter() - start
        rows[model_name] = model.predict(X_test)
    return rows, seconds


def summary(predictions: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Accuracy within +-20 % and +-10 % and coverage, per protocol and source, and overall."""
    out = []
    for (protocol, source), rows in _groups(predictions):
        for name in names:
            y, predicted = rows["throughput"], rows[name]
            out.append({"protocol": protocol, "source": source, "model": name, "measurements": len(rows),
                        "within_20": within_tolerance(y, predicted, tol=0.2),
                        "within_10": within_tolerance(y, predicted, tol=0.1),
                        "coverage": coverage(predicted)})
    return pd.DataFrame(out)


def _groups(predictions: pd.DataFrame):
    for protocol, rows in predictions.groupby("protocol", sort=False):
        yield (protocol, "all"), rows
        for source, part in rows.groupby("source", sort=True):
            yield (protocol, source), part


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="folder of the measurement tables")
    parser.add_argument("--specs", type=Path, help="hardware figures (default: <data>/../hardware_specs.csv)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--min-rows", type=int, default=100, help="hold out types with this many rows")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "public_measurements.json")
    parser.add_argument("--monotone-levers", action="store_true",
                        help="score the default beside wider monotone constraints instead")
    parser.add_argument("--configs", nargs="+", default=None,
                        help="score the default beside these LeapRegressor configurations "
                             "(named as in bench_method_levers.py, e.g. base_all_columns) and the "
                             "single reference instead")
    args = parser.parse_args(argv)
    make_models = models
    if args.monotone_levers:
        make_models = monotone_levers
    elif args.configs:
        make_models = partial(configurations, args.configs)
    started = time.perf_counter()
    specs = pd.read_csv(args.specs or args.data.parent / "hardware_specs.csv")
    log = from_measurements(read_measurements(args.data), specs, job_columns=PUBLIC_JOB_COLUMNS)
    attempts = log.attempts
    print(f"{len(attempts):,} measurements, {attempts['job_id'].nunique():,} jobs, "
          f"{attempts['hardware_type'].nunique()} hardware types; mapping notes:")
    for note in log.notes:
        print(f"  - {note}")

    frames, fit_seconds = [], []
    splits = [("jobs", s) for s in job_splits(attempts, args.folds)]
    splits += [("hardware", s) for s in hardware_splits(attempts, args.min_rows)]
    for protocol, split in splits:
        rows, seconds = score_split(split, log.hardware, args.threads, make_models)
        frames.append(rows.assign(protocol=protocol))
        fit_seconds.append(seconds)
        print(f"  {split[0]}: {len(rows)} test rows, leap fit {seconds['leap_default']:.1f} s", flush=True)
    predictions = pd.concat(frames, ignore_index=True)
    names = list(fit_seconds[0])
    table = summary(predictions, names)
    elapsed = time.perf_counter() - started
    _print(table, names)
    fits = pd.DataFrame(fit_seconds).median().round(2).to_dict()
    print(f"\nmedian fit seconds per split: {fits}")
    print(f"total {elapsed:.0f} s on {os.cpu_count()} cores, {args.threads} thread(s) per model, "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": table.to_dict("records"), "fit_seconds": fits,
                                    "seconds": elapsed, "notes": log.notes}, indent=1))
    return 0


def _print(table: pd.DataFrame, names: list[str]) -> None:
    for protocol, rows in table.groupby("protocol", sort=False):
        print(f"\n## {protocol}: within +-20 % / +-10 % (coverage)")
        print("| source | measurements | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for source, part in rows.groupby("source", sort=False):
            part = part.set_index("model")
            cells = [f"{part.loc[n, 'within_20']:.1%} / {part.loc[n, 'within_10']:.1%}"
                     + (f" ({part.loc[n, 'coverage']:.0%})" if part.loc[n, "coverage"] < 1 else "")
                     for n in names]
            print(f"| {source} | {int(part['measurements'].iloc[0]):,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
