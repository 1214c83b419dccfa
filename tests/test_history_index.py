"""HistoryIndex: the same features as build_features(..., history=log), bit for bit."""

from __future__ import annotations

import pickle
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_features import START, make_catalog, make_log
from test_features_leakage import HOUR, _long_run_log

from leapml.features import HistoryIndex, build_features, candidate_rows
from leapml.schema import LAUNCH_COLUMNS, SchemaError

MINUTE = pd.Timedelta(minutes=1)


def assert_same_features(index: HistoryIndex, rows: pd.DataFrame, hardware, log) -> pd.DataFrame:
    """``index.features(rows)`` is exactly ``build_features(rows, hardware, history=log)``."""
    got = index.features(rows)
    pd.testing.assert_frame_equal(
        got, build_features(rows, hardware, history=log), check_exact=True
    )
    return got


def _launch(jobs: pd.DataFrame) -> pd.DataFrame:
    return jobs[["job_id", *LAUNCH_COLUMNS]]


@pytest.fixture(scope="module")
def fleet_index(tiny_fleet):
    return HistoryIndex(tiny_fleet.attempts, tiny_fleet.hardware)


# ---------------------------------------------------------------------------
# rows after the end: answered from the kept statistics
# ---------------------------------------------------------------------------


def test_end_is_when_the_latest_completed_outcome_became_known(tiny_fleet, fleet_index):
    log = tiny_fleet.attempts
    ok = log["status"] == "ok"
    assert fleet_index.end == log.loc[ok, "end_time"].max()
    assert fleet_index.last_submit == log["submit_time"].max()
    # known at submission: the latest completed submission; a failed latest attempt moves only last_submit
    failed_last = log.assign(status=log["status"].astype(str))
    latest = failed_last["submit_time"].idxmax()
    failed_last.loc[latest, ["status", "throughput"]] = ["failed", np.nan]
    index = HistoryIndex(failed_last, tiny_fleet.hardware, outcome_known="submit_time")
    assert index.end < index.last_submit == log["submit_time"].max()


