"""The safe model file format: a fitted LeapRegressor (and its feasibility model) as a zip.

The file holds JSON and LightGBM model text, checked by SHA-256, and nothing in
it is ever unpickled. This module imports the estimators it stores; they never
import it (save with :func:`leapml.save`, read with :func:`leapml.load`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
import zlib
from pathlib import Path

import lightgbm as lgb
import numpy as np
from lightgbm.basic import LightGBMError
from sklearn.utils.validation import check_is_fitted

from leapml import __version__
from leapml._cascade import ConstantModel
from leapml._conformal import MondrianIntervals
from leapml._encoding import ColumnEncoder
from leapml._lightgbm_text import checked_model_text
from leapml.feasibility import FeasibilityClassifier
from leapml.files import atomic_path
from leapml.regressor import LeapRegressor

__all__ = ["MODEL_FORMAT", "MODEL_FORMAT_VERSION", "ModelFileError", "load", "load_feasibility", "save"]

#: What a LeapRegressor parameter meant in files written before it existed.
_BEFORE_PARAMETER = {"router": "multiclass", "combine": "hard", "expert_overlap": 0.0,
                     "min_bin_rows": 1, "anchor": None, "reassign_window": 2,
                     "router_max_rows": 200_000, "base": None, "history_prior": None,
                     "cold_start": 0.0, "cold_start_hardware": 0.0, "expert_weight": 1.0}

#: FeasibilityClassifier parameters that hold a list of column tuples (JSON has no tuple).
_KEY_LIST_PARAMETERS = ("evidence_columns", "memory_floor_columns", "memory_ceiling_columns",
                        "memory_override_columns", "memory_need_products")

#: Name written in every model file, so that other files are refused.
MODEL_FORMAT = "leapml-model"
#: Version of the model file layout this module writes and reads.
MODEL_FORMAT_VERSION = 1
_MANIFEST = "manifest.json"
_METADATA = "metadata.json"
# Only these estimator classes are rebuilt from a model file; nothing is imported by name.
_LIGHTGBM_CLASSES = ("LGBMRegressor", "LGBMClassifier")


class ModelFileError(ValueError):
    """A model file that cannot be read: not ours, another version, truncated or altered.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "not-a-model.leap"
    >>> _ = path.write_bytes(b"hello")
    >>> try:
    ...     load(path)
    ... except ModelFileError:
    ...     print("refused")
    refused
    """


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_value(value, what):
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"cannot save {what}={value!r} in the safe model format: it is not plain data. "
            "Use pickle or joblib instead, and only load such files from a trusted source."
        ) from err
    return value


def _estimator_spec(estimator, what):
    if estimator is None:
        return None
    if not isinstance(estimator, lgb.LGBMModel) or type(estimator).__name__ not in _LIGHTGBM_CLASSES:
        raise _not_lightgbm(f"{what}={type(estimator).__name__}")
    params = {k: _json_value(v, f"{what}.{k}") for k, v in estimator.get_params().items()}
    return {"class": type(estimator).__name__, "params": params}


def _estimator_from_spec(spec):
    if spec is None:
        return None
    _expect(isinstance(spec, dict) and isinstance(spec.get("params"), dict),
            "an estimator entry is not an object with 'class' and 'params'")
    if spec.get("class") not in _LIGHTGBM_CLASSES:
        raise ModelFileError(f"unknown estimator class in model file: {spec.get('class')!r}")
    return getattr(lgb, spec["class"])(**spec["params"])


def _submodel_entry(model, member, members, what):
    if isinstance(model, ConstantModel):
        return {"kind": "constant", "value": float(model.value)}
    if isinstance(model, lgb.LGBMModel):
        model = model.booster_
    if isinstance(model, lgb.Booster):
        members[member] = model.model_to_string().encode("utf-8")
        return {"kind": "lightgbm", "member": member}
    raise _not_lightgbm(f"{what} of type {type(model).__name__}")


def _not_lightgbm(what):
    return ValueError(f"cannot save {what} in the safe model format, which stores LightGBM "
                      "models only. Use pickle or joblib instead, and only load such files "
                      "from a trusted source.")


def _submodel_from_entry(entry, members, n_features, n_classes):
    """A sub-model from its metadata entry, checked to fit the model around it."""
    _expect(isinstance(entry, dict), "a sub-model entry is not a JSON object")
    if entry.get("kind") == "constant":
        value = entry["value"]
        _expect(isinstance(value, (int, float)) and math.isfinite(value),
                "a constant sub-model has no finite value")
        return ConstantModel(float(value))
    if entry.get("kind") != "lightgbm":
        raise ModelFileError(f"unknown sub-model kind in model file: {entry.get('kind')!r}")
    member = entry.get("member")
    _expect(isinstance(member, str) and member in members and member not in (_METADATA,),
            f"sub-model member {member!r} is not in the file")
    text = checked_model_text(members[member].decode("utf-8"))
    booster = lgb.Booster(model_str=text)
    _expect(booster.num_feature() == n_features,
            f"{member} reads {booster.num_feature()} features, the model {n_features}")
    classes = booster.num_model_per_iteration()
    _expect(classes == n_classes, f"{member} has {classes} outputs, expected {n_classes}")
    return booster


def save(model, path: str | os.PathLike, *, feasibility=None) -> Path:
    """Save a fitted :class:`~leapml.LeapRegressor` to ``path`` in the safe model format.

    The file is a zip archive holding ``manifest.json`` (format name, format
    version and the SHA-256 of every other member), ``metadata.json``
    (parameters, fitted arrays, category mappings) and one LightGBM model text
    per sub-model. Nothing in it is ever unpickled. Only LightGBM sub-models
    (the defaults, or ``LGBMRegressor`` / ``LGBMClassifier``) can be stored;
    for other estimators use pickle or joblib, and load such files only from a
    trusted source. The write is atomic.

    Parameters
    ----------
    model : LeapRegressor
        A fitted model.
    path : str or path-like
        Where to write (conventionally ``*.leap``).
    feasibility : FeasibilityClassifier, optional
        A fitted :class:`~leapml.feasibility.FeasibilityClassifier` to store
        beside the model (read back with :func:`load_feasibility`).

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from lightgbm import LGBMClassifier, LGBMRegressor
    >>> from leapml import LeapRegressor
    >>> X = np.arange(40.0).reshape(-1, 1)
    >>> model = LeapRegressor(n_bins=2, min_bin_rows=10, random_state=0, router="multiclass",
    ...                       regressor=LGBMRegressor(n_estimators=5, verbose=-1),
    ...                       classifier=LGBMClassifier(n_estimators=5, verbose=-1))
    >>> model = model.fit(X, np.exp(X[:, 0] / 10))
    >>> path = save(model, pathlib.Path(tempfile.mkdtemp()) / "model.leap")
    >>> bool(np.array_equal(load(path).predict(X), model.predict(X)))
    True
    """
    if not isinstance(model, LeapRegressor):
        raise TypeError(f"save expects a LeapRegressor, got {type(model).__name__}")
    check_is_fitted(model)
    params = model.get_params(deep=False)
    random_state = params["random_state"]
    if random_state is not None and not isinstance(random_state, (int, np.integer)):
        raise ValueError(
            "cannot save random_state of type "
            f"{type(random_state).__name__} in the safe model format; use an int or None"
        )
    members: dict[str, bytes] = {}
    metadata = {
        "estimator": "LeapRegressor",
        "leapml_version": __version__,
        "params": {
            **{name: int(params[name]) for name in ("n_bins", "max_iter")},
            "tol": float(params["tol"]),
            "combine": params["combine"],
            **{name: params[name] if isinstance(params[name], str) else kind(params[name])
               for name, kind in (("n_estimators", int), ("expert_weight", float))},
            "n_jobs": None if params["n_jobs"] is None else int(params["n_jobs"]),
            "random_state": None if random_state is None else int(random_state),
            "regressor": _estimator_spec(params["regressor"], "regressor"),
            "classifier": _estimator_spec(params["classifier"], "classifier"),
            "router": str(params["router"]),
            "expert_overlap": float(params["expert_overlap"]),
            "min_bin_rows": int(params["min_bin_rows"]),
            "anchor": None if params["anchor"] is None else str(params["anchor"]),
            "base": params["base"] if params["base"] in (None, "lightgbm")
            else _estimator_spec(params["base"], "base"),
            "monotone_increasing": None if params["monotone_increasing"] is None
            else [str(c) for c in params["monotone_increasing"]],
            "history_columns": None if params["history_columns"] is None
            else [str(c) for c in params["history_columns"]],
            **{name: None if params[name] is None else kind(params[name]) for name, kind in
               (("history_prior", float), ("reassign_window", int), ("router_max_rows", int))},
            **{name: float(params[name]) for name in ("cold_start", "cold_start_hardware")},
        },
        "fitted": {
            "anchor_fill_": float(model.anchor_fill_),
            "expert_weight_": float(model.expert_weight_),
            "n_estimators_": int(model.n_estimators_),
            "anchor_": model._anchor_name(),
            "history_columns_in_": None if model.history_columns_in_ is None
            else [int(j) for j in model.history_columns_in_],
            "bin_edges_": [float(v) for v in model.bin_edges_],
            "n_bins_": int(model.n_bins_),
            "n_iter_": int(model.n_iter_),
            "moved_": [float(v) for v in model.moved_],
            "train_loss_": [float(v) for v in model.train_loss_],
            "n_features_in_": int(model.n_features_in_),
            "feature_names_in_": ([str(v) for v in model.feature_names_in_]
                                  if hasattr(model, "feature_names_in_") else None),
            "column_labels_": getattr(model, "_column_labels", None),  # labels not text
            "complete_columns_": getattr(model, "_complete_columns", None),
            "categories_": _json_value([None if c is None else list(c) for c in model.categories_],
                                       "categories_"),
        },
        "regressors_": [_submodel_entry(m, f"regressors/{k:03d}.txt", members, f"regressors_[{k}]")
                        for k, m in enumerate(model.regressors_)],
        "classifier_": _submodel_entry(model.classifier_, "classifier.txt", members, "classifier_"),
        "base_": None if model.base_ is None
        else _submodel_entry(model.base_, "base.txt", members, "base_"),
    }
    if feasibility is not None:
        metadata["feasibility"] = _feasibility_entry(feasibility, members)
    if hasattr(model, "calibration_"):
        metadata["calibration_"] = _json_value(
            {key: list(values) for key, values in model.calibration_.items()}, "calibration_")
    members[_METADATA] = json.dumps(metadata, indent=1, sort_keys=True).encode("utf-8")
    manifest = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "members": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    path = Path(path)
    members = {_MANIFEST: json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8"),
               **dict(sorted(members.items()))}
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w") as archive:
            for name, data in members.items():
                archive.writestr(_member_info(name), data)
    return path


def _member_info(name):
    """A zip entry with a fixed date and mode, so that one model always gives the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def load(path: str | os.PathLike):
    """Load a model written by :func:`save`; never unpickles.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        (a :class:`ValueError`) if the file is not a leapml model file, was
        written in an unknown format version, or is truncated or altered (a
        member's SHA-256 does not match the manifest).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "notes.leap"
    >>> _ = bad.write_text("hello")
    >>> load(bad)
    Traceback (most recent call last):
    ...
    leapml.model_file.ModelFileError: ...notes.leap is not a leapml model file (not a zip archive)
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    members = _read_members(path)
    try:
        return _model_from_members(members)
    except ModelFileError as err:
        raise ModelFileError(f"{path}: {err}") from None
    except _malformed_errors() as err:
        # json's and the text check's errors are ValueErrors
        detail = f"missing key {err}" if isinstance(err, KeyError) else str(err)
        raise ModelFileError(
            f"{path} holds malformed model data ({type(err).__name__}: {detail})"
        ) from err


def _malformed_errors() -> tuple[type[BaseException], ...]:
    """What reading malformed metadata or LightGBM text can raise (json's and the text
    check's errors are ValueErrors)."""
    return (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError, LightGBMError)


# What reading a damaged zip member can raise: a bad deflate stream, an
# unsupported compression or version, an encrypted member, a bad header.
_ARCHIVE_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError,
                   EOFError, ValueError, OverflowError)


