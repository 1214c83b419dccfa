"""Property tests over the schema validators, ``rank_candidates`` and ``build_features``.

Complements the property tests of ``test_ranking.py`` (rank invariants),
``test_binning.py`` (bin edges) and ``test_features.py`` (as-of history against a
reference loop). Every test uses a fixed profile: few examples, no deadline,
derandomized, so CI stays fast and gives the same answer every run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_features import make_catalog, make_log

from leapml.features import build_features, outcome_known_time
from leapml.ranking import rank_candidates
from leapml.schema import HARDWARE_COLUMNS, SchemaError, validate_attempts, validate_hardware

PROFILE = settings(max_examples=25, deadline=None, derandomize=True)

# -- schema validators ----------------------------------------------------------

# kind -> (which rows it may hit, the words its problem starts with)
CORRUPTIONS = {
    "throughput_nan_on_ok": ("ok", "throughput must be finite and > 0 on ok rows"),
    "throughput_zero_on_ok": ("ok", "throughput must be finite and > 0 on ok rows"),
    "throughput_on_failed": ("not_ok", "throughput must be null on rows not ok"),
    "unknown_status": ("not_ok", "status not in"),
    "blank_precision": ("any", "precision is blank"),
    "zero_trainers": ("any", "trainer_count must be finite and > 0"),
    "negative_batch": ("any", "batch_size must be finite and > 0"),
    "negative_device_hours": ("any", "device_hours < 0"),
    "null_submit_time": ("any", "column 'submit_time' is null"),
    "unknown_hardware": ("any", "hardware_type absent from the catalog"),
    "duplicate_id": ("any", "duplicate attempt_id"),
}


def _corrupt(log: pd.DataFrame, kind: str, label) -> pd.DataFrame:
    """Return ``log`` with one problem of ``kind`` at the row labelled ``label``."""
    out = log.copy()
    if kind in ("unknown_status", "blank_precision", "unknown_hardware"):
        column = kind.split("_", 1)[1] + ("_type" if kind == "unknown_hardware" else "")
        out[column] = out[column].astype(object)
        out.loc[label, column] = {"status": "lost", "precision": " ", "hardware_type": "TPU-v9"}[column]
        return out
    value = {
        "throughput_nan_on_ok": ("throughput", np.nan),
        "throughput_zero_on_ok": ("throughput", 0.0),
        "throughput_on_failed": ("throughput", 12.5),
        "zero_trainers": ("trainer_count", 0),
        "negative_batch": ("batch_size", -4),
        "negative_device_hours": ("device_hours", -1.0),
        "null_submit_time": ("submit_time", pd.NaT),
        "duplicate_id": ("attempt_id", out["attempt_id"].drop(index=label).iloc[0]),
    }[kind]
    out.loc[label, value[0]] = value[1]
    return out


@st.composite
def labelled_logs(draw):
    """A valid random log whose index labels differ from its row positions."""
    seed = draw(st.integers(0, 2**31))
    log = make_log(seed, draw(st.integers(12, 60)), n_types=4)
    log.index = pd.Index(7 * np.arange(len(log)) + 100)
    return log


def _pick_rows(log, kinds, order):
    """One distinct row label per kind, honouring each kind's row condition."""
    ok = (log["status"] == "ok").to_numpy()
    used, picks = set(), {}
    for kind in kinds:
        where = CORRUPTIONS[kind][0]
        for position in order:
            if position in used or (where == "ok" and not ok[position]) or (
                    where == "not_ok" and ok[position]):
                continue
            used.add(position)
            picks[kind] = log.index[position]
            break
    return picks


@PROFILE
@given(log=labelled_logs())
def test_valid_logs_pass_unchanged(log):
    catalog = make_catalog(4)
    before = log.copy()
    assert validate_attempts(log, catalog) is log
    pd.testing.assert_frame_equal(log, before)


@PROFILE
@given(log=labelled_logs(), kind=st.sampled_from(sorted(CORRUPTIONS)), data=st.data())
def test_one_bad_cell_is_named_with_its_row(log, kind, data):
    order = data.draw(st.permutations(range(len(log))))
    picks = _pick_rows(log, [kind], order)
    if kind not in picks:
        return  # e.g. no failed row in this log
    label = picks[kind]
    with pytest.raises(SchemaError) as info:
        validate_attempts(_corrupt(log, kind, label), make_catalog(4))
    problems = info.value.problems
    assert len(problems) == 1
    assert problems[0].startswith(CORRUPTIONS[kind][1])
    assert str(label) in problems[0]


