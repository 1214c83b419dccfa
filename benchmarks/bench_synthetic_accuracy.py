"""LeapRegressor against one LightGBM median regressor on a 7-orders-of-magnitude target.

Data: ``tests/_synthetic.py`` (throughput from 10^-1 to 10^6), 20,000 training
and 5,000 test rows, three seeds. Models: the default ``LeapRegressor``, the
default without its shared expert (``base=None``), and the published
configuration (``leapml.PUBLISHED``: 13 bins x 100 trees, multiclass router,
hard routing). References: one LightGBM L1 regressor on ``log(y)`` with the
published per-expert settings (100 trees), and one with the published
cascade's whole expert budget (13 x 100 = 1,300 trees).
Prints accuracy within +-20 % and +-10 % and the fit time, and, for the
cascade, two diagnostics on the test rows: how often the router picks the
expert that fits the row best, and the accuracy if it always did ("oracle").

Run: ``python benchmarks/bench_synthetic_accuracy.py [--seeds 3] [--threads 2]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _synthetic import make_throughput_regression

from leapml import PUBLISHED, LeapRegressor
from leapml._cascade import predict_expert
from leapml.evaluation.metrics import within_tolerance


class LogMedianLightGBM:
    """One LightGBM median regressor on log(y), categoricals given as pandas categories."""

    def __init__(self, n_estimators, threads, seed):
        self.model = LGBMRegressor(objective="l1", n_estimators=n_estimators, learning_rate=0.1,
                                   num_leaves=31, min_child_samples=20, n_jobs=threads,
                                   random_state=seed, verbose=-1)

    def fit(self, X, y):
        self.model.fit(_categorical(X), np.log(y))
        return self

    def predict(self, X):
        return np.exp(self.model.predict(_categorical(X)))


def _categorical(X):
    return X.assign(precision=X["precision"].astype("category"))


def _router_diagnostics(model, X, y):
    """Share of rows routed to their best expert, and within-20% under perfect routing."""
    encoded = model._validate_X(X, reset=False)
    offset = np.reshape(model._offset(encoded), (-1, 1))  # a scalar 0 without a shared expert
    logs = offset + np.column_stack([predict_expert(e, encoded) for e in model.regressors_])
    best = np.argmin(np.abs(logs - np.log(y)[:, None]), axis=1)
    router_hits = float(np.mean(model.predict_bin(X) == best))
    oracle = within_tolerance(y, np.exp(logs[np.arange(len(y)), best]))
    return router_hits, oracle


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train", type=int, default=20_000)
    parser.add_argument("--test", type=int, default=5_000)
    args = parser.parse_args(argv)

    models = {
        "LeapRegressor, default": lambda s: LeapRegressor(n_jobs=args.threads, random_state=s),
        "LeapRegressor, default, base=None": lambda s: LeapRegressor(
            base=None, n_jobs=args.threads, random_state=s),
        "LeapRegressor, published": lambda s: LeapRegressor(
            **PUBLISHED, n_jobs=args.threads, random_state=s),
        "LightGBM L1 on log y, 100 trees": lambda s: LogMedianLightGBM(100, args.threads, s),
        "LightGBM L1 on log y, 1300 trees": lambda s: LogMedianLightGBM(1300, args.threads, s),
    }
    rows = {name: [] for name in models}
    for seed in range(args.seeds):
        X, y = make_throughput_regression(args.train + args.test, random_state=seed)
        X_train, y_train = X.iloc[: args.train], y[: args.train]
        X_test, y_test = X.iloc[args.train :], y[args.train :]
        for name, make in models.items():
            start = time.perf_counter()
            model = make(seed).fit(X_train, y_train)
            seconds = time.perf_counter() - start
            pred = model.predict(X_test)
            diagnostics = (np.nan, np.nan)
            if isinstance(model, LeapRegressor):
                diagnostics = _router_diagnostics(model, X_test, y_test)
            rows[name].append((within_tolerance(y_test, pred, tol=0.2),
                               within_tolerance(y_test, pred, tol=0.1), seconds, *diagnostics))
    print(f"{args.train} train / {args.test} test rows, {args.seeds} seeds, {args.threads} threads")
    print(f"{'model':<44} {'within 20%':>13} {'within 10%':>11} {'fit s':>7} "
          f"{'router hits':>12} {'oracle 20%':>11}")
    for name, values in rows.items():
        w20, w10, secs, hits, oracle = np.mean(values, axis=0)
        spread = np.std([v[0] for v in values])
        print(f"{name:<44} {w20:>7.3f}+-{spread:.3f} {w10:>11.3f} {secs:>7.1f} "
              f"{hits:>12.3f} {oracle:>11.3f}")


if __name__ == "__main__":
    main()
