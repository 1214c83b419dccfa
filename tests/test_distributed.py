"""The backtest, features and retrain on a Dask LocalCluster against the local results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

# the optional extra: without it there is nothing of leapml.distributed to test
distributed = pytest.importorskip(
    "distributed", reason='needs the extra: pip install "leapml[dask]"'
)
dd = pytest.importorskip("dask.dataframe", reason='needs the extra: pip install "leapml[dask]"')

import lightgbm as lgb  # noqa: E402

from leapml import LeapRegressor  # noqa: E402
from leapml import distributed as leap_dask  # noqa: E402
from leapml.evaluation.backtest import default_models, nightly  # noqa: E402
from leapml.evaluation.held_out import held_out  # noqa: E402
from leapml.evaluation.metrics import within_tolerance  # noqa: E402
from leapml.features import build_features  # noqa: E402
from leapml.model_file import load, save  # noqa: E402

# about a minute in all on two busy cores: a suite of its own, which .ci/run runs too
pytestmark = pytest.mark.dask


@pytest.fixture(scope="module")
def client():
    """Two in-process workers of one thread each: cheap to start, real task scheduling."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as dask_client,
    ):
        yield dask_client


def _tasks_named(stream, name: str) -> int:
    return sum(name in str(task["key"]) for task in stream.data)


def test_nightly_on_the_cluster_gives_the_local_tables_bit_for_bit(client, tiny_fleet):
    options = {
        "window_days": 5,
        "nights": 2,
        "models": default_models(random_state=0, n_estimators=8),
        "oracle": tiny_fleet.expected_throughput,
        "regret_jobs": 40,
        "progress": False,
    }
    local = nightly(tiny_fleet.attempts, tiny_fleet.hardware, **options)
    with distributed.get_task_stream(client) as stream:
        remote = leap_dask.nightly(
            tiny_fleet.attempts, tiny_fleet.hardware, client=client, **options
        )
    assert _tasks_named(stream, "_run_night") == 2  # one task per night, on the workers
    pd.testing.assert_frame_equal(remote.scores, local.scores, check_exact=True)
    pd.testing.assert_frame_equal(remote.predictions, local.predictions, check_exact=True)
    pd.testing.assert_frame_equal(remote.regret, local.regret, check_exact=True)


def test_held_out_on_the_cluster_gives_the_local_table_bit_for_bit(client, tiny_fleet):
    options = {
        "by": "model_family",
        "n_groups": 2,
        "model": LeapRegressor(n_estimators=8, random_state=0),
        "window_days": 5,
        "progress": False,
    }
    local = held_out(tiny_fleet.attempts, tiny_fleet.hardware, **options)
    with distributed.get_task_stream(client) as stream:
        remote = leap_dask.held_out(
            tiny_fleet.attempts, tiny_fleet.hardware, client=client, **options
        )
    assert _tasks_named(stream, "_held_out_group") == 2
    assert len(local) == 2
    pd.testing.assert_frame_equal(remote, local, check_exact=True)


def test_features_by_family_equal_the_local_features(client, tiny_fleet):
    attempts = tiny_fleet.attempts
    local = build_features(attempts, tiny_fleet.hardware)
    remote = leap_dask.build_features(dd.from_pandas(attempts, npartitions=3), tiny_fleet.hardware)
    computed = remote.compute()
    # the shuffle groups rows by family: same rows, other order
    assert not computed.index.equals(local.index)
    pd.testing.assert_frame_equal(computed.sort_index(), local, check_exact=True)


def test_features_refuse_a_job_spread_over_families(client, tiny_fleet):
    attempts = tiny_fleet.attempts.copy()
    families = attempts["model_family"].astype(str).to_numpy(copy=True)
    job = attempts["job_id"].iloc[0]
    rows = np.flatnonzero(attempts["job_id"].to_numpy() == job)
    assert rows.size >= 2, "the fixture's first job must have run twice"
    other = next(f for f in attempts["model_family"].cat.categories if f != families[rows[0]])
    families[rows[-1]] = other
    attempts["model_family"] = pd.Categorical(families)
    with pytest.raises(ValueError, match="several model families"):
        leap_dask.build_features(dd.from_pandas(attempts, npartitions=2), tiny_fleet.hardware)