def _read_members(path):
    """Every member the manifest lists, checked against its SHA-256."""
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; a leapml model is one file (save, leapml fit --out)")
    raw = path.read_bytes()  # an unreadable file raises its own OSError
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except _ARCHIVE_ERRORS as err:
        raise ModelFileError(f"{path} is not a leapml model file (not a zip archive)") from err
    with archive:
        names = set(archive.namelist())
        if _MANIFEST not in names:
            raise ModelFileError(f"{path} is not a leapml model file (no {_MANIFEST})")
        try:
            manifest = json.loads(archive.read(_MANIFEST))
            if not isinstance(manifest, dict):
                raise ValueError("manifest is not an object")
        except _ARCHIVE_ERRORS as err:
            raise ModelFileError(f"{path}: unreadable manifest ({err})") from err
        if manifest.get("format") != MODEL_FORMAT:
            raise ModelFileError(f"{path} is not a leapml model file (format "
                                 f"{manifest.get('format')!r})")
        version = manifest.get("format_version")
        if version != MODEL_FORMAT_VERSION:
            raise ModelFileError(
                f"{path} uses model format version {version!r}; this leapml reads version "
                f"{MODEL_FORMAT_VERSION}. Use a matching leapml version to read it."
            )
        expected = manifest.get("members")
        if not isinstance(expected, dict) or _METADATA not in expected:
            raise ModelFileError(f"{path}: the manifest lists no metadata member")
        members = {}
        for name, digest in expected.items():
            if name not in names:
                raise ModelFileError(f"{path} is truncated: member {name!r} is missing")
            try:
                data = archive.read(name)
            except _ARCHIVE_ERRORS as err:
                raise ModelFileError(f"{path} is truncated or corrupted: {err}") from err
            if not isinstance(digest, str) or _sha256(data) != digest:
                raise ModelFileError(
                    f"{path} was altered or corrupted: checksum mismatch for member {name!r}"
                )
            members[name] = data
    return members


