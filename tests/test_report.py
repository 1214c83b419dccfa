"""The report folder a backtest writes."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from leapml.evaluation.backtest import BacktestResult, nightly
from leapml.evaluation.report import _NAMES, format_table, model_trees, summarize, write_report


@pytest.fixture(scope="module")
def result(tiny_fleet, quick_models):
    return nightly(tiny_fleet.attempts, tiny_fleet.hardware, models=quick_models, window_days=5,
                   nights=1, oracle=tiny_fleet.expected_throughput, regret_jobs=60, progress=False)


def test_report_holds_tables_plots_and_results(result, tmp_path):
    path = write_report(result, tmp_path / "r", title="T", preamble="Fleet X.")
    text = path.read_text()
    assert text.startswith("# T\n\n## Summary\n\n**What was run.**")
    assert "\n\nFleet X.\n\n## Against the published figures" in text
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


def _sections(text: str) -> dict[str, str]:
    """The report's ``## `` sections by heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _cells(text: str) -> set[str]:
    return {cell.strip() for line in text.splitlines() if line.startswith("|")
            for cell in line.strip("|").split("|")}


def test_summary_figures_are_the_tables_figures(result, tmp_path):
    text = write_report(result, tmp_path, plots=False, preset="tiny", window_days=5,
                        trees={"leap": 15}).read_text()
    sections = _sections(text)
    summary = sections.pop("Summary")
    assert text.index("## Summary") < text.index("## Against the published figures")
    cells = set().union(*(_cells(body) for body in sections.values()))
    figures = re.findall(r"\d+\.\d%", summary)
    assert len(figures) >= 6, summary
    assert not [f for f in figures if f not in cells], summary
    for seconds in re.findall(r"(\d[\d.]*) s\b", summary):
        assert seconds in cells
    # the headline is the leap row of the accuracy table, and names the best baseline
    headline = re.search(r"LeapRegressor is within \+-20% .*? on (\d+\.\d)% of attempts", summary)
    medians = result.summary()["median"]
    assert headline.group(1) == f"{100 * medians['leap']:.1f}"
    best = medians.drop(["leap", "ceiling"]).idxmax()
    assert f"the best baseline, {_NAMES[best]} (`{best}`), on {100 * medians[best]:.1f}%" in summary
    assert "1 night(s)" in summary and "previous 5 days" in summary and "15 trees a LightGBM model" in summary
    assert "Preset `tiny` is outside calibration" in summary
    assert "oracle feasibility" in summary


def _scores(values: dict) -> pd.DataFrame:
    """One night's scores: ``{(model, slice): within_20}``."""
    rows = [{"night": pd.Timestamp("2026-02-01"), "model": model, "slice": slice_,
             "within_20": value, "within_10": value / 2, "within_20_by_device_hours": value,
             "coverage": 1.0}
            for (model, slice_), value in values.items()]
    return pd.DataFrame(rows)


def test_summary_sorts_slices_into_wins_and_matches():
    scores = _scores({
        ("leap", "all"): 0.70, ("single_lightgbm", "all"): 0.72, ("persistence", "all"): 0.5,
        ("leap", "job_new"): 0.40, ("single_lightgbm", "job_new"): 0.30,
        ("persistence", "job_new"): 0.0,
        ("leap", "job_seen_before"): 0.801, ("single_lightgbm", "job_seen_before"): 0.799,
        ("persistence", "job_seen_before"): 0.6,
    })
    text = summarize(BacktestResult(scores, pd.DataFrame()), preset="production", window_days=30)
    wins = re.search(r"\*\*Where LeapRegressor leads.*", text).group(0)
    matches = re.search(r"\*\*Where a baseline matches.*", text).group(0)
    beaten = re.search(r"\*\*Where a baseline beats.*", text).group(0)
    assert wins.endswith(": new jobs: 40.0% against 30.0% for the single LightGBM.")
    assert beaten.endswith(": all attempts: 70.0% against 72.0% for the single LightGBM.")
    # 0.2 points apart: a match, not a win
    assert matches.endswith(": jobs seen before: 80.1% against 79.9% for the single LightGBM.")
    assert "regret" not in text and "Fit time" not in text  # no such tables: not described
    assert "Preset `production` is calibrated" in text


def test_summary_without_leap_or_baselines_still_says_what_ran():
    scores = _scores({("lookup_table", "all"): 0.1})
    text = summarize(BacktestResult(scores, pd.DataFrame()))
    assert "Models: the lookup table (`lookup_table`)" in text
    assert "Headline" not in text and "not from the simulator" in text


def test_published_comparison_names_the_preset(result, tmp_path):
    section = _sections(write_report(result, tmp_path, plots=False, preset="small").read_text())
    note = section["Against the published figures"]
    assert "the `small` preset, median over 1 night(s)" in note
    assert "the production fleet" in note and "outside calibration" in note


def test_model_trees_reads_each_models_tree_count(quick_models):
    assert model_trees(quick_models) == {"leap": 15, "single_lightgbm": 15}


def test_summary_says_none_where_a_group_is_empty():
    scores = _scores({("leap", "all"): 0.5, ("persistence", "all"): 0.7})
    text = summarize(BacktestResult(scores, pd.DataFrame()))
    assert "**Where LeapRegressor leads every baseline**: none." in text
    assert "**Where a baseline beats it**: all attempts: 50.0% against 70.0% for persistence." in text


def test_summary_leaves_out_the_nights_caveat_at_thirty_nights():
    nights = pd.date_range("2026-02-01", periods=30, freq="D")
    scores = pd.concat([_scores({("leap", "all"): 0.7, ("persistence", "all"): 0.6}).assign(night=n)
                        for n in nights], ignore_index=True)
    text = summarize(BacktestResult(scores, pd.DataFrame()), preset="production")
    assert "30 night(s) of the synthetic fleet" in text
    assert "narrower" not in text


def test_a_result_of_no_night_is_no_report(result, tmp_path):
    for empty in (BacktestResult(result.scores.iloc[:0], result.predictions.iloc[:0], None,
                                 result.fit_seconds),
                  BacktestResult(result.scores, result.predictions, result.regret.iloc[:0],
                                 result.fit_seconds)):
        with pytest.raises(ValueError, match="nothing to report"):
            write_report(empty, tmp_path / "report", plots=False)
    assert not (tmp_path / "report").exists()
