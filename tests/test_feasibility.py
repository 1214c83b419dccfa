"""The feasibility model: learned from ok vs oom, used by place(), saved with the model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from test_features import make_catalog, make_log

from leapml import LeapRegressor
from leapml.feasibility import FeasibilityClassifier
from leapml.features import PeakLog, build_features
from leapml.fleet import simulate
from leapml.model_file import load_feasibility, save
from leapml.placement import (
    EVIDENCE_COLUMNS,
    FEASIBILITY_FEATURES,
    MEMORY_FLOOR_COLUMNS,
    MEMORY_FLOOR_LOAD,
    MONOTONE_FEATURES,
    fit_feasibility,
    fit_window,
    place,
)
from leapml.ranking import rank_candidates
from leapml.schema import LAUNCH_COLUMNS
from leapml.training import RULE_FACTOR, feasibility_model, with_measured_peaks

SMALL_MEMORY_GB = 64  # the catalog's V100 (32 GB, the cheapest type) is the only one below


def _log(seed):
    """A log where batch-256 jobs run out of memory below 64 GB and every type is as fast.

    By throughput per cost the cheapest type, the V100, would then win every job.
    """
    catalog = make_catalog(5)
    log = make_log(seed, 1200, n_jobs=120, catalog=catalog)
    memory = log["hardware_type"].astype(str).map(catalog.set_index("hardware_type")["memory_gb"])
    oom = (log["batch_size"] >= 256).to_numpy() & (memory < SMALL_MEMORY_GB).to_numpy()
    status = np.where(oom, "oom", "ok")
    log["status"] = pd.Categorical(status, categories=log["status"].cat.categories)
    rng = np.random.default_rng(seed)
    log["throughput"] = np.where(status == "ok", 100.0 * np.exp(rng.normal(0, 0.02, len(log))),
                                 np.nan)
    return log, catalog


def _models(log, catalog):
    model = fit_window(log, catalog, window_days=400,
                       model=LeapRegressor(n_bins=2, n_estimators=10, random_state=0))
    feasibility = fit_feasibility(log, catalog, window_days=400)
    return model, feasibility


def _big_jobs(log):
    jobs = log.loc[log["batch_size"] >= 256, ["job_id", *LAUNCH_COLUMNS]]
    return jobs.drop_duplicates("job_id")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_job_too_large_for_small_memory_is_never_ranked_first_there(seed):
    log, catalog = _log(seed)
    model, feasibility = _models(log, catalog)
    jobs = _big_jobs(log)
    assert len(jobs) > 3
    blind = place(model, jobs, catalog, history=log, top_k=1)
    # without the feasibility model the cheapest type wins, though the jobs cannot run there
    assert (blind["hardware_type"] == "V100").mean() > 0.5
    ranked = place(model, jobs, catalog, history=log, feasibility=feasibility)
    first = ranked[ranked["rank"] == 1]
    assert not (first["hardware_type"] == "V100").any()
    on_v100 = ranked[ranked["hardware_type"] == "V100"]
    assert not on_v100["rankable"].any()
    assert (on_v100["reason"] == "fit probability below threshold").all()
    assert (on_v100["fit_probability"] < 0.5).all()


def test_small_jobs_still_fit_on_small_memory():
    log, catalog = _log(0)
    _, feasibility = _models(log, catalog)
    X = build_features(log, catalog)[FEASIBILITY_FEATURES]
    small = (log["batch_size"] <= 8).to_numpy() & (log["hardware_type"] == "V100").to_numpy()
    assert small.any()
    assert np.median(feasibility.fit_probability(X[small])) > 0.5


def test_known_feasibility_replaces_the_learned_one():
    log, catalog = _log(0)
    model, _ = _models(log, catalog)
    jobs = _big_jobs(log).head(2)
    types = catalog["hardware_type"].tolist()
    known = pd.DataFrame([(j, h, h == "H100") for j in jobs["job_id"] for h in types],
                         columns=["job_id", "hardware_type", "feasible"])
    ranked = place(model, jobs, catalog, history=log, feasibility=known)
    first = ranked[ranked["rank"] == 1]
    assert (first["hardware_type"] == "H100").all()
    assert ranked.loc[ranked["hardware_type"] != "H100", "rankable"].eq(False).all()
    with pytest.raises(ValueError, match="no row for 5 candidate"):
        place(model, jobs, catalog, history=log, feasibility=known.iloc[5:])
    # a row's <NA> is "unknown", as in rank_candidates: it blocks nothing
    unsure = known.assign(feasible=known["feasible"].astype("boolean"))
    unsure.loc[unsure["hardware_type"] == "A100", "feasible"] = pd.NA
    ranked = place(model, jobs, catalog, history=log, feasibility=unsure)
    unknown = ranked[ranked["hardware_type"] == "A100"]
    assert len(unknown) == 2 and unknown["fit_probability"].isna().all() and unknown["rankable"].all()
    assert ranked.loc[~ranked["hardware_type"].isin(["H100", "A100"]), "rankable"].eq(False).all()
    with pytest.raises(ValueError, match="must be boolean"):
        place(model, jobs, catalog, history=log, feasibility=known.assign(feasible="yes"))
    with pytest.raises(TypeError, match="fit_probability"):
        place(model, jobs, catalog, history=log, feasibility="learned")


def test_untried_family_on_a_type_gets_no_chance():
    log, catalog = _log(0)
    # the llm family never ran on the MI250X
    keep = ~((log["model_family"] == "llm") & (log["hardware_type"] == "MI250X")).to_numpy()
    _, feasibility = _models(log[keep], catalog)
    model, _ = _models(log, catalog)
    jobs = log.loc[log["model_family"] == "llm", ["job_id", *LAUNCH_COLUMNS]].drop_duplicates("job_id")
    ranked = place(model, jobs.head(3), catalog, history=log[keep], feasibility=feasibility)
    assert (ranked.loc[ranked["hardware_type"] == "MI250X", "fit_probability"] == 0).all()


def test_a_family_new_to_the_log_is_left_to_the_classifier_on_every_type():
    """The evidence rule keeps a known family off a type it never ran on; a family the log
    never saw fit anywhere is no evidence against any type, so it is not kept off all."""
    log, catalog = _log(0)
    keep = ~((log["model_family"] == "llm") & (log["hardware_type"] == "MI250X")).to_numpy()
    model, feasibility = _models(log[keep], catalog)
    jobs = log.loc[log["model_family"] == "llm", ["job_id", *LAUNCH_COLUMNS]].drop_duplicates("job_id")
    new = jobs.head(3).assign(job_id=lambda j: j["job_id"].astype(str) + "-new",
                              model_family="a-family-never-logged", model_type="a-new-type")
    ranked = place(model, pd.concat([jobs.head(3), new]), catalog, history=log[keep],
                   feasibility=feasibility)
    is_new = ranked["job_id"].astype(str).str.endswith("-new")
    on_mi250x = ranked["hardware_type"] == "MI250X"
    assert (ranked.loc[~is_new & on_mi250x, "fit_probability"] == 0).all()
    assert (ranked.loc[is_new, "fit_probability"] > 0).all()
    # and each new job gets a rankable type, the reason the rule exists notwithstanding
    assert ranked.loc[is_new].groupby("job_id")["rankable"].any().all()


def test_feasibility_travels_in_the_model_file(tmp_path):
    log, catalog = _log(0)
    model, feasibility = _models(log, catalog)
    path = save(model, tmp_path / "model.leap", feasibility=feasibility)
    again = load_feasibility(path)
    X = build_features(log, catalog)[FEASIBILITY_FEATURES]
    np.testing.assert_array_equal(again.fit_probability(X), feasibility.fit_probability(X))
    assert again.get_params() == feasibility.get_params()
    assert again.memory_floor_ == feasibility.memory_floor_ and feasibility.memory_floor_[0]
    assert again.memory_ceiling_ == feasibility.memory_ceiling_ and feasibility.memory_ceiling_[0]
    assert load_feasibility(save(model, tmp_path / "bare.leap")) is None


def test_min_fit_probability_is_checked():
    log, catalog = _log(0)
    model, feasibility = _models(log, catalog)
    with pytest.raises(ValueError, match="min_fit_probability"):
        place(model, _big_jobs(log).head(1), catalog, history=log, feasibility=feasibility,
              min_fit_probability=1.5)


def _fits_by_memory(n=300):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"memory_gb": rng.uniform(8, 192, n),
                      "gpu": pd.Categorical(rng.choice(["a100", "h100"], n))})
    status = pd.Series(np.where(X["memory_gb"] > 40, "ok", "oom"))
    return X, status


@pytest.mark.parametrize("dtype", ["string[python]", "string[pyarrow]"])
def test_a_pandas_boolean_target_stays_boolean(dtype):
    X, status = _fits_by_memory()
    fits = status.astype(dtype).eq("ok")  # boolean, nullable or Arrow, for a string column
    assert fits.dtype != bool
    clf = FeasibilityClassifier(n_estimators=5, random_state=0).fit(X, fits)
    plain = FeasibilityClassifier(n_estimators=5, random_state=0).fit(X, fits.to_numpy(bool))
    assert clf.classes_.tolist() == [False, True] and clf.classes_.dtype == bool
    np.testing.assert_array_equal(clf.fit_probability(X), plain.fit_probability(X))
    with pytest.raises(ValueError, match="1 missing label"):
        FeasibilityClassifier(n_estimators=5).fit(X, fits.astype("boolean").where(X.index != 3))


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_an_array_is_read_as_the_frame_the_classifier_was_fitted_on():
    X, status = _fits_by_memory()
    clf = FeasibilityClassifier(n_estimators=5, random_state=0).fit(X, status)
    np.testing.assert_array_equal(clf.fit_probability(X.to_numpy()), clf.fit_probability(X))
    np.testing.assert_array_equal(clf.predict(X.to_numpy(dtype=object)), clf.predict(X))
    with pytest.raises(ValueError, match="column 'memory_gb' was numeric in fit"):
        clf.fit_probability(X[["gpu", "memory_gb"]].to_numpy())
    with pytest.raises(ValueError, match="expecting 2 features"):
        clf.fit_probability(X[["memory_gb"]].to_numpy())


def test_evidence_columns_need_a_frame():
    with pytest.raises(TypeError, match="DataFrame"):
        FeasibilityClassifier(evidence_columns=[("a", "b")]).fit(np.zeros((4, 2)), [1, 0, 1, 0])


def _never_tried_small(seed):
    """The log of :func:`_log` without any attempt of a batch-256 job on the V100.

    The scheduler never put those jobs there, so the log holds no ``oom`` to learn
    that they do not fit.
    """
    log, catalog = _log(seed)
    tried = ~((log["batch_size"] >= 256) & (log["hardware_type"] == "V100")).to_numpy()
    return log[tried].reset_index(drop=True), catalog


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_job_never_run_on_small_memory_is_not_let_onto_it(seed):
    log, catalog = _never_tried_small(seed)
    model, feasibility = _models(log, catalog)
    jobs = _big_jobs(log)
    ranked = place(model, jobs, catalog, history=log, feasibility=feasibility)
    assert not (ranked.loc[ranked["rank"] == 1, "hardware_type"] == "V100").any()
    on_v100 = ranked[ranked["hardware_type"] == "V100"]
    # kept out by the memory floor: far below any threshold (the floor's factor)
    assert (on_v100["fit_probability"] <= RULE_FACTOR).all()
    # the jobs of the same model types that did complete on the V100 keep it
    X = build_features(log, catalog)[FEASIBILITY_FEATURES]
    small = (log["batch_size"] <= 8).to_numpy() & (log["hardware_type"] == "V100").to_numpy()
    assert small.any()
    assert np.median(feasibility.fit_probability(X[small])) > 0.5




def test_memory_override_columns_trust_the_classifier_only_where_similar_work_fitted(tmp_path):
    X = pd.DataFrame({
        "model_type": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
        "model_family": ["f"] * 8 + ["g"] * 4,
        "memory_gb": [80.0] * 4 + [40.0, 40.0, 24.0, 24.0] + [16.0] * 4,
        "batch_size": [8] * 4 + [16, 16, 4, 4] + [64] * 4,
    })
    fits = np.array([True] * 8 + [False] * 4)
    # "a" at batch 8: its floor is 80 GB; its family fitted batch 16 on 40 GB, only batch 4 on 24 GB
    query = pd.DataFrame({"model_type": ["a"] * 3, "model_family": ["f"] * 3,
                          "memory_gb": [24.0, 40.0, 80.0], "batch_size": [8] * 3})
    common = {"n_estimators": 3, "min_child_samples": 1, "random_state": 0,
              "memory_floor_columns": [("model_type",)], "memory_floor_load": {"batch_size": 1},
              "memory_floor_override": 1e-9}  # a bar every answer passes: the backing decides
    bar_alone = FeasibilityClassifier(**common).fit(X, fits).fit_probability(query)
    backed = FeasibilityClassifier(memory_override_columns=[("model_family",)],
                                   memory_override_load={"batch_size": 1},
                                   **common).fit(X, fits).fit_probability(query)
    assert (bar_alone > 0).all()
    assert backed[0] == 0 and backed[1] == bar_alone[1] and backed[2] == bar_alone[2]
    # the backing travels in the model file
    clf = FeasibilityClassifier(memory_override_columns=[("model_family",)],
                                memory_override_load={"batch_size": 1}, **common).fit(X, fits)
    model = LeapRegressor(n_bins=2, n_estimators=3, min_bin_rows=1, random_state=0).fit(
        np.arange(40.0).reshape(-1, 1), np.exp(np.arange(40.0) / 10))
    again = load_feasibility(save(model, tmp_path / "model.leap", feasibility=clf))
    assert again.memory_override_ == clf.memory_override_ and again.get_params() == clf.get_params()
    np.testing.assert_array_equal(again.fit_probability(query), backed)
    with pytest.raises(ValueError, match="memory_override_load"):
        FeasibilityClassifier(memory_override_columns=[("model_family",)],
                              memory_override_load={"batch_size": 3}).fit(X, fits)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_memory_floor_override_alone_trusts_a_classifier_where_the_log_is_silent(seed):
    # why fit_feasibility keeps its floors whole: below a floor the log holds no oom,
    # and a nearly certain classifier sends every big job where it cannot fit
    log, catalog = _never_tried_small(seed)
    model, _ = _models(log, catalog)
    overridden = fit_feasibility(log, catalog, window_days=400, model=FeasibilityClassifier(
        evidence_columns=list(EVIDENCE_COLUMNS), monotone=dict(MONOTONE_FEATURES),
        memory_floor_columns=list(MEMORY_FLOOR_COLUMNS), memory_floor_load=dict(MEMORY_FLOOR_LOAD),
        memory_ceiling_columns=list(MEMORY_FLOOR_COLUMNS), memory_floor_override=0.999,
        random_state=0))
    jobs = _big_jobs(log)
    first = place(model, jobs, catalog, history=log, feasibility=overridden).query("rank == 1")
    assert len(first) == jobs["job_id"].nunique() > 0
    assert (first["hardware_type"] == "V100").all()
    # backed by the family's work (none as heavy ran on the V100), the override keeps them off
    backed = fit_feasibility(log, catalog, window_days=400, model=clone(overridden).set_params(
        memory_override_columns=[("model_family", "precision", "parallelism")],
        memory_override_load={**MEMORY_FLOOR_LOAD, "model_state_gb_per_device": 1}))
    first = place(model, jobs, catalog, history=log, feasibility=backed).query("rank == 1")
    assert not (first["hardware_type"] == "V100").any()


def test_memory_floor_counts_only_configurations_needing_as_much():
    X = pd.DataFrame({"model_type": ["a"] * 6 + ["b"] * 2,
                      "memory_gb": [16.0, 80.0, 40.0, 80.0, 40.0, 16.0, 24.0, 80.0],
                      "batch_size": [8, 64, 32, 64, 32, 8, 4, 4]})
    fits = np.array([True, True, True, False, False, True, True, True])
    clf = FeasibilityClassifier(n_estimators=3, min_child_samples=1,
                                memory_floor_columns=[("model_type",)],
                                memory_floor_load={"batch_size": 1}).fit(X, fits)
    query = pd.DataFrame({"model_type": ["a", "a", "a", "a", "b", "c"],
                          "memory_gb": [24.0, 24.0, 48.0, 40.0, 16.0, 8.0],
                          "batch_size": [8, 32, 32, 128, 4, 1]})
    p = clf.fit_probability(query)
    # batch 8 completed on 16 GB: 24 GB is above its floor; batch 32 only on >= 40 GB
    assert p[0] > 0 and p[1] == 0 and p[2] > 0
    # heavier than anything seen: the model type's smallest memory (16 GB) is the floor
    assert p[3] > 0
    # below the only memory "b" completed on; "c" never completed: no floor
    assert p[4] == 0 and p[5] > 0
    with pytest.raises(ValueError, match="memory_floor_load"):
        FeasibilityClassifier(memory_floor_columns=[("model_type",)],
                              memory_floor_load={"batch_size": 2}).fit(X, fits)
    with pytest.raises(ValueError, match="memory_floor_columns"):
        FeasibilityClassifier(memory_floor_columns=[("model_family",)]).fit(X, fits)


@pytest.mark.parametrize(("ratio", "kept_out"), [(1.0, [True, True, False]), (0.75, [True, False, False])])
def test_memory_floor_ratio_lets_memory_just_below_the_floor_through(ratio, kept_out):
    X = pd.DataFrame({"model_type": ["a"] * 4, "memory_gb": [80.0, 80.0, 96.0, 141.0]})
    fits = np.array([True, True, True, True])
    clf = FeasibilityClassifier(n_estimators=3, min_child_samples=1, memory_floor_ratio=ratio,
                                memory_floor_columns=[("model_type",)]).fit(X, fits)
    # floor 80 GB: 40 GB is half of it, 64 GB four fifths, 80 GB the floor itself
    p = clf.fit_probability(pd.DataFrame({"model_type": ["a"] * 3, "memory_gb": [40.0, 64.0, 80.0]}))
    assert ((p == 0) == np.array(kept_out)).all()
    with pytest.raises(ValueError, match="memory_floor_ratio"):
        FeasibilityClassifier(memory_floor_ratio=0.0).fit(X, fits)



def test_memory_floor_override_keeps_the_classifiers_probability_only_above_the_bar():
    rng = np.random.default_rng(0)
    memory = rng.choice([16.0, 24.0, 40.0, 80.0], size=400)
    # type "a" completed only on 80 GB; the others on everything, running out below 20 GB
    model_type = np.where(np.arange(400) < 100, "a", "b")
    keep = (model_type == "b") | (memory == 80.0)
    X = pd.DataFrame({"model_type": model_type, "memory_gb": memory})[keep].reset_index(drop=True)
    fits = np.where(X["model_type"] == "a", True, X["memory_gb"] > 20.0)
    query = pd.DataFrame({"model_type": ["a"] * 3, "memory_gb": [16.0, 40.0, 80.0]})

    def probability(**params):
        return FeasibilityClassifier(n_estimators=20, min_child_samples=5, random_state=0,
                                     **params).fit(X, fits).fit_probability(query)

    free = probability()  # the classifier alone: no floor
    floored = probability(memory_floor_columns=[("model_type",)])
    assert floored[0] == 0 and floored[1] == 0 and floored[2] == free[2]
    # a bar between the classifier's answers on 16 and 40 GB lets 40 GB through, not 16 GB
    assert free[0] < 0.5 < free[1]
    bar = (free[0] + free[1]) / 2
    overridden = probability(memory_floor_columns=[("model_type",)], memory_floor_override=bar)
    np.testing.assert_array_equal(overridden, [0.0, free[1], free[2]])
    with pytest.raises(ValueError, match="memory_floor_override"):
        FeasibilityClassifier(memory_floor_override=1.5).fit(X, fits)


def test_memory_ceiling_keeps_a_configuration_off_memory_a_lighter_one_ran_out_of():
    X = pd.DataFrame({"model_type": ["a"] * 5 + ["b"] * 2,
                      "memory_gb": [80.0, 40.0, 80.0, 24.0, 16.0, 80.0, 16.0],
                      "batch_size": [32, 32, 64, 8, 8, 4, 4]})
    fits = np.array([True, False, True, True, False, True, False])
    clf = FeasibilityClassifier(n_estimators=3, min_child_samples=1,
                                memory_ceiling_columns=[("model_type",)],
                                memory_floor_load={"batch_size": 1}).fit(X, fits)
    query = pd.DataFrame({"model_type": ["a", "a", "a", "a", "a", "b", "c"],
                          "memory_gb": [40.0, 48.0, 24.0, 16.0, 40.0, 16.0, 8.0],
                          "batch_size": [64, 64, 16, 8, 16, 4, 1]})
    p = clf.fit_probability(query)
    # batch 32 ran out of 40 GB: batch 64 does too, on 40 GB or less, not on 48 GB
    assert p[0] == 0 and p[1] > 0
    # batch 16 needs more than batch 8, which ran out of 16 GB: 16 GB is out, 24 GB is not
    assert p[3] == 0 and p[2] > 0
    # batch 16 needs less than batch 32, which ran out of 40 GB: that says nothing of it
    assert p[4] > 0
    # "b" ran out of 16 GB at the same load; "c" never ran out: no ceiling
    assert p[5] == 0 and p[6] > 0
    plain = FeasibilityClassifier(n_estimators=3, min_child_samples=1).fit(X, fits)
    assert plain.memory_ceiling_ == [] and plain.fit_probability(query)[0] > 0


def _with_peaks(log, catalog, seed):
    """``log`` with the peak memory its completed runs held: 1 GB plus 0.13 GB a sample of batch."""
    memory = log["hardware_type"].astype(str).map(catalog.set_index("hardware_type")["memory_gb"])
    rng = np.random.default_rng(seed)
    need = (1 + 0.13 * log["batch_size"].to_numpy(float)) * np.exp(rng.normal(0, 0.03, len(log)))
    peak = np.minimum(need, memory.to_numpy(float))
    return log.assign(peak_memory_gb=np.where(log["status"] == "ok", peak, np.nan))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_memory_need_learned_from_peaks_lets_in_what_the_floors_kept_out(seed):
    # batch-32 and -64 jobs (5 to 10 GB) never ran on the 32 GB V100: the floors keep them
    # out; the peaks their runs held elsewhere say they fit there, and that batch 256 does not
    log, catalog = _log(seed)
    log = _with_peaks(log, catalog, seed)
    medium = log["batch_size"].isin([32, 64]).to_numpy()
    log = log[~(medium & (log["hardware_type"] == "V100").to_numpy())].reset_index(drop=True)
    model, floors_only = _models(log.drop(columns="peak_memory_gb"), catalog)
    assert floors_only.memory_need_ is None
    learned = fit_feasibility(log, catalog, window_days=400)
    assert learned.memory_need_ is not None
    jobs = log.loc[log["batch_size"].isin([32, 64]), ["job_id", *LAUNCH_COLUMNS]].drop_duplicates("job_id")
    assert len(jobs) > 10

    def on_v100(feasibility, which):
        ranked = place(model, which, catalog, history=log, feasibility=feasibility)
        return ranked.loc[ranked["hardware_type"] == "V100", "fit_probability"].to_numpy()

    assert (on_v100(floors_only, jobs) >= 0.5).mean() < 0.1
    assert (on_v100(learned, jobs) >= 0.5).all()
    assert (on_v100(learned, _big_jobs(log)) < 0.5).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_a_memory_need_keeps_big_jobs_off_memory_the_log_never_tried_them_on(seed):
    # the hazard of the floor override: the log holds no oom of a batch-256 job on the V100
    log, catalog = _never_tried_small(seed)
    log = _with_peaks(log, catalog, seed)
    model, _ = _models(log, catalog)
    learned = fit_feasibility(log, catalog, window_days=400)
    jobs = _big_jobs(log)
    first = place(model, jobs, catalog, history=log, feasibility=learned).query("rank == 1")
    assert len(first) == jobs["job_id"].nunique() > 0
    assert not (first["hardware_type"] == "V100").any()


def test_the_memory_need_travels_in_the_model_file_and_needs_its_columns(tmp_path):
    log, catalog = _log(0)
    log = _with_peaks(log, catalog, 0)
    model, _ = _models(log, catalog)
    learned = fit_feasibility(log, catalog, window_days=400)
    X = with_measured_peaks(build_features(log, catalog)[FEASIBILITY_FEATURES], learned, log,
                            PeakLog.of(log, catalog), catalog)
    back = load_feasibility(save(model, tmp_path / "m.leap", feasibility=learned))
    assert back.memory_need_margin_ == learned.memory_need_margin_
    np.testing.assert_array_equal(back.predict_memory_need(X), learned.predict_memory_need(X))
    np.testing.assert_array_equal(back.fit_probability(X), learned.fit_probability(X))
    with pytest.raises(ValueError, match="memory_need_features"):
        learned.fit_probability(X.drop(columns="batch_size"))
    with pytest.raises(ValueError, match="peak_memory_gb has"):
        clone(learned).fit(X, log["status"] == "ok", peak_memory_gb=np.ones(3))
    # too few peaks to learn from: no need model, the floors answer alone
    few = np.where(np.arange(len(X)) < 10, 5.0, np.nan)
    assert clone(learned).fit(X, log["status"] == "ok", peak_memory_gb=few).memory_need_ is None


def _every_type_ruled_out(rule_factor):
    """A classifier whose memory rules keep a batch-16 job of model ``m`` off every type.

    ``m`` completed at batch 8 only on 80 GB (its floor: 16 and 40 GB are
    below it) and ran out of memory at batch 12 on 80 GB (its ceiling: every
    type at or below 80 GB); model ``n`` teaches the classifier that more
    memory fits more.
    """
    rng = np.random.default_rng(0)
    memory = rng.choice([16.0, 40.0, 80.0], size=300)
    batch = rng.choice([8.0, 16.0, 32.0], size=300)
    fits = batch * 2 < memory
    frame = pd.DataFrame({"model_type": "n", "batch_size": batch, "memory_gb": memory})
    frame = pd.concat([frame, pd.DataFrame({"model_type": "m", "batch_size": [8.0, 12.0],
                                            "memory_gb": [80.0, 80.0]})], ignore_index=True)
    frame["model_type"] = frame["model_type"].astype("category")
    keys = [("model_type",)]
    clf = FeasibilityClassifier(n_estimators=20, min_child_samples=5, random_state=0,
                                memory_floor_columns=keys, memory_ceiling_columns=keys,
                                memory_floor_load={"batch_size": 1},
                                monotone={"memory_gb": 1, "batch_size": -1},
                                rule_factor=rule_factor)
    clf.fit(frame, np.r_[fits, True, False])
    query = pd.DataFrame({"model_type": pd.Categorical(["m"] * 3, categories=["m", "n"]),
                          "batch_size": 16.0, "memory_gb": [16.0, 40.0, 80.0]})
    return clf.fit_probability(query)


def test_a_job_every_type_of_which_a_memory_rule_keeps_out_still_gets_its_likeliest():
    # 16 and 40 GB break both rules, 80 GB only the ceiling
    p = _every_type_ruled_out(RULE_FACTOR)
    assert (p > 0).all() and (p <= RULE_FACTOR).all()
    assert np.argmax(p) == 2 and p[2] > 1000 * p[:2].max()
    candidates = pd.DataFrame({"job_id": 1, "hardware_type": ["small", "mid", "large"],
                               "predicted_throughput": 100.0, "trainer_count": 1})
    cost = {"small": 1.0, "mid": 2.0, "large": 4.0}
    for objective in ("throughput_per_cost", "expected_throughput_per_cost"):
        picked = rank_candidates(candidates.assign(fit_probability=p), cost=cost, top_k=1,
                                 if_none_fit="most_likely", objective=objective)
        assert picked["hardware_type"].tolist() == ["large"]
    # with the rules at 0 the tie among zeros goes to the cheapest type, where it cannot run
    zeros = _every_type_ruled_out(0.0)
    assert (zeros == 0).all()
    blind = rank_candidates(candidates.assign(fit_probability=zeros), cost=cost, top_k=1,
                            if_none_fit="most_likely", objective="throughput_per_cost")
    assert blind["hardware_type"].tolist() == ["small"]


def _activation_bound_log(seed):
    """Nine model types whose need grows with the FLOPs of a trainer's step (activations)."""
    rng = np.random.default_rng(seed)
    types = [f"t{i}" for i in range(9)]
    flops = dict(zip(types, np.geomspace(1, 200, 9), strict=True))
    model_type = rng.choice(types, 3000)
    batch = rng.choice([1, 2, 4, 8, 16, 32, 64], 3000).astype(float)
    per_sample = np.array([flops[t] for t in model_type])
    need = (1 + 0.02 * per_sample * batch) * np.exp(rng.normal(0, 0.03, 3000))
    X = pd.DataFrame({"model_type": pd.Categorical(model_type, categories=types),
                      "batch_size": batch, "flops_per_sample": per_sample,
                      "memory_gb": rng.choice([16.0, 24.0, 40.0, 80.0, 141.0], 3000)})
    return X, need


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_flops_of_a_step_carry_a_need_to_a_model_type_the_log_never_saw(seed):
    # trees split on one column at a time: without the product, a new type's need is pieced
    # together from its neighbours' and misses by tens of percent; with it, by a few
    X, need = _activation_bound_log(seed)
    new = (X["model_type"] == "t4").to_numpy()
    fits = need < X["memory_gb"].to_numpy()
    errors = {}
    for products in (None, [("flops_per_sample", "batch_size")]):
        clf = FeasibilityClassifier(n_estimators=50, random_state=0,
                                    memory_need_features=["model_type", "batch_size", "flops_per_sample"],
                                    memory_need_products=products)
        clf.fit(X[~new], fits[~new], peak_memory_gb=np.where(fits, need, np.nan)[~new])
        predicted = clf.predict_memory_need(X[new])
        errors[products is None] = np.median(np.abs(np.log(predicted / need[new])))
    assert errors[False] < 0.1 < errors[True]