@PROFILE
@given(log=labelled_logs(), kinds=st.sets(st.sampled_from(sorted(CORRUPTIONS)), min_size=2),
       data=st.data())
def test_every_problem_is_listed_at_once(log, kinds, data):
    order = data.draw(st.permutations(range(len(log))))
    picks = _pick_rows(log, sorted(kinds), order)
    bad = log
    for kind, label in picks.items():
        bad = _corrupt(bad, kind, label)
    if not picks:
        return
    with pytest.raises(SchemaError) as info:
        validate_attempts(bad, make_catalog(4))
    problems = info.value.problems
    # some kinds share a message (two throughput kinds on ok rows): one line each
    expected = {CORRUPTIONS[k][1] for k in picks}
    assert len(problems) == len(expected)
    for prefix in expected:
        line = next(p for p in problems if p.startswith(prefix))
        for kind, label in picks.items():
            if CORRUPTIONS[kind][1] == prefix:
                assert str(label) in line


# the peaks have their own rule (one precision at least); these must be > 0 where given
NUMERIC_HARDWARE = [c.name for c in HARDWARE_COLUMNS
                    if c.kind in ("float", "int") and not c.name.startswith("peak_")]


@PROFILE
@given(n_types=st.integers(3, 5), column=st.sampled_from(NUMERIC_HARDWARE),
       value=st.sampled_from([0.0, -1.0, np.inf]), data=st.data())
def test_bad_catalog_value_is_named_with_its_row(n_types, column, value, data):
    catalog = make_catalog(n_types)
    catalog.index = pd.Index(np.arange(n_types) * 3 + 50)
    label = data.draw(st.sampled_from(list(catalog.index)))
    bad = catalog.copy()
    if column == "devices_per_host":
        bad[column] = bad[column].astype(float)  # an int column cannot hold inf or NaN
    bad.loc[label, column] = value
    with pytest.raises(SchemaError) as info:
        validate_hardware(bad)
    text = " ".join(info.value.problems)
    assert column in text and str(label) in text


# -- rank_candidates ---------------------------------------------------------------

HARDWARE = ["a100", "h100", "l4", "mi300", "t4"]


@st.composite
def candidates(draw):
    n_jobs = draw(st.integers(1, 5))
    rows = []
    for job in range(n_jobs):
        for hw in draw(st.lists(st.sampled_from(HARDWARE), min_size=1, max_size=5, unique=True)):
            pred = draw(st.one_of(st.just(np.nan), st.sampled_from([0.0, 4.0, 8.0]),
                                  st.floats(1e-3, 1e6, allow_nan=False)))
            rows.append((job, hw, pred, draw(st.booleans()), draw(st.sampled_from([1, 2, 8]))))
    frame = pd.DataFrame(rows, columns=["job_id", "hardware_type", "predicted_throughput",
                                        "feasible", "trainer_count"])
    cost = {h: draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])) for h in HARDWARE}
    return frame, cost


def _reference_order(frame, cost):
    """The documented order, written out row by row."""
    out = {}
    for job, rows in frame.groupby("job_id", sort=False):
        keyed = []
        for row in rows.itertuples(index=False):
            thr = row.predicted_throughput
            rankable = bool(row.feasible) and thr > 0  # NaN and zero: nothing to rank
            per_cost = thr / (cost[row.hardware_type] * row.trainer_count)
            keyed.append(((not rankable,
                           -per_cost if not np.isnan(per_cost) else np.inf,
                           -thr if not np.isnan(thr) else np.inf,
                           row.hardware_type), row.hardware_type))
        out[job] = [hw for _, hw in sorted(keyed)]
    return out


@PROFILE
@given(data=candidates())
def test_ranking_matches_a_row_by_row_reference(data):
    frame, cost = data
    ranked = rank_candidates(frame, cost=cost, feasible_col="feasible")
    got = {job: rows["hardware_type"].tolist() for job, rows in ranked.groupby("job_id", sort=False)}
    assert got == _reference_order(frame, cost)


@PROFILE
@given(data=candidates(), k=st.integers(1, 4))
def test_top_k_is_the_head_of_the_full_ranking(data, k):
    frame, cost = data
    full = rank_candidates(frame, cost=cost, feasible_col="feasible")
    top = rank_candidates(frame, cost=cost, feasible_col="feasible", top_k=k)
    expected = full[full["rank"] <= k].reset_index(drop=True)
    pd.testing.assert_frame_equal(top, expected)


