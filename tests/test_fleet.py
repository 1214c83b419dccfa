"""Tests of the synthetic fleet: catalogs, simulator, truth, save/load, describe."""

import numpy as np
import pandas as pd
import pytest

from leapml.fleet import (
    FAMILIES,
    describe,
    format_description,
    hardware_catalog,
    load_fleet,
    model_catalog,
    simulate,
)
from leapml.schema import LAUNCH_COLUMNS, MODEL_SIZE_COLUMNS, validate_attempts, validate_hardware


@pytest.fixture(scope="module")
def fleet():
    return simulate("tiny", days=8, seed=0)


def test_hardware_catalog_follows_schema_and_mix():
    hw = validate_hardware(hardware_catalog())
    assert 20 <= len(hw) <= 30
    assert {"NVIDIA", "AMD", "Intel"} <= set(hw["vendor"].astype(str))
    synthetic = hw[hw["synthetic"]]
    assert synthetic["hardware_type"].astype(str).tolist() == ["inhouse-rank-v1"]
    assert "synthetic" in synthetic["vendor"].astype(str).iloc[0]
    assert (hw["software"].astype(str) == "cpu").sum() == 1
    start = pd.Timestamp("2026-01-01")
    late = hw[hw["introduced"] > start]
    assert 1 <= len(late) <= 5
    assert (late["introduced"] < start + pd.Timedelta(days=60)).all()
    # fp8 only from Hopper / Ada / CDNA 3 / Gaudi on; V100 has no bf16
    v100 = hw.set_index(hw["hardware_type"].astype(str)).loc["V100-32GB-SXM2"]
    assert np.isnan(v100["peak_bf16_tflops"]) and np.isnan(v100["peak_fp8_tflops"])
    assert (hw["cost_per_device_hour"] > 0).all()


def test_hardware_cost_grows_with_power():
    hw = hardware_catalog().set_index("hardware_type")
    assert hw.loc["B200-180GB-SXM", "cost_per_device_hour"] > hw.loc["H100-80GB-SXM5", "cost_per_device_hour"]
    assert hw.loc["H100-80GB-SXM5", "cost_per_device_hour"] > hw.loc["T4-16GB", "cost_per_device_hour"]


