"""Hostile inputs, second round: crafted model files, time edge cases, weights, ids, types.

Each test here backs a row of the table in ``docs/reliability.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from _synthetic import make_throughput_regression

from leapml import LeapRegressor
from leapml.cli import main
from leapml.files import write_table
from leapml.model_file import ModelFileError, load, save


@pytest.fixture(scope="module")
def data():
    return make_throughput_regression(200, random_state=3)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, data):
    X, y = data
    model = LeapRegressor(n_bins=3, n_estimators=3, random_state=0, router="multiclass",
                          min_bin_rows=1).fit(X, y)
    return save(model, tmp_path_factory.mktemp("model") / "model.leap")


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _signed(members, out):
    """Write ``members`` as a model file whose manifest matches them: only the content is wrong."""
    manifest = json.loads(members["manifest.json"])
    manifest["members"] = {name: hashlib.sha256(data).hexdigest()
                           for name, data in members.items() if name != "manifest.json"}
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, data in members.items():
            if name != "manifest.json":
                archive.writestr(name, data)
    return out


def _with_metadata(model_file, out, edit):
    members = _members(model_file)
    metadata = json.loads(members["metadata.json"])
    metadata = edit(metadata)
    members["metadata.json"] = (metadata if isinstance(metadata, bytes)
                                else json.dumps(metadata).encode())
    return _signed(members, out)


# -- 1. corrupt or crafted model files ------------------------------------------


def _central_entry(raw, name):
    """Offset of ``name``'s entry in the zip's central directory."""
    at = raw.index(b"PK\x01\x02")
    while True:
        length = struct.unpack("<H", raw[at + 28:at + 30])[0]
        if raw[at + 46:at + 46 + length] == name.encode():
            return at
        at = raw.index(b"PK\x01\x02", at + 4)


def _local_data(raw, name):
    """Offset of the (compressed) bytes of member ``name``."""
    at = raw.index(b"PK\x03\x04")
    while True:
        name_length, extra_length = struct.unpack("<HH", raw[at + 26:at + 30])
        if raw[at + 30:at + 30 + name_length] == name.encode():
            return at + 30 + name_length + extra_length
        at = raw.index(b"PK\x03\x04", at + 4)


def _encrypted_flag(raw):
    at = _central_entry(raw, "manifest.json")
    return raw[:at + 8] + struct.pack("<H", 1) + raw[at + 10:]


def _unknown_compression(raw):
    at = _central_entry(raw, "metadata.json")
    return raw[:at + 10] + struct.pack("<H", 99) + raw[at + 12:]


def _broken_deflate_stream(raw):
    at = _local_data(raw, "metadata.json")
    return raw[:at] + b"\xff\xff\xff\xff" + raw[at + 4:]


@pytest.mark.parametrize("damage", [_encrypted_flag, _unknown_compression, _broken_deflate_stream])
def test_damaged_archive_is_a_model_file_error(tmp_path, model_file, damage):
    # RuntimeError, NotImplementedError and zlib.error inside zipfile
    bad = tmp_path / "bad.leap"
    bad.write_bytes(damage(model_file.read_bytes()))
    with pytest.raises(ModelFileError, match="bad.leap"):
        load(bad)


def test_flipped_bits_anywhere_give_a_model_file_error_or_the_model(tmp_path, model_file, data):
    raw = model_file.read_bytes()
    rng = np.random.default_rng(0)
    bad = tmp_path / "bad.leap"
    for _ in range(150):
        damaged = bytearray(raw)
        for position in rng.integers(0, len(raw), size=rng.integers(1, 4)):
            damaged[position] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(damaged))
        try:
            model = load(bad)
        except ModelFileError:
            continue
        # a flip in a byte zip ignores (a timestamp) leaves the model whole
        assert np.all(np.isfinite(model.predict(data[0])))


def _drop(key):
    def edit(metadata):
        del metadata[key]
        return metadata
    return edit


def _set(section, key, value):
    def edit(metadata):
        metadata[section][key] = value
        return metadata
    return edit


def _regressor_entry(entry):
    def edit(metadata):
        metadata["regressors_"][0] = entry
        return metadata
    return edit


@pytest.mark.parametrize("edit, reason", [
    (lambda m: list(m), "not a JSON object"),
    (lambda m: b"\xff\xfe" + json.dumps(m).encode(), "UnicodeDecodeError"),
    (_drop("fitted"), "missing key 'fitted'"),
    (_drop("regressors_"), "missing key 'regressors_'"),
    (_set("fitted", "n_bins_", "3"), "n_bins_ is not a count"),
    (_set("fitted", "n_bins_", 7), "bin_edges_ does not fit n_bins_"),
    (_set("fitted", "categories_", {"a": 1}), "categories_ is not a list"),
    (_set("fitted", "feature_names_in_", [1, 2]), "feature_names_in_"),
    (_set("params", "colour", "red"), r"unknown parameter\(s\) \['colour'\]"),
    (_set("params", "n_bins", -4), "n_bins"),
    (_set("params", "regressor", ["LGBMRegressor"]), "estimator entry"),
    (lambda m: {**m, "params": None}, "'params' is not a JSON object"),
    (_regressor_entry({"kind": "lightgbm", "member": "regressors/999.txt"}), "is not in the file"),
    (_regressor_entry({"kind": "constant", "value": "x"}), "no finite value"),
    (_regressor_entry({"kind": "pickle"}), "unknown sub-model kind"),
    (_regressor_entry([]), "not a JSON object"),
    (lambda m: b'{"estimator": "LeapRegressor", "params": ' + b"[" * 100_000 + b"]" * 100_000
     + b"}", "RecursionError"),
    (lambda m: {**m, "classifier_": {"kind": "lightgbm", "member": "regressors/000.txt"}},
     "has 1 outputs, expected 3"),
])
def test_malformed_metadata_is_a_model_file_error(tmp_path, model_file, edit, reason):
    bad = _with_metadata(model_file, tmp_path / "bad.leap", edit)
    with pytest.raises(ModelFileError, match=reason):
        load(bad)


def _with_member(model_file, out, name, edit):
    members = _members(model_file)
    members[name] = edit(members[name].decode()).encode()
    return _signed(members, out)


@pytest.mark.parametrize("edit, reason", [
    (lambda text: "hello, not a model", "does not start with 'tree'"),
    (lambda text: text.replace("max_feature_idx=", "max_feature_idx=1", 1), "feature_names"),
    (lambda text: text.replace("split_feature=", "split_feature=9 ", 1), "split_feature has"),
    (lambda text: text.replace("left_child=", "left_child=0 ", 1).replace(
        "right_child=", "right_child=-1 ", 1), "left_child has"),
    (lambda text: text.replace("end of trees", ""), "end of trees"),
    (lambda text: text.replace("objective=regression_l1", "objective=eval"), "unknown objective"),
])
def test_malformed_lightgbm_text_is_a_model_file_error(tmp_path, model_file, edit, reason):
    bad = _with_member(model_file, tmp_path / "bad.leap", "regressors/000.txt", edit)
    with pytest.raises(ModelFileError, match=reason):
        load(bad)


# LightGBM parses a model's trees in parallel and aborts the process on the
# first error there; these run in a child so that a regression fails the test
# instead of killing the test session.
_CRAFTED = textwrap.dedent("""
    import random, re, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    from test_hostile_inputs import _members, _signed
    from leapml.model_file import ModelFileError, load
    rng = random.Random(0)
    outcomes = []
    for case in range({cases}):
        members = _members({path!r})
        name = rng.choice(sorted(n for n in members if n.endswith(".txt")))
        lines = members[name].decode().split("\\n")
        if case == 0:
            # the published crash: num_leaves that disagrees with the arrays
            lines = [re.sub("^num_leaves=.*", "num_leaves=9", l, count=1) for l in lines]
        for _ in range(rng.randint(1, 3)):
            j = rng.randrange(len(lines))
            tokens = lines[j].split(" ")
            op = rng.randrange(5)
            if op == 0:
                k = rng.randrange(len(tokens))
                tokens[k] = re.sub(r"-?\\d+", str(rng.randint(-3, 40)), tokens[k], count=1)
            elif op == 1 and len(tokens) > 1:
                del tokens[rng.randrange(len(tokens))]
            elif op == 2:
                tokens.append(rng.choice(tokens))
            elif op == 3:
                lines.insert(rng.randrange(len(lines)), lines[j])
                continue
            else:
                del lines[j]
                continue
            lines[j] = " ".join(tokens)
        members[name] = "\\n".join(lines).encode()
        bad = _signed(members, {out!r})
        try:
            model = load(bad)
        except ModelFileError:
            outcomes.append("refused")
            continue
        prediction = model.predict(np.zeros((3, model.n_features_in_)))
        assert np.all(prediction > 0), prediction
        outcomes.append("loaded")
    print(outcomes.count("refused"), outcomes.count("loaded"))