def _model_from_members(members):
    """The model the members describe; raises on any inconsistency among them."""

    metadata = json.loads(members[_METADATA].decode("utf-8"))
    _expect(isinstance(metadata, dict), "metadata is not a JSON object")
    if metadata.get("estimator") != "LeapRegressor":
        raise ModelFileError(f"unknown estimator {metadata.get('estimator')!r}")
    params = _section(metadata, "params")
    unknown = sorted(set(params) - set(LeapRegressor().get_params(deep=False)))
    _expect(not unknown, f"unknown parameter(s) {unknown}")
    params["regressor"] = _estimator_from_spec(params.get("regressor"))
    params["classifier"] = _estimator_from_spec(params.get("classifier"))
    if isinstance(params.get("base"), dict):
        params["base"] = _estimator_from_spec(params["base"])
    for name in ("history_columns", "monotone_increasing"):
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    # a parameter missing from an older file takes the value it had before it existed
    params = {**_BEFORE_PARAMETER, **params}
    model = LeapRegressor(**params)
    model._validate_params()
    fitted = _section(metadata, "fitted")
    model.bin_edges_ = np.asarray(fitted["bin_edges_"], dtype=np.float64)
    model.n_bins_ = _count(fitted["n_bins_"], "n_bins_")
    _expect(model.n_bins_ >= 1, "n_bins_ is 0")
    model.n_iter_ = _count(fitted["n_iter_"], "n_iter_")
    # older files fitted the rounds they name
    model.n_estimators_ = _count(fitted.get("n_estimators_", params["n_estimators"]), "n_estimators_")
    for key, before in (("anchor_fill_", 0.0), ("expert_weight_", 1.0)):  # older files lack them
        value = fitted.get(key, before)
        _expect(isinstance(value, (int, float)) and math.isfinite(value), f"{key} is not a number")
        setattr(model, key, float(value))
    model.moved_ = np.asarray(fitted["moved_"], dtype=np.float64)
    model.train_loss_ = np.asarray(fitted["train_loss_"], dtype=np.float64)
    model.n_features_in_ = n_features = _count(fitted["n_features_in_"], "n_features_in_")
    _expect(model.bin_edges_.shape == (model.n_bins_ + 1,), "bin_edges_ does not fit n_bins_")
    names = _per_feature(fitted, "feature_names_in_", n_features, lambda v: isinstance(v, str))
    if names is not None:
        model.feature_names_in_ = np.asarray(names, dtype=object)
    model._column_labels = _per_feature(fitted, "column_labels_", n_features,
                                        lambda p: isinstance(p, list) and [type(t) for t in p] == [str, str])
    model._complete_columns = _per_feature(fitted, "complete_columns_", n_features,
                                           lambda v: isinstance(v, bool))
    categories = _per_feature(fitted, "categories_", n_features, lambda c: c is None or isinstance(c, list))
    _expect(categories is not None, "categories_ is missing")
    model.categories_ = categories
    model.encoder_ = ColumnEncoder(categories, names)
    entries = metadata["regressors_"]
    _expect(isinstance(entries, list) and len(entries) == model.n_bins_,
            "regressors_ does not hold one entry per bin")
    model.regressors_ = [_submodel_from_entry(e, members, n_features, 1) for e in entries]
    classes = 1 if model.router == "ordinal" else model.n_bins_
    model.classifier_ = _submodel_from_entry(metadata["classifier_"], members, n_features, classes)
    base = metadata.get("base_")
    model.base_ = None if base is None else _submodel_from_entry(base, members, n_features, 1)
    _expect((model.base_ is None) == (model.base is None), "the base model does not match its parameter")
    columns = fitted.get("history_columns_in_")
    _expect(columns is None or (isinstance(columns, list) and len(columns) == 2
                                and all(isinstance(j, int) and 0 <= j < n_features for j in columns)),
            "history_columns_in_ is not two column positions")
    model.history_columns_in_ = None if columns is None else tuple(columns)
    model.anchor_ = fitted.get("anchor_", model.anchor)  # older files: the parameter, as fitted
    _expect(model.anchor_ is None or (isinstance(model.anchor_, str) and model.anchor_ != "auto"),
            "anchor_ is not a column name")
    if model.router != "ordinal" and not hasattr(model.classifier_, "num_feature"):
        # a constant router names the one bin every row goes to
        _expect(0 <= model.classifier_.value < model.n_bins_, "the router names a bin out of range")
    calibration = metadata.get("calibration_")
    if calibration is not None:
        _expect(isinstance(calibration, dict) and set(calibration) == {"residuals", "bins", "groups"}
                and all(isinstance(v, list) for v in calibration.values())
                and len({len(v) for v in calibration.values()}) == 1,
                "calibration_ is not residuals, bins and groups of one length")
        _expect(all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                    for x in calibration["residuals"]), "calibration residuals are not numbers")
        _expect(all(isinstance(b, int) and 0 <= b < model.n_bins_ for b in calibration["bins"]),
                "calibration bins are not bins of the model")
        _expect(all(isinstance(g, str) for g in calibration["groups"]), "calibration groups: not text")
        model.calibration_ = dict(calibration)
        model.intervals_ = MondrianIntervals(model.calibration_)
    return model


