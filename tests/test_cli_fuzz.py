"""The ``leapml`` command fed malformed files: one clear line on stderr, exit 2, no traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from leapml.cli import main

LAUNCH = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
          "seq_len", "parallelism"]


@pytest.fixture(scope="module")
def good(tmp_path_factory, tiny_fleet):
    """A valid fleet folder, its tables as loose files, a model and a submissions file."""
    root = tmp_path_factory.mktemp("good")
    fleet = tiny_fleet.save(root / "fleet")
    shutil.copy(fleet / "attempts.parquet", root / "attempts.parquet")
    shutil.copy(fleet / "hardware.parquet", root / "hardware.parquet")
    tiny_fleet.jobs[LAUNCH].head(3).to_csv(root / "submissions.csv", index=False)
    model = root / "model.leap"
    assert main(["fit", "--fleet", str(fleet), "--out", str(model), "--window-days", "3",
                 "--n-estimators", "5"]) == 0
    return root


def _random_bytes(path, seed, size=2048):
    path.write_bytes(np.random.default_rng(seed).bytes(size))


# Each maker writes one malformed file at ``path`` from the valid one at ``source``.
MAKERS = {
    "truncated": lambda path, source: path.write_bytes(source.read_bytes()[: len(source.read_bytes()) // 2]),
    "random-bytes": lambda path, source: _random_bytes(path, 1),
    "empty": lambda path, source: path.write_bytes(b""),
    "directory": lambda path, source: path.mkdir(),
    "text": lambda path, source: path.write_text("this is not a table\n\x00\x01 at all\n"),
}
WRONG_COLUMNS = "user,score,when\nalice,1,yesterday\nbob,2,today\n"


def _argv(good, target, path):
    """The command that reads ``path`` in the role of ``target``."""
    files = {name: str(good / name) for name in
             ("attempts.parquet", "hardware.parquet", "model.leap", "submissions.csv")}
    files[target] = str(path)
    loose = ["--attempts", files["attempts.parquet"], "--hardware", files["hardware.parquet"]]
    if target == "model.leap":
        return ["rank", "--model", files["model.leap"], "--submissions",
                files["submissions.csv"], *loose]
    if target == "submissions.csv":
        return ["predict", "--model", files["model.leap"], "--submissions",
                files["submissions.csv"], *loose]
    return ["fit", *loose, "--out", str(path.parent / "out.leap"), "--n-estimators", "5"]


def _assert_one_clear_line(code, err, command, name=None):
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"leapml {command}: error: ")
    if name is not None:
        assert name in lines[0]


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("target", ["attempts.parquet", "hardware.parquet", "model.leap",
                                    "submissions.csv"])
def test_malformed_file_gives_one_line(good, tmp_path, capsys, target, maker):
    path = tmp_path / target
    MAKERS[maker](path, good / target)
    argv = _argv(good, target, path)
    code = main(argv)
    _assert_one_clear_line(code, capsys.readouterr().err, argv[0], name=target)


@pytest.mark.parametrize("target", ["attempts.csv", "hardware.csv", "submissions.csv"])
def test_csv_with_wrong_columns_names_the_file(good, tmp_path, capsys, target):
    path = tmp_path / target
    path.write_text(WRONG_COLUMNS)
    role = {"attempts.csv": "attempts.parquet", "hardware.csv": "hardware.parquet"}.get(target, target)
    argv = _argv(good, role, path)
    code = main(argv)
    err = capsys.readouterr().err
    _assert_one_clear_line(code, err, argv[0], name=target)
    assert "missing column" in err or "lacks column" in err


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_under_every_extension(good, tmp_path, capsys, seed):
    suffix = [".parquet", ".csv", ".leap"][seed % 3]
    path = tmp_path / f"fuzz{suffix}"
    _random_bytes(path, seed, size=64 + 500 * seed)
    target = {".parquet": "attempts.parquet", ".csv": "submissions.csv", ".leap": "model.leap"}[suffix]
    argv = _argv(good, target, path)
    code = main(argv)
    _assert_one_clear_line(code, capsys.readouterr().err, argv[0], name=path.name)


@pytest.mark.parametrize("table", ["attempts", "hardware", "jobs", "models", "releases"])
@pytest.mark.parametrize("maker", ["truncated", "random-bytes", "foreign", "missing"])
def test_malformed_fleet_folder(good, tmp_path, capsys, table, maker):
    folder = shutil.copytree(good / "fleet", tmp_path / "fleet")
    path = folder / f"{table}.parquet"
    if maker == "foreign":
        pd.DataFrame({"user": ["a"], "score": [1.0]}).to_parquet(path)
    elif maker == "missing":
        path.unlink()
    else:
        source = tmp_path / "source.parquet"
        shutil.copy(path, source)
        path.unlink()
        MAKERS[maker](path, source)
    code = main(["describe", str(folder)])
    err = capsys.readouterr().err
    _assert_one_clear_line(code, err, "describe", name=f"{table}.parquet")


def test_fleet_argument_that_is_a_file(good, capsys):
    code = main(["describe", str(good / "attempts.parquet")])
    _assert_one_clear_line(code, capsys.readouterr().err, "describe", name="attempts.parquet")


def test_submissions_with_unparseable_times(good, tmp_path, capsys):
    path = tmp_path / "submissions.csv"
    frame = pd.read_csv(good / "submissions.csv").assign(submit_time="not a time")
    frame.to_csv(path, index=False)
    argv = _argv(good, "submissions.csv", path)
    code = main(argv)
    err = capsys.readouterr().err
    _assert_one_clear_line(code, err, argv[0], name="submissions.csv")
    assert "submit_time" in err


@pytest.mark.parametrize("case", ["random-bytes", "bad-times"])
def test_real_process_prints_exactly_one_stderr_line(good, tmp_path, case):
    """Outside pytest's capture: warnings or logging would show up as extra lines."""
    if case == "random-bytes":
        path = tmp_path / "attempts.parquet"
        _random_bytes(path, 7)
        argv = _argv(good, "attempts.parquet", path)
    else:
        path = tmp_path / "submissions.csv"
        pd.read_csv(good / "submissions.csv").assign(submit_time="soon").to_csv(path, index=False)
        argv = _argv(good, "submissions.csv", path)
    done = subprocess.run([sys.executable, "-m", "leapml.cli", *argv], capture_output=True,
                          text=True, timeout=120, check=False)
    _assert_one_clear_line(done.returncode, done.stderr, argv[0], name=path.name)


