"""Reading and writing: attempt logs and catalogs as Parquet, models as safe files.

Every write is atomic: the bytes go to a temporary file beside the target,
which is then renamed over it, so an interrupted run leaves the previous file
intact and never a half-written one.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

__all__ = ["ModelFileError", "atomic_path", "load", "load_feasibility", "read_table", "save",
           "write_table"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    If the body raises (or the process is interrupted), the temporary file is
    removed and ``path`` keeps its previous content.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix + ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a DataFrame to ``path`` atomically, as Parquet or CSV by extension.

    Parquet (``.parquet``) keeps categories, timestamps and nullable integers
    across a round trip; CSV (``.csv``) is for people and spreadsheets.

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> frame = pd.DataFrame({"hardware_type": pd.Categorical(["H100", "MI300X"])})
    >>> read_table(write_table(frame, path))["hardware_type"].dtype.name
    'category'
    """
    path = Path(path)
    fmt = _format_of(path)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, engine="pyarrow", index=False)
        else:
            frame.to_csv(tmp, index=False)
    return path


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a Parquet or CSV table written by :func:`write_table` or by a user.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    IsADirectoryError
        If ``path`` is a directory.
    ValueError
        If the file cannot be parsed as the format its extension names.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("job_id,batch_size\\n7,32\\n")
    >>> read_table(path)["batch_size"].tolist()
    [32]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    fmt = _format_of(path)
    if path.is_dir():
        # pyarrow would read a folder as a dataset, even an empty or foreign one
        raise IsADirectoryError(f"{path} is a directory, not a {fmt} file")
    try:
        if fmt == "parquet":
            return pd.read_parquet(path, engine="pyarrow")
        return pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"{path} is not a readable {fmt} file: {err}") from err


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise ValueError(f"{path}: unknown table format {suffix!r}; use .parquet or .csv")


# -- model files ---------------------------------------------------------------

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
    import lightgbm as lgb

    if estimator is None:
        return None
    if not isinstance(estimator, lgb.LGBMModel) or type(estimator).__name__ not in _LIGHTGBM_CLASSES:
        raise ValueError(
            f"cannot save {what}={type(estimator).__name__} in the safe model format, which "
            "stores LightGBM models only. Use pickle or joblib instead, and only load such "
            "files from a trusted source."
        )
    params = {k: _json_value(v, f"{what}.{k}") for k, v in estimator.get_params().items()}
    return {"class": type(estimator).__name__, "params": params}


def _estimator_from_spec(spec):
    import lightgbm as lgb

    if spec is None:
        return None
    if spec.get("class") not in _LIGHTGBM_CLASSES:
        raise ModelFileError(f"unknown estimator class in model file: {spec.get('class')!r}")
    return getattr(lgb, spec["class"])(**spec["params"])


def _submodel_entry(model, member, members, what):
    import lightgbm as lgb

    from leapml._cascade import ConstantModel

    if isinstance(model, ConstantModel):
        return {"kind": "constant", "value": float(model.value)}
    if isinstance(model, lgb.LGBMModel):
        model = model.booster_
    if isinstance(model, lgb.Booster):
        members[member] = model.model_to_string().encode("utf-8")
        return {"kind": "lightgbm", "member": member}
    raise ValueError(
        f"cannot save {what} of type {type(model).__name__} in the safe model format, which "
        "stores LightGBM models only. Use pickle or joblib instead, and only load such files "
        "from a trusted source."
    )