def _expect(condition, problem):
    if not condition:
        raise ModelFileError(f"malformed model data: {problem}")


def _per_feature(fitted, key, n_features, valid):
    """A list of one entry per feature (None where the file has none, as files of earlier
    versions lack the later ones), each checked by ``valid``."""
    value = fitted.get(key)
    _expect(value is None or isinstance(value, list) and len(value) == n_features
            and all(map(valid, value)), f"{key} is not a list of n_features_in_ entries")
    return value


def _section(metadata, key):
    value = metadata[key]
    _expect(isinstance(value, dict), f"{key!r} is not a JSON object")
    return dict(value)


def _count(value, what):
    _expect(isinstance(value, int) and not isinstance(value, bool) and value >= 0,
            f"{what} is not a count")
    return value


def _feasibility_entry(classifier, members):
    """The metadata of a fitted FeasibilityClassifier; its booster goes into ``members``."""
    if not isinstance(classifier, FeasibilityClassifier):
        raise TypeError(f"feasibility must be a FeasibilityClassifier, got {type(classifier).__name__}")
    check_is_fitted(classifier)
    params = classifier.get_params(deep=False)
    if params["random_state"] is not None and not isinstance(params["random_state"], int):
        raise ValueError("cannot save a feasibility random_state that is not an int or None")
    classes = classifier.classes_.tolist()
    booster = None
    if classifier.booster_ is not None:
        booster = _submodel_entry(classifier.booster_, "feasibility.txt", members, "feasibility")
    need = getattr(classifier, "memory_need_", None)
    if need is not None:
        need = _submodel_entry(need, "feasibility_memory_need.txt", members, "the memory need")
    return {
        "params": {**params, **{name: None if params[name] is None
                                else [list(key) for key in params[name]]
                                for name in _KEY_LIST_PARAMETERS}},
        "classes_": _json_value(classes, "feasibility classes_"),
        "categories_": _json_value([None if c is None else list(c) for c in classifier.categories_],
                                   "feasibility categories_"),
        "n_features_in_": int(classifier.n_features_in_),
        "feature_names_in_": ([str(v) for v in classifier.feature_names_in_]
                              if hasattr(classifier, "feature_names_in_") else None),
        "evidence_": [sorted(list(pair) for pair in seen) for seen in classifier.evidence_],
        **{name: [sorted([list(pair), rows] for pair, rows in limits.items())
                  for limits in getattr(classifier, name)]
           for name in ("memory_floor_", "memory_ceiling_", "memory_override_")},
        "booster_": booster,
        "memory_need_": need,
        "memory_need_margin_": None if need is None else float(classifier.memory_need_margin_),
        "memory_measured_margin_": _finite_or_none(
            getattr(classifier, "memory_measured_margin_", math.nan)),
    }


