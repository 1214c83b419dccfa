"""The ``leapml`` command, called through ``main([...])`` as a user would type it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leapml.cli import main


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("fleet")
    assert main(["simulate", "--preset", "tiny", "--days", "6", "--seed", "3", "--out", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def model_file(fleet_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.leap"
    code = main(["fit", "--fleet", str(fleet_dir), "--out", str(path),
                 "--window-days", "5", "--n-estimators", "10"])
    assert code == 0
    return path


@pytest.mark.parametrize("options, router, combine, trees_per_round", [
    (["--router", "ordinal"], "ordinal", "soft", 1),
    (["--router", "multiclass"], "multiclass", "soft", None),
    (["--published"], "multiclass", "hard", None),
])
def test_fit_can_choose_the_router_or_the_published_configuration(
        fleet_dir, tmp_path, options, router, combine, trees_per_round):
    from leapml.model_file import load

    path = tmp_path / "model.leap"
    assert main(["fit", "--fleet", str(fleet_dir), "--out", str(path), "--window-days", "5",
                 "--n-estimators", "10", "--no-feasibility", *options]) == 0
    model = load(path)
    assert (model.router, model.combine) == (router, combine)
    per_round = model.classifier_.num_model_per_iteration()
    assert per_round == (trees_per_round or model.n_bins_)


def test_simulate_writes_a_fleet_that_loads_back(fleet_dir):
    from leapml.fleet import load_fleet, simulate

    loaded = load_fleet(fleet_dir)
    fresh = simulate("tiny", days=6, seed=3)
    assert len(loaded.attempts) == len(fresh.attempts)
    assert loaded.attempts["throughput"].equals(fresh.attempts["throughput"])


def test_describe_prints_the_calibration_table(fleet_dir, capsys):
    assert main(["describe", str(fleet_dir)]) == 0
    out = capsys.readouterr().out
    assert "attempts" in out and "hardware" in out
    assert out.startswith("Preset 'tiny': outside calibration")


@pytest.mark.parametrize("options", [["--preset", "production"], ["--days", "3"], ["--seed", "0"]])
def test_describe_refuses_simulation_options_beside_a_fleet_folder(fleet_dir, capsys, options):
    """Before, ``describe FOLDER --preset production`` described the folder's tiny fleet in silence."""
    assert main(["describe", str(fleet_dir), *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"leapml describe: error: {options[0]} describe a fleet to simulate")
    assert len(err.strip().splitlines()) == 1


def test_rank_orders_every_candidate_of_each_submission(fleet_dir, model_file, tmp_path):
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    submissions = fleet.jobs.head(4).drop(columns=[c for c in fleet.jobs if c.startswith("_")])
    sub_path = tmp_path / "submissions.csv"
    submissions.to_csv(sub_path, index=False)
    out = tmp_path / "ranked.csv"
    code = main(["rank", "--model", str(model_file), "--fleet", str(fleet_dir),
                 "--submissions", str(sub_path), "--out", str(out)])
    assert code == 0
    ranked = pd.read_csv(out)
    assert ranked["job_id"].nunique() == 4
    for _, rows in ranked.groupby("job_id"):
        assert list(rows["rank"]) == list(range(1, len(rows) + 1))
        # the file holds a feasibility model: types unlikely to fit come after the rest
        rankable = rows["rankable"].to_numpy(bool)
        assert not (~rankable[:-1] & rankable[1:]).any()
        assert set(rows.loc[~rows["rankable"], "reason"]) <= {"fit probability below threshold"}
        score = rows.loc[rows["rankable"], "score"].to_numpy()  # the default objective's value
        assert (score[:-1] >= score[1:]).all()
        np.testing.assert_allclose(score, (rows["fit_probability"] * rows["throughput_mean"]
                                           / rows["cost_per_hour"])[rows["rankable"]])


def test_rank_if_none_fit_gives_every_submission_a_type(fleet_dir, model_file, tmp_path):
    sub_path = _submissions_file(fleet_dir, tmp_path, 6)
    out = tmp_path / "ranked.csv"
    # a threshold no candidate reaches: skipped, no submission has a rankable type
    args = ["rank", "--model", str(model_file), "--fleet", str(fleet_dir), "--submissions",
            str(sub_path), "--out", str(out), "--min-fit-probability", "1"]
    assert main(args) == 0
    skipped = pd.read_csv(out)
    stuck = ~skipped.groupby("job_id")["rankable"].any()
    assert stuck.any()
    assert main([*args, "--if-none-fit", "most_likely"]) == 0
    ranked = pd.read_csv(out)
    assert ranked.groupby("job_id")["rankable"].any().all()
    first = ranked[ranked["rank"] == 1].set_index("job_id")
    assert (first.loc[stuck[stuck].index, "reason"] == "most likely to fit, below threshold").all()


def _submissions_file(fleet_dir, tmp_path, n):
    """A CSV of the fleet's first ``n`` jobs, as a user would hand them over."""
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    submissions = fleet.jobs.head(n).drop(columns=[c for c in fleet.jobs if c.startswith("_")])
    path = tmp_path / "submissions.csv"
    submissions.to_csv(path, index=False)
    return path


def test_rank_explain_prints_the_reasons_of_each_pick(fleet_dir, model_file, tmp_path, capsys):
    from leapml.features import feature_names

    sub_path = _submissions_file(fleet_dir, tmp_path, 2)
    code = main(["rank", "--model", str(model_file), "--fleet", str(fleet_dir),
                 "--submissions", str(sub_path), "--top-k", "1", "--explain"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    picks = [line for line in lines if " -> " in line]
    assert len(picks) == 2
    # each pick names three features of the model, with a signed contribution
    for line in picks:
        listed = line.split(": ", 1)[1].split(", ")
        assert len(listed) == 3
        assert all(item.split("=")[0] in feature_names() for item in listed)
        assert all(item.endswith(")") and ("(+" in item or "(-" in item) for item in listed)


def test_rank_by_expected_utility_shows_the_interval(fleet_dir, model_file, tmp_path):

    sub_path = _submissions_file(fleet_dir, tmp_path, 3)
    out = tmp_path / "ranked.csv"
    code = main(["rank", "--model", str(model_file), "--fleet", str(fleet_dir), "--submissions",
                 str(sub_path), "--objective", "expected_utility", "--out", str(out)])
    assert code == 0
    ranked = pd.read_csv(out)
    # 'leapml fit' calibrates on the window's last day by default
    assert ranked["throughput_low"].notna().all()
    assert (ranked["throughput_low"] <= ranked["predicted_throughput"]).all()
    assert (ranked["predicted_throughput"] <= ranked["throughput_high"]).all()
    expected = (ranked["fit_probability"] * ranked["throughput_low"] / ranked["cost_per_hour"])
    assert ranked["score"].to_numpy() == pytest.approx(expected.to_numpy())
    for _, rows in ranked[ranked["rankable"]].groupby("job_id"):
        assert rows["score"].is_monotonic_decreasing


def test_predict_scores_each_submission_on_its_hardware(fleet_dir, model_file, tmp_path):
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    rows = fleet.attempts[fleet.attempts["status"] == "ok"].tail(5)
    keep = ["job_id", "model_type", "model_family", "trainer_count", "batch_size", "precision",
            "seq_len", "parallelism", "hardware_type"]
    path = tmp_path / "submissions.parquet"
    rows[keep].to_parquet(path)
    out = tmp_path / "predicted.csv"
    assert main(["predict", "--model", str(model_file), "--fleet", str(fleet_dir),
                 "--submissions", str(path), "--out", str(out)]) == 0
    predicted = pd.read_csv(out)
    assert len(predicted) == 5
    assert (predicted["predicted_throughput"] > 0).all()


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "--attempts", "no-such-file.parquet", "--hardware", "no.csv", "--out", "m.leap"],
        ["fit", "--out", "m.leap"],
        ["describe", "no-such-folder"],
        ["rank", "--model", "no-such-model.leap", "--fleet", "x", "--submissions", "s.csv"],
        ["simulate", "--preset", "galactic", "--out", "x"],
        ["simulate", "--preset", "tiny", "--days", "100000", "--out", "x"],  # past 2262
        ["simulate", "--preset", "tiny", "--days", "2", "--out", ""],  # would write here
        ["fit", "--n-estimators", "abc", "--out", "m.leap"],  # argparse's own errors too
        ["demo", "--quick", "--full"],
    ],
)
def test_bad_input_prints_one_line_and_fails(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as done:  # argparse ends the process itself
        code = done.code
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"leapml {argv[0]}: error:")


