"""No leakage: features never read the future, the noiseless truth or hidden columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_features import START, _one_job, make_catalog, make_log

from leapml.evaluation.backtest import nightly
from leapml.evaluation.baselines import LookupTableRegressor
from leapml.features import build_features, candidate_rows, outcome_known_time
from leapml.placement import completed_between, fit_window
from leapml.schema import LAUNCH_COLUMNS, SchemaError


def _features_by_id(log: pd.DataFrame, catalog: pd.DataFrame) -> pd.DataFrame:
    X = build_features(log, catalog)
    X.index = pd.Index(log["attempt_id"].to_numpy(), name="attempt_id")
    return X


def _rewrite_future(log: pd.DataFrame, cut: pd.Timestamp, seed: int) -> pd.DataFrame:
    """Change, delete and add attempts at or after ``cut``; shuffle them among the earlier rows.

    The rows before ``cut`` keep their values and their relative order.
    """
    rng = np.random.default_rng(seed)
    future = (log["submit_time"] >= cut).to_numpy()
    before, after = log[~future], log[future].copy()
    n = len(after)
    # new throughputs and flipped statuses
    ok = (after["status"] == "ok").to_numpy()
    flip = rng.random(n) < 0.3
    new_ok = ok ^ flip
    after["status"] = pd.Categorical(
        np.where(new_ok, "ok", "failed"), categories=log["status"].cat.categories
    )
    after["throughput"] = np.where(new_ok, np.exp(rng.normal(2.0, 3.0, n)), np.nan)
    # other hardware and launch sizes
    types = after["hardware_type"].cat.categories
    after["hardware_type"] = pd.Categorical(rng.choice(types, n), categories=types)
    after["batch_size"] = rng.choice([1, 3, 999], n).astype(np.int64)
    # delete some
    after = after[rng.random(n) < 0.7]
    # add new attempts: of known jobs and of new ones, some exactly at the cut
    extra = log.sample(n=min(len(log), 15), replace=True, random_state=seed).copy()
    extra["attempt_id"] = np.arange(len(extra)) + log["attempt_id"].max() + 1
    extra["submit_time"] = cut + pd.to_timedelta(rng.integers(0, 3, len(extra)) * 60, unit="min")
    extra.loc[extra.index[::3], "job_id"] = "brand-new-job"
    extra["status"] = pd.Categorical(["ok"] * len(extra), categories=log["status"].cat.categories)
    extra["throughput"] = np.exp(rng.normal(5.0, 1.0, len(extra)))
    after = pd.concat([after, extra], ignore_index=True)
    # interleave the future rows anywhere, keeping the earlier rows in their order
    key = np.concatenate([np.arange(len(before)), rng.uniform(-0.5, len(before), len(after))])
    mixed = pd.concat([before, after], ignore_index=True)
    return mixed.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)


def _cut_times(log: pd.DataFrame) -> list[pd.Timestamp]:
    times = np.sort(log["submit_time"].unique())
    picks = [0, len(times) // 4, len(times) // 2, (3 * len(times)) // 4, len(times) - 1]
    return [pd.Timestamp(times[i]) for i in picks]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_future_attempts_do_not_change_past_features(seed):
    catalog = make_catalog()
    log = make_log(seed, 240, n_jobs=25, n_times=40)
    X = _features_by_id(log, catalog)
    for k, cut in enumerate(_cut_times(log)):
        rewritten = _rewrite_future(log, cut, seed=100 * seed + k)
        # the rewrite did change the future
        assert not rewritten[rewritten["submit_time"] >= cut].equals(log[log["submit_time"] >= cut])
        X_rewritten = _features_by_id(rewritten, catalog)
        past_ids = log.loc[log["submit_time"] < cut, "attempt_id"].to_numpy()
        assert X_rewritten.loc[past_ids].shape[0] == len(past_ids)
        pd.testing.assert_frame_equal(X_rewritten.loc[past_ids], X.loc[past_ids], check_exact=True)


def test_rewrite_is_seen_by_later_rows():
    """A control: the same rewrite does change the features of rows after the cut."""
    catalog = make_catalog()
    log = make_log(0, 240, n_jobs=25, n_times=40)
    cut = _cut_times(log)[2]
    rewritten = _rewrite_future(log, cut, seed=7)
    X, X_rewritten = _features_by_id(log, catalog), _features_by_id(rewritten, catalog)
    kept = np.intersect1d(
        log.loc[log["submit_time"] > cut, "attempt_id"], X_rewritten.index.to_numpy()
    )
    later = X_rewritten.loc[kept, "model_type_runs_any_hardware"]
    assert not later.equals(X.loc[kept, "model_type_runs_any_hardware"])


@pytest.mark.parametrize("seed", [0, 1])
def test_scoring_at_the_cut_ignores_attempts_at_and_after_it(seed):
    catalog = make_catalog()
    log = make_log(seed, 240, n_jobs=25, n_times=40)
    jobs = log.drop_duplicates("job_id")[["job_id", *LAUNCH_COLUMNS]]
    for k, cut in enumerate(_cut_times(log)[1:]):
        rewritten = _rewrite_future(log, cut, seed=10 * seed + k)
        # ties: a submission at exactly the cut must not see attempts submitted at the cut
        for at in (cut, cut - pd.Timedelta(minutes=1)):
            rows = candidate_rows(jobs, catalog, at=at)
            pd.testing.assert_frame_equal(
                build_features(rows, catalog, history=rewritten),
                build_features(rows, catalog, history=log),
                check_exact=True,
            )


def _with_truth(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A log whose throughput is a noisy copy of a per-(job, hardware) truth."""
    rng = np.random.default_rng(seed)
    catalog = make_catalog()
    log = make_log(seed, 300, n_jobs=20, n_times=120)
    job_effect = {j: rng.normal(3.0, 2.0) for j in log["job_id"].unique()}
    hw_effect = {h: rng.normal(0.0, 0.5) for h in catalog["hardware_type"]}
    truth = np.exp(
        log["job_id"].map(job_effect).to_numpy(float)
        + log["hardware_type"].astype(str).map(hw_effect).to_numpy(float)
    )
    ok = (log["status"] == "ok").to_numpy()
    log["throughput"] = np.where(ok, truth * np.exp(rng.normal(0.0, 0.1, len(log))), np.nan)
    log["expected_throughput"] = truth
    log["_variant"] = rng.normal(size=len(log))
    log["_throughput_copy"] = log["throughput"]
    return log, catalog