def _finite_or_none(value):
    """A float for JSON: ``None`` for NaN."""
    return None if math.isnan(value) else float(value)


def load_feasibility(path: str | os.PathLike):
    """The feasibility classifier saved beside the model in ``path``, or None if it has none.

    Raises
    ------
    FileNotFoundError, ModelFileError
        As :func:`load`.

    Examples
    --------
    >>> import numpy as np, pandas as pd, tempfile, pathlib
    >>> from leapml import LeapRegressor
    >>> from leapml.feasibility import FeasibilityClassifier
    >>> X = pd.DataFrame({"memory_gb": np.arange(40.0)})
    >>> model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(X, np.exp(X["memory_gb"] / 10))
    >>> clf = FeasibilityClassifier(n_estimators=5, min_child_samples=2).fit(X, X["memory_gb"] > 9)
    >>> path = save(model, pathlib.Path(tempfile.mkdtemp()) / "model.leap", feasibility=clf)
    >>> bool(np.array_equal(load_feasibility(path).fit_probability(X), clf.fit_probability(X)))
    True
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    members = _read_members(path)
    try:
        return _feasibility_from_members(members)
    except ModelFileError as err:
        raise ModelFileError(f"{path}: {err}") from None
    except _malformed_errors() as err:
        raise ModelFileError(
            f"{path} holds malformed feasibility data ({type(err).__name__}: {err})"
        ) from err


def _feasibility_from_members(members):
    metadata = json.loads(members[_METADATA].decode("utf-8"))
    _expect(isinstance(metadata, dict), "metadata is not a JSON object")
    entry = metadata.get("feasibility")
    if entry is None:
        return None
    _expect(isinstance(entry, dict), "feasibility is not a JSON object")
    params = _section(entry, "params")
    for name in _KEY_LIST_PARAMETERS:
        if params.get(name) is not None:
            params[name] = [tuple(key) for key in params[name]]
    unknown = sorted(set(params) - set(FeasibilityClassifier().get_params(deep=False)))
    _expect(not unknown, f"unknown feasibility parameter(s) {unknown}")
    classifier = FeasibilityClassifier(**params)
    classifier._validate_params()
    classifier.classes_ = np.asarray(entry["classes_"])
    classifier.categories_ = entry["categories_"]
    classifier.encoder_ = ColumnEncoder(entry["categories_"], entry["feature_names_in_"])
    classifier.n_features_in_ = n_features = _count(entry["n_features_in_"], "n_features_in_")
    if entry["feature_names_in_"] is not None:
        classifier.feature_names_in_ = np.asarray(entry["feature_names_in_"], dtype=object)
    classifier.evidence_ = [{tuple(pair) for pair in seen} for seen in entry["evidence_"]]
    # a file written before memory floors (ceilings, backing) existed has none
    for name in ("memory_floor_", "memory_ceiling_", "memory_override_"):
        setattr(classifier, name, [{tuple(pair): rows for pair, rows in limits}
                                   for limits in entry.get(name, [])])
    # a file written before the memory need existed has none
    need = entry.get("memory_need_")
    for name in ("memory_need_margin_", "memory_measured_margin_"):  # none in earlier files
        value = entry.get(name)
        _expect(value is None or isinstance(value, (int, float)), f"{name} is not a number")
        setattr(classifier, name, math.nan if value is None else float(value))
    classifier.memory_need_ = None if need is None else _submodel_from_entry(
        need, members, len(params.get("memory_need_features") or [])
        + len(params.get("memory_need_products") or []), 1)
    booster = entry["booster_"]
    # LightGBM's binary model has one output, its multiclass model one per class
    n_classes = len(classifier.classes_)
    classifier.booster_ = None if booster is None else _submodel_from_entry(
        booster, members, n_features + (need is not None), n_classes if n_classes > 2 else 1)
    return classifier