def test_model_catalog_size_families_and_zipf():
    models = model_catalog(seed=0)
    assert len(models) > 660
    assert 20 <= models["model_family"].nunique() <= 30
    assert models["model_type"].is_unique
    pop = np.sort(models["_popularity"].to_numpy())[::-1]
    # heavy tail: the top 5% of types run several times their share
    assert pop[: len(pop) // 20].sum() > 2.5 * 0.05
    assert model_catalog(seed=0).equals(models)
    assert not model_catalog(seed=1)["_params_m"].equals(models["_params_m"])


def test_attempts_follow_schema(fleet):
    att = validate_attempts(fleet.attempts, fleet.hardware)
    assert att["submit_time"].is_monotonic_increasing
    assert att["attempt_id"].is_unique
    assert str(att["seq_len"].dtype) == "Int64"
    for col in ("model_type", "model_family", "precision", "parallelism", "hardware_type", "status"):
        assert isinstance(att[col].dtype, pd.CategoricalDtype), col
    assert "expected_throughput" in att.columns
    assert not [c for c in att.columns if c.startswith("_")]
    assert att["seq_len"].isna().any() and att["seq_len"].notna().any()


def test_statuses_and_truth(fleet):
    att = fleet.attempts
    status = att["status"].astype(str)
    assert 0.5 < (status == "ok").mean() < 0.99
    assert att.loc[status == "oom", "expected_throughput"].isna().all()
    assert att.loc[status != "oom", "expected_throughput"].gt(0).all()
    assert (att["device_hours"] > 0).all()


def test_deterministic_for_a_seed():
    a = simulate("tiny", days=3, seed=5)
    b = simulate("tiny", days=3, seed=5)
    c = simulate("tiny", days=3, seed=6)
    pd.testing.assert_frame_equal(a.attempts, b.attempts)
    assert not a.attempts["throughput"].equals(c.attempts["throughput"])


def test_attempts_per_day_and_recurrence():
    fleet = simulate("tiny", days=8, seed=1, attempts_per_day=800)
    att = fleet.attempts
    assert abs(len(att) / 8 / 800 - 1) < 0.1
    # many attempts are reruns of a job seen before; jobs stay on few types
    assert att["job_id"].duplicated().mean() > 0.4
    per_job = att.groupby("job_id", observed=True)["hardware_type"].nunique()
    assert per_job.median() <= 2 and per_job.max() <= 3
    days = att["submit_time"].dt.floor("D").value_counts()
    assert days.min() > 0.6 * days.mean()


def test_jobs_hidden_columns_are_marked(fleet):
    jobs = fleet.jobs
    assert jobs["job_id"].is_unique
    assert set(LAUNCH_COLUMNS) <= set(jobs.columns)
    visible = {"job_id", *LAUNCH_COLUMNS, *MODEL_SIZE_COLUMNS}
    assert all(c in visible or c.startswith("_") for c in jobs.columns)
    assert "_variant" in jobs.columns and jobs["_variant"].std() > 0.1
    assert set(fleet.attempts["job_id"]) <= set(jobs["job_id"])


def test_expected_throughput_matches_attempt_truth(fleet):
    att = fleet.attempts[fleet.attempts["status"].astype(str) != "oom"].head(300)
    rows = []
    for hw, part in att.groupby("hardware_type", observed=True):
        truth = fleet.expected_throughput(part, [hw])
        rows.append(pd.DataFrame({"attempt": part["expected_throughput"].to_numpy(),
                                  "method": truth["expected_throughput"].to_numpy()}))
    both = pd.concat(rows)
    np.testing.assert_allclose(both["method"], both["attempt"], rtol=1e-9)


def test_expected_throughput_marks_infeasible(fleet):
    hw_types = fleet.hardware["hardware_type"].astype(str).tolist()
    jobs = fleet.jobs
    truth = fleet.expected_throughput(jobs, hw_types, at=fleet.end)
    assert len(truth) == len(jobs) * len(hw_types)
    assert truth["expected_throughput"].isna().eq(~truth["feasible"]).all()
    merged = truth.merge(jobs[["job_id", "precision", "model_family"]], on="job_id")
    bf16_on_v100 = merged[(merged["precision"].astype(str) == "bf16") & (merged["hardware_type"].astype(str) == "V100-32GB-SXM2")]
    assert len(bf16_on_v100) and not bf16_on_v100["feasible"].any()
    ranking_on_gaudi = merged[merged["model_family"].astype(str).str.startswith("ranking") & (merged["hardware_type"].astype(str) == "Gaudi2-96GB")]
    assert len(ranking_on_gaudi) and not ranking_on_gaudi["feasible"].any()
    llm_on_inhouse = merged[merged["model_family"].astype(str).str.startswith("llm") & (merged["hardware_type"].astype(str) == "inhouse-rank-v1")]
    assert not llm_on_inhouse["feasible"].any()
    # a type not yet introduced is infeasible before its arrival
    before = fleet.expected_throughput(jobs.head(20), ["MI325X-256GB"], at=pd.Timestamp(fleet.params["start"]))
    assert not before["feasible"].any()
    # a job's counterfactuals differ across types, so ranking hardware matters
    spread = truth.groupby("job_id")["expected_throughput"].agg(lambda s: s.max() / s.min())
    assert spread.median() > 1.5


def test_expected_throughput_of_unknown_jobs_uses_nominal_factors(fleet):
    job = fleet.jobs.head(1).drop(columns="job_id")
    truth = fleet.expected_throughput(job, ["H100-80GB-SXM5"])
    assert "job_id" not in truth.columns and len(truth) == 1
    with pytest.raises(ValueError, match="not in the catalog"):
        fleet.expected_throughput(fleet.jobs.head(1), ["no-such-type"])


def test_fit_probability_at_submission_is_the_truth_over_the_prior(fleet):
    hw_types = fleet.hardware["hardware_type"].astype(str).tolist()
    jobs = fleet.jobs
    prior = fleet.fit_probability_at_submission(jobs, hw_types, draws=48, random_state=1)
    truth = fleet.expected_throughput(jobs, hw_types)
    assert (prior["job_id"].to_numpy() == truth["job_id"].to_numpy()).all()
    assert (prior["hardware_type"].astype(str).to_numpy()
            == truth["hardware_type"].astype(str).to_numpy()).all()
    p = prior["fit_probability"].to_numpy()
    fits = truth["feasible"].to_numpy()
    # each job's own hidden factors are one draw of the prior: over many jobs the share
    # that fit on a type is what the probabilities expect, type by type
    by_type = pd.DataFrame({"hw": truth["hardware_type"].astype(str), "p": p, "fits": fits})
    gap = by_type.groupby("hw")[["p", "fits"]].mean().diff(axis=1)["fits"].abs()
    assert gap.max() < 0.03, gap.sort_values().tail()
    # a job near a type's memory edge is uncertain there; where its software does not
    # run, no draw lets it
    assert ((p > 0) & (p < 1)).any()
    ranking_on_gaudi = (by_type["hw"] == "Gaudi2-96GB").to_numpy() & jobs["model_family"].astype(
        str).str.startswith("ranking").to_numpy().repeat(len(hw_types))
    assert ranking_on_gaudi.any() and (p[ranking_on_gaudi] == 0).all()
    # more memory of the same chip never makes a job less likely to fit
    wide = prior.assign(hw=prior["hardware_type"].astype(str)).pivot(
        index="job_id", columns="hw", values="fit_probability")
    assert (wide["A100-80GB-SXM4"] >= wide["A100-40GB-SXM4"]).all()
    assert (wide["A100-80GB-SXM4"] > wide["A100-40GB-SXM4"]).any()
    # seeded; the number of draws is checked
    again = fleet.fit_probability_at_submission(jobs, hw_types, draws=48, random_state=1)
    assert np.array_equal(again["fit_probability"].to_numpy(), p)
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        fleet.fit_probability_at_submission(jobs, hw_types, draws=0)


def test_noise_free_fleet_measures_its_truth():
    quiet = simulate("tiny", days=2, seed=2, run_noise=0.0, straggler_rate=0.0,
                     day_shock_sigma=0.0, hardware_day_shock_sigma=0.0)
    ok = quiet.attempts[quiet.attempts["status"].astype(str) == "ok"]
    np.testing.assert_allclose(ok["throughput"], ok["expected_throughput"], rtol=1e-12)
    noisy = simulate("tiny", days=2, seed=2)
    ok = noisy.attempts[noisy.attempts["status"].astype(str) == "ok"]
    ratio = np.log(ok["throughput"] / ok["expected_throughput"])
    assert 0.03 < ratio.std() < 0.3
    assert (ratio < np.log(0.85)).mean() > 0.01  # degraded runs exist


def test_throughput_spans_seven_orders(fleet):
    ok = fleet.attempts.loc[fleet.attempts["status"].astype(str) == "ok", "throughput"]
    assert ok.max() / ok.min() >= 1e7


def test_save_and_load_round_trip(tmp_path, fleet):
    back = load_fleet(fleet.save(tmp_path / "fleet"))
    for name in ("attempts", "hardware", "models", "jobs", "interactions", "releases"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(fleet, name))
    assert back.params == fleet.params
    truth = back.expected_throughput(back.jobs.head(5), ["A100-80GB-SXM4"])
    np.testing.assert_allclose(
        truth["expected_throughput"], fleet.expected_throughput(fleet.jobs.head(5), ["A100-80GB-SXM4"])["expected_throughput"]
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"preset": "huge"}, "preset"),
        ({"days": 0}, "days"),
        ({"run_noise": -1.0}, "run_noise"),
        ({"stickiness": 1.5}, "stickiness"),
        ({"recurring_share": 0.7, "sweep_share": 0.5}, "at most 1"),
        ({"day_shock_sigma": -0.1}, "day_shock_sigma"),
        ({"config_change_rate": 2.0}, "config_change_rate"),
        ({"new_families": -1}, "new_families"),
        # NaN, infinity, text, fractions and strings where a switch goes: each by name
        ({"run_noise": float("nan")}, "run_noise must be a finite number"),
        ({"variant_sigma": float("inf")}, "variant_sigma must be a finite number"),
        ({"belief_sigma": "0.1"}, "belief_sigma must be a finite number"),
        ({"zipf_exponent": float("nan")}, "zipf_exponent must be a finite number"),
        ({"new_families": 1.5}, "new_families must be a whole number >= 0"),
        ({"releases_per_stack": -1}, "releases_per_stack must be a whole number >= 0"),
        ({"n_model_types": 3}, "n_model_types must be a whole number >= 24"),
        ({"days": 2.5}, "days must be a whole number >= 1"),
        ({"attempts_per_day": 0.5}, "attempts_per_day must be a whole number >= 1"),
    ],
)
def test_simulate_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate(**{"preset": "tiny", **kwargs})


