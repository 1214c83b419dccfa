"""One fitted model used from several threads at once answers as it does serially."""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml.features import HistoryIndex, build_features
from leapml.placement import fit_window, place
from leapml.ranking import rank_candidates

JOB_COLUMNS = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
               "seq_len", "parallelism"]
N_THREADS = 8


@pytest.fixture(scope="module")
def setup(tiny_fleet):
    log = tiny_fleet.attempts.drop(columns="expected_throughput")
    X = build_features(log, tiny_fleet.hardware)
    # one chunk per call, of different sizes, so calls overlap with different work
    bounds = np.linspace(0, len(X), 13).astype(int)
    chunks = [X.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return log, X, chunks


def _run_together(function, arguments):
    """Call ``function`` on every argument from ``N_THREADS`` threads released at once."""
    barrier = threading.Barrier(N_THREADS)

    def call(argument):
        barrier.wait(timeout=30)
        return function(argument)

    with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
        # each thread makes several calls so that they interleave
        parts = [[arguments[i] for i in idx]
                 for idx in np.array_split(np.arange(len(arguments)), N_THREADS)]
        futures = [pool.submit(lambda part: [call(a) if i == 0 else function(a)
                                             for i, a in enumerate(part)], part)
                   for part in parts]
        results = [f.result(timeout=120) for f in futures]
    return results


@pytest.mark.parametrize("combine", ["hard", "soft"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_concurrent_predict_matches_serial(tiny_fleet, setup, combine, n_jobs):
    log, X, chunks = setup
    model = fit_window(log, tiny_fleet.hardware, window_days=4,
                       model=LeapRegressor(n_estimators=8, combine=combine, n_jobs=n_jobs,
                                           random_state=0))
    serial = [model.predict(chunk) for chunk in chunks]
    # three rounds of every chunk, spread over the threads
    work = list(range(len(chunks))) * 3
    parts = _run_together(lambda k: (k, model.predict(chunks[k])), work)
    seen = 0
    for part in parts:
        for k, predicted in part:
            np.testing.assert_array_equal(predicted, serial[k])
            seen += 1
    assert seen == len(work)


def test_concurrent_bin_probabilities_match_serial(tiny_fleet, setup):
    log, X, chunks = setup
    model = fit_window(log, tiny_fleet.hardware, window_days=4,
                       model=LeapRegressor(n_estimators=8, random_state=0, n_jobs=1))
    serial = [model.predict_bin_proba(chunk) for chunk in chunks]
    parts = _run_together(lambda k: (k, model.predict_bin_proba(chunks[k])),
                          list(range(len(chunks))) * 2)
    for part in parts:
        for k, proba in part:
            np.testing.assert_array_equal(proba, serial[k])


@pytest.mark.parametrize("indexed", [False, True])
def test_concurrent_placement_matches_serial(tiny_fleet, setup, indexed):
    log, _, _ = setup
    model = fit_window(log, tiny_fleet.hardware, window_days=4,
                       model=LeapRegressor(n_estimators=8, random_state=0, n_jobs=1))
    # with an index, place() takes the array path; the threads share one index
    # and a model whose code tables are still empty (the serial answers come
    # from a copy), so that they fill those tables at once
    history = HistoryIndex(log, tiny_fleet.hardware) if indexed else log
    fresh = copy.deepcopy(model)
    jobs = tiny_fleet.jobs[JOB_COLUMNS].head(16)
    submissions = [jobs.iloc[[k]] for k in range(len(jobs))]
    serial = [place(model, s, tiny_fleet.hardware, history=history) for s in submissions]
    parts = _run_together(
        lambda k: (k, place(fresh, submissions[k], tiny_fleet.hardware, history=history)),
        list(range(len(submissions))),
    )
    for part in parts:
        for k, ranked in part:
            pd.testing.assert_frame_equal(ranked, serial[k])


def test_concurrent_rank_candidates_matches_serial():
    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"job_id": np.repeat(np.arange(5), 4),
                            "hardware_type": np.tile(["a", "b", "c", "d"], 5),
                            "predicted_throughput": rng.uniform(1, 100, 20)})
              for _ in range(16)]
    cost = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}
    serial = [rank_candidates(f, cost=cost) for f in frames]
    parts = _run_together(lambda k: (k, rank_candidates(frames[k], cost=cost)),
                          list(range(len(frames))))
    for part in parts:
        for k, ranked in part:
            pd.testing.assert_frame_equal(ranked, serial[k])
