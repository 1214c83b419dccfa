"""The report folder a backtest writes."""

from __future__ import annotations

import pandas as pd
import pytest

from leapml.backtest import nightly
from leapml.report import format_table, write_report


@pytest.fixture(scope="module")
def result(tiny_fleet, quick_models):
    return nightly(tiny_fleet.attempts, tiny_fleet.hardware, models=quick_models, window_days=5,
                   nights=1, oracle=tiny_fleet.expected_throughput, regret_jobs=60, progress=False)


def test_report_holds_tables_plots_and_results(result, tmp_path):
    path = write_report(result, tmp_path / "r", title="T", preamble="Fleet X.")
    text = path.read_text()
    assert text.startswith("# T\n\nFleet X.")
    for png in ("predicted_vs_measured.png", "accuracy_by_night.png", "accuracy_by_decile.png",
                "regret.png"):
        assert (tmp_path / "r" / png).stat().st_size > 1000
        assert f"]({png})" in text
    scores = pd.read_csv(tmp_path / "r" / "scores.csv", parse_dates=["night"])
    pd.testing.assert_frame_equal(scores, result.scores, check_dtype=False)
    assert not list((tmp_path / "r").glob(".*.tmp"))


def test_report_without_plots_has_no_images(result, tmp_path):
    text = write_report(result, tmp_path, plots=False).read_text()
    assert "![" not in text and not list(tmp_path.glob("*.png"))


def test_format_table_percentages_and_missing_values():
    table = pd.DataFrame({"name": ["a", "b"], "share": [0.5, float("nan")], "n": [3, 4]})
    lines = format_table(table, percent=("share",)).splitlines()
    assert lines[0] == "| name | share | n |"
    assert lines[2] == "| a | 50.0% | 3 |"
    assert lines[3] == "| b | - | 4 |"