def test_simulate_wants_its_switches_true_or_false():
    with pytest.raises(TypeError, match="peak_memory must be True or False, got 'no'"):
        simulate("tiny", days=1, peak_memory="no")


@pytest.mark.parametrize(("seed", "error"), [(None, TypeError), (1.5, TypeError), ("7", TypeError),
                                             (True, TypeError), (-1, ValueError)])
def test_simulate_names_a_seed_that_is_not_a_non_negative_integer(seed, error):
    with pytest.raises(error, match="seed must be a non-negative integer"):
        simulate("tiny", days=1, seed=seed)
    with pytest.raises(error, match="seed must be a non-negative integer"):
        model_catalog(seed)


def test_describe_reports_targets(fleet):
    table = describe(fleet, train_days=6)
    assert table["property"].str.contains("lookup-table coverage").any()
    assert table["passed"].notna().sum() == 6
    row = table.set_index("property").loc["hardware types seen"]
    assert row["value"] == fleet.attempts["hardware_type"].nunique()
    text = format_description(table)
    assert text.count("\n") == len(table) + 1


def test_families_cover_the_design():
    names = set(FAMILIES)
    for needed in ("ranking-dlrm", "retrieval-two-tower", "ads-ctr-small", "vit", "video", "speech-asr",
                   "diffusion-image", "llm-pretrain", "llm-finetune", "gnn", "tabular-mlp", "rl-agent"):
        assert needed in names