""")


def test_crafted_lightgbm_members_never_abort_the_process(tmp_path, model_file):
    script = _CRAFTED.format(tests=os.path.dirname(__file__), path=str(model_file),
                             out=str(tmp_path / "crafted.leap"), cases=80)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    refused, loaded = map(int, done.stdout.split())
    assert refused + loaded == 80 and refused > 20
    assert "[Fatal]" not in done.stderr  # LightGBM never got to reject a text itself


def test_crafted_model_file_gives_one_line_in_the_cli(tmp_path, model_file, capsys):
    bad = _with_member(model_file, tmp_path / "bad.leap", "classifier.txt",
                       lambda text: text.replace("num_leaves=", "num_leaves=1", 1))
    code = main(["predict", "--model", str(bad), "--submissions", "s.csv",
                 "--attempts", "a.csv", "--hardware", "h.csv"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "bad.leap" in err and "Traceback" not in err


# -- 8. files others must read ---------------------------------------------------


@pytest.fixture()
def umask():
    def set_umask(mask):
        previous.append(os.umask(mask))
    previous = []
    yield set_umask
    for mask in reversed(previous):
        os.umask(mask)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_written_files_get_the_umask_mode(tmp_path, data, model_file, umask, mask):
    umask(mask)
    table = write_table(data[0].head(3), tmp_path / "table.parquet")
    csv = write_table(data[0].head(3), tmp_path / "table.csv")
    model = save(load(model_file), tmp_path / "model.leap")
    for path in (table, csv, model):
        assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~mask), path


def test_saving_a_model_twice_gives_the_same_bytes(tmp_path, model_file, monkeypatch):
    model = load(model_file)
    first = save(model, tmp_path / "first.leap").read_bytes()
    # a later clock: archive timestamps must not reach the file
    monkeypatch.setattr(zipfile.time, "time", lambda: 4_000_000_000.0)
    second = save(model, tmp_path / "second.leap").read_bytes()
    assert first == second
    assert save(load(tmp_path / "second.leap"), tmp_path / "third.leap").read_bytes() == first


# -- 6. ranking inputs -----------------------------------------------------------

LAUNCH = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
          "seq_len", "parallelism"]


@pytest.fixture(scope="module")
def fleet_log(tiny_fleet):
    return tiny_fleet.attempts.drop(columns="expected_throughput")


@pytest.fixture(scope="module")
def fleet_model(fleet_log, tiny_fleet):
    from leapml.placement import fit_window

    return fit_window(fleet_log, tiny_fleet.hardware, window_days=3,
                      model=LeapRegressor(n_estimators=5, random_state=0, n_jobs=1))


@pytest.mark.parametrize("cost", [np.inf, -np.inf])
def test_infinite_cost_is_refused_by_rank_candidates(cost):
    from leapml.ranking import rank_candidates

    frame = pd.DataFrame({"job_id": [1, 1], "hardware_type": ["a", "b"],
                          "predicted_throughput": [1.0, 2.0], "price": [1.0, cost]})
    with pytest.raises(ValueError, match=r"> 0 and finite; it is not for \['b'\]"):
        rank_candidates(frame, cost={"a": 1.0, "b": cost})
    with pytest.raises(ValueError, match=r"> 0 and finite: 1 row\(s\).*\['b'\]"):
        rank_candidates(frame, cost="price")
    with pytest.raises(ValueError, match="'trainer_count' must be > 0 and finite"):
        rank_candidates(frame.assign(trainer_count=[1.0, np.inf], price=1.0), cost="price")


@pytest.mark.parametrize("cost", ["price", {"a": 1.0, "b": 2.0}])
def test_missing_hardware_type_is_named_not_a_duplicate(cost):
    from leapml.ranking import rank_candidates

    frame = pd.DataFrame({"job_id": [1, 1, 2, 2], "hardware_type": ["a", "b", "b", None],
                          "predicted_throughput": [1.0, 2.0, 3.0, 4.0], "price": 1.0})
    with pytest.raises(ValueError, match="1 row\\(s\\) have no hardware type in 'hardware_type'"):
        rank_candidates(frame, cost=cost)


def test_one_hardware_type_given_as_a_string(fleet_log, tiny_fleet, fleet_model):
    from leapml.features import HistoryIndex
    from leapml.placement import place, predict_candidates

    jobs = tiny_fleet.jobs[LAUNCH].head(2)
    for history in (fleet_log, HistoryIndex(fleet_log, tiny_fleet.hardware)):
        one = place(fleet_model, jobs, tiny_fleet.hardware, history=history,
                    hardware_types="H100-80GB-SXM5")
        listed = place(fleet_model, jobs, tiny_fleet.hardware, history=history,
                       hardware_types=["H100-80GB-SXM5"])
        pd.testing.assert_frame_equal(one, listed)
        assert one["hardware_type"].astype(str).tolist() == ["H100-80GB-SXM5"] * 2
        predicted = predict_candidates(fleet_model, jobs, tiny_fleet.hardware, history=history,
                                       hardware_types="H100-80GB-SXM5")
        assert len(predicted) == 2


@pytest.mark.parametrize("tz", [None, "UTC"])
def test_arrow_backed_times_read_as_numpy_times(fleet_log, tiny_fleet, fleet_model, tz):
    """read_parquet(dtype_backend="pyarrow") gives Arrow timestamps: the same answers as NumPy's."""
    import pyarrow as pa

    from leapml.features import HistoryIndex, build_features
    from leapml.placement import place
    from leapml.training import fit_feasibility

    def zoned(frame):
        return frame.assign(**{c: frame[c].dt.tz_localize(tz) for c in frame
                               if pd.api.types.is_datetime64_any_dtype(frame[c].dtype) and tz})

    def arrow(frame):
        return frame.assign(**{c: frame[c].astype(pd.ArrowDtype(pa.timestamp("ns", tz=tz)))
                               for c in frame if pd.api.types.is_datetime64_any_dtype(frame[c].dtype)})

    log, catalog = zoned(fleet_log), zoned(tiny_fleet.hardware)
    jobs = tiny_fleet.jobs[LAUNCH].head(3)
    pd.testing.assert_frame_equal(build_features(arrow(log), arrow(catalog)),
                                  build_features(log, catalog))
    expected = place(fleet_model, jobs, catalog, history=log)
    pd.testing.assert_frame_equal(place(fleet_model, jobs, arrow(catalog), history=arrow(log)),
                                  expected)
    pd.testing.assert_frame_equal(
        place(fleet_model, jobs, arrow(catalog), history=HistoryIndex(arrow(log), arrow(catalog))),
        expected)
    np.testing.assert_array_equal(
        fit_feasibility(arrow(log), arrow(catalog), window_days=5).classes_,
        fit_feasibility(log, catalog, window_days=5).classes_)


