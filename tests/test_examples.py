"""Every script in examples/ runs on the tiny preset and produces what it promises.

Examples run in this process (``runpy``), with ``LEAPML_EXAMPLE_PRESET=tiny``,
few trees, and ``LEAPML_EXAMPLE_OUT`` pointing at a temporary folder; the
working directory is another empty temporary folder, which must stay empty:
an example writes only where it says it does.
"""

from __future__ import annotations

import ast
import runpy
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TESTED = {
    "quickstart",
    "rank_one_submission",
    "plot_nightly_backtest",
    "bring_your_own_logs",
    "plot_held_out_hardware",
    "rank_from_measurements",
}


@pytest.fixture
def run_example(monkeypatch, tmp_path, capsys):
    """Run ``examples/<name>.py``; return its globals, its stdout and its output folder."""

    def run(name: str):
        out = tmp_path / "out"
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        monkeypatch.setenv("LEAPML_EXAMPLE_PRESET", "tiny")
        monkeypatch.setenv("LEAPML_EXAMPLE_TREES", "8")
        monkeypatch.setenv("LEAPML_EXAMPLE_OUT", str(out))
        monkeypatch.chdir(cwd)
        try:
            namespace = runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
        finally:
            plt.close("all")
        stdout = capsys.readouterr().out
        assert list(cwd.iterdir()) == [], f"{name} wrote into the working directory"
        assert namespace["PRESET"] == "tiny"
        return namespace, stdout, out

    return run


def test_every_example_is_tested():
    assert {p.stem for p in EXAMPLES.glob("*.py")} == TESTED


@pytest.mark.parametrize("name", sorted(TESTED))
def test_example_is_a_titled_script_of_notebook_cells(name):
    source = (EXAMPLES / f"{name}.py").read_text()
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring, f"{name} has no title docstring"
    title = docstring.splitlines()[0]
    assert title.endswith((".", "?")) and len(title) < 100, title
    assert 'os.environ.get("LEAPML_EXAMPLE_PRESET", "small")' in source
    # A cell runs from one "# %%" line (which may carry a title) to the next.
    cells = [cell.partition("\n")[2] for cell in source.split("\n# %%")[1:]]
    assert len(cells) >= 3, f"{name} has fewer than three cells"
    for i, cell in enumerate(cells):
        # Each cell must stand alone in a notebook: no statement split across cells.
        compile(cell, f"{name}.py cell {i}", "exec")


def _sorted_within_jobs(ranking: pd.DataFrame) -> bool:
    for _, rows in ranking.groupby("job_id", sort=False):
        if rows["rank"].tolist() != list(range(1, len(rows) + 1)):
            return False
        if "rankable" in rows:
            rows = rows[rows["rankable"]]  # the rest come last, in no order of merit
        per_cost = rows["score" if "score" in rows else "throughput_per_cost"].to_numpy()
        if np.any(np.diff(per_cost[np.isfinite(per_cost)]) > 0):
            return False
    return True


def test_quickstart_fits_predicts_and_ranks(run_example):
    ns, stdout, _ = run_example("quickstart")
    assert "within +-20%" in stdout
    predicted = ns["predicted"]
    assert predicted.shape == (int((ns["ok"] & ns["last_day"]).sum()),)
    assert np.all(predicted > 0)
    assert 0.0 <= ns["accuracy"] <= 1.0
    ranking = ns["ranking"]
    assert ranking["job_id"].nunique() == 3
    assert ranking.groupby("job_id").size().max() == 3
    assert _sorted_within_jobs(ranking)
    assert str(ranking["hardware_type"].iloc[0]) in stdout