def test_seen_jobs_on_every_catalog_type(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    completed = log.loc[log["status"] == "ok", "job_id"]
    jobs = tiny_fleet.jobs[tiny_fleet.jobs["job_id"].isin(completed)].head(40)
    rows = candidate_rows(jobs, hardware, at=fleet_index.end + MINUTE)
    assert set(rows["hardware_type"].astype(str)) == set(hardware["hardware_type"].astype(str))
    X = assert_same_features(fleet_index, rows, hardware, log)
    # not vacuous: the jobs have history on the types they ran on, and not on the others
    assert (X["job_runs_any_hardware"] > 0).all()
    assert (X["job_runs_same_hardware"] > 0).any() and (X["job_runs_same_hardware"] == 0).any()
    assert X["job_mean_log_throughput_same_hardware"].notna().any()


def test_one_job_at_many_later_times(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    job = tiny_fleet.jobs.head(1)
    for after in (pd.Timedelta(1, "ns"), MINUTE, pd.Timedelta(days=30)):
        rows = candidate_rows(job, hardware, at=fleet_index.end + after)
        assert_same_features(fleet_index, rows, hardware, log)


def test_unseen_jobs_model_types_and_families(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    known = tiny_fleet.jobs.head(3)
    new_job = known.assign(job_id=known["job_id"] + 10**9)
    new_type = new_job.assign(model_type="a-model-type-never-run")
    new_family = new_type.assign(model_family="a-family-never-run")
    for jobs in (new_job, new_type, new_family):
        rows = candidate_rows(jobs, hardware, at=fleet_index.end + MINUTE)
        X = assert_same_features(fleet_index, rows, hardware, log)
        assert (X["job_runs_any_hardware"] == 0).all()
    assert (X["model_type_runs_any_hardware"] == 0).all()
    assert (X["model_family_runs_same_hardware"] == 0).all()
    assert (X["history_estimate_source"] == 0).all()


def test_rows_of_any_index_and_column_order(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    rows = candidate_rows(tiny_fleet.jobs.head(5), hardware, at=fleet_index.end + MINUTE)
    shuffled = rows.sample(frac=1.0, random_state=0)
    shuffled.index = [f"r{i}" for i in range(len(shuffled))]
    X = assert_same_features(fleet_index, shuffled[shuffled.columns[::-1]], hardware, log)
    assert X.index.equals(shuffled.index)
    empty = assert_same_features(fleet_index, rows.iloc[:0], hardware, log)
    assert empty.shape == (0, X.shape[1])


# ---------------------------------------------------------------------------
# rows at or before the end: the as-of join over the kept completed rows
# ---------------------------------------------------------------------------


def test_rows_at_and_before_the_end(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    jobs = tiny_fleet.jobs.head(6)
    times = log["submit_time"].sort_values()
    # exactly at the end, at a log row's time, between rows, before the log
    for at in (
        fleet_index.end,
        times.iloc[len(times) // 2],
        times.iloc[100] + MINUTE,
        times.iloc[0] - MINUTE,
    ):
        assert_same_features(fleet_index, candidate_rows(jobs, hardware, at=at), hardware, log)


def test_rows_before_and_after_the_end_together(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    jobs = tiny_fleet.jobs.head(8)
    at = [
        fleet_index.end + MINUTE,
        fleet_index.end,
        log["submit_time"].iloc[500],
        fleet_index.end + pd.Timedelta(days=2),
    ] * 2
    rows = candidate_rows(jobs, hardware, at=at)
    X = assert_same_features(fleet_index, rows, hardware, log)
    late = (rows["submit_time"] > fleet_index.end).to_numpy()
    assert late.any() and not late.all()
    assert (X.loc[late, "job_runs_any_hardware"] > 0).all()


def test_the_training_rows_themselves(tiny_fleet, fleet_index):
    """The log's own rows, described by the index, are its training features."""
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    pd.testing.assert_frame_equal(
        fleet_index.features(log), build_features(log, hardware), check_exact=True
    )


# ---------------------------------------------------------------------------
# logs of other shapes
# ---------------------------------------------------------------------------


def test_ties_in_time_and_string_ids():
    catalog, log = make_catalog(), make_log(3, 300, n_times=40)
    assert log["submit_time"].duplicated().any()
    index = HistoryIndex(log, catalog)
    jobs = _launch(log[log["status"] == "ok"].drop_duplicates("job_id"))
    rows = candidate_rows(jobs, catalog, at=index.end + MINUTE)
    X = assert_same_features(index, rows, catalog, log)
    assert (X["job_runs_any_hardware"] > 0).all()
    ties = candidate_rows(jobs, catalog, at=log["submit_time"].iloc[7])
    assert_same_features(index, ties, catalog, log)


def test_time_zone_aware_log():
    catalog = make_catalog()
    log = make_log(4, 200)
    log["submit_time"] = log["submit_time"].dt.tz_localize("America/New_York")
    index = HistoryIndex(log, catalog)
    assert index.end.tz is not None
    jobs = _launch(log.iloc[:10])
    for at in (index.end + MINUTE, log["submit_time"].iloc[50]):
        # the query in another zone: the same instants
        rows = candidate_rows(jobs, catalog, at=at.tz_convert("Asia/Tokyo"))
        assert_same_features(index, rows, catalog, log)
    naive = candidate_rows(jobs, catalog, at=index.end.tz_localize(None) + MINUTE)
    with pytest.raises(SchemaError) as from_index:
        index.features(naive)
    with pytest.raises(SchemaError) as from_build:
        build_features(naive, catalog, history=log)
    assert str(from_index.value) == str(from_build.value)
    assert "naive in the rows to describe (their submit_time, or at=) and aware in the history" in str(from_index.value)


def test_a_job_id_given_again_for_another_model_is_another_job():
    """Ids per user or per script name several models: a job is its id and its model type."""
    catalog = make_catalog()
    log = make_log(9, 300, n_times=40, reused_ids=True)
    done = log[log["status"] == "ok"]
    first = done.iloc[0]
    unseen = (set(log["model_type"].cat.categories) - set(log.loc[log["job_id"] == first["job_id"],
                                                                    "model_type"].astype(str))).pop()
    jobs = _launch(done.drop_duplicates(["job_id", "model_type"]))
    other = _launch(log[log["job_id"] == first["job_id"]].head(1)).assign(model_type=unseen)
    index = HistoryIndex(log.iloc[:200], catalog).update(log.iloc[200:])
    for at in (index.end + MINUTE, log["submit_time"].iloc[150]):
        assert_same_features(index, candidate_rows(jobs, catalog, at=at), catalog, log)
    X = assert_same_features(index, candidate_rows(other, catalog, at=index.end + MINUTE), catalog, log)
    assert (X["job_runs_any_hardware"] == 0).all()
    assert X["job_last_throughput_any_hardware"].isna().all()
    mine = assert_same_features(index, candidate_rows(_launch(done.iloc[[0]]), catalog,
                                                      at=index.end + MINUTE), catalog, log)
    assert (mine["job_runs_any_hardware"] > 0).all()


def test_int_job_ids_and_categorical_query_ids():
    catalog = make_catalog()
    log = make_log(5, 200)
    log["job_id"] = log["job_id"].str.slice(4).astype("int64")
    index = HistoryIndex(log, catalog)
    jobs = _launch(log.drop_duplicates("job_id"))
    at = index.end + MINUTE
    for ids in (jobs["job_id"], jobs["job_id"].astype("category"), jobs["job_id"].astype(str)):
        rows = candidate_rows(jobs.assign(job_id=ids), catalog, at=at)
        X = assert_same_features(index, rows, catalog, log)
    # ids match by their text: "7" is the job 7, in both paths alike
    assert (X["job_runs_any_hardware"] > 0).all()
    string_model = candidate_rows(
        jobs.assign(model_type=jobs["model_type"].astype(str)), catalog, at=at
    )
    assert (
        assert_same_features(index, string_model, catalog, log)["model_type_runs_any_hardware"] > 0
    ).all()


def test_empty_history_and_history_without_completed_rows():
    catalog = make_catalog()
    log = make_log(6, 60)
    jobs = _launch(log.iloc[:5])
    failed = log.assign(status=pd.Categorical(["failed"] * len(log)), throughput=np.nan)
    for history in (log.iloc[:0], failed):
        index = HistoryIndex(history, catalog)
        assert index.end is None
        rows = candidate_rows(jobs, catalog, at=START)
        X = assert_same_features(index, rows, catalog, history)
        assert (X["job_runs_any_hardware"] == 0).all()
    assert HistoryIndex(log.iloc[:0], catalog).last_submit is None
    assert HistoryIndex(failed, catalog).last_submit == log["submit_time"].max()


# ---------------------------------------------------------------------------
# update
# ---------------------------------------------------------------------------


def _assert_same_index(updated: HistoryIndex, fresh: HistoryIndex, catalog, log, jobs) -> None:
    assert updated.end == fresh.end and updated.last_submit == fresh.last_submit
    times = [fresh.end + MINUTE, fresh.end, log["submit_time"].iloc[len(log) // 3]]
    for at in times:
        rows = candidate_rows(jobs, catalog, at=at)
        pd.testing.assert_frame_equal(
            updated.features(rows), fresh.features(rows), check_exact=True
        )
        assert_same_features(updated, rows, catalog, log)


def test_update_equals_a_fresh_index():
    catalog = make_catalog()
    log = make_log(7, 400, n_times=60)
    # new rows of every status, many older than the first part's end, new jobs among them
    order = np.sort(np.random.default_rng(0).permutation(len(log))[250:])
    log["job_id"] = log["job_id"].where(~np.isin(np.arange(len(log)), order[::7]), "job-new")
    jobs = _launch(log.drop_duplicates("job_id"))
    later = log.iloc[order]
    first = log.drop(index=later.index)
    index = HistoryIndex(first, catalog)
    assert (later["submit_time"] < index.end).any()
    assert set(later["job_id"]) - set(first["job_id"])
    assert set(later["status"].astype(str)) == {"ok", "oom", "failed"}
    assert index.update(later) is index
    # the new rows come after the others in the log: ties in time go to them
    log = pd.concat([first, later])
    _assert_same_index(index, HistoryIndex(log, catalog), catalog, log, jobs)


def test_updates_in_small_batches_and_from_nothing():
    catalog = make_catalog()
    log = make_log(8, 200, n_times=30)
    jobs = _launch(log.drop_duplicates("job_id"))
    index = HistoryIndex(log.iloc[:0], catalog)
    for start in range(0, len(log), 37):
        index.update(log.iloc[start : start + 37])
    _assert_same_index(index, HistoryIndex(log, catalog), catalog, log, jobs)


def test_update_with_no_completed_rows_moves_only_last_submit():
    catalog = make_catalog()
    log = make_log(9, 100)
    index = HistoryIndex(log, catalog)
    later = log.iloc[:3].assign(
        attempt_id=log["attempt_id"].max() + np.arange(1, 4),  # new attempts, not the log's again
        status=["oom", "failed", "failed"],
        throughput=np.nan,
        submit_time=index.end + pd.Timedelta(hours=1),
    )
    rows = candidate_rows(_launch(log.iloc[:4]), catalog, at=index.end + pd.Timedelta(hours=2))
    before = index.features(rows)
    end = index.end
    index.update(later)
    assert index.end == end and index.last_submit == end + pd.Timedelta(hours=1)
    pd.testing.assert_frame_equal(index.features(rows), before, check_exact=True)


def test_update_with_a_status_the_schema_does_not_list_is_refused():
    """Counted as "not completed", an unknown status would hide runs that did complete
    (a log that writes "success"); the index is left as it was."""
    catalog = make_catalog()
    log = make_log(9, 100)
    index = HistoryIndex(log, catalog)
    end = index.end
    later = log.iloc[:2].assign(attempt_id=log["attempt_id"].max() + np.arange(1, 3),
                                status=["success", "cancelled"],
                                submit_time=index.end + pd.Timedelta(hours=1))
    with pytest.raises(SchemaError, match=r"status not in .* such as 'success'"):
        index.update(later)
    assert index.end == end


def test_update_on_the_fleet_with_new_model_types(tiny_fleet):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    cut = log["submit_time"].quantile(0.8)
    early, late = log[log["submit_time"] < cut], log[log["submit_time"] >= cut]
    assert set(late["model_type"].astype(str)) - set(early["model_type"].astype(str))
    index = HistoryIndex(early, hardware).update(late)
    _assert_same_index(index, HistoryIndex(log, hardware), hardware, log, tiny_fleet.jobs.head(20))


def test_update_checks_the_new_rows():
    catalog = make_catalog()
    log = make_log(10, 80)
    index = HistoryIndex(log, catalog)
    with pytest.raises(SchemaError, match=r"new attempts(.|\n)*throughput must be finite"):
        index.update(log.iloc[:5].assign(throughput=-1.0))
    with pytest.raises(SchemaError, match=r"missing column\(s\): \['status'\]"):
        index.update(log.drop(columns="status"))
    aware = log.assign(submit_time=log["submit_time"].dt.tz_localize("UTC"))
    with pytest.raises(SchemaError, match="time-zone aware"):
        index.update(aware)
    with pytest.raises(TypeError):
        index.update(log.to_numpy())
    # nothing was folded in by the refused updates
    _assert_same_index(index, HistoryIndex(log, catalog), catalog, log, _launch(log.iloc[:5]))


def test_update_refuses_attempts_already_in_the_index():
    catalog = make_catalog()
    log = make_log(11, 120)
    first, later = log.iloc[:100], log.iloc[100:]
    index = HistoryIndex(first, catalog)
    ids = first["attempt_id"].iloc[-3:].tolist()
    # an overlapping batch: counted twice, every count of its keys would grow
    with pytest.raises(SchemaError, match=re.escape(f"3 attempt(s) already in the index, "
                                                    f"attempt_id {ids}")):
        index.update(pd.concat([first.iloc[-3:], later]))
    _assert_same_index(index, HistoryIndex(first, catalog), catalog, first, _launch(log.iloc[:5]))
    # nor twice within one batch, nor twice across two updates
    with pytest.raises(SchemaError, match=r"duplicate attempt_id \[1100\]"):
        index.update(pd.concat([later, later.iloc[:1]]))
    index.update(later.iloc[:10])
    with pytest.raises(SchemaError, match="1 attempt"):
        index.update(later.iloc[9:])
    index.update(later.iloc[10:])
    _assert_same_index(index, HistoryIndex(log, catalog), catalog, log, _launch(log.iloc[:5]))
    # a log without attempt ids cannot say: its batches are folded in as given, and a batch
    # without them is warned of
    bare = HistoryIndex(first.drop(columns="attempt_id"), catalog).update(later)
    _assert_same_index(bare, HistoryIndex(log, catalog), catalog, log, _launch(log.iloc[:5]))
    with pytest.warns(UserWarning, match="new_attempts has no attempt_id: an attempt folded in twice"):
        HistoryIndex(first, catalog).update(later.drop(columns="attempt_id"))
    with pytest.raises(SchemaError, match="duplicate attempt_id"):
        HistoryIndex(pd.concat([first, first.iloc[:1]]), catalog)


# ---------------------------------------------------------------------------
# validation: the messages build_features gives
# ---------------------------------------------------------------------------


def _messages(call) -> str:
    with pytest.raises(SchemaError) as caught:
        call()
    return str(caught.value)


BAD_QUERIES = {
    "missing columns": lambda rows: rows.drop(columns=["batch_size", "parallelism"]),
    "null": lambda rows: rows.assign(model_type=pd.Series([None] * len(rows), dtype=object)),
    "unknown hardware": lambda rows: rows.assign(hardware_type="TPU-v9"),
    "blank precision": lambda rows: rows.assign(precision=" "),
    "zero trainers": lambda rows: rows.assign(trainer_count=0),
    "negative batch": lambda rows: rows.assign(batch_size=-2),
    "text times": lambda rows: rows.assign(submit_time=rows["submit_time"].astype(str)),
}


@pytest.mark.parametrize("problem", sorted(BAD_QUERIES))
def test_bad_queries_get_the_build_features_message(problem):
    catalog, log = make_catalog(), make_log(11, 80)
    index = HistoryIndex(log, catalog)
    rows = BAD_QUERIES[problem](
        candidate_rows(_launch(log.iloc[:3]), catalog, at=index.end + MINUTE)
    )
    message = _messages(lambda: index.features(rows))
    assert message == _messages(lambda: build_features(rows, catalog, history=log))
    assert message.startswith("the attempts to describe does not follow the schema")


BAD_LOGS = {
    "missing columns": lambda log: log.drop(columns=["throughput"]),
    "bad throughput": lambda log: log.assign(throughput=0.0),
    "unknown hardware": lambda log: log.assign(hardware_type="TPU-v9"),
    "null job": lambda log: log.assign(job_id=None),
}


@pytest.mark.parametrize("problem", sorted(BAD_LOGS))
def test_bad_logs_get_the_build_features_message(problem):
    catalog, log = make_catalog(), make_log(12, 40)
    bad = BAD_LOGS[problem](log)
    rows = candidate_rows(_launch(log.iloc[:2]), catalog, at=START)
    message = _messages(lambda: HistoryIndex(bad, catalog))
    assert message == _messages(lambda: build_features(rows, catalog, history=bad))
    assert message.startswith("the history log does not follow the schema")


def test_bad_catalog_and_inputs():
    catalog, log = make_catalog(), make_log(13, 40)
    broken = catalog.drop(columns=["memory_gb"])
    assert _messages(lambda: HistoryIndex(log, broken)) == _messages(
        lambda: build_features(log, broken)
    )
    with pytest.raises(TypeError, match="history must be a pandas DataFrame"):
        HistoryIndex(log.to_numpy(), catalog)
    with pytest.raises(TypeError, match="attempts must be a pandas DataFrame"):
        HistoryIndex(log, catalog).features(log.to_dict())


# ---------------------------------------------------------------------------
# pickling and threads
# ---------------------------------------------------------------------------


def test_pickle_round_trip(tiny_fleet, fleet_index):
    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    copy = pickle.loads(pickle.dumps(fleet_index))
    assert copy.end == fleet_index.end and copy is not fleet_index
    for at in (fleet_index.end + MINUTE, log["submit_time"].iloc[1000]):
        rows = candidate_rows(tiny_fleet.jobs.head(10), hardware, at=at)
        pd.testing.assert_frame_equal(
            copy.features(rows), fleet_index.features(rows), check_exact=True
        )
    # a copy updates on its own
    later = log.iloc[-20:].assign(
        attempt_id=log["attempt_id"].max() + np.arange(1, 21),  # new attempts of the same jobs
        submit_time=fleet_index.end + pd.Timedelta(hours=1), end_time=fleet_index.end + pd.Timedelta(hours=2)
    )
    copy.update(later)
    assert copy.end > fleet_index.end


def test_threads_share_one_index_and_change_nothing(tiny_fleet, fleet_index):
    hardware = tiny_fleet.hardware
    before = pickle.dumps(fleet_index)
    times = [fleet_index.end + MINUTE, tiny_fleet.attempts["submit_time"].iloc[800]]
    queries = [
        candidate_rows(tiny_fleet.jobs.iloc[i : i + 3], hardware, at=times[i % 2])
        for i in range(16)
    ]
    expected = [fleet_index.features(rows) for rows in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(fleet_index.features, queries * 3))
    for X, want in zip(got, expected * 3, strict=True):
        pd.testing.assert_frame_equal(X, want, check_exact=True)
    assert pickle.dumps(fleet_index) == before


# ---------------------------------------------------------------------------
# property: any log, any split into a night's log and later attempts
# ---------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**31),
    n_attempts=st.integers(1, 60),
    n_times=st.integers(1, 10),
    split=st.floats(0.0, 1.0),
    query_minutes=st.lists(st.integers(-40, 400), min_size=1, max_size=4),
)
def test_index_matches_build_features_on_random_logs(
    seed, n_attempts, n_times, split, query_minutes
):
    catalog = make_catalog(3)
    log = make_log(seed, n_attempts, n_jobs=5, n_times=n_times, n_types=3)
    jobs = make_log(seed + 1, len(query_minutes), n_jobs=6, n_times=1, n_types=3)
    rows = candidate_rows(
        _launch(jobs), catalog, at=START + pd.to_timedelta(query_minutes, unit="min")
    )
    cut = int(split * n_attempts)
    index = HistoryIndex(log.iloc[:cut], catalog).update(log.iloc[cut:])
    assert_same_features(index, rows, catalog, log)
    assert_same_features(HistoryIndex(log, catalog), rows, catalog, log)


# ---------------------------------------------------------------------------
# the guide's example runs
# ---------------------------------------------------------------------------


def test_the_features_page_example_runs(tmp_path, monkeypatch):
    page = (Path(__file__).resolve().parents[1] / "docs" / "features.md").read_text()
    section = page.split("## Scoring submissions: HistoryIndex", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert blocks, "the HistoryIndex section has no Python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for code in blocks:
        exec(compile(code, "docs/features.md", "exec"), namespace)
    assert namespace["X"].equals(namespace["X_again"])


def test_frames_share_no_columns_object(tiny_fleet, fleet_index):
    rows = candidate_rows(tiny_fleet.jobs.head(1), tiny_fleet.hardware, at=fleet_index.end)
    X = fleet_index.features(rows)
    X.columns.name, rows.columns.name = "feature", "column"
    again = candidate_rows(tiny_fleet.jobs.head(1), tiny_fleet.hardware, at=fleet_index.end)
    assert again.columns.name is None and fleet_index.features(again).columns.name is None


def test_the_plain_constructor_fallback_builds_the_same_frames(tiny_fleet, fleet_index, monkeypatch):
    # pandas < 3 has no create_dataframe_from_blocks; the fallback must agree to the bit
    import leapml._frames as frames

    log, hardware = tiny_fleet.attempts, tiny_fleet.hardware
    rows = candidate_rows(tiny_fleet.jobs.head(5), hardware, at=fleet_index.end + MINUTE)
    with_blocks = fleet_index.features(rows)
    training = build_features(log, hardware)
    monkeypatch.setattr(frames, "_from_blocks", None)
    pd.testing.assert_frame_equal(fleet_index.features(rows), with_blocks, check_exact=True)
    pd.testing.assert_frame_equal(build_features(log, hardware), training, check_exact=True)


# ---------------------------------------------------------------------------
# outcomes known when runs end
# ---------------------------------------------------------------------------


def test_history_index_waits_for_the_run_to_end():
    log, catalog = _long_run_log(), make_catalog()
    index = HistoryIndex(log, catalog)
    assert index.end == START + 13 * HOUR and index.last_submit == START + 12 * HOUR
    jobs = log.iloc[:1][["job_id", *LAUNCH_COLUMNS]]
    for at, runs in [(START + 2 * HOUR, 0), (START + 5 * HOUR, 1), (START + 11 * HOUR, 2),
                     (START + 14 * HOUR, 3)]:
        rows = candidate_rows(jobs, ["A100", "H100"], at=at)
        X = index.features(rows)
        pd.testing.assert_frame_equal(X, build_features(rows, catalog, history=log), check_exact=True)
        assert X["job_runs_any_hardware"].tolist() == [runs, runs]
    # folded in later, before it has ended, then once it has: the same features either way
    early = HistoryIndex(log.iloc[1:], catalog).update(log.iloc[:1])
    rows = candidate_rows(jobs, ["A100"], at=START + 5 * HOUR)
    pd.testing.assert_frame_equal(early.features(rows), index.features(rows), check_exact=True)
