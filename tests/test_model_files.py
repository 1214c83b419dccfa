"""Safe model files: bit-identical round trips, refusals, and pickle/joblib."""

import hashlib
import io
import json
import pickle
import zipfile

import joblib
import numpy as np
import pytest
from _synthetic import make_throughput_regression
from lightgbm import LGBMClassifier, LGBMRegressor
from sklearn.tree import DecisionTreeRegressor

import leapml
from leapml import LeapRegressor
from leapml.model_file import MODEL_FORMAT_VERSION, ModelFileError, load, save


@pytest.fixture(scope="module")
def data():
    return make_throughput_regression(400, random_state=3)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return LeapRegressor(n_bins=5, max_iter=3, n_estimators=10, combine="soft",
                         router="multiclass", min_bin_rows=1, random_state=0).fit(X, y)


def test_round_trip_is_bit_identical(tmp_path, data, fitted):
    X, _ = data
    path = save(fitted, tmp_path / "model.leap")
    loaded = leapml.load(path)
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(loaded.predict_bin_proba(X), fitted.predict_bin_proba(X))
    assert loaded.get_params()["combine"] == "soft"
    np.testing.assert_array_equal(loaded.bin_edges_, fitted.bin_edges_)
    np.testing.assert_array_equal(loaded.train_loss_, fitted.train_loss_)
    assert loaded.categories_ == fitted.categories_
    assert list(loaded.feature_names_in_) == list(fitted.feature_names_in_)


def test_every_parameter_survives_a_round_trip(tmp_path, data):
    """A parameter the file forgets comes back as its default: a later refit of the loaded
    configuration would then fit another model. Each is set off its default here."""
    X, y = data
    defaults = LeapRegressor().get_params(deep=False)
    changed = {"cold_start": 0.05, "cold_start_hardware": 0.1, "n_bins": 4, "max_iter": 2,
               "tol": 0.02, "n_estimators": 7, "expert_overlap": 0.25, "min_bin_rows": 3,
               "combine": "hard", "router": "multiclass",
               "reassign_window": 3, "router_max_rows": 5_000, "history_prior": 2.0,
               "n_jobs": 1, "random_state": 5, "expert_weight": 0.3, "anchor": None}
    model = LeapRegressor(**changed).fit(X, y)
    loaded = load(save(model, tmp_path / "m.leap")).get_params(deep=False)
    assert all(changed[k] != defaults[k] for k in changed)
    assert set(loaded) == set(defaults)
    for name, value in model.get_params(deep=False).items():
        if name in ("regressor", "classifier", "base") and value is not None and value != "lightgbm":
            assert loaded[name].get_params() == value.get_params(), name
        else:
            assert loaded[name] == value, name


def test_round_trip_with_user_lightgbm_models_and_numpy(tmp_path):
    X, y = make_throughput_regression(300, random_state=4, as_frame=False)
    model = LeapRegressor(n_bins=4, random_state=1, router="multiclass", min_bin_rows=1,
                          regressor=LGBMRegressor(n_estimators=7, verbose=-1),
                          classifier=LGBMClassifier(n_estimators=7, verbose=-1)).fit(X, y)
    loaded = load(save(model, tmp_path / "m.leap"))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params()["regressor"].get_params()["n_estimators"] == 7


def test_round_trip_of_an_ordinal_router_and_older_files_without_one(tmp_path, data, fitted):
    X, y = data
    model = LeapRegressor(n_bins=5, n_estimators=10, router="ordinal", random_state=0).fit(X, y)
    path = save(model, tmp_path / "ordinal.leap")
    loaded = load(path)
    assert loaded.get_params()["router"] == "ordinal"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_bin_proba(X), model.predict_bin_proba(X))

    # files written before the parameter existed hold a multiclass router
    drop_router = _metadata_edit(lambda metadata: metadata["params"].pop("router"))
    old = load(_rewrite(save(fitted, tmp_path / "m.leap"), tmp_path / "old.leap", drop_router))
    assert old.get_params()["router"] == "multiclass"


def test_older_files_anchor_as_their_parameter_and_a_bad_anchor_is_refused(tmp_path, data):
    X, y = data
    model = LeapRegressor(n_bins=3, n_estimators=5, random_state=0, anchor=None).fit(X, y)
    path = save(model, tmp_path / "m.leap")

    # a file written before anchor_ existed: the experts corrected the parameter's column
    old = load(_rewrite(path, tmp_path / "old.leap",
                        _metadata_edit(lambda m: m["fitted"].pop("anchor_"))))
    assert old.anchor_ is None
    np.testing.assert_array_equal(old.predict(X), model.predict(X))
    bad = _rewrite(path, tmp_path / "bad.leap",
                   _metadata_edit(lambda m: m["fitted"].update(anchor_="auto")))
    with pytest.raises(ValueError, match="anchor_ is not a column name"):
        load(bad)


def test_round_trip_of_constant_experts(tmp_path):
    X = np.arange(6, dtype=float).reshape(-1, 1)
    model = LeapRegressor(random_state=0).fit(X, np.full(6, 3.0))
    loaded = load(save(model, tmp_path / "c.leap"))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_round_trip_of_a_feasibility_model_of_three_classes(tmp_path, data, fitted):
    from leapml.feasibility import FeasibilityClassifier
    from leapml.model_file import load_feasibility

    X, _ = data
    status = np.where(X["batch_size"] > X["batch_size"].median(), "ok", "oom").astype(object)
    status[::7] = "failed"
    clf = FeasibilityClassifier(n_estimators=5, random_state=0).fit(X, status)
    path = save(fitted, tmp_path / "model.leap", feasibility=clf)
    back = load_feasibility(path)
    assert back.classes_.tolist() == ["failed", "ok", "oom"]
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(back.fit_probability(X), clf.fit_probability(X))
    np.testing.assert_array_equal(load(path).predict(X), fitted.predict(X))

    # classes that do not match the model's outputs, checksums matching
    two_classes = _metadata_edit(lambda m: m["feasibility"].update(classes_=["ok", "oom"]))

    with pytest.raises(ModelFileError, match="has 3 outputs, expected 1"):
        load_feasibility(_rewrite(path, tmp_path / "two.leap", two_classes))