def test_rank_one_submission_ranks_every_available_type(run_example):
    ns, stdout, out = run_example("rank_one_submission")
    ranked, fleet, now = ns["ranked"], ns["fleet"], ns["now"]
    available = set(fleet.hardware.loc[fleet.hardware["introduced"] <= now, "hardware_type"].astype(str))
    assert set(ranked["hardware_type"]) == available
    assert ranked["job_id"].nunique() == 1
    assert _sorted_within_jobs(ranked)
    assert 0.0 <= ns["regret"] <= 1.0
    assert f"picked {ranked['hardware_type'].iloc[0]}" in stdout
    # the ranking shows a probability of fitting, an interval and the reasons of the pick
    assert ranked["fit_probability"].between(0, 1).all()
    assert (ranked["throughput_low"] <= ranked["throughput_high"]).all()
    assert len(ns["reasons"]) == 3 and (ns["reasons"]["hardware_type"] == ranked["hardware_type"].iloc[0]).all()
    assert (out / "rank_one_submission.png").stat().st_size > 10_000


def test_plot_nightly_backtest_writes_figures_and_report(run_example):
    ns, stdout, out = run_example("plot_nightly_backtest")
    result = ns["result"]
    assert result.scores["night"].nunique() == ns["NIGHTS"]
    assert {"leap", "lookup_table", "ceiling"} <= set(ns["summary"]["model"])
    assert "| model |" in stdout and "mean_regret" in stdout
    assert (out / "nightly_backtest.png").stat().st_size > 10_000
    report = (out / "report" / "report.md").read_text()
    assert "## Against the published figures" in report
    for name in ("scores.csv", "predictions.parquet", "regret.csv"):
        assert (out / "report" / name).exists(), name


def test_bring_your_own_logs_round_trips_csv_model_and_ranking(run_example):
    ns, stdout, out = run_example("bring_your_own_logs")
    for name in ("attempts_export.csv", "hardware_export.csv", "attempts.parquet",
                 "hardware.parquet", "model.leap", "submissions.csv", "ranking.csv"):
        assert (out / name).exists(), name
    assert f"working folder: {out}" in stdout
    # The CSV round trip kept every attempt, and the loaded model predicts as the fitted one.
    assert len(ns["attempts"]) == len(ns["fleet"].attempts)
    from leapml import build_features

    X = build_features(ns["attempts"], ns["hardware"]).tail(50)
    np.testing.assert_array_equal(ns["served"].predict(X), ns["model"].predict(X))
    ranking = pd.read_csv(out / "ranking.csv")
    assert ranking["job_id"].nunique() == 2
    assert ranking.groupby("job_id").size().max() == 3
    assert _sorted_within_jobs(ranking)


def test_plot_held_out_hardware_scores_each_held_out_type(run_example):
    ns, stdout, out = run_example("plot_held_out_hardware")
    drops = ns["drops"]
    assert len(drops) == ns["N_TYPES"]
    assert drops["hardware_type"].is_unique
    assert np.allclose(drops["drop_points"], 100 * (drops["in_distribution"] - drops["held_out"]))
    assert "mean drop:" in stdout
    assert (out / "held_out_hardware.png").stat().st_size > 10_000


def test_rank_from_measurements_maps_the_table_and_ranks_every_costed_type(run_example, monkeypatch):
    monkeypatch.delenv("LEAPML_MEASUREMENTS", raising=False)  # the table the example writes itself
    ns, stdout, out = run_example("rank_from_measurements")
    attempts, hardware, ranking = ns["attempts"], ns["hardware"], ns["ranking"]
    assert (out / "measurements" / "example.csv").exists() and (out / "ranking.csv").exists()
    assert len(attempts) == len(pd.read_csv(out / "measurements" / "example.csv"))
    # amp rows became the fp16 family, and every assumption was printed
    assert set(attempts["precision"].astype(str)) == {"fp32", "fp16"}
    for note in ns["log"].notes:
        assert note in stdout
    assert set(ranking["hardware_type"]) == set(hardware["hardware_type"])
    assert _sorted_within_jobs(ranking) and (ranking["predicted_throughput"] > 0).all()
    assert f"recommended: {ranking['hardware_type'].iloc[0]}" in stdout