@pytest.fixture(scope="module")
def window(tiny_fleet):
    """Seven days of completed attempts to train on and the eighth to score."""
    attempts = tiny_fleet.attempts
    X = build_features(attempts, tiny_fleet.hardware)
    ok = (attempts["status"].astype(str) == "ok").to_numpy()
    last_day = attempts["submit_time"].dt.floor("D").max()
    train = ok & (attempts["submit_time"] < last_day).to_numpy()
    test = ok & ~train & (attempts["submit_time"] >= last_day).to_numpy()
    y = attempts["throughput"]
    return X[train], y[train], X[test], y[test].to_numpy(float)


def _small_leap(**params):
    return LeapRegressor(n_bins=4, max_iter=2, n_estimators=15, random_state=0, **params)


@pytest.mark.parametrize("router", ["multiclass", "ordinal"])
def test_fit_on_the_cluster_is_a_local_model_within_tolerance(client, window, tmp_path, router):
    X_train, y_train, X_test, y_test = window
    local = _small_leap(router=router).fit(X_train, y_train)
    remote = leap_dask.fit_regressor(
        _small_leap(router=router),
        dd.from_pandas(X_train, npartitions=4),
        dd.from_pandas(y_train, npartitions=4),
        client=client,
    )
    # the same bins and encoding: both come from the whole log, by the same rules
    np.testing.assert_array_equal(remote.bin_edges_, local.bin_edges_)
    assert remote.categories_ == local.categories_
    # the experts of both correct the roofline the fleet's model sizes give
    assert remote.anchor_ == local.anchor_ == "log_roofline_throughput"
    assert remote.anchor_fill_ == local.anchor_fill_
    np.testing.assert_array_equal(remote.feature_names_in_, local.feature_names_in_)
    assert all(isinstance(m, lgb.Booster) for m in [*remote.regressors_, remote.classifier_])
    # histograms built per worker: close to the local model, not equal to it
    local_accuracy = within_tolerance(y_test, local.predict(X_test))
    remote_accuracy = within_tolerance(y_test, remote.predict(X_test))
    assert abs(remote_accuracy - local_accuracy) <= 0.05
    ratio = np.abs(np.log(remote.predict(X_test) / local.predict(X_test)))
    assert np.median(ratio) <= 0.10
    # the safe model file round-trips it as it does a local model
    restored = load(save(remote, tmp_path / "remote.leap"))
    np.testing.assert_array_equal(restored.predict(X_test), remote.predict(X_test))


def test_fit_on_the_cluster_names_bad_throughput(client, window):
    X_train, y_train, _, _ = window
    y_bad = y_train.copy()
    y_bad.iloc[:3] = [0.0, -1.0, np.nan]
    with pytest.raises(ValueError, match="3 of"):
        leap_dask.fit_regressor(
            _small_leap(),
            dd.from_pandas(X_train, npartitions=2),
            dd.from_pandas(y_bad, npartitions=2),
            client=client.scheduler.address,  # an address connects a client of its own
        )


def test_fit_on_the_cluster_refuses_what_lightgbm_dask_cannot_train(client, window):
    from sklearn.tree import DecisionTreeRegressor

    X_train, y_train, _, _ = window
    X, y = dd.from_pandas(X_train, npartitions=2), dd.from_pandas(y_train, npartitions=2)
    with pytest.raises(TypeError, match="regressor=DecisionTreeRegressor"):
        leap_dask.fit_regressor(_small_leap(regressor=DecisionTreeRegressor()), X, y, client=client)
    with pytest.raises(TypeError, match="dask DataFrame"):
        leap_dask.fit_regressor(_small_leap(), X_train, y_train, client=client)


def test_options_the_cluster_sets_itself_are_refused(client, tiny_fleet):
    with pytest.raises(TypeError, match="drop n_jobs"):
        leap_dask.nightly(tiny_fleet.attempts, tiny_fleet.hardware, client=client, n_jobs=2)
    with pytest.raises(TypeError, match="client must be"):
        leap_dask.held_out(tiny_fleet.attempts, tiny_fleet.hardware, client=3)