def test_help_of_every_subcommand(capsys):
    for command in ("demo", "simulate", "describe", "fit", "predict", "rank", "backtest"):
        assert main([command, "--help"]) == 0
        assert "usage: leapml " + command in capsys.readouterr().out


def test_backtest_writes_a_report(fleet_dir, tmp_path):
    out = tmp_path / "report"
    code = main(["backtest", "--fleet", str(fleet_dir), "--out", str(out), "--nights", "1",
                 "--window-days", "5", "--n-estimators", "10", "--quiet"])
    assert code == 0
    text = (out / "report.md").read_text()
    assert "Against the published figures" in text
    assert "`tiny` preset" in text and "Preset `tiny` is outside calibration" in text
    assert "previous 5 days" in text and "10 trees a LightGBM model" in text
    scores = pd.read_csv(out / "scores.csv")
    assert set(scores["model"]) >= {"leap", "lookup_table", "single_lightgbm"}


def test_every_option_of_every_subcommand_has_help():
    from leapml.cli import _parser

    (subparsers,) = [a for a in _parser()._actions if a.dest == "command"]
    missing = [f"{name} {'/'.join(action.option_strings) or action.dest}"
               for name, parser in subparsers.choices.items()
               for action in parser._actions if not action.help]
    assert not missing


def test_importing_the_command_leaves_heavy_modules_unloaded():
    import subprocess
    import sys

    code = ("import sys, leapml.cli; "
            "print(sorted(m for m in ('pandas', 'lightgbm', 'sklearn', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_fit_says_what_it_fitted_and_creates_the_folder(fleet_dir, tmp_path, capsys):
    path = tmp_path / "new" / "model.leap"
    assert main(["fit", "--fleet", str(fleet_dir), "--out", str(path), "--window-days", "5",
                 "--n-estimators", "5"]) == 0
    out = capsys.readouterr().out
    assert f"created folder {path.parent}" in out
    assert re.search(r"fitted on [\d,]+ completed attempts of the last 5 days \([\d,]+ more held "
                     r"back to calibrate intervals\): \d+ features, \d+ bins, ordinal router, "
                     r"[\d.]+ s; model with its feasibility model written to ", out)
    assert path.exists()


def test_rank_offers_the_ranking_objectives():
    from leapml.cli import _IF_NONE_FIT, _OBJECTIVES
    from leapml.ranking import IF_NONE_FIT, OBJECTIVES

    assert _OBJECTIVES == OBJECTIVES
    assert _IF_NONE_FIT == IF_NONE_FIT


def test_malformed_dates_are_named_by_row(fleet_dir, model_file, tmp_path, capsys):
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    submissions = fleet.jobs.head(3).drop(columns=[c for c in fleet.jobs if c.startswith("_")])
    submissions["submit_time"] = ["2026-01-03 10:00", "2026-01-03", "not a date"]
    sub_path = tmp_path / "submissions.csv"
    submissions.to_csv(sub_path, index=False)
    assert main(["rank", "--model", str(model_file), "--fleet", str(fleet_dir),
                 "--submissions", str(sub_path)]) == 2
    assert "row(s) [2]" in capsys.readouterr().err

    attempts = fleet.attempts.copy()
    attempts["submit_time"] = attempts["submit_time"].astype(str)
    attempts.loc[7, "submit_time"] = "2026-02-30"
    attempts.to_csv(tmp_path / "attempts.csv", index=False)
    fleet.hardware.to_csv(tmp_path / "hardware.csv", index=False)
    assert main(["fit", "--attempts", str(tmp_path / "attempts.csv"), "--hardware",
                 str(tmp_path / "hardware.csv"), "--out", str(tmp_path / "m.leap")]) == 2
    err = capsys.readouterr().err
    assert "not a date in 1 row(s) (index [7])" in err and "'2026-02-30'" in err


@pytest.mark.parametrize("command", ["fit", "backtest"])
def test_an_output_over_an_input_is_refused_before_any_work(command, fleet_dir, tmp_path, capsys):
    import shutil

    fleet = shutil.copytree(fleet_dir, tmp_path / "fleet")
    before = {p.name: p.read_bytes() for p in fleet.iterdir()}
    out = fleet / "attempts.parquet" if command == "fit" else fleet
    code = main([command, "--fleet", str(fleet), "--out", str(out), "--n-estimators", "3",
                 "--window-days", "2"])
    err = capsys.readouterr().err
    assert code == 2 and f"would overwrite {fleet}, an input of this command" in err
    assert {p.name: p.read_bytes() for p in fleet.iterdir()} == before


@pytest.mark.parametrize("option", [["--nights", "0"], ["--window-days", "-1"], ["--held-out", "-2"],
                                    ["--preset", "huge"], ["--n-jobs", "0"], ["--seed", "-1"]])
def test_demo_refuses_bad_arguments_before_simulating(option, monkeypatch, capsys):
    import leapml.fleet

    def simulate(*args, **kwargs):
        raise AssertionError("simulated before checking the arguments")

    monkeypatch.setattr(leapml.fleet, "simulate", simulate)
    assert main(["demo", "--quiet", *option]) == 2
    assert capsys.readouterr().err.startswith("leapml demo: error: ")


def test_warnings_print_as_one_line_without_source(monkeypatch, capsys):
    import warnings

    import leapml.cli

    def describe(args):
        warnings.warn("the log has no\n expected_throughput column", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(leapml.cli, "_describe", describe)
    assert main(["describe"]) == 0
    err = capsys.readouterr().err
    assert err == "leapml describe: warning: the log has no expected_throughput column\n"


def test_openmp_threads_wait_passively_unless_told_otherwise(fleet_dir, monkeypatch, capsys):
    import os

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert main(["describe", str(fleet_dir)]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert main(["describe", str(fleet_dir)]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.mark.parametrize("place", ["under_a_file", "proc"])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(place, tmp_path, capsys,
                                                                     monkeypatch):
    import sys

    import leapml.cli

    if place == "proc" and not (sys.platform.startswith("linux") and Path("/proc/self").exists()):
        pytest.skip("no /proc")
    (tmp_path / "file.txt").write_text("x")
    out = tmp_path / "file.txt" / "m.leap" if place == "under_a_file" else Path("/proc/leapml/m.leap")

    def load_log(args):
        raise AssertionError("read the log before checking the output")

    monkeypatch.setattr(leapml.cli, "_load_log", load_log)
    for argv in (["fit", "--fleet", "f", "--out", str(out)],
                 ["rank", "--model", "m", "--fleet", "f", "--submissions", "s.csv", "--out", str(out)],
                 ["backtest", "--fleet", "f", "--out", str(out)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"leapml {argv[0]}: error: cannot write {out}: ")
        assert len(err.strip().splitlines()) == 1 and ".tmp" not in err


@pytest.mark.parametrize("option, message", [
    (["--window-days", "0"], "--window-days must be 1 or more, got 0"),
    (["--window-days", "-5", "--calibration-days", "0"], "--window-days must be 1 or more, got -5"),
    (["--calibration-days", "-1"], "--calibration-days must be 0 or more, got -1"),
    (["--window-days", "3", "--calibration-days", "3"], r"--calibration-days \(3\) must be less than "
                                                        r"--window-days \(3\)"),
])
def test_window_and_calibration_days_are_checked_in_that_order(option, message, tmp_path, capsys):
    assert main(["fit", "--fleet", "no-such-fleet", "--out", str(tmp_path / "m.leap"), *option]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_backtest_refuses_zero_parallel_nights_before_any_work(tmp_path, capsys):
    """--n-jobs 0 means nothing; the backtest says so in its own words, not joblib's."""
    assert main(["backtest", "--fleet", "no-such-fleet", "--out", str(tmp_path / "r"),
                 "--n-jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "leapml backtest: error: --n-jobs must be 1 or more (-1: one per core), got 0"


def test_a_log_too_short_to_calibrate_on_points_to_calibration_days_0(fleet_dir, tmp_path, capsys):
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    log = fleet.attempts.drop(columns="expected_throughput").head(60)
    first = log["submit_time"].min()
    log = log.assign(submit_time=first.floor("D") + (log["submit_time"] - first) / 1000)
    log = log.assign(end_time=log["submit_time"] + pd.Timedelta(minutes=1))  # one day of runs
    log.to_csv(tmp_path / "attempts.csv", index=False)
    fleet.hardware.to_csv(tmp_path / "hardware.csv", index=False)
    assert main(["fit", "--attempts", str(tmp_path / "attempts.csv"), "--hardware",
                 str(tmp_path / "hardware.csv"), "--out", str(tmp_path / "m.leap"),
                 "--n-estimators", "3"]) == 2
    assert "nothing to calibrate on" in (err := capsys.readouterr().err)
    assert "pass --calibration-days 0 to fit without prediction intervals" in err


@pytest.mark.parametrize("times, message", [
    (["2026-01-03 10:00+00:00"] * 3, r"submissions.csv: submit_time has a UTC offset but the times "
                                     r"of the attempt log of .* have none"),
    ([1767225600] * 3, r"submissions.csv: column 'submit_time': holds numbers, not dates, in 3 "
                       r"row\(s\) \[0, 1, 2\]"),
    (["01/02/2026"] * 3, "read both as day/month and as month/day"),
])
def test_submission_times_are_named_by_the_submissions_file(fleet_dir, model_file, tmp_path, capsys,
                                                            times, message):
    from leapml.fleet import load_fleet

    fleet = load_fleet(fleet_dir)
    submissions = fleet.jobs.head(3).drop(columns=[c for c in fleet.jobs if c.startswith("_")])
    submissions.assign(submit_time=times).to_csv(tmp_path / "submissions.csv", index=False)
    for command in ("predict", "rank"):
        assert main([command, "--model", str(model_file), "--fleet", str(fleet_dir),
                     "--submissions", str(tmp_path / "submissions.csv")]) == 2
        assert re.search(message, capsys.readouterr().err)


def test_a_fleet_and_files_together_are_refused(fleet_dir, tmp_path, capsys):
    assert main(["fit", "--fleet", str(fleet_dir), "--attempts", "a.csv", "--hardware", "h.csv",
                 "--out", str(tmp_path / "m.leap")]) == 2
    assert "not both" in capsys.readouterr().err


def test_rank_by_an_interval_objective_needs_a_calibrated_model(fleet_dir, tmp_path, capsys):
    model = tmp_path / "plain.leap"
    assert main(["fit", "--fleet", str(fleet_dir), "--out", str(model), "--window-days", "5",
                 "--n-estimators", "3", "--calibration-days", "0", "--no-feasibility"]) == 0
    submissions = tmp_path / "subs.csv"
    pd.read_parquet(fleet_dir / "attempts.parquet").head(2).to_csv(submissions, index=False)
    capsys.readouterr()
    code = main(["rank", "--model", str(model), "--fleet", str(fleet_dir), "--submissions",
                 str(submissions), "--objective", "lower_quantile_per_cost"])
    err = capsys.readouterr().err
    assert code == 2 and "fit it with --calibration-days 1 (leapml fit)" in err
    # a coverage the model cannot give is said to have no effect
    code = main(["rank", "--model", str(model), "--fleet", str(fleet_dir), "--submissions",
                 str(submissions), "--coverage", "0.5", "--out", str(tmp_path / "r.csv")])
    assert code == 0 and "--coverage 0.5 has no effect" in capsys.readouterr().err
    # and a seed no generator takes is named as the option
    assert main(["fit", "--fleet", str(fleet_dir), "--out", str(model), "--seed", "99999999999"]) == 2
    assert "--seed must be a whole number in [0, 2**32 - 1]" in capsys.readouterr().err