@pytest.mark.parametrize("seed", [0, 1])
def test_truth_and_hidden_columns_never_reach_features(seed):
    log, catalog = _with_truth(seed)
    X = build_features(log, catalog)
    rng = np.random.default_rng(seed)
    altered = log.assign(
        expected_throughput=rng.permutation(log["expected_throughput"].to_numpy()) * 10.0,
        _variant=np.nan,
        _throughput_copy=rng.permutation(log["_throughput_copy"].to_numpy()),
    )
    pd.testing.assert_frame_equal(build_features(altered, catalog), X, check_exact=True)
    garbage = log.assign(expected_throughput="not a number", _variant=None)
    pd.testing.assert_frame_equal(build_features(garbage, catalog), X, check_exact=True)
    dropped = log.drop(columns=["expected_throughput", "_variant", "_throughput_copy"])
    pd.testing.assert_frame_equal(build_features(dropped, catalog), X, check_exact=True)
    # as history for scoring too
    query = log.drop(columns=["status", "throughput"])
    pd.testing.assert_frame_equal(
        build_features(query, catalog, history=altered),
        build_features(query, catalog, history=log),
        check_exact=True,
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_no_feature_equals_the_truth_or_the_label(seed):
    log, catalog = _with_truth(seed)
    X = build_features(log, catalog)
    assert not [c for c in X.columns if c.startswith("_") or c in log.columns[-3:]]
    ok = (log["status"] == "ok").to_numpy()
    targets = {
        "expected_throughput": log["expected_throughput"].to_numpy(float),
        "throughput": log["throughput"].to_numpy(float),
    }
    numeric = [c for c in X.columns if not isinstance(X[c].dtype, pd.CategoricalDtype)]
    for name in numeric:
        values = X[name].to_numpy(float)
        for target_name, target in targets.items():
            for transformed, truth in ((values, target), (values, np.log(target))):
                both = ok & np.isfinite(transformed) & np.isfinite(truth)
                same = np.isclose(transformed[both], truth[both], rtol=1e-9, atol=0.0)
                assert not same.any(), f"{name} equals {target_name} on {same.sum()} rows"
                if both.sum() > 10 and np.std(transformed[both]) > 0:
                    corr = np.corrcoef(transformed[both], truth[both])[0, 1]
                    assert abs(corr) < 0.9999, f"{name} tracks {target_name} exactly"
    # the history does carry signal about the truth, as it should: the test above is not vacuous
    known = ok & X["job_mean_log_throughput_same_hardware"].notna().to_numpy()
    corr = np.corrcoef(
        X["job_mean_log_throughput_same_hardware"].to_numpy()[known],
        np.log(targets["expected_throughput"][known]),
    )[0, 1]
    assert corr > 0.9


def test_rows_at_the_same_time_do_not_see_each_other():
    catalog = make_catalog()
    log = make_log(3, 60, n_jobs=3, n_times=1)  # every attempt at the same instant
    assert log["submit_time"].nunique() == 1
    X = build_features(log, catalog)
    history = [c for c in X.columns if c.endswith("_hardware") and "runs" in c]
    assert (X[history] == 0).all().all()
    assert X["history_log_throughput_estimate"].isna().all()


def _as_values(X: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as plain values: a log cut short may have fewer categories."""
    return X.astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})


def test_on_the_simulated_tiny_fleet():
    fleet_module = pytest.importorskip("leapml.fleet")
    if not hasattr(fleet_module, "simulate"):
        pytest.skip("the fleet simulator is not available")
    fleet = fleet_module.simulate(preset="tiny", seed=0)
    log, hardware = fleet.attempts, fleet.hardware
    X = build_features(log, hardware)
    # the log cut at mid-period describes its rows exactly as the full log does
    cut = log["submit_time"].sort_values().iloc[len(log) // 2]
    early = (log["submit_time"] < cut).to_numpy()
    pd.testing.assert_frame_equal(
        _as_values(build_features(log[early], hardware)), _as_values(X[early]), check_exact=True
    )
    # the simulator's truth never reaches the features
    assert "expected_throughput" in log.columns
    shuffled = log.assign(
        expected_throughput=log["expected_throughput"].sample(frac=1.0).to_numpy()
    )
    pd.testing.assert_frame_equal(build_features(shuffled, hardware), X, check_exact=True)
    truth = log["expected_throughput"].to_numpy(float)
    for name in X.columns:
        if isinstance(X[name].dtype, pd.CategoricalDtype):
            continue
        values = X[name].to_numpy(float)
        for target in (truth, np.log(truth)):
            both = np.isfinite(values) & np.isfinite(target)
            assert not np.isclose(values[both], target[both], rtol=1e-12, atol=0.0).any(), name
    # scoring the fleet's jobs on every type, as of the cut, reads only earlier attempts
    rows = candidate_rows(fleet.jobs.head(10), hardware, at=cut)
    assert not [c for c in rows.columns if c.startswith("_")]
    pd.testing.assert_frame_equal(
        build_features(rows, hardware, history=log),
        build_features(rows, hardware, history=log[early]),
        check_exact=True,
    )


# ---------------------------------------------------------------------------
# outcomes are known when a run ends, not when it was submitted
# ---------------------------------------------------------------------------

HOUR = pd.Timedelta(hours=1)


def _long_run_log(*, with_end_time: bool = True) -> pd.DataFrame:
    """Job ``j``: a long run (submitted at 0 h, ends at 10 h) and its next runs at 2 h and 12 h.

    The run at 2 h ends at 3 h. Hours are trainer-hours of 16 trainers, so
    ``device_hours`` says the same as ``end_time``.
    """
    runs = [(0, 10, 500.0), (2, 1, 80.0), (12, 1, 90.0)]
    log = pd.concat(
        [
            _one_job(attempt_id=i, submit_time=START + h * HOUR, throughput=thr,
                     device_hours=16.0 * hours, end_time=START + (h + hours) * HOUR)
            for i, (h, hours, thr) in enumerate(runs)
        ],
        ignore_index=True,
    )
    return log if with_end_time else log.drop(columns="end_time")


@pytest.mark.parametrize("with_end_time", [True, False])
def test_a_run_still_going_is_not_seen_until_it_ends(with_end_time):
    log, catalog = _long_run_log(with_end_time=with_end_time), make_catalog()
    X = build_features(log, catalog)
    # at 2 h the long run is still going: no history at all
    assert X["job_runs_any_hardware"].tolist() == [0, 0, 2]
    assert np.isnan(X.loc[1, "job_last_throughput_any_hardware"])
    assert X.loc[1, "model_type_runs_any_hardware"] == 0
    # at 12 h both have ended; the latest to end is the long run
    assert X.loc[2, "job_last_throughput_same_hardware"] == 500.0
    assert X.loc[2, "job_mean_log_throughput_same_hardware"] == pytest.approx(np.log(500 * 80) / 2)
    # a candidate scored just before and just after the long run ends
    jobs = log.iloc[:1][["job_id", *LAUNCH_COLUMNS]]
    before = build_features(candidate_rows(jobs, ["A100"], at=START + 10 * HOUR), catalog, history=log)
    after = build_features(
        candidate_rows(jobs, ["A100"], at=START + 10 * HOUR + pd.Timedelta(seconds=1)), catalog, history=log
    )
    assert before["job_runs_same_hardware"].tolist() == [1]  # the short run only
    assert before["job_last_throughput_same_hardware"].tolist() == [80.0]
    assert after["job_runs_same_hardware"].tolist() == [2]
    assert after["job_last_throughput_same_hardware"].tolist() == [500.0]


def test_known_at_submission_is_the_leak_the_rule_prevents():
    """Control: read as known at submission, the run at 2 h sees the long run."""
    X = build_features(_long_run_log(), make_catalog(), outcome_known="submit_time")
    assert X["job_runs_any_hardware"].tolist() == [0, 1, 2]
    assert X.loc[1, "job_last_throughput_any_hardware"] == 500.0


def test_training_rows_wait_for_the_run_to_end():
    log = _long_run_log()
    # a fit at 5 h trains on the short run only; at 11 h on both
    assert completed_between(log, start=START, end=START + 5 * HOUR).tolist() == [False, True, False]
    assert completed_between(log, start=START, end=START + 11 * HOUR).tolist() == [True, True, False]
    table = LookupTableRegressor(model_types=["llm-00"])
    at_5 = fit_window(log, make_catalog(), window_days=1, until=START + 5 * HOUR, model=table)
    at_11 = fit_window(log, make_catalog(), window_days=1, until=START + 11 * HOUR, model=table)
    query = log.iloc[[2]]
    assert at_5.predict(query).tolist() == [80.0]
    assert at_11.predict(query).tolist() == [np.median([500.0, 80.0])]


def test_the_rule_for_logs_without_end_time():
    log = _long_run_log(with_end_time=False)
    # by default: submission plus device_hours / trainer_count hours
    assert outcome_known_time(log).tolist() == [START + 10 * HOUR, START + 3 * HOUR, START + 13 * HOUR]
    with pytest.raises(SchemaError, match="outcome_known='submit_time'"):
        build_features(log.drop(columns="device_hours"), make_catalog())
    with pytest.raises(SchemaError, match=r"reads missing column\(s\) \['end_time'\]"):
        build_features(log, make_catalog(), outcome_known="end_time")
    with pytest.raises(ValueError, match="outcome_known must be one of"):
        build_features(log, make_catalog(), outcome_known="finish")
    bad = _long_run_log().assign(end_time=START - HOUR)
    with pytest.raises(SchemaError, match="end_time is before submit_time in 3 row"):
        build_features(bad, make_catalog())


def test_nightly_training_excludes_runs_ending_after_the_night():
    """The backtest: a night's models change nothing when a run still going at the night changes."""
    fleet_module = pytest.importorskip("leapml.fleet")
    fleet = fleet_module.simulate("tiny", days=4, seed=2)
    log = fleet.attempts
    night = pd.Timestamp(fleet.params["start"]) + pd.Timedelta(days=3)
    going = ((log["submit_time"] < night) & (log["end_time"] >= night) & (log["status"] == "ok")).to_numpy()
    assert going.sum() > 10
    changed = log.copy()
    changed.loc[going, "throughput"] *= 3.0
    kwargs = {"window_days": 3, "nights": 1, "progress": False,
              "models": {"table": LookupTableRegressor(model_types=log["model_type"].unique().tolist())}}
    a = nightly(log, fleet.hardware, **kwargs).predictions
    b = nightly(changed, fleet.hardware, **kwargs).predictions
    # the changed runs were submitted before the night: they are not among the scored rows
    pd.testing.assert_series_equal(a["predicted_table"], b["predicted_table"])
    leaky = dict(kwargs, outcome_known="submit_time")
    a = nightly(log, fleet.hardware, **leaky).predictions
    b = nightly(changed, fleet.hardware, **leaky).predictions
    assert not a["predicted_table"].equals(b["predicted_table"])
