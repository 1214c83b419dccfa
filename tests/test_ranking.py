"""rank_candidates: ordering, cost handling, flags, ties, errors and properties."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapml.ranking import rank_arrays, rank_candidates

COST = {"a100": 2.0, "h100": 4.0, "l4": 0.5, "t4": 0.4}


def frame(**overrides):
    data = {
        "job_id": [1, 1, 1, 2, 2],
        "hardware_type": ["a100", "h100", "l4", "a100", "t4"],
        "predicted_throughput": [100.0, 300.0, 20.0, 10.0, 4.0],
    }
    data.update(overrides)
    return pd.DataFrame(data)


def test_orders_by_throughput_per_cost_within_each_job():
    ranked = rank_candidates(frame(), cost=COST)
    assert ranked["job_id"].tolist() == [1, 1, 1, 2, 2]
    assert ranked["hardware_type"].tolist() == ["h100", "a100", "l4", "t4", "a100"]
    assert ranked["rank"].tolist() == [1, 2, 3, 1, 2]
    np.testing.assert_allclose(ranked["throughput_per_cost"], [75.0, 50.0, 40.0, 10.0, 5.0])
    assert ranked["rankable"].all()


def test_trainer_count_multiplies_the_cost():
    ranked = rank_candidates(frame(trainer_count=[1, 8, 1, 1, 1]), cost=COST)
    # h100 on 8 trainers costs 32/h: 300/32 < 100/2
    assert ranked.loc[ranked["job_id"] == 1, "hardware_type"].tolist() == ["a100", "l4", "h100"]
    np.testing.assert_allclose(ranked.loc[2, "cost_per_hour"], 32.0)


def test_cost_from_a_column():
    data = frame()
    data["price"] = data["hardware_type"].map(COST)
    by_column = rank_candidates(data, cost="price")
    by_mapping = rank_candidates(frame(), cost=COST)
    assert by_column["hardware_type"].tolist() == by_mapping["hardware_type"].tolist()


def test_infeasible_and_nan_rank_last_and_are_flagged_not_dropped():
    data = frame(predicted_throughput=[100.0, np.nan, 20.0, 10.0, 4.0])
    data["fits"] = [True, True, False, True, True]
    ranked = rank_candidates(data, cost=COST, feasible_col="fits")
    job1 = ranked[ranked["job_id"] == 1]
    assert job1["hardware_type"].tolist() == ["a100", "l4", "h100"]
    assert job1["rankable"].tolist() == [True, False, False]
    assert len(ranked) == len(data)


def test_ties_break_by_throughput_then_hardware_name():
    data = pd.DataFrame({
        "job_id": [7, 7, 7],
        "hardware_type": ["t4", "l4", "a100"],
        "predicted_throughput": [4.0, 4.0, 16.0],
    })
    cost = {"t4": 1.0, "l4": 1.0, "a100": 4.0}
    ranked = rank_candidates(data, cost=cost)
    # all three give 4 per unit cost: a100 has the most throughput, then l4 < t4 by name
    assert ranked["hardware_type"].tolist() == ["a100", "l4", "t4"]


def test_top_k_keeps_the_best_per_job():
    ranked = rank_candidates(frame(), cost=COST, top_k=1)
    assert ranked["hardware_type"].tolist() == ["h100", "t4"]


def test_custom_column_names_and_categorical_hardware():
    data = frame().rename(columns={"job_id": "job", "hardware_type": "hw",
                                   "predicted_throughput": "pred"})
    data["hw"] = data["hw"].astype("category")
    ranked = rank_candidates(data, cost=COST, job_col="job", hardware_col="hw",
                             prediction_col="pred")
    assert ranked["hw"].astype(str).tolist() == ["h100", "a100", "l4", "t4", "a100"]


@pytest.mark.parametrize(
    ("data", "kwargs", "match"),
    [
        (frame(), {"cost": {"a100": 2.0}}, r"no entry for hardware type\(s\) \['h100', 'l4', 't4'\]"),
        (frame(), {"cost": dict(COST, l4=0.0)}, r"> 0 .*\['l4'\]"),
        (frame(), {"cost": dict(COST, l4=np.nan)}, r"\['l4'\]"),
        (frame(predicted_throughput=[1.0, -1.0, 1.0, 1.0, 1.0]), {"cost": COST}, "1 row"),
        (frame(hardware_type=["a100", "a100", "l4", "a100", "t4"]), {"cost": COST}, "duplicate|sharing"),
        (frame().drop(columns="predicted_throughput"), {"cost": COST}, "lacks column"),
        (frame(), {"cost": "price"}, "lacks column"),
        (frame(), {"cost": COST, "top_k": 0}, "top_k"),
        (frame(trainer_count=[1, 0, 1, 1, 1]), {"cost": COST}, "trainer_count"),
        (frame(ok=[1, 0, 1, 1, 1]), {"cost": COST, "feasible_col": "ok"}, "boolean"),
        (frame(), {"cost": dict(COST, l4="cheap")}, r"cost of hardware type 'l4' .*'cheap'"),
        (frame(), {"cost": dict(COST, t4=None)}, r"cost of hardware type 't4'"),
    ],
)
def test_clear_errors(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rank_candidates(data, **kwargs)


@pytest.mark.parametrize("column", ["predicted_throughput", "hardware_type", "job_id",
                                    "trainer_count", "fit_probability", "fits", "price"])
def test_a_column_given_twice_is_named(column):
    data = frame(trainer_count=[1, 2, 1, 1, 1], fit_probability=0.9, fits=True)
    data["price"] = data["hardware_type"].map(COST)
    twice = pd.concat([data, data[[column]]], axis=1)
    with pytest.raises(ValueError, match=f"2 columns named '{column}'"):
        rank_candidates(twice, cost="price", feasible_col="fits")
    # a repeated column the ranking does not read is kept as it is
    notes = pd.DataFrame({"note": data["job_id"]}, index=data.index)
    ranked = rank_candidates(pd.concat([data, notes, notes], axis=1), cost="price",
                             feasible_col="fits")
    assert ranked.columns.tolist().count("note") == 2


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_a_prediction_of_zero_throughput_is_not_rankable(zero):
    data = frame(predicted_throughput=[zero, np.nan, 20.0, 10.0, 4.0])
    ranked = rank_candidates(data, cost=COST)
    job1 = ranked[ranked["job_id"] == 1]
    assert job1["hardware_type"].tolist() == ["l4", "a100", "h100"]
    assert job1["rank"].tolist() == [1, 2, 3]
    assert job1["rankable"].tolist() == [True, False, False]
    assert job1["reason"].tolist() == ["", "predicted throughput is zero", "no prediction"]
    # a job whose only prediction is zero has no rankable candidate, and no rank-1 pick to run
    alone = rank_candidates(frame(predicted_throughput=[0.0] * 5), cost=COST)
    assert not alone["rankable"].any()
    # nor does the fallback to the likeliest candidate pick it
    unlikely = rank_candidates(frame(predicted_throughput=[0.0, 5.0, 1.0, 1.0, 1.0],
                                     fit_probability=[0.4, 0.3, 0.1, 0.9, 0.9]),
                               cost=COST, if_none_fit="most_likely")
    picked = unlikely[(unlikely["job_id"] == 1) & unlikely["rankable"]]
    assert picked["hardware_type"].tolist() == ["h100"]


HARDWARE = ["a100", "h100", "l4", "t4"]


@st.composite
def candidate_frames(draw):
    n_jobs = draw(st.integers(1, 6))
    rows = []
    for job in range(n_jobs):
        kinds = draw(st.lists(st.sampled_from(HARDWARE), min_size=1, max_size=4, unique=True))
        for hw in kinds:
            pred = draw(st.one_of(st.just(np.nan), st.sampled_from([0.0, 1.0, 2.0, 8.0]),
                                  st.floats(0, 1e7, allow_nan=False)))
            rows.append((f"job-{job}", hw, pred, draw(st.booleans()), draw(st.integers(1, 64))))
    order = draw(st.permutations(range(len(rows))))
    return pd.DataFrame([rows[i] for i in order],
                        columns=["job_id", "hardware_type", "predicted_throughput",
                                 "feasible", "trainer_count"])


@settings(max_examples=50, deadline=None, derandomize=True)
@given(data=candidate_frames())
def test_property_ranking_invariants(data):
    ranked = rank_candidates(data, cost=COST, feasible_col="feasible")
    assert len(ranked) == len(data)  # nothing dropped
    for _, group in ranked.groupby("job_id", sort=False):
        assert group["rank"].tolist() == list(range(1, len(group) + 1))
        flags = group["rankable"].to_numpy()
        # rankable rows come first, then the flagged ones
        assert np.all(np.diff(flags.astype(int)) <= 0)
        per_cost = group.loc[group["rankable"], "throughput_per_cost"].to_numpy()
        assert np.all(np.diff(per_cost) <= 0)
        # a prediction of zero throughput is no more rankable than none
        expected_flags = group["feasible"] & (group["predicted_throughput"] > 0)
        assert (group["rankable"] == expected_flags).all()
    # the result does not depend on the input row order
    again = rank_candidates(data.iloc[::-1], cost=COST, feasible_col="feasible")
    key = ["job_id", "hardware_type", "rank"]
    pd.testing.assert_frame_equal(
        ranked[key].sort_values(key[:2]).reset_index(drop=True),
        again[key].sort_values(key[:2]).reset_index(drop=True),
    )


def test_every_input_column_keeps_its_dtype_and_values():
    frame = pd.DataFrame({
        "job_id": [1, 1, 2], "hardware_type": ["a", "b", "a"],
        "predicted_throughput": [1.0, 2.0, 3.0],
        "when": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"]),
        "when_utc": pd.to_datetime(["2024-01-01"] * 3).tz_localize("UTC"),
        "flag": [True, False, True], "anything": [{"a": 1}, None, "x"], 5: [7, 8, 9],
        "kind": pd.Categorical(["x", "y", "x"]), "count": pd.array([1, None, 3], dtype="Int64"),
    })
    ranked = rank_candidates(frame, cost={"a": 1.0, "b": 1.0})
    assert list(ranked.columns[: frame.shape[1]]) == list(frame.columns)
    assert ranked.dtypes[: frame.shape[1]].to_dict() == frame.dtypes.to_dict()
    # job 1's b (2.0 per cost) comes before its a; each row keeps its own values
    assert ranked["hardware_type"].tolist() == ["b", "a", "a"]
    expected = frame.iloc[[1, 0, 2]].reset_index(drop=True)
    pd.testing.assert_frame_equal(ranked[frame.columns], expected)
    ranked.columns = range(ranked.shape[1])  # the frame owns its labels
    assert "job_id" in frame.columns


@pytest.mark.parametrize("top_k", [None, 2])
def test_jobs_in_equal_blocks_rank_as_any_other_layout(top_k):
    """Rows job after job, as many each, are sorted job by job: the same ranking as in any order."""
    rng = np.random.default_rng(0)
    n_jobs, types = 40, ["a100", "h100", "l4", "t4"]
    throughput = rng.choice([1.0, 2.0, 4.0, np.nan], size=n_jobs * len(types))
    blocks = pd.DataFrame({
        "job_id": np.repeat([f"job-{j}" for j in range(n_jobs)], len(types)),
        "hardware_type": types * n_jobs,
        "predicted_throughput": throughput,  # many ties, NaN among them
        "feasible": rng.random(n_jobs * len(types)) > 0.1,
    })
    shuffled = blocks.sample(frac=1.0, random_state=1)
    # jobs in the same order of first appearance, rows within each job shuffled
    shuffled = shuffled.sort_values("job_id", key=lambda ids: ids.map(
        {job: i for i, job in enumerate(blocks["job_id"].unique())}), kind="stable")
    assert not shuffled.index.equals(blocks.index)
    kwargs = {"cost": COST, "feasible_col": "feasible", "top_k": top_k}
    by_blocks = rank_candidates(blocks, **kwargs)
    pd.testing.assert_frame_equal(by_blocks, rank_candidates(shuffled, **kwargs), check_exact=True)
    # a layout not in blocks (a row of the first job moved last) takes the general path
    moved = pd.concat([shuffled.iloc[1:], shuffled.iloc[:1]])
    pd.testing.assert_frame_equal(rank_candidates(moved, **kwargs), by_blocks, check_exact=True)
    assert (by_blocks.groupby("job_id", sort=False)["rank"].first() == 1).all()


def test_rank_arrays_ranks_each_job_and_names_its_problems():
    names = ["a100", "h100", "l4"]
    jobs, types = np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 2, 0])
    throughput = np.array([100.0, 250.0, np.nan, 10.0, 10.0])
    hourly = np.array([2.0, 4.0, 0.5, 1.0, 1.0])
    order, columns = rank_arrays(jobs, types, names, throughput, hourly)
    # job 0 by throughput per cost, no prediction last; job 1's tie goes to the first name
    assert order.tolist() == [1, 0, 2, 4, 3]
    assert columns["rank"].tolist() == [1, 2, 3, 1, 2]
    assert columns["reason"].tolist() == ["", "", "no prediction", "", ""]
    probability = np.array([0.9, 0.1, np.nan, 1.0, 1.0])
    order, columns = rank_arrays(jobs, types, names, throughput, hourly, top_k=1,
                                 fit_probability=probability)
    assert order.tolist() == [0, 4]
    for kwargs, match in [
        ({"hourly": hourly[:4]}, "one entry per candidate"),
        ({"hourly": np.where(types == 2, 0.0, hourly)}, "cost per hour must be > 0"),
        ({"throughput": -throughput}, "negative or infinite"),
        ({"hardware_codes": types + 1}, "positions in hardware_names"),
        ({"job_codes": np.zeros(5, dtype=int)}, r"sharing a \(job, hardware type\) pair, at rows \[0, 2, 3, 4\]"),
        ({"fit_probability": probability * 2}, r"probability in \[0, 1\]"),
        ({"objective": "lower_quantile_per_cost"}, "low end of a prediction interval"),
    ]:
        arguments = {"job_codes": jobs, "hardware_codes": types, "throughput": throughput,
                     "hourly": hourly} | kwargs
        with pytest.raises(ValueError, match=match):
            rank_arrays(arguments.pop("job_codes"), arguments.pop("hardware_codes"), names,
                        arguments.pop("throughput"), arguments.pop("hourly"), **arguments)


def test_a_job_none_of_whose_types_is_likely_to_fit_gets_its_most_likely_one_on_request():
    names = ["a100", "h100", "l4", "mi300"]
    # job 0: every type below the threshold, h100 and mi300 the most likely (a tie), l4 marked
    # infeasible and a100 unpredicted; job 1: one type likely enough, so nothing changes for it
    jobs, types = np.array([0, 0, 0, 0, 1, 1]), np.array([0, 1, 2, 3, 0, 1])
    throughput = np.array([np.nan, 100.0, 500.0, 300.0, 50.0, 80.0])
    hourly = np.ones(6)
    probability = np.array([0.45, 0.3, 0.45, 0.3, 0.9, 0.2])
    feasible = np.array([True, True, False, True, True, True])
    kwargs = {"fit_probability": probability, "feasible": feasible}
    _, skipped = rank_arrays(jobs, types, names, throughput, hourly, **kwargs)
    assert not skipped["rankable"][:4].any()
    order, columns = rank_arrays(jobs, types, names, throughput, hourly, if_none_fit="most_likely",
                                 **kwargs)
    ranked = pd.DataFrame({"row": order, **columns})
    first = ranked[jobs[order] == 0]
    # the two most likely (0.3 is the highest among the predicted, not-marked ones), by throughput
    assert first["row"].tolist()[:2] == [3, 1] and first["rankable"].tolist() == [True, True, False, False]
    assert first["reason"].tolist()[:2] == ["most likely to fit, below threshold"] * 2
    # the unpredicted a100 keeps the first reason that applies to it
    assert set(first["reason"].tolist()[2:]) == {"marked infeasible", "fit probability below threshold"}
    second = ranked[jobs[order] == 1]
    pd.testing.assert_frame_equal(second.reset_index(drop=True),
                                  pd.DataFrame({"row": order, **skipped})[jobs[order] == 1]
                                  .reset_index(drop=True))
    with pytest.raises(ValueError, match="if_none_fit must be one of"):
        rank_arrays(jobs, types, names, throughput, hourly, if_none_fit="best")


def test_rank_candidates_passes_if_none_fit_on():
    frame = pd.DataFrame({"job_id": ["j", "j"], "hardware_type": ["a", "b"],
                          "predicted_throughput": [10.0, 20.0], "fit_probability": [0.2, 0.1]})
    skipped = rank_candidates(frame, cost={"a": 1.0, "b": 1.0})
    assert not skipped["rankable"].any()
    ranked = rank_candidates(frame, cost={"a": 1.0, "b": 1.0}, if_none_fit="most_likely")
    assert ranked["hardware_type"].tolist() == ["a", "b"] and ranked["rankable"].tolist() == [True, False]


@pytest.mark.parametrize("objective", ["lower_quantile_per_cost", "expected_utility"])
def test_an_interval_objective_ranks_no_candidate_without_both_ends(objective):
    # c has a low end but no prediction, d a prediction but no low end: both are the cheapest
    frame = pd.DataFrame({"job_id": 7, "hardware_type": ["a", "b", "c", "d"],
                          "predicted_throughput": [100.0, 80.0, np.nan, 50.0],
                          "throughput_low": [90.0, 70.0, 60.0, np.nan]})
    ranked = rank_candidates(frame, cost={"a": 1.0, "b": 1.0, "c": 0.1, "d": 0.1}, objective=objective)
    assert ranked["hardware_type"].tolist() == ["a", "b", "d", "c"]
    assert ranked["rankable"].tolist() == [True, True, False, False]
    assert ranked["reason"].astype(str).tolist() == ["", "", "no prediction interval", "no prediction"]


def test_a_low_end_above_the_prediction_is_the_prediction_and_warned_of():
    frame = pd.DataFrame({"job_id": 7, "hardware_type": ["a", "b"],
                          "predicted_throughput": [100.0, 80.0], "throughput_low": [90.0, 500.0]})
    with pytest.warns(UserWarning, match="1 candidate.s. have 'throughput_low' above"):
        ranked = rank_candidates(frame, cost={"a": 1.0, "b": 1.0}, objective="lower_quantile_per_cost")
    assert ranked["hardware_type"].tolist() == ["a", "b"]
    assert ranked["score"].tolist() == [90.0, 80.0]
    # a low end under another name is named by its own name, in warnings and errors alike
    renamed = frame.rename(columns={"throughput_low": "p10"})
    with pytest.warns(UserWarning, match="1 candidate.s. have 'p10' above"):
        rank_candidates(renamed, cost={"a": 1.0, "b": 1.0}, objective="lower_quantile_per_cost",
                        low_col="p10")
    with pytest.raises(ValueError, match="'p10' must be >= 0"):
        rank_candidates(renamed.assign(p10=[-1.0, 5.0]), cost={"a": 1.0, "b": 1.0},
                        objective="lower_quantile_per_cost", low_col="p10")


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA])
def test_a_candidate_of_no_job_is_refused_as_one_of_no_hardware_type(missing):
    """Rows without a job id were ranked as one job: with top_k=1, one candidate of several
    jobs was kept."""
    cost = {"a": 1.0, "b": 1.0, "c": 1.0}
    frame = pd.DataFrame({"job_id": pd.Series([missing, missing, "j"], dtype=object),
                          "hardware_type": ["a", "b", "c"], "predicted_throughput": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"2 row\(s\) have no job in 'job_id'"):
        rank_candidates(frame, cost=cost, top_k=1)
    with pytest.raises(ValueError, match=r"1 row\(s\) have no hardware type in 'hardware_type'"):
        rank_candidates(frame.assign(job_id="j", hardware_type=["a", missing, "c"]), cost=cost)
    assert len(rank_candidates(frame.assign(job_id=["i", "j", "k"]), cost=cost, top_k=1)) == 3


@pytest.mark.parametrize("value", ["2", b"2", True, np.True_, None, [2.0]])
def test_a_cost_that_is_not_a_number_is_refused_by_type(value):
    """float() reads "2" and True, so text and booleans were taken as costs."""
    frame = pd.DataFrame({"job_id": 1, "hardware_type": ["a", "b"], "predicted_throughput": [1.0, 2.0]})
    with pytest.raises(ValueError, match="cost of hardware type 'a' must be a number, got"):
        rank_candidates(frame, cost={"a": value, "b": 1.0})
    ranked = rank_candidates(frame, cost={"a": np.float32(2.0), "b": 1})  # numbers of any type
    assert ranked["hardware_type"].tolist() == ["b", "a"]