@PROFILE
@given(data=candidates(), scale=st.sampled_from([0.25, 2.0, 8.0]))
def test_scaling_every_cost_keeps_the_order(data, scale):
    frame, cost = data
    base = rank_candidates(frame, cost=cost, feasible_col="feasible")
    scaled = rank_candidates(frame, cost={h: c * scale for h, c in cost.items()},
                             feasible_col="feasible")
    pd.testing.assert_series_equal(base["hardware_type"], scaled["hardware_type"])
    np.testing.assert_allclose(scaled["throughput_per_cost"], base["throughput_per_cost"] / scale)


# -- build_features: the as-of logic -----------------------------------------------


@PROFILE
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), data=st.data())
def test_features_do_not_depend_on_row_order_beyond_ties(seed, n, data):
    """Any reordering gives the same features, if rows at the same time keep their order.

    Among completed runs at the same instant, the "last" run is by documented rule the
    later row of the log, so only that relative order may matter.
    """
    catalog = make_catalog(4)
    log = make_log(seed, n, n_types=4)
    times = np.sort(log["submit_time"].unique())
    shuffled_times = data.draw(st.permutations(range(len(times))))
    time_rank = pd.Series(list(shuffled_times), index=times)
    order = np.lexsort((np.arange(n), time_rank.loc[log["submit_time"]].to_numpy()))
    X = build_features(log, catalog)
    reordered = build_features(log.iloc[order], catalog)
    pd.testing.assert_frame_equal(reordered.loc[X.index], X)


@PROFILE
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), data=st.data())
def test_counts_and_means_do_not_depend_on_row_order(seed, n, data):
    catalog = make_catalog(4)
    log = make_log(seed, n, n_types=4)
    order = list(data.draw(st.permutations(range(n))))
    X = build_features(log, catalog)
    shuffled = build_features(log.iloc[order], catalog).loc[X.index]
    # everything but the "last run" features, which follow the documented tie rule
    keep = [c for c in X.columns if "last" not in c and c not in (
        "history_log_throughput_estimate", "history_estimate_source")]
    pd.testing.assert_frame_equal(shuffled[keep], X[keep])


@PROFILE
@given(seed=st.integers(0, 2**31), n=st.integers(1, 50), n_extra=st.integers(1, 20))
def test_attempts_that_did_not_complete_are_invisible(seed, n, n_extra):
    catalog = make_catalog(4)
    log = make_log(seed, n, n_types=4)
    rng = np.random.default_rng(seed)
    extra = log.iloc[rng.integers(0, n, n_extra)].copy()
    extra["attempt_id"] = np.arange(n_extra) + 10_000
    extra["status"] = pd.Categorical(rng.choice(["oom", "failed"], n_extra),
                                     categories=log["status"].cat.categories)
    extra["throughput"] = np.nan
    extra["submit_time"] = log["submit_time"].min() + pd.to_timedelta(
        rng.integers(-60, 600, n_extra), unit="min")
    extra.index = pd.RangeIndex(n, n + n_extra)
    with_failures = pd.concat([log, extra])
    pd.testing.assert_frame_equal(build_features(with_failures, catalog).loc[log.index],
                                  build_features(log, catalog))


@PROFILE
@given(seed=st.integers(0, 2**31), n=st.integers(2, 50), data=st.data())
def test_a_row_sees_exactly_the_completed_rows_before_it(seed, n, data):
    catalog = make_catalog(4)
    log = make_log(seed, n, n_types=4)
    X = build_features(log, catalog)
    position = data.draw(st.integers(0, n - 1))
    row = log.iloc[position]
    # completed runs whose outcome was known (they had ended) before the row's submission
    earlier = log[(outcome_known_time(log) < row["submit_time"]) & (log["status"] == "ok")]
    same_job = earlier[earlier["job_id"] == row["job_id"]]
    same_hw = same_job[same_job["hardware_type"] == row["hardware_type"]]
    got = X.iloc[position]
    assert got["job_runs_any_hardware"] == len(same_job)
    assert got["job_runs_same_hardware"] == len(same_hw)
    assert got["model_type_runs_any_hardware"] == int(
        (earlier["model_type"] == row["model_type"]).sum())
    if len(same_hw):
        assert got["job_mean_log_throughput_same_hardware"] == pytest.approx(
            np.log(same_hw["throughput"]).mean())
    else:
        assert np.isnan(got["job_mean_log_throughput_same_hardware"])