def test_a_need_model_product_must_name_numeric_columns():
    X, need = _activation_bound_log(0)
    fits = need < X["memory_gb"].to_numpy()
    for products, message in (([("flops_per_sample", "nope")], "nope"),
                              (["flops_per_sample"], "list of tuples"),
                              ([("model_type", "batch_size")], "numeric")):
        clf = FeasibilityClassifier(n_estimators=5, memory_need_features=["batch_size"],
                                    memory_need_products=products)
        with pytest.raises(ValueError, match=message):
            clf.fit(X, fits, peak_memory_gb=need)
    # without a need model there is nothing to predict
    plain = FeasibilityClassifier(n_estimators=5).fit(X[["batch_size", "memory_gb"]], fits)
    assert np.isnan(plain.predict_memory_need(X[["batch_size", "memory_gb"]].head(3))).all()


def test_fit_feasibility_reads_the_columns_a_need_product_multiplies_and_saves_them(tmp_path):
    fleet = simulate("tiny", days=6, seed=0)
    products = [("flops_per_sample", "batch_size")]
    learned = fit_feasibility(fleet.attempts, fleet.hardware, window_days=5,
                              model=feasibility_model(memory_need_products=products,
                                                      n_estimators=10))
    assert "flops_per_sample" in learned.feature_names_in_
    assert learned.memory_need_ is not None
    X = with_measured_peaks(build_features(fleet.attempts, fleet.hardware), learned,
                            fleet.attempts, PeakLog.of(fleet.attempts, fleet.hardware),
                            fleet.hardware)[list(learned.feature_names_in_)]
    need = learned.predict_memory_need(X)
    assert np.isfinite(need).all() and (need > 0).all()
    model = LeapRegressor(n_estimators=5, min_bin_rows=10, random_state=0).fit(
        build_features(fleet.attempts.head(200), fleet.hardware),
        fleet.attempts["throughput"].head(200).fillna(1.0))
    back = load_feasibility(save(model, tmp_path / "m.leap", feasibility=learned))
    assert back.memory_need_products == products
    np.testing.assert_array_equal(back.predict_memory_need(X), need)
    np.testing.assert_array_equal(back.fit_probability(X), learned.fit_probability(X))


@pytest.mark.parametrize("labels", [(True, False), ("ok", "oom")])
def test_a_monotone_constraint_is_on_the_chance_of_fitting_whatever_the_labels(labels):
    """With labels "ok"/"oom" the booster scores "oom" (classes_[1]): a constraint on the
    chance of fitting must turn round for it, or it fights the data and flattens the model."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"memory_gb": rng.choice([16.0, 24.0, 40.0, 80.0, 141.0], 2000),
                      "batch_size": rng.choice([8.0, 32.0, 128.0, 512.0], 2000)})
    fits = (X["memory_gb"] > 0.3 * X["batch_size"] + rng.normal(0, 10, 2000)).to_numpy()
    y = np.where(fits, *labels)
    grid = pd.DataFrame({"memory_gb": [16.0, 24.0, 40.0, 80.0, 141.0], "batch_size": 128.0})
    p = FeasibilityClassifier(n_estimators=50, random_state=0,
                              monotone={"memory_gb": 1}).fit(X, y).fit_probability(grid)
    assert (np.diff(p) >= 0).all()
    assert p[0] < 0.1 and p[-1] > 0.9