def test_each_job_is_offered_the_types_there_at_its_own_time(fleet_log, tiny_fleet, fleet_model):
    """The default candidates are the catalog's types introduced by the submission: with a
    time per job, by each job's own time, not the latest job's."""
    from leapml.placement import place, predict_candidates

    catalog = tiny_fleet.hardware
    first = catalog["introduced"].min()
    jobs = tiny_fleet.jobs[LAUNCH].head(2).assign(
        submit_time=[first + pd.Timedelta(days=1), fleet_log["submit_time"].max()])
    later = set(catalog.loc[catalog["introduced"] > jobs["submit_time"].iloc[0],
                            "hardware_type"].astype(str))
    assert later
    ranked = place(fleet_model, jobs, catalog, history=fleet_log)
    early = ranked[ranked["job_id"] == jobs["job_id"].iloc[0]]
    not_there = early["hardware_type"].astype(str).isin(later).to_numpy()
    assert not early.loc[not_there, "rankable"].any()
    assert (early.loc[not_there, "reason"] == "no prediction").all()
    assert early.loc[~not_there, "rankable"].any()
    late = ranked[ranked["job_id"] == jobs["job_id"].iloc[1]]
    assert late.loc[late["hardware_type"].astype(str).isin(later), "rankable"].any()
    candidates = predict_candidates(fleet_model, jobs, catalog, history=fleet_log)
    gone = (candidates["job_id"] == jobs["job_id"].iloc[0]) & candidates[
        "hardware_type"].astype(str).isin(later)
    assert candidates.loc[gone, "predicted_throughput"].isna().all()
    # a time before every type: said so, not blamed on hardware_types
    with pytest.raises(ValueError, match="no hardware type of the catalog was introduced by"):
        place(fleet_model, jobs.drop(columns="submit_time"), catalog, history=fleet_log,
              at=first - pd.Timedelta(days=1))


def test_place_with_an_empty_history(fleet_log, tiny_fleet, fleet_model):
    from leapml.placement import place

    jobs = tiny_fleet.jobs[LAUNCH].head(2)
    empty = fleet_log.iloc[:0]
    with pytest.raises(ValueError, match="history is empty.*give at=<timestamp>"):
        place(fleet_model, jobs, tiny_fleet.hardware, history=empty)
    # with a submission time there is an answer: new jobs, known only by their configuration
    ranked = place(fleet_model, jobs, tiny_fleet.hardware, history=empty,
                   at=fleet_log["submit_time"].max())
    assert len(ranked) > 0 and ranked["predicted_throughput"].gt(0).all()