# ---------------------------------------------------------------------------
# a fleet that changes over time
# ---------------------------------------------------------------------------


def _daily_log_ratio(fleet) -> pd.Series:
    ok = fleet.attempts[fleet.attempts["status"].astype(str) == "ok"]
    ratio = np.log(ok["throughput"] / ok["expected_throughput"])
    return ratio.groupby(ok["submit_time"].dt.floor("D")).mean()


def test_day_shocks_move_whole_days():
    calm = simulate("tiny", days=12, seed=1, day_shock_sigma=0.0, hardware_day_shock_sigma=0.0)
    shaken = simulate("tiny", days=12, seed=1, day_shock_sigma=0.1, hardware_day_shock_sigma=0.0)
    assert _daily_log_ratio(calm).std() < 0.02
    assert _daily_log_ratio(shaken).std() > 0.05
    # the truth does not know the day: only measured throughput moves
    np.testing.assert_allclose(
        shaken.expected_throughput(shaken.attempts.head(50), ["H100-80GB-SXM5"])["expected_throughput"],
        calm.expected_throughput(calm.attempts.head(50), ["H100-80GB-SXM5"])["expected_throughput"],
    )


def test_model_types_appear_part_way_and_families_drift():
    fleet = simulate("small", days=20, seed=0, new_families=2, new_model_share=0.1)
    models, log = fleet.models, fleet.attempts
    start = pd.Timestamp(fleet.params["start"])
    late = models[models["_first_job"] > start]
    assert len(late) > 70  # about 10% of 700 plus two whole families
    assert late["model_family"].nunique() >= 2
    first_run = log.groupby("model_type", observed=True)["submit_time"].min()
    seen_late = first_run.reindex(late["model_type"].astype(str)).dropna()
    assert len(seen_late) > 20
    appears = late.set_index(late["model_type"].astype(str))["_first_job"].reindex(seen_late.index)
    assert (seen_late >= appears).all()
    # popularity trends differ by family (one value per family)
    trend = models.groupby("model_family", observed=True)["_popularity_trend"].agg(["min", "max"])
    assert (trend["min"] == trend["max"]).all() and trend["min"].std() > 0.3