@pytest.mark.parametrize("command", ["predict", "rank"])
@pytest.mark.parametrize(
    ("case", "change", "words"),
    [
        ("header-only", lambda f: f.iloc[:0], "has no rows to score"),
        ("text-trainers", lambda f: f.assign(trainer_count="eight"), "'trainer_count' has dtype"),
        ("null-trainers", lambda f: f.assign(trainer_count=[1.0, None, 2.0]), "'trainer_count' is null"),
        ("negative-batch", lambda f: f.assign(batch_size=-1), "batch_size must be finite and > 0"),
        ("blank-precision", lambda f: f.assign(precision="-"), "column 'precision' is null"),
    ],
)
def test_submissions_with_bad_values_name_the_file(good, tmp_path, capsys, command, case, change,
                                                   words):
    path = tmp_path / f"{case}.csv"
    frame = pd.read_csv(good / "submissions.csv").head(3).assign(hardware_type="T4-16GB")
    change(frame).to_csv(path, index=False)
    argv = _argv(good, "submissions.csv", path)
    argv[0] = command
    code = main(argv)
    err = capsys.readouterr().err
    _assert_one_clear_line(code, err, command, name=path.name)
    assert words in err


@pytest.mark.parametrize("command", ["predict", "rank"])
def test_submissions_read_the_spellings_fit_reads(good, tmp_path, capsys, command):
    """`fit` reads "1,024", counts as text and " FP16" in a log; predict and rank refused the
    same spellings in submissions ("has dtype str, expected numbers")."""
    frame = pd.read_csv(good / "submissions.csv").assign(hardware_type="T4-16GB")
    spelled = frame.assign(batch_size=[f"{b:,}" for b in frame["batch_size"]],
                           trainer_count=frame["trainer_count"].astype(str),
                           precision=[f" {p.upper()} " for p in frame["precision"]])
    answers = []
    for name, table in (("plain.csv", frame), ("spelled.csv", spelled)):
        table.to_csv(tmp_path / name, index=False)
        argv = _argv(good, "submissions.csv", tmp_path / name)
        argv[0] = command
        assert main(argv) == 0, capsys.readouterr().err
        answers.append(capsys.readouterr().out)
    assert answers[0] == answers[1]


def test_a_reader_that_stops_early_is_no_error(good, tiny_fleet, tmp_path):
    """`leapml rank ... | head -1`: the closed pipe ended in an error line and exit 2."""
    path = tmp_path / "many.csv"
    tiny_fleet.jobs[LAUNCH].head(200).to_csv(path, index=False)  # far more than a pipe holds
    argv = _argv(good, "submissions.csv", path)
    argv[0] = "rank"
    process = subprocess.Popen([sys.executable, "-m", "leapml.cli", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline()  # the header, then the reader goes away
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=120) == 0
    assert "error" not in err and "Traceback" not in err