@pytest.mark.parametrize("extreme", [1e-300, 1e300])
def test_figures_at_the_ends_of_the_float_range_give_finite_features_and_places(
        fleet_log, tiny_fleet, fleet_model, extreme):
    """Every figure here passes the schema (finite, > 0); their products can leave the floats."""
    from leapml import build_features
    from leapml.features import HistoryIndex
    from leapml.placement import place

    hardware = tiny_fleet.hardware.copy()
    specs = [c for c in hardware.columns if c.startswith("peak_") or c.endswith("_gbps")]
    hardware[specs + ["memory_gb"]] = hardware[specs + ["memory_gb"]].where(
        hardware[specs + ["memory_gb"]].isna(), extreme)
    jobs = tiny_fleet.jobs.head(3).assign(param_count=min(extreme, 1e30),
                                          flops_per_sample=min(extreme, 1e30))
    log = fleet_log.assign(trainer_count=2**53 if extreme > 1 else 1, batch_size=2**53)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X = build_features(log, hardware)
    numbers = X.select_dtypes("number").to_numpy(dtype=float)
    assert not np.isinf(numbers).any()
    overflowed = [str(w.message) for w in caught if "overflowed" in str(w.message)]
    assert len(overflowed) == 1 and _warned_at_the_callers_line(caught)
    assert "total_peak_tflops" in overflowed[0] if extreme > 1 else (
        "batch_tokens_per_memory_gb" in overflowed[0])
    for history in (fleet_log, HistoryIndex(fleet_log, hardware)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranked = place(fleet_model, jobs, hardware, history=history)
        assert len(ranked) > 0 and np.isfinite(ranked["predicted_throughput"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = place(fleet_model, jobs, tiny_fleet.hardware, history=fleet_log)
    assert ranked["job_id"].nunique() == 3 and np.isfinite(ranked["predicted_throughput"]).all()


def _warned_at_the_callers_line(caught) -> bool:
    """The overflow warning names the caller's line, not one inside the library."""
    return all(w.filename == __file__ for w in caught if "overflowed" in str(w.message))


# -- 9. interrupts -----------------------------------------------------------------

# Ctrl-C lands wherever the process is: here, while Python imports ``module``
# (at the top of the command, or inside the subcommand), raised by an import hook.
_INTERRUPTED_IMPORT = textwrap.dedent("""
    import sys

    class Interrupt:
        def find_spec(self, name, path=None, target=None):
            if name == {module!r}:
                raise KeyboardInterrupt

    sys.meta_path.insert(0, Interrupt())
    from leapml.cli import main
    sys.exit(main({argv!r}))
""")


@pytest.mark.parametrize("module", ["pandas", "lightgbm"])
def test_ctrl_c_while_importing_prints_one_line(tmp_path, module):
    argv = ["fit", "--attempts", str(tmp_path / "a.csv"), "--hardware", str(tmp_path / "h.csv"),
            "--out", str(tmp_path / "m.leap")]
    script = _INTERRUPTED_IMPORT.format(module=module, argv=argv)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stderr == "leapml: interrupted\n"


# -- 7. identifiers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def padded(fleet_log, tiny_fleet):
    """The log and the jobs with zero-padded text ids, as many schedulers write them."""
    log = fleet_log.assign(job_id=fleet_log["job_id"].map("{:05d}".format))
    jobs = tiny_fleet.jobs[LAUNCH].head(6)
    return log, jobs.assign(job_id=jobs["job_id"].map("{:05d}".format))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_zero_padded_job_ids_survive_a_file(tmp_path, padded, tiny_fleet, fleet_model, suffix):
    from leapml.files import read_table
    from leapml.placement import predict_candidates

    log, jobs = padded
    path = write_table(jobs, tmp_path / f"submissions{suffix}")
    read = read_table(path)
    assert read["job_id"].tolist() == jobs["job_id"].tolist()
    kwargs = {"history": log, "hardware_types": ["H100-80GB-SXM5", "T4-16GB"],
              "at": log["submit_time"].max()}
    expected = predict_candidates(fleet_model, jobs, tiny_fleet.hardware, **kwargs)
    got = predict_candidates(fleet_model, read, tiny_fleet.hardware, **kwargs)
    np.testing.assert_array_equal(got["predicted_throughput"], expected["predicted_throughput"])


def test_ids_match_as_text_between_tables(fleet_log, tiny_fleet, fleet_model):
    from leapml.features import HistoryIndex, build_features
    from leapml.placement import predict_candidates

    jobs = tiny_fleet.jobs[LAUNCH].head(6)
    as_text = jobs.assign(job_id=jobs["job_id"].astype(str))
    kwargs = {"hardware_types": ["H100-80GB-SXM5", "T4-16GB"], "at": fleet_log["submit_time"].max()}
    for history in (fleet_log, HistoryIndex(fleet_log, tiny_fleet.hardware)):
        numbers = predict_candidates(fleet_model, jobs, tiny_fleet.hardware, history=history,
                                     **kwargs)
        text = predict_candidates(fleet_model, as_text, tiny_fleet.hardware, history=history,
                                  **kwargs)
        np.testing.assert_array_equal(text["predicted_throughput"],
                                      numbers["predicted_throughput"])
    # the history features see the job's past runs under either spelling
    log_text = fleet_log.assign(job_id=fleet_log["job_id"].astype(str))
    pd.testing.assert_frame_equal(build_features(log_text, tiny_fleet.hardware),
                                  build_features(fleet_log, tiny_fleet.hardware))


def test_cli_keeps_zero_padded_ids(tmp_path, padded, tiny_fleet, fleet_model, capsys):
    log, jobs = padded
    attempts = write_table(log, tmp_path / "attempts.parquet")
    catalog = write_table(tiny_fleet.hardware, tmp_path / "hardware.parquet")
    submissions = write_table(jobs.assign(hardware_type="T4-16GB"), tmp_path / "jobs.csv")
    model = save(fleet_model, tmp_path / "model.leap")
    out = tmp_path / "out.csv"
    assert main(["predict", "--model", str(model), "--submissions", str(submissions),
                 "--attempts", str(attempts), "--hardware", str(catalog), "--out", str(out)]) == 0
    assert out.read_text().splitlines()[1].startswith(jobs["job_id"].iloc[0] + ",")
    from leapml.placement import predict_candidates

    expected = predict_candidates(fleet_model, jobs, tiny_fleet.hardware, history=log,
                                  hardware_types=["T4-16GB"],
                                  at=log["submit_time"].max() + pd.Timedelta(seconds=1))
    got = pd.read_csv(out, dtype={"job_id": str})
    np.testing.assert_allclose(got["predicted_throughput"], expected["predicted_throughput"],
                               rtol=1e-12)


# -- 2. sample weights -------------------------------------------------------------


@pytest.mark.parametrize("router", ["multiclass", "ordinal"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_unit_of_sample_weight_does_not_change_the_model(data, router, seed):
    X, y = data
    weight = np.random.default_rng(seed).uniform(0.01, 0.05, len(y))  # device-hours, say

    def fitted(scale):
        model = LeapRegressor(n_bins=4, n_estimators=10, random_state=seed, router=router)
        return model.fit(X, y, sample_weight=weight * scale)

    hours = fitted(1.0)
    for scale in (60.0, 3600.0, 1e-3):  # minutes, seconds, a thousandth
        other = fitted(scale)
        np.testing.assert_array_equal(other.predict(X), hours.predict(X))
        np.testing.assert_array_equal(other.bin_edges_, hours.bin_edges_)


@pytest.mark.parametrize("scale", [1e306, 1e-320])
def test_sample_weights_at_the_ends_of_the_float_range_fit_the_model_of_their_ratios(data, scale):
    X, y = data

    def predictions(weight):
        model = LeapRegressor(n_bins=4, n_estimators=5, random_state=0)
        return model.fit(X, y, sample_weight=weight).predict(X)

    # 1e306 each: their sum overflows; 1e-320 each (denormal): the inverse of their sum does
    np.testing.assert_array_equal(predictions(np.full(len(y), scale)), predictions(np.ones(len(y))))


def test_unit_free_weights_of_ordinary_weights_are_the_mean_one_weights_rounded():
    from leapml._encoding import unit_free_weights

    rng = np.random.default_rng(0)
    for weight in (rng.uniform(0.01, 0.05, 500), rng.lognormal(0, 4, 500), rng.integers(1, 9, 500)):
        weight = weight.astype(float)
        mantissa, exponent = np.frexp(weight * (len(weight) / weight.sum()))
        expected = np.ldexp(np.round(mantissa * 2.0**32) / 2.0**32, exponent)
        np.testing.assert_array_equal(unit_free_weights(weight), expected)


# -- 4. estimator parameters -------------------------------------------------------


def test_router_class_weight_is_honoured(data):
    from lightgbm import LGBMClassifier

    X, y = data

    def fitted(class_weight):
        classifier = LGBMClassifier(n_estimators=10, verbose=-1, class_weight=class_weight)
        return LeapRegressor(n_bins=4, n_estimators=10, random_state=0, router="multiclass",
                             min_bin_rows=1, classifier=classifier).fit(X, y)

    plain, heavy = fitted(None), fitted({0: 50.0})
    # a heavy bin 0 draws rows into it
    assert (heavy.predict_bin(X) == 0).sum() > (plain.predict_bin(X) == 0).sum()
    # the experts do not read the router's class weights
    for a, b in zip(heavy.regressors_, plain.regressors_, strict=True):
        assert a.model_to_string() == b.model_to_string()
    assert not np.array_equal(fitted("balanced").predict_bin_proba(X), plain.predict_bin_proba(X))


@pytest.mark.parametrize("classifier, regressor, match", [
    ({"class_weight": {"a": 2.0}}, None, "must map bin indices"),
    ({"class_weight": {7: 2.0}}, None, "must map bin indices 0..3"),
    ({"class_weight": "sqrt"}, None, "'balanced' or a dict"),
    ({"objective": "binary"}, None, "objective='binary'"),
    (None, {"class_weight": "balanced"}, "only a classifier reads"),
])
def test_estimator_parameters_that_cannot_apply_are_refused(data, classifier, regressor, match):
    from lightgbm import LGBMClassifier, LGBMRegressor

    X, y = data
    model = LeapRegressor(
        n_bins=4, n_estimators=5, router="multiclass", min_bin_rows=1,
        classifier=None if classifier is None else LGBMClassifier(n_estimators=5, **classifier),
        regressor=None if regressor is None else LGBMRegressor(n_estimators=5, **regressor),
    )
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


def test_one_vs_all_router_objective_is_kept(data):
    from lightgbm import LGBMClassifier

    X, y = data
    models = [LeapRegressor(n_bins=4, n_estimators=5, random_state=0, router="multiclass",
                            min_bin_rows=1, classifier=LGBMClassifier(
        n_estimators=5, verbose=-1, objective=objective)).fit(X, y)
        for objective in ("multiclass", "multiclassova")]
    assert "objective=multiclassova" in models[1].classifier_.model_to_string()
    assert not np.array_equal(models[0].predict_bin_proba(X), models[1].predict_bin_proba(X))


# -- 5. time ------------------------------------------------------------------------


def _moved(log, start, tz):
    """The log's times moved to begin on ``start`` (UTC), then read on the clock of ``tz``."""
    shift = pd.Timestamp(start) - log["submit_time"].min().floor("D")
    return log.assign(**{name: (log[name] + shift).dt.tz_localize("UTC").dt.tz_convert(tz)
                         for name in ("submit_time", "end_time")})


def _tiny_models():
    return {"leap": LeapRegressor(n_estimators=3, random_state=0, n_jobs=1)}


# Santiago skips 2026-09-06 00:00; Havana 2026-03-08 00:00; Beirut repeats its
# last hour of 2026-10-24 (the midnight itself does not exist twice).
@pytest.mark.parametrize("tz, start", [("America/Santiago", "2026-09-03 04:00"),
                                       ("America/Havana", "2026-03-05 06:00"),
                                       ("Asia/Beirut", "2026-10-21 00:00")])
def test_daylight_saving_change_at_midnight(fleet_log, tiny_fleet, tz, start):
    from leapml.evaluation.backtest import nightly
    from leapml.placement import fit_window

    log = _moved(fleet_log, start, tz)
    model = fit_window(log, tiny_fleet.hardware, window_days=3, model=_tiny_models()["leap"])
    assert model.n_features_in_ > 0
    result = nightly(log, tiny_fleet.hardware, models=_tiny_models(), window_days=4,
                     nights=3, progress=False)
    nights = pd.Series(result.scores["night"].unique())
    wall = nights.dt.tz_localize(None)
    # whole local days, one after the other, each from its first instant
    assert (wall.dt.floor("D").diff().dropna() == pd.Timedelta(days=1)).all()
    assert (wall - wall.dt.floor("D") <= pd.Timedelta(hours=1)).all()


def test_utc_log_with_a_naive_catalog(fleet_log, tiny_fleet, fleet_model):
    from leapml.placement import place

    log = fleet_log.assign(submit_time=fleet_log["submit_time"].dt.tz_localize("UTC"),
                           end_time=fleet_log["end_time"].dt.tz_localize("UTC"))
    catalog = tiny_fleet.hardware
    aware = catalog.assign(introduced=catalog["introduced"].dt.tz_localize("UTC"))
    jobs = tiny_fleet.jobs[LAUNCH].head(2)
    expected = place(fleet_model, jobs, aware, history=log)
    pd.testing.assert_frame_equal(place(fleet_model, jobs, catalog, history=log), expected)
    # and the other way round: a naive log with a UTC catalog
    naive = place(fleet_model, jobs, aware, history=fleet_log)
    pd.testing.assert_frame_equal(naive, place(fleet_model, jobs, catalog, history=fleet_log))


def test_times_beyond_2262_are_named_not_wrapped(fleet_log, tiny_fleet, fleet_model):
    from leapml.features import build_features, candidate_rows
    from leapml.placement import place

    jobs = tiny_fleet.jobs[LAUNCH].head(1)
    far = pd.Timestamp("2300-01-01").as_unit("s")
    rows = candidate_rows(jobs, ["T4-16GB"], at=far)
    with pytest.raises(ValueError, match=r"'submit_time' holds 1 time\(s\) outside"):
        build_features(rows, tiny_fleet.hardware, history=fleet_log)
    with pytest.raises(ValueError, match="outside 1677-09-21 .. 2262-04-11"):
        place(fleet_model, jobs, tiny_fleet.hardware, history=fleet_log, at=far)


# "01/02/2026": day and month either way round, refused as in a log's column
@pytest.mark.parametrize("when", ["yesterday", None, float("nan"), pd.NaT, 2026, "01/02/2026"])
def test_a_time_that_is_no_time_is_quoted_by_every_reader_of_one(fleet_log, tiny_fleet,
                                                                   fleet_model, when):
    from leapml.features import candidate_rows
    from leapml.fleet import simulate
    from leapml.placement import place
    from leapml.training import fit_window

    jobs = tiny_fleet.jobs[LAUNCH].head(1)
    quoted = rf"cannot read {re.escape(repr(when))} as a time"
    with pytest.raises(ValueError, match=quoted):
        simulate("tiny", days=2, start=when)
    if when is None:  # elsewhere None means "not given": the end of the log, or after it
        return
    with pytest.raises(ValueError, match=quoted):
        fit_window(fleet_log, tiny_fleet.hardware, until=when)
    with pytest.raises(ValueError, match=quoted):
        place(fleet_model, jobs, tiny_fleet.hardware, history=fleet_log, at=when)
    with pytest.raises(ValueError, match=quoted):
        candidate_rows(jobs, ["T4-16GB"], at=when)
    # one time per job: a missing one is counted, text and numbers are refused
    with pytest.raises(ValueError, match="null for 1 job|cannot read at= as one time per job"):
        candidate_rows(jobs, ["T4-16GB"], at=[when])


def test_a_window_longer_than_pandas_can_reach_back_is_named(fleet_log, tiny_fleet):
    from leapml.training import fit_window

    with pytest.raises(ValueError, match=r"-1000000000 days after .* beyond the dates pandas holds"):
        fit_window(fleet_log, tiny_fleet.hardware, window_days=10**9)


def test_csv_with_offsets_across_a_daylight_saving_change(tmp_path, fleet_log, tiny_fleet):
    from leapml.files import read_table
    from leapml.schema import coerce_attempts, validate_attempts

    log = _moved(fleet_log, "2026-03-05", "America/New_York")  # clocks change on 03-08
    path = write_table(log, tmp_path / "attempts.csv")
    text = path.read_text()
    assert "-05:00" in text and "-04:00" in text
    read = coerce_attempts(read_table(path))
    validate_attempts(read, tiny_fleet.hardware)
    assert (read["submit_time"] == log["submit_time"]).all()  # the same instants
    catalog = write_table(tiny_fleet.hardware, tmp_path / "hardware.csv")
    argv = ["fit", "--attempts", str(path), "--hardware", str(catalog), "--out",
            str(tmp_path / "model.leap"), "--window-days", "3", "--n-estimators", "3"]
    assert main(argv) == 0
    assert load(tmp_path / "model.leap").n_features_in_ > 0


def test_nights_beyond_the_log_stop_at_its_end(fleet_log, tiny_fleet):
    from leapml.evaluation.backtest import nightly

    two = nightly(fleet_log, tiny_fleet.hardware, models=_tiny_models(), window_days=6,
                  nights=2, progress=False).scores
    with pytest.warns(UserWarning, match=r"2 of the 1000000000000 nights asked for are scored"):
        many = nightly(fleet_log, tiny_fleet.hardware, models=_tiny_models(), window_days=6,
                       nights=10**12, progress=False).scores
    pd.testing.assert_frame_equal(two, many)


# -- 3. mixed and numeric object columns --------------------------------------------


def test_object_column_of_numbers_is_numeric_with_a_warning(data):
    X, y = data
    as_object = X.assign(batch_size=X["batch_size"].astype(object))
    model = LeapRegressor(n_bins=4, n_estimators=10, random_state=0)
    with pytest.warns(UserWarning, match="'batch_size' has dtype object but holds only numbers"):
        fitted = model.fit(as_object, y)
    expected = LeapRegressor(n_bins=4, n_estimators=10, random_state=0).fit(X, y)
    assert fitted.categories_ == expected.categories_
    np.testing.assert_array_equal(fitted.predict(as_object), expected.predict(X))
    # values never seen in fit are numbers like any other, not missing categories
    unseen = as_object.assign(batch_size=as_object["batch_size"] * 1.37 + 1)
    np.testing.assert_array_equal(fitted.predict(unseen),
                                  expected.predict(unseen.astype({"batch_size": float})))


def test_columns_of_number_labels_must_come_back_in_their_order(data, tmp_path):
    """scikit-learn checks text names only; number labels reordered were predicted on in silence."""
    X, y = data
    numbered = X.select_dtypes("number").set_axis(range(X.select_dtypes("number").shape[1]), axis=1)
    model = LeapRegressor(n_bins=4, n_estimators=10, random_state=0).fit(numbered, y)
    expected = model.predict(numbered)
    reordered = numbered[numbered.columns[::-1]]
    with pytest.raises(ValueError, match=r"X's columns are \[\d+, .*fitted on columns \[0, 1, 2,"):
        model.predict(reordered)
    with pytest.raises(ValueError, match="give the same columns, in that order"):
        model.predict(numbered.rename(columns={0: 99}))
    # the same columns in order, or the bare array, predict as before
    np.testing.assert_array_equal(model.predict(numbered.to_numpy()), expected)
    np.testing.assert_array_equal(model.predict(reordered[numbered.columns]), expected)
    # a model file keeps the labels, and the model read back refuses alike (it read the
    # columns by position before); 1.0 is not the label 1
    back = load(save(model, tmp_path / "numbered.leap"))
    with pytest.raises(ValueError, match=r"fitted on columns \[0, 1, 2,"):
        back.predict(reordered)
    with pytest.raises(ValueError, match="give the same columns, in that order"):
        back.predict(numbered.set_axis(numbered.columns.astype(float), axis=1))
    np.testing.assert_array_equal(back.predict(numbered), expected)
    named = LeapRegressor(n_bins=4, n_estimators=10, random_state=0).fit(X.select_dtypes("number"), y)
    assert load(save(named, tmp_path / "named.leap"))._column_labels is None  # text: sklearn's check


def test_a_number_column_missing_at_predict_but_never_in_fit_is_warned_of(data, tmp_path):
    """A job given without its batch size was predicted 70 to 190 times too slow, without a
    word: the trees never saw a missing batch size, so such a row went wherever NaN goes."""
    X, y = data
    model = LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(
        X.assign(seq_len=X["seq_len"].where(X.index % 7 > 0)), y)  # seq_len: some missing in fit
    gaps = X.head(6).assign(batch_size=pd.array([None, 8, None, 8, 8, 8], dtype="Int64"),
                            seq_len=np.nan)
    back = load(save(model, tmp_path / "m.leap"))  # the model file keeps what fit had
    for fitted in (model, back):
        with pytest.warns(UserWarning, match=r"every row of fit had.*\[\('batch_size', 2\)\]"):
            fitted.predict(gaps)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # complete rows, or gaps fit had too: no warning
            fitted.predict(X.head(6).assign(seq_len=np.nan))
            # an unseen category is no gap of this kind (it is read as the missing category)
            fitted.predict(X.head(6).assign(precision="fp4"))


@pytest.mark.parametrize("cell", [[1, 2], {"k": 1}, {1, 2}, np.arange(2)])
def test_cells_holding_containers_are_refused_by_column(data, cell):
    """A list in a cell met pandas' "unhashable type: 'list'" (after a warning that the
    column mixed text with other values)."""
    X, y = data
    odd = X.assign(note=pd.Series([cell] * len(X), index=X.index, dtype=object))
    message = f"column 'note' holds {type(cell).__name__} values .* neither numbers nor categories"
    with pytest.raises(TypeError, match=message):
        LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(odd, y)
    model = LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(X, y)
    for column in ("batch_size", "precision"):  # read as numbers, read as categories
        cells = pd.Series([cell] * 5, index=X.index[:5], dtype=object)
        with pytest.raises(TypeError, match=f"column '{column}' holds {type(cell).__name__} values"):
            model.predict(X.head(5).assign(**{column: cells}))


def test_a_large_frame_is_encoded_column_by_column_to_the_same_numbers(data, monkeypatch):
    """From _FRAME_BY_COLUMN rows a frame is read column by column (one copy of each, not
    two of the frame): the same matrix, whatever the dtypes."""
    import leapml._encoding as encoding

    X, y = data
    model = LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(X, y)
    varied = X.assign(batch_size=pd.array(X["batch_size"].where(X.index % 5 > 0), dtype="Int64"),
                      log10_model_cost=X["log10_model_cost"].where(X.index % 7 > 0),
                      precision=X["precision"].astype(object).where(X.index % 3 > 0),
                      seq_len=X["seq_len"].astype("int32"))
    for frame in (X, varied):
        with monkeypatch.context() as patched:
            patched.setattr(encoding, "_FRAME_BY_COLUMN", 10**12)
            whole = model._validate_X(frame, reset=False)
            patched.setattr(encoding, "_FRAME_BY_COLUMN", 1)
            by_column = model._validate_X(frame, reset=False)
        np.testing.assert_array_equal(by_column, whole)
        assert np.isnan(whole).any() == (frame is varied)


def test_fit_reads_a_mapping_of_columns_as_predict_does(data):
    X, y = data
    numbers = X.select_dtypes("number")
    by_frame = LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(numbers, y)
    by_mapping = LeapRegressor(n_bins=3, n_estimators=5, random_state=0).fit(
        {name: numbers[name].to_numpy() for name in numbers}, y)
    assert list(by_mapping.feature_names_in_) == list(numbers.columns)
    np.testing.assert_array_equal(by_mapping.predict(numbers), by_frame.predict(numbers))


def test_mixed_object_column_is_text_whatever_the_row_order(data):
    X, y = data
    rng = np.random.default_rng(0)
    mixed = np.where(rng.uniform(size=len(X)) < 0.5, rng.integers(0, 4, len(X)),
                     rng.choice(["a", "b"], len(X))).astype(object)
    mixed = [int(v) if str(v).isdigit() else v for v in mixed]  # ints and strings
    X = X.assign(queue=pd.Series(mixed, index=X.index, dtype=object))
    order = rng.permutation(len(X))

    def fitted(rows):
        with pytest.warns(UserWarning, match="'queue' mixes text with other values"):
            return LeapRegressor(n_bins=4, n_estimators=10, random_state=0).fit(X.iloc[rows],
                                                                                 y[rows])

    first, shuffled = fitted(np.arange(len(X))), fitted(order)
    queue = list(X.columns).index("queue")
    assert first.categories_[queue] == ["0", "1", "2", "3", "a", "b"]
    assert shuffled.categories_ == first.categories_
    np.testing.assert_array_equal(shuffled.predict(X), first.predict(X))
    # 3 and "3" are one category
    as_text = X.assign(queue=X["queue"].map(str).astype(object))
    np.testing.assert_array_equal(first.predict(as_text), first.predict(X))


def test_fit_window_until_keeps_its_time_of_day(fleet_log, tiny_fleet):
    from leapml.placement import fit_window

    log = _moved(fleet_log, "2026-09-03 04:00", "America/Santiago")
    # a naive bound is a time of the log's clock; 2025-09-07 00:30 does not exist there
    # and becomes the next instant, 01:00
    with pytest.raises(ValueError, match="between 2026-08-30 13:30:00-04:00 and 2026-09-01 "
                                         "13:30:00-04:00"):
        fit_window(log, tiny_fleet.hardware, window_days=2, until="2026-09-01 13:30")
    with pytest.raises(ValueError, match="between 2025-09-04 01:00:00-04:00 and 2025-09-07 "
                                         "01:00:00-03:00"):
        fit_window(log, tiny_fleet.hardware, window_days=3, until="2025-09-07 00:30")


@pytest.mark.parametrize("column", [
    pd.date_range("2026-01-01", periods=200, freq="h"),
    pd.timedelta_range("1h", periods=200, freq="min"),
    np.arange(200) * (1 + 1j),
])
def test_a_column_neither_numbers_nor_categories_is_named(data, column):
    X, y = data
    frame = pd.DataFrame(X).add_prefix("x").assign(when=column)
    with pytest.raises(TypeError, match=r"column 'when' holds .* neither numbers nor categories"):
        LeapRegressor(n_bins=2, n_estimators=3, random_state=0).fit(frame, y)
    # nor at predict time, in a column that was numbers in fit (read as nanoseconds, before)
    numbers = frame.assign(when=np.arange(200.0))
    model = LeapRegressor(n_bins=2, n_estimators=3, random_state=0).fit(numbers, y)
    for rows in (frame, frame.head(1)):
        with pytest.raises(TypeError, match=r"column 'when' holds .* neither numbers nor categ"):
            model.predict(rows)


@pytest.mark.parametrize(("categories", "kind"), [
    (pd.Categorical(pd.date_range("2026-01-01", periods=200, freq="h").floor("D")), "Timestamp"),
    (pd.Categorical([(i % 3, "x") for i in range(200)]), "tuple"),
])
def test_categories_neither_text_nor_numbers_are_named(data, categories, kind):
    # a model file keeps categories as JSON: a tuple came back a list, and the file was refused
    X, y = data
    frame = pd.DataFrame(X).add_prefix("x").assign(when=categories)
    with pytest.raises(TypeError, match=rf"column 'when' holds categories of type {kind}"):
        LeapRegressor(n_bins=2, n_estimators=3, random_state=0).fit(frame, y)


def test_a_history_mean_beyond_any_log_throughput_is_named_not_turned_into_inf():
    from leapml.regressor import HISTORY_COLUMNS
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": rng.uniform(size=300), HISTORY_COLUMNS[0]: np.nan,
                      HISTORY_COLUMNS[1]: 0})
    y = np.exp(3 * X["size"])
    model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(X, y)
    rows = X.head(2).assign(**{HISTORY_COLUMNS[0]: [1e300, -1e300], HISTORY_COLUMNS[1]: 2})
    with pytest.raises(ValueError, match=HISTORY_COLUMNS[0]):
        model.predict(rows)
    # a log throughput a real job could have blends into a finite, positive prediction
    sane = model.predict(rows.assign(**{HISTORY_COLUMNS[0]: [2.0, 30.0]}))
    assert np.isfinite(sane).all() and (sane > 0).all()


def test_a_mapping_of_one_value_per_column_is_one_row(data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(frame, y)
    one = {name: float(frame[name].iloc[7]) for name in frame.columns}
    np.testing.assert_allclose(model.predict(one), model.predict(frame.iloc[[7]]))


def test_a_series_or_a_frame_without_columns_is_refused_by_what_it_is(data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    with pytest.raises(ValueError, match="no columns"):
        LeapRegressor(n_estimators=2).fit(frame[[]], y)
    model = LeapRegressor(n_bins=2, n_estimators=5, random_state=0).fit(frame, y)
    for shapeless in (frame.iloc[7], frame["x0"]):  # a row? a column? a Series does not say
        with pytest.raises(ValueError, match="one Series"):
            model.predict(shapeless)
    with pytest.raises(ValueError, match="no columns"):
        model.predict(frame[[]])
    np.testing.assert_allclose(model.predict(frame.iloc[7].to_frame().T),
                               model.predict(frame.iloc[[7]]))


# -- 7. logs as spreadsheets write them ----------------------------------------------


def _spread(log: pd.DataFrame, n: int = 40) -> pd.DataFrame:
    """``n`` attempts spread over the whole log."""
    return log.iloc[np.linspace(0, len(log) - 1, n).astype(int)].reset_index(drop=True)


def test_a_csv_log_in_spreadsheet_spellings_reads_as_the_schema_spells_it(tmp_path, fleet_log,
                                                                         tiny_fleet):
    from leapml.files import read_table
    from leapml.schema import coerce_attempts, validate_attempts

    log = _spread(fleet_log)
    days = pd.Timedelta(days=12)  # days 13 and on: a day past 12 settles the order
    log = log.assign(submit_time=log["submit_time"] + days, end_time=log["end_time"] + days)
    sheet = log.assign(
        submit_time=log["submit_time"].dt.strftime("%d/%m/%Y %H:%M:%S.%f"),  # day first, settled
        end_time=log["end_time"].dt.strftime("%d/%m/%Y %H:%M:%S.%f"),
        status=log["status"].astype(str).str.upper(),
        hardware_type=log["hardware_type"].astype(str) + " ",
        precision=log["precision"].astype(str).str.upper().str.replace("16", "-16"),
        throughput=log["throughput"].map(lambda v: "" if np.isnan(v) else f"{v:,.6f}"),
    )
    assert sheet["submit_time"].str.match(r"(1[3-9]|2\d|3[01])/").any()
    sheet.to_csv(tmp_path / "attempts.csv", index=False)
    read = validate_attempts(coerce_attempts(read_table(tmp_path / "attempts.csv")), tiny_fleet.hardware)
    assert (read["submit_time"] == log["submit_time"].dt.floor("us")).all()
    assert read["status"].astype(str).tolist() == log["status"].astype(str).tolist()
    assert read["hardware_type"].astype(str).tolist() == log["hardware_type"].astype(str).tolist()
    assert read["precision"].astype(str).tolist() == log["precision"].astype(str).tolist()
    np.testing.assert_allclose(read["throughput"], log["throughput"], rtol=1e-6)


@pytest.mark.parametrize("when", ["epoch", "ambiguous", "mixed_offsets"])
def test_a_csv_log_whose_times_need_a_guess_is_refused_by_fit(tmp_path, fleet_log, tiny_fleet,
                                                               capsys, when):
    log = _spread(fleet_log)  # days 1 to 8: as day/month and as month/day, all valid
    seconds = (log["submit_time"] - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
    times = {"epoch": seconds,
             "ambiguous": log["submit_time"].dt.strftime("%m/%d/%Y %H:%M"),
             "mixed_offsets": log["submit_time"].astype(str).where(np.arange(40) % 2 == 0,
                                                                   log["submit_time"].astype(str) + "+01:00")}
    log.assign(submit_time=times[when], end_time=pd.NaT).to_csv(tmp_path / "attempts.csv", index=False)
    write_table(tiny_fleet.hardware, tmp_path / "hardware.csv")
    assert main(["fit", "--attempts", str(tmp_path / "attempts.csv"), "--hardware",
                 str(tmp_path / "hardware.csv"), "--out", str(tmp_path / "m.leap")]) == 2
    err = capsys.readouterr().err
    assert "attempts.csv does not follow the schema" in err and "column 'submit_time'" in err
    assert {"epoch": "holds numbers, not dates", "ambiguous": "read both as day/month",
            "mixed_offsets": "mixes times with a UTC offset"}[when] in err
    assert not (tmp_path / "m.leap").exists()


def test_a_log_with_a_column_twice_is_named_by_the_readers():
    from leapml import build_features
    from leapml.fleet import simulate
    from leapml.schema import validate_attempts

    fleet = simulate("tiny", days=3, seed=0)
    doubled = pd.concat([fleet.attempts, fleet.attempts[["batch_size"]]], axis=1)
    with pytest.raises(ValueError, match=r"\['batch_size'\] more than once"):
        validate_attempts(doubled, fleet.hardware)
    with pytest.raises(ValueError, match=r"\['batch_size'\] more than once"):
        build_features(doubled, fleet.hardware)


@pytest.mark.parametrize("kind", ["numbers", "with a category"])
@pytest.mark.parametrize("where", ["fit", "predict"])
def test_infinity_in_a_feature_is_refused_with_its_column_named(kind, where):
    """+-inf is no feature value: both estimators name the column and count its rows."""
    from leapml.feasibility import FeasibilityClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"speed": rng.normal(size=300), "size": rng.normal(size=300)})
    if kind == "with a category":
        X["family"] = pd.Categorical(rng.choice(["a", "b"], 300))
    bad = X.assign(size=np.where(np.arange(300) < 2, -np.inf, X["size"]))
    y = np.exp(X["speed"].to_numpy() + 3)
    for model, target in ((LeapRegressor(n_estimators=3, min_bin_rows=100, random_state=0), y),
                          (FeasibilityClassifier(n_estimators=3, random_state=0), y > np.median(y))):
        with pytest.raises(ValueError, match=r"contains infinity: column 'size' \(2 rows\)"):
            if where == "fit":
                model.fit(bad, target)
            else:
                model.fit(X, target).predict(bad)
        # NaN still means unknown, not an error
        fitted = model.fit(X, target)
        answer = (fitted.predict_proba if hasattr(fitted, "predict_proba") else fitted.predict)
        assert np.isfinite(answer(X.assign(size=np.nan))).all()


# -- errors in the library's words, not its dependencies' -------------------------


def test_arguments_a_dependency_would_trip_over_are_named(data, fleet_log, tiny_fleet,
                                                          fleet_model):
    from sklearn.utils._param_validation import InvalidParameterError

    from leapml import rank_candidates, within_tolerance
    from leapml.feasibility import FeasibilityClassifier
    from leapml.placement import explain_picks, place

    X, y = data
    for estimator in (LeapRegressor(n_jobs=0), FeasibilityClassifier(n_jobs=0)):
        with pytest.raises(InvalidParameterError, match="'n_jobs' parameter"):
            estimator.fit(X, y > np.median(y) if isinstance(estimator, FeasibilityClassifier) else y)
    frame = pd.DataFrame(X)
    twice = frame.set_axis([frame.columns[0], frame.columns[0], *frame.columns[2:]], axis=1)
    with pytest.raises(ValueError, match=r"X has column\(s\) .* more than once"):
        LeapRegressor(n_estimators=3).fit(twice, y)
    with pytest.raises(ValueError, match="y_pred must be one value per row, got shape"):
        within_tolerance([1.0, 2.0, 3.0, 4.0], [[1.0, 2.0], [3.0, 4.0]])
    for tol in (None, "0.2", True):
        with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
            within_tolerance([1.0], [1.0], tol=tol)
    candidates = pd.DataFrame({"job_id": [1, 1], "hardware_type": [1, 2],
                               "predicted_throughput": [10.0, 20.0], "trainer_count": 1})
    with pytest.raises(ValueError, match="its key '1' is of type str, the hardware type 1 of "
                                         "type int"):
        rank_candidates(candidates, cost={"1": 1.0, "2": 2.0})
    jobs = tiny_fleet.jobs[LAUNCH].head(2)
    ranked = place(fleet_model, jobs, tiny_fleet.hardware, history=fleet_log)
    with pytest.raises(ValueError, match="more than once: give each job once"):
        explain_picks(fleet_model, ranked, pd.concat([jobs, jobs.head(1)]), tiny_fleet.hardware,
                      history=fleet_log)
    others = tiny_fleet.jobs[LAUNCH].iloc[5:7]
    with pytest.raises(ValueError, match=r"ranked has no pick \(rank 1\) for any job"):
        explain_picks(fleet_model, ranked, others, tiny_fleet.hardware, history=fleet_log)