def _metadata_edit(change):
    """An edit for :func:`_rewrite`: ``change(metadata)``, the manifest's checksum kept true."""
    def edit(members):
        metadata = json.loads(members["metadata.json"])
        change(metadata)
        members["metadata.json"] = json.dumps(metadata).encode()
        manifest = json.loads(members["manifest.json"])
        manifest["members"]["metadata.json"] = hashlib.sha256(members["metadata.json"]).hexdigest()
        members["manifest.json"] = json.dumps(manifest).encode()
    return edit


def _rewrite(path, out, edit):
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    edit(members)
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out


def test_tampered_member_is_refused(tmp_path, fitted):
    path = save(fitted, tmp_path / "model.leap")

    def tamper(members):
        name = next(n for n in members if n.startswith("regressors/"))
        members[name] = members[name].replace(b"leaf_value=", b"leaf_value=1", 1)

    bad = _rewrite(path, tmp_path / "bad.leap", tamper)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load(bad)


def test_unknown_version_is_refused(tmp_path, fitted):
    path = save(fitted, tmp_path / "model.leap")

    def bump(members):
        manifest = json.loads(members["manifest.json"])
        manifest["format_version"] = MODEL_FORMAT_VERSION + 1
        members["manifest.json"] = json.dumps(manifest).encode()

    with pytest.raises(ModelFileError, match="format version 2"):
        load(_rewrite(path, tmp_path / "v2.leap", bump))


def test_missing_member_is_refused(tmp_path, fitted):
    path = save(fitted, tmp_path / "model.leap")
    with pytest.raises(ModelFileError, match="missing"):
        load(_rewrite(path, tmp_path / "cut.leap", lambda m: m.pop("classifier.txt")))


def test_truncated_and_foreign_files_are_refused(tmp_path, fitted):
    raw = save(fitted, tmp_path / "model.leap").read_bytes()
    (tmp_path / "half.leap").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFileError):
        load(tmp_path / "half.leap")
    (tmp_path / "text.leap").write_text("not a model")
    with pytest.raises(ModelFileError, match="not a leapml model file"):
        load(tmp_path / "text.leap")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", json.dumps({"format": "other"}))
    (tmp_path / "other.leap").write_bytes(buffer.getvalue())
    with pytest.raises(ModelFileError, match="not a leapml model file"):
        load(tmp_path / "other.leap")
    assert issubclass(ModelFileError, ValueError)


def test_non_lightgbm_models_point_to_pickle(tmp_path):
    X, y = make_throughput_regression(100, random_state=0, as_frame=False)
    model = LeapRegressor(n_bins=2, regressor=DecisionTreeRegressor(max_depth=2),
                          n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="pickle"):
        save(model, tmp_path / "tree.leap")
    assert not (tmp_path / "tree.leap").exists()


def test_failed_save_keeps_the_previous_file(tmp_path, fitted):
    path = save(fitted, tmp_path / "model.leap")
    before = path.read_bytes()
    X, y = make_throughput_regression(100, random_state=0, as_frame=False)
    other = LeapRegressor(n_bins=2, regressor=DecisionTreeRegressor(), n_estimators=5).fit(X, y)
    with pytest.raises(ValueError):
        save(other, path)
    assert path.read_bytes() == before


def test_pickle_and_joblib_keep_working(tmp_path, data, fitted):
    X, _ = data
    expected = fitted.predict(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fitted)).predict(X), expected)
    joblib.dump(fitted, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").predict(X), expected)


def test_old_io_module_forwards_with_a_deprecation_warning():
    import leapml.files
    import leapml.io
    import leapml.model_file

    with pytest.warns(DeprecationWarning, match=r"leapml\.io\.save moved to leapml\.model_file"):
        assert leapml.io.save is leapml.model_file.save
    with pytest.warns(DeprecationWarning, match=r"leapml\.files\.read_table"):
        from leapml.io import read_table
    assert read_table is leapml.files.read_table
    with pytest.raises(AttributeError, match="no attribute 'pickle'"):
        leapml.io.pickle  # noqa: B018


def test_save_method_is_deprecated_for_the_function(tmp_path, data, fitted):
    X, _ = data
    with pytest.warns(DeprecationWarning, match=r"leapml\.save\(model, path\)"):
        path = fitted.save(tmp_path / "method.leap")
    np.testing.assert_array_equal(load(path).predict(X), fitted.predict(X))



def test_older_files_fitted_the_rounds_their_parameter_names(tmp_path, data):
    X, y = data
    model = LeapRegressor(n_bins=3, n_estimators=6, random_state=0).fit(X, y)
    path = save(model, tmp_path / "m.leap")

    # written before n_estimators_ existed, when n_estimators was always a count
    old = load(_rewrite(path, tmp_path / "old.leap",
                        _metadata_edit(lambda m: m["fitted"].pop("n_estimators_"))))
    assert old.n_estimators_ == 6
    np.testing.assert_array_equal(old.predict(X), model.predict(X))

    def auto_without_rounds(metadata):
        metadata["params"]["n_estimators"] = "auto"
        metadata["fitted"].pop("n_estimators_")

    with pytest.raises(ModelFileError, match="n_estimators_ is not a count"):
        load(_rewrite(path, tmp_path / "bad.leap", _metadata_edit(auto_without_rounds)))
