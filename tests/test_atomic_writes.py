"""Nothing lost: a write interrupted midway leaves the previous file whole and no temporary file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pandas as pd
import pytest

from leapml import LeapRegressor
from leapml.evaluation.backtest import nightly
from leapml.evaluation.baselines import LookupTableRegressor
from leapml.evaluation.report import write_report
from leapml.files import read_table, write_table
from leapml.fleet import load_fleet
from leapml.model_file import load, save


class Interrupted(Exception):
    """Stands for a crash halfway through a write."""


def leftovers(folder):
    """Temporary files ``atomic_path`` would leave behind."""
    return sorted(p.name for p in folder.rglob("*.tmp"))


def half_then_fail(real):
    """Wrap a writer: let it write the file, keep half of it, then fail."""
    def writer(self_or_frame, target, *args, **kwargs):
        real(self_or_frame, target, *args, **kwargs)
        with open(target, "r+b") as handle:
            handle.truncate(max(os.path.getsize(target) // 2, 1))
        raise Interrupted("crash midway")
    return writer


@pytest.fixture()
def frames():
    old = pd.DataFrame({"a": np.arange(50), "b": np.linspace(0, 1, 50)})
    return old, old.assign(b=-old["b"], c="new")


@pytest.mark.parametrize(("suffix", "method"), [(".parquet", "to_parquet"), (".csv", "to_csv")])
def test_interrupted_table_write_keeps_the_previous_table(tmp_path, monkeypatch, frames, suffix, method):
    old, new = frames
    path = write_table(old, tmp_path / f"table{suffix}")
    before = path.read_bytes()
    monkeypatch.setattr(pd.DataFrame, method, half_then_fail(getattr(pd.DataFrame, method)))
    with pytest.raises(Interrupted):
        write_table(new, path)
    assert path.read_bytes() == before
    pd.testing.assert_frame_equal(read_table(path), old)
    assert leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def two_models():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    y = np.exp(3 * X[:, 0] + X[:, 1])
    first = LeapRegressor(n_bins=3, n_estimators=5, random_state=0, n_jobs=1).fit(X, y)
    second = LeapRegressor(n_bins=2, n_estimators=5, random_state=1, n_jobs=1).fit(X, y[::-1])
    return X, first, second


def test_interrupted_model_save_keeps_the_previous_model(tmp_path, monkeypatch, two_models):
    X, first, second = two_models
    path = save(first, tmp_path / "model.leap")
    before = path.read_bytes()
    real = zipfile.ZipFile.writestr
    calls = []

    def writestr(self, name, data, *args, **kwargs):
        calls.append(name)
        if len(calls) == 3:  # the manifest and a member are already in the archive
            raise Interrupted("crash midway")
        return real(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    with pytest.raises(Interrupted):
        save(second, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    np.testing.assert_array_equal(load(path).predict(X), first.predict(X))
    assert leftovers(tmp_path) == []


def test_interrupted_fleet_save_keeps_every_previous_table(tmp_path, monkeypatch, tiny_fleet):
    from leapml.fleet import Fleet

    folder = tiny_fleet.save(tmp_path / "fleet")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real = pd.DataFrame.to_parquet
    calls = []

    def to_parquet(frame, path, *args, **kwargs):
        calls.append(path)
        writer = half_then_fail(real) if len(calls) == 3 else real  # crash on models.parquet
        return writer(frame, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", to_parquet)
    changed = Fleet(**{**tiny_fleet.__dict__, "attempts": tiny_fleet.attempts.head(10)})
    with pytest.raises(Interrupted):
        changed.save(folder)
    monkeypatch.undo()
    # each file is whole: the tables written before the crash are the new ones, the rest the old
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(after) == set(before)
    assert len(read_table(folder / "attempts.parquet")) == 10
    for name in ("models.parquet", "jobs.parquet", "interactions.parquet", "releases.parquet",
                 "params.json"):
        assert after[name] == before[name]
    pd.testing.assert_frame_equal(read_table(folder / "models.parquet"), tiny_fleet.models)
    assert leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def backtest(tiny_fleet):
    models = {"lookup_table": LookupTableRegressor()}
    return nightly(tiny_fleet.attempts, tiny_fleet.hardware, models=models, window_days=5,
                   nights=2, progress=False)


def test_interrupted_report_keeps_the_previous_report(tmp_path, monkeypatch, backtest):
    folder = tmp_path / "report"
    report = write_report(backtest, folder, title="first", plots=False)
    before = report.read_text()
    import leapml.evaluation.report

    real = leapml.evaluation.report.format_table
    monkeypatch.setattr(leapml.evaluation.report, "format_table",
                        lambda *a, **k: (_ for _ in ()).throw(Interrupted("crash")))
    with pytest.raises(Interrupted):
        write_report(backtest, folder, title="second", plots=False)
    monkeypatch.setattr(leapml.evaluation.report, "format_table", real)
    assert report.read_text() == before
    assert leftovers(tmp_path) == []


def test_interrupted_plot_keeps_the_previous_report(tmp_path, monkeypatch, backtest):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    folder = tmp_path / "report"
    write_report(backtest, folder, title="first", plots=True)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    monkeypatch.setattr(Figure, "savefig", half_then_fail(Figure.savefig))
    with pytest.raises(Interrupted):
        write_report(backtest, folder, title="second", plots=True)
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert after["report.md"] == before["report.md"]
    png = sorted(n for n in before if n.endswith(".png"))
    assert png and all(after[n] == before[n] for n in png)
    assert leftovers(tmp_path) == []


_SLOW_WRITER = textwrap.dedent("""
    import signal, sys, time
    # a process started in the background may inherit SIGINT ignored: Ctrl-C is what is tested
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import pandas as pd
    from leapml.files import write_table

    real = pd.DataFrame.to_parquet

    def slow(self, path, *args, **kwargs):
        real(self, path, *args, **kwargs)
        with open(path, "r+b") as handle:
            handle.truncate(100)
        print("writing", flush=True)
        time.sleep(60)

    pd.DataFrame.to_parquet = slow
    write_table(pd.DataFrame({"a": range(1000)}), sys.argv[1])
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_process_killed_mid_write_keeps_the_previous_file(tmp_path, sig):
    path = write_table(pd.DataFrame({"a": [1, 2, 3]}), tmp_path / "table.parquet")
    before = path.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode != 0
    assert path.read_bytes() == before
    assert read_table(path)["a"].tolist() == [1, 2, 3]
    if sig == signal.SIGINT:
        # KeyboardInterrupt unwinds through atomic_path, which removes its temporary file
        assert leftovers(tmp_path) == []
    else:
        # SIGKILL runs no cleanup: at most one hidden temporary file stays beside the target
        assert all(name.startswith(".table.parquet.") for name in leftovers(tmp_path))


def test_fleet_written_whole_loads_back(tmp_path, tiny_fleet):
    # the folder a completed save leaves is the fleet itself
    back = load_fleet(tiny_fleet.save(tmp_path / "fleet"))
    pd.testing.assert_frame_equal(back.attempts, tiny_fleet.attempts)