def test_jobs_change_configuration_between_runs():
    changing = simulate("tiny", days=10, seed=3, config_change_rate=0.3)
    steady = simulate("tiny", days=10, seed=3, config_change_rate=0.0)
    for fleet, expect_changes in ((changing, True), (steady, False)):
        configs = fleet.attempts.groupby("job_id")[["batch_size", "trainer_count", "precision"]].nunique()
        assert (configs.max(axis=1) > 1).any() == expect_changes
    # a job's first run keeps the job's launch configuration
    first = changing.attempts.sort_values("submit_time").drop_duplicates("job_id")
    jobs = changing.jobs.set_index("job_id").loc[first["job_id"]]
    assert (first["batch_size"].to_numpy() == jobs["batch_size"].to_numpy()).all()
    assert (first["trainer_count"].to_numpy() == jobs["trainer_count"].to_numpy()).all()


def test_placement_leans_to_what_the_scheduler_believes():
    def share_on_best(fleet):
        jobs = fleet.jobs
        types = fleet.hardware["hardware_type"].astype(str).tolist()
        truth = fleet.expected_throughput(jobs, types).pivot(
            index="job_id", columns="hardware_type", values="expected_throughput"
        )
        cost = fleet.hardware.set_index(fleet.hardware["hardware_type"].astype(str))["cost_per_device_hour"]
        per_cost = truth / cost.reindex(truth.columns).to_numpy()
        candidates = jobs.set_index("job_id")[["_home_hardware", "_alternative_1", "_alternative_2"]].astype(str)
        values = np.column_stack([
            per_cost.to_numpy()[np.arange(len(per_cost)), per_cost.columns.get_indexer(candidates.loc[per_cost.index, c])]
            for c in candidates.columns
        ])
        best = pd.Series(candidates.to_numpy()[np.arange(len(values)), np.nan_to_num(values, nan=-1).argmax(axis=1)],
                         index=per_cost.index)
        log = fleet.attempts
        distinct = candidates.nunique(axis=1) > 1
        on = log["job_id"].map(distinct).to_numpy(bool)
        return float((log["hardware_type"].astype(str).to_numpy() == log["job_id"].map(best).to_numpy())[on].mean())

    blind = simulate("tiny", days=10, seed=4, selection_strength=0.0, config_change_rate=0.0)
    believing = simulate("tiny", days=10, seed=4, selection_strength=3.0, config_change_rate=0.0)
    assert share_on_best(believing) > share_on_best(blind) + 0.05


def test_peak_memory_is_what_a_completed_run_needed_and_moves_nothing_else():
    noisy = simulate("tiny", days=8, seed=3)
    exact = simulate("tiny", days=8, seed=3, peak_memory_noise=0.0)
    without = simulate("tiny", days=8, seed=3, peak_memory=False)
    assert "peak_memory_gb" not in without.attempts.columns
    pd.testing.assert_frame_equal(noisy.attempts.drop(columns="peak_memory_gb"), without.attempts)
    a = exact.attempts.assign(noisy=noisy.attempts["peak_memory_gb"])
    specs = exact.hardware.set_index("hardware_type")
    a["memory"] = a["hardware_type"].astype(str).map(specs["memory_gb"]).astype(float)
    a["per_host"] = a["hardware_type"].astype(str).map(specs["devices_per_host"]).astype(float)
    ok = (a["status"] == "ok").to_numpy()
    assert a.loc[~ok, "peak_memory_gb"].isna().all() and a.loc[ok, "peak_memory_gb"].notna().all()
    assert (a.loc[ok, "noisy"] <= a.loc[ok, "memory"]).all()
    spread = np.log(a.loc[ok, "noisy"] / a.loc[ok, "peak_memory_gb"])
    assert 0.02 < spread.std() < 0.04
    # one need per job and configuration (devices per host shard tensor parallelism)
    config = ["job_id", "trainer_count", "batch_size", "precision", "parallelism", "per_host"]
    needs = a[ok].groupby(config, observed=True)["peak_memory_gb"]
    assert (needs.max() / needs.min()).max() < 1 + 1e-9
    # and an out-of-memory run needed more than its device holds
    need = needs.max().rename("need").reset_index()
    oom = a[a["status"] == "oom"].merge(need, on=config)
    assert len(oom) > 0
    assert (oom["need"] > 0.95 * oom["memory"]).all()