def _submodel_from_entry(entry, members):
    import lightgbm as lgb

    from leapml._cascade import ConstantModel

    if entry.get("kind") == "constant":
        return ConstantModel(float(entry["value"]))
    if entry.get("kind") == "lightgbm":
        return lgb.Booster(model_str=members[entry["member"]].decode("utf-8"))
    raise ModelFileError(f"unknown sub-model kind in model file: {entry.get('kind')!r}")


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
    >>> model = LeapRegressor(n_bins=2, random_state=0,
    ...                       regressor=LGBMRegressor(n_estimators=5, verbose=-1),
    ...                       classifier=LGBMClassifier(n_estimators=5, verbose=-1))
    >>> model = model.fit(X, np.exp(X[:, 0] / 10))
    >>> path = save(model, pathlib.Path(tempfile.mkdtemp()) / "model.leap")
    >>> bool(np.array_equal(load(path).predict(X), model.predict(X)))
    True
    """
    import numpy as np
    from sklearn.utils.validation import check_is_fitted

    from leapml import __version__
    from leapml.regressor import LeapRegressor

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
            "n_bins": int(params["n_bins"]),
            "max_iter": int(params["max_iter"]),
            "tol": float(params["tol"]),
            "combine": params["combine"],
            "n_estimators": int(params["n_estimators"]),
            "n_jobs": None if params["n_jobs"] is None else int(params["n_jobs"]),
            "random_state": None if random_state is None else int(random_state),
            "regressor": _estimator_spec(params["regressor"], "regressor"),
            "classifier": _estimator_spec(params["classifier"], "classifier"),
            "router": str(params["router"]),
        },
        "fitted": {
            "bin_edges_": [float(v) for v in model.bin_edges_],
            "n_bins_": int(model.n_bins_),
            "n_iter_": int(model.n_iter_),
            "moved_": [float(v) for v in model.moved_],
            "train_loss_": [float(v) for v in model.train_loss_],
            "n_features_in_": int(model.n_features_in_),
            "feature_names_in_": (
                [str(v) for v in model.feature_names_in_]
                if hasattr(model, "feature_names_in_") else None
            ),
            "categories_": _json_value(
                [None if c is None else list(c) for c in model.categories_], "categories_"
            ),
        },
        "regressors_": [
            _submodel_entry(m, f"regressors/{k:03d}.txt", members, f"regressors_[{k}]")
            for k, m in enumerate(model.regressors_)
        ],
        "classifier_": _submodel_entry(model.classifier_, "classifier.txt", members, "classifier_"),
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
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
            for name, data in sorted(members.items()):
                archive.writestr(name, data)
    return path


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
    leapml.io.ModelFileError: ...notes.leap is not a leapml model file (not a zip archive)
    """
    import numpy as np

    from leapml.regressor import LeapRegressor

    metadata, members = _read_members(path)
    if metadata.get("estimator") != "LeapRegressor":
        raise ModelFileError(f"{path}: unknown estimator {metadata.get('estimator')!r}")
    params = dict(metadata["params"])
    params["regressor"] = _estimator_from_spec(params["regressor"])
    params["classifier"] = _estimator_from_spec(params["classifier"])
    model = LeapRegressor(**params)
    fitted = metadata["fitted"]
    model.bin_edges_ = np.asarray(fitted["bin_edges_"], dtype=np.float64)
    model.n_bins_ = int(fitted["n_bins_"])
    model.n_iter_ = int(fitted["n_iter_"])
    model.moved_ = np.asarray(fitted["moved_"], dtype=np.float64)
    model.train_loss_ = np.asarray(fitted["train_loss_"], dtype=np.float64)
    model.n_features_in_ = int(fitted["n_features_in_"])
    if fitted["feature_names_in_"] is not None:
        model.feature_names_in_ = np.asarray(fitted["feature_names_in_"], dtype=object)
    model.categories_ = fitted["categories_"]
    model.regressors_ = [_submodel_from_entry(e, members) for e in metadata["regressors_"]]
    model.classifier_ = _submodel_from_entry(metadata["classifier_"], members)
    if metadata.get("calibration_") is not None:
        model.calibration_ = dict(metadata["calibration_"])
    return model


def _read_members(path):
    """The metadata and the members of a model file, every checksum checked."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    raw = path.read_bytes()
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as err:
        raise ModelFileError(f"{path} is not a leapml model file (not a zip archive)") from err
    with archive:
        names = set(archive.namelist())
        if _MANIFEST not in names:
            raise ModelFileError(f"{path} is not a leapml model file (no {_MANIFEST})")
        try:
            manifest = json.loads(archive.read(_MANIFEST))
            if not isinstance(manifest, dict):
                raise ValueError("manifest is not an object")
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
            raise ModelFileError(f"{path}: unreadable manifest ({err})") from err
        if manifest.get("format") != MODEL_FORMAT:
            raise ModelFileError(
                f"{path} is not a leapml model file (format {manifest.get('format')!r})"
            )
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
            except (zipfile.BadZipFile, OSError, EOFError) as err:
                raise ModelFileError(f"{path} is truncated or corrupted: {err}") from err
            if _sha256(data) != digest:
                raise ModelFileError(
                    f"{path} was altered or corrupted: checksum mismatch for member {name!r}"
                )
            members[name] = data
    return json.loads(members[_METADATA]), members


def _feasibility_entry(classifier, members):
    """The metadata of a fitted FeasibilityClassifier; its booster goes into ``members``."""
    from sklearn.utils.validation import check_is_fitted

    from leapml.feasibility import FeasibilityClassifier

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
    return {
        "params": {**params, "evidence_columns": None if params["evidence_columns"] is None
                   else [list(key) for key in params["evidence_columns"]]},
        "classes_": _json_value(classes, "feasibility classes_"),
        "categories_": _json_value([None if c is None else list(c) for c in classifier.categories_],
                                   "feasibility categories_"),
        "n_features_in_": int(classifier.n_features_in_),
        "feature_names_in_": ([str(v) for v in classifier.feature_names_in_]
                              if hasattr(classifier, "feature_names_in_") else None),
        "evidence_": [sorted(list(pair) for pair in seen) for seen in classifier.evidence_],
        "booster_": booster,
    }


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
    import numpy as np

    from leapml.feasibility import FeasibilityClassifier

    metadata, members = _read_members(path)
    entry = metadata.get("feasibility")
    if entry is None:
        return None
    params = dict(entry["params"])
    if params.get("evidence_columns") is not None:
        params["evidence_columns"] = [tuple(key) for key in params["evidence_columns"]]
    classifier = FeasibilityClassifier(**params)
    classifier.classes_ = np.asarray(entry["classes_"])
    classifier.categories_ = entry["categories_"]
    classifier.n_features_in_ = int(entry["n_features_in_"])
    if entry["feature_names_in_"] is not None:
        classifier.feature_names_in_ = np.asarray(entry["feature_names_in_"], dtype=object)
    classifier.evidence_ = [{tuple(pair) for pair in seen} for seen in entry["evidence_"]]
    booster = entry["booster_"]
    classifier.booster_ = None if booster is None else _submodel_from_entry(booster, members)
    return classifier
