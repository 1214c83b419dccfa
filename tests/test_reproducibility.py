"""The same seed gives the same fleet, features, model, backtest tables and ranking.

Across calls, across processes (with another hash seed) and with ``n_jobs`` 1 or 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

JOB_COLUMNS = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
               "seq_len", "parallelism"]


def _digest(value) -> str:
    """A hash of a frame's values, index and column names, or of an array's bytes."""
    if isinstance(value, pd.DataFrame):
        rows = pd.util.hash_pandas_object(value, index=True).to_numpy()
        data = rows.tobytes() + json.dumps([str(c) for c in value.columns]).encode()
    else:
        data = np.ascontiguousarray(value).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def pipeline_digests(seed: int = 11, n_jobs: int = 1) -> dict[str, str]:
    """Run simulate -> features -> fit -> rank -> backtest; hash every output."""
    from leapml import LeapRegressor
    from leapml.evaluation.backtest import nightly
    from leapml.evaluation.baselines import LookupTableRegressor
    from leapml.features import build_features
    from leapml.fleet import simulate
    from leapml.placement import fit_window, place

    fleet = simulate("tiny", days=6, seed=seed)
    out = {name: _digest(getattr(fleet, name))
           for name in ("attempts", "hardware", "models", "jobs", "interactions", "releases")}
    attempts = fleet.attempts.drop(columns="expected_throughput")
    X = build_features(attempts, fleet.hardware)
    out["features"] = _digest(X)
    model = fit_window(attempts, fleet.hardware, window_days=3,
                       model=LeapRegressor(n_estimators=5, n_jobs=n_jobs, random_state=seed))
    out["model_bins"] = _digest(np.r_[model.bin_edges_, model.moved_, model.train_loss_])
    out["predictions"] = _digest(model.predict(X))
    ranked = place(model, fleet.jobs[JOB_COLUMNS].head(5), fleet.hardware, history=attempts)
    out["ranking"] = _digest(ranked)
    models = {"leap": LeapRegressor(n_estimators=5, n_jobs=1, random_state=0),
              "lookup_table": LookupTableRegressor()}
    result = nightly(fleet.attempts, fleet.hardware, models=models, window_days=4, nights=2,
                     oracle=fleet.expected_throughput, regret_jobs=40, n_jobs=n_jobs,
                     random_state=seed, progress=False)
    out["backtest_scores"] = _digest(result.scores)
    out["backtest_predictions"] = _digest(result.predictions)
    out["backtest_regret"] = _digest(result.regret)
    return out


@pytest.fixture(scope="module")
def serial():
    return pipeline_digests(n_jobs=1)


def test_same_seed_same_outputs_within_a_process(serial):
    assert pipeline_digests(n_jobs=1) == serial


def test_two_workers_give_the_same_outputs_as_one(serial):
    assert pipeline_digests(n_jobs=2) == serial


def test_same_seed_same_outputs_in_a_fresh_process(serial):
    tests = Path(__file__).parent
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
            "from test_reproducibility import pipeline_digests; "
            "print(json.dumps(pipeline_digests(n_jobs=1)))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code, str(tests)], capture_output=True, text=True,
                          env=env, timeout=300, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == serial


def test_another_seed_gives_another_fleet(serial):
    from leapml.fleet import simulate

    other = simulate("tiny", days=6, seed=12)
    assert _digest(other.attempts) != serial["attempts"]
