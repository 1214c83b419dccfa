"""The ``leapml`` command: a thin layer over the library.

Each subcommand parses its arguments, calls one library function and prints
or writes its result. Bad input ends with one line on stderr and a non-zero
exit status, never a traceback.
"""

from __future__ import annotations

import sys

try:
    # Ctrl-C while the command starts must end as quietly as one later on
    import argparse
    import os
    import time
    import warnings
    from pathlib import Path
    from typing import TYPE_CHECKING

    from . import __version__
except KeyboardInterrupt:
    print("leapml: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

if TYPE_CHECKING:
    import pandas as pd

# pandas, scikit-learn and LightGBM are imported inside the subcommands that
# need them, so that `leapml --help` and argument errors answer at once.

__all__ = ["main"]

#: The orders ``leapml rank --objective`` offers: ``leapml.ranking.OBJECTIVES``, spelled
#: out so that ``--help`` needs no pandas (a test holds the two equal).
_OBJECTIVES = ("throughput_per_cost", "lower_quantile_per_cost", "expected_utility",
               "expected_throughput_per_cost", "mean_throughput_per_cost")
#: What ``leapml rank --if-none-fit`` offers: ``leapml.ranking.IF_NONE_FIT``, spelled out alike.
_IF_NONE_FIT = ("skip", "most_likely")

#: Exit status for bad input (files, arguments, data).
EXIT_BAD_INPUT = 2


class _Fail(Exception):
    """An error already phrased for the user."""


def main(argv: list[str] | None = None) -> int:
    """Run the ``leapml`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 on bad input.

    Examples
    --------
    >>> main(["--version"])
    leapml 0.1.0
    0
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # also while a subcommand imports the modules it needs
        print("leapml: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse already printed its message
        return int(stop.code or 0)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "version":
        print(f"leapml {__version__}")
        return 0
    # OpenMP threads that spin while they wait for a busy core slow LightGBM's fits
    # many times over on a shared machine; waiting passively does not (a user's
    # own setting wins). It must be set before LightGBM is imported.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(args.command)
            seed = getattr(args, "seed", None)
            if seed is not None and not 0 <= seed < 2**32:  # NumPy's and LightGBM's seeds
                raise _Fail(f"--seed must be a whole number in [0, 2**32 - 1], got {seed}")
            return args.run(args) or 0
    except BrokenPipeError:  # the reader stopped early (leapml rank ... | head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (_Fail, ValueError, TypeError, KeyError, OSError) as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"leapml {args.command}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _one_line_warning(command: str):
    """A ``warnings.showwarning`` that prints the message alone, on one line."""

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"leapml {command}: warning: {text}", file=sys.stderr if file is None else file)

    return show


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of the command."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="leapml",
        description="Predict training throughput on every hardware type and rank candidates.",
    )
    parser.add_argument("--version", action="version", version=f"leapml {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (_add_demo, _add_simulate, _add_describe, _add_fit, _add_predict_and_rank,
                _add_backtest):
        add(sub)
    sub.add_parser("version", help="print the version")
    return parser


def _add_demo(sub) -> None:
    p = sub.add_parser("demo", help="simulate a fleet, backtest a few nights, write a report",
                       description="Simulate a fleet, backtest a few nights and write a report. "
                                   "The default run takes about two minutes on two idle cores.")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="size", action="store_const", const="quick",
                      help="a shorter run: one night, 14-day window, nothing held out")
    size.add_argument("--full", dest="size", action="store_const", const="full",
                      help="a longer run: seven nights, two hardware types and two model "
                           "families held out")
    p.set_defaults(size="standard")
    p.add_argument("--out", default="leapml-report", help="report folder (default: %(default)s)")
    p.add_argument("--preset", help="fleet preset: tiny, small or production (default: small)")
    p.add_argument("--nights", type=int, help="nights to score (default: 3, --quick 1, --full 7)")
    p.add_argument("--window-days", type=int,
                   help="days of attempts each night trains on (default: 30, --quick 14)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fleet and the models (default: %(default)s)")
    p.add_argument("--n-estimators", type=int,
                   help="trees of every LightGBM model (default: each model's own: leap's "
                        "bin experts 50, 30 from 250,000 rows; 400 for single_lightgbm)")
    p.add_argument("--held-out", type=int,
                   help="groups to hold out in each held-out experiment (0 skips; default: "
                        "1 hardware type, --full 2 hardware types and 2 model families)")
    p.add_argument("--n-jobs", type=int, default=-1, help="threads per model (-1: every core; default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_demo)


def _add_simulate(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a fleet and write it as Parquet")
    p.add_argument("--out", required=True, help="folder to write the fleet into (created if missing)")
    _fleet_options(p)
    p.set_defaults(run=_simulate)


def _add_describe(sub) -> None:
    p = sub.add_parser("describe", help="print the calibration table of a fleet")
    p.add_argument("fleet", nargs="?", help="a fleet folder; omit to simulate one")
    _fleet_options(p, beside_folder=True)
    p.set_defaults(run=_describe)


def _add_fit(sub) -> None:
    p = sub.add_parser("fit", help="fit a model on an attempt log and save it")
    _log_options(p)
    p.add_argument("--out", required=True,
                   help="model file to write (its folder is created if missing, and said so)")
    _window_option(p)
    _trees_option(p)
    p.add_argument("--router", choices=("multiclass", "ordinal"), default="ordinal",
                   help="bin router: the ordinal one or the published multiclass one "
                        "(default: %(default)s)")
    p.add_argument("--published", action="store_true",
                   help="fit the published configuration, LeapRegressor(**leapml.PUBLISHED) "
                        "(13 bins, multiclass router, hard routing); overrides --router")
    _seed_option(p)
    p.add_argument("--no-feasibility", action="store_true",
                   help="do not fit the model of where jobs fit (ok vs oom) into the file")
    p.add_argument("--calibration-days", type=int, default=1,
                   help="last days of the window held back to calibrate prediction intervals "
                        "(0: no intervals; default: %(default)s)")
    p.set_defaults(run=_fit)


def _add_predict_and_rank(sub) -> None:
    for name, helptext, run in (
        ("predict", "predict throughput of submissions on their hardware", _predict),
        ("rank", "rank every candidate hardware type of each submission", _rank),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--model", required=True, help="model file written by 'leapml fit'")
        p.add_argument("--submissions", required=True, help="CSV or Parquet of submissions")
        _log_options(p)
        p.add_argument("--out", help="CSV or Parquet to write (default: print)")
        if name == "rank":
            p.add_argument("--top-k", type=int, default=None,
                           help="keep each submission's best K types (default: all)")
            p.add_argument("--min-fit-probability", type=float, default=0.5,
                           help="candidates less likely to fit are not ranked, when the model "
                                "file holds a feasibility model (default: %(default)s)")
            p.add_argument("--objective", choices=_OBJECTIVES, default="mean_throughput_per_cost",
                           help="what orders the candidates (default: %(default)s)")
            p.add_argument("--if-none-fit", choices=_IF_NONE_FIT, default=_IF_NONE_FIT[0],
                           help="a submission no type is likely enough to fit: no rankable "
                                "type (skip), or its types most likely to fit (default: %(default)s)")
            p.add_argument("--coverage", type=float, default=0.8,
                           help="coverage of the prediction intervals (default: %(default)s)")
            p.add_argument("--explain", action="store_true",
                           help="also print the top reasons (feature contributions) of each pick")
        p.set_defaults(run=run)


def _add_backtest(sub) -> None:
    p = sub.add_parser("backtest", help="replay nightly retraining on a log and write a report")
    _log_options(p)
    p.add_argument("--out", required=True, help="report folder (created if missing)")
    p.add_argument("--nights", type=int, default=30, help="nights to score (default: %(default)s)")
    _window_option(p)
    _trees_option(p)
    _seed_option(p)
    p.add_argument("--n-jobs", type=int, default=1, help="nights run in parallel (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_backtest)


def _fleet_options(p: argparse.ArgumentParser, beside_folder=False) -> None:
    # beside a fleet folder the defaults are None: options given there are refused, not ignored
    defaults = (None,) * 3 if beside_folder else ("small", 60, 0)
    p.add_argument("--preset", default=defaults[0],
                   help="tiny, small or production; only production is calibrated (default: small)")
    p.add_argument("--days", type=int, default=defaults[1], help="days to simulate (default: 60)")
    _seed_option(p, defaults[2])


def _log_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fleet", help="a fleet folder (attempts and hardware)")
    p.add_argument("--attempts", help="attempt log, CSV or Parquet")
    p.add_argument("--hardware", help="hardware catalog, CSV or Parquet")


def _window_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window-days", type=int, default=30,
                   help="days of completed attempts to train on (default: %(default)s)")


def _trees_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n-estimators", type=int, default=None,
                   help="trees per LightGBM model (default: the models' own)")


def _seed_option(p: argparse.ArgumentParser, default=0) -> None:
    p.add_argument("--seed", type=int, default=default, help="random seed (default: 0)")


def _load_log(args) -> tuple[pd.DataFrame, pd.DataFrame, object]:
    """The attempt log and catalog named by --fleet or --attempts/--hardware."""
    from .files import read_table
    from .fleet import load_fleet
    from .schema import coerce_attempts, coerce_hardware, validate_attempts, validate_hardware

    if args.fleet and (args.attempts or args.hardware):
        raise _Fail("give --fleet DIR, or --attempts FILE and --hardware FILE, not both")
    if args.fleet:
        fleet = load_fleet(args.fleet)
        return fleet.attempts, fleet.hardware, fleet
    if not (args.attempts and args.hardware):
        raise _Fail("give --fleet DIR, or both --attempts FILE and --hardware FILE")
    from .schema import SchemaError

    # name the file in the error, not only the column
    try:
        hardware = validate_hardware(coerce_hardware(read_table(args.hardware)))
    except SchemaError as err:
        raise SchemaError(args.hardware, err.problems) from None
    try:
        attempts = validate_attempts(coerce_attempts(read_table(args.attempts)), hardware)
    except SchemaError as err:
        raise SchemaError(args.attempts, err.problems) from None
    return attempts, hardware, None


def _demo(args) -> int:
    from .demo import run_demo

    _check_output(args.out, folder=True)
    if args.n_jobs == 0:  # refused before the fleet is simulated, in the command's words
        raise _Fail("--n-jobs must be 1 or more (-1: every core), got 0")
    run_demo(
        args.out,
        size=args.size,
        preset=args.preset,
        nights=args.nights,
        window_days=args.window_days,
        seed=args.seed,
        n_estimators=args.n_estimators,
        held_out_groups=args.held_out,
        n_jobs=args.n_jobs,
        progress=not args.quiet,
    )
    return 0


def _simulate(args) -> int:
    from .fleet import simulate

    _check_output(args.out, folder=True)
    fleet = simulate(args.preset, days=args.days, seed=args.seed)
    fleet.save(args.out)
    print(f"wrote {len(fleet.attempts):,} attempts to {args.out}")
    return 0


def _describe(args) -> int:
    from .fleet import CALIBRATION, describe, format_description, load_fleet, simulate

    given = [f"--{name}" for name in ("preset", "days", "seed") if getattr(args, name) is not None]
    if args.fleet and given:
        raise _Fail(f"{', '.join(given)} describe a fleet to simulate: {args.fleet} is read as it is")
    fleet = load_fleet(args.fleet) if args.fleet else simulate(
        args.preset or "small", days=60 if args.days is None else args.days, seed=args.seed or 0)
    preset = fleet.params.get("preset")
    if preset in CALIBRATION:
        print(f"Preset '{preset}': {CALIBRATION[preset]}.\n")
    print(format_description(describe(fleet)))
    return 0


def _fit(args) -> int:
    from .model_file import save
    from .placement import fit_feasibility, fit_window
    from .regressor import PUBLISHED, LeapRegressor
    from .training import window_counts

    _check_window(args)
    _check_output(args.out, inputs=_inputs(args))
    attempts, hardware, _ = _load_log(args)
    params = dict(PUBLISHED) if args.published else {"router": args.router}
    model = LeapRegressor(random_state=args.seed, **params)
    if args.n_estimators is not None:
        model.set_params(n_estimators=args.n_estimators)
    out = _output_file(args.out)
    started = time.perf_counter()
    try:
        fitted = fit_window(attempts, hardware, window_days=args.window_days, model=model,
                            calibration_days=args.calibration_days)
    except ValueError as err:
        if args.calibration_days and "calibrate" in str(err):
            raise _Fail(f"{err}; pass --calibration-days 0 to fit without prediction "
                        "intervals") from None
        raise
    feasibility = None
    if not args.no_feasibility:
        feasibility = fit_feasibility(attempts, hardware, window_days=args.window_days)
    seconds = time.perf_counter() - started
    save(fitted, out, feasibility=feasibility)
    with_feasibility = "" if feasibility is None else " with its feasibility model"
    fit_rows, calibration_rows = window_counts(attempts, hardware, window_days=args.window_days,
                                               calibration_days=args.calibration_days)
    held_back = (f" ({calibration_rows:,} more held back to calibrate intervals)"
                 if args.calibration_days else "")
    print(f"fitted on {fit_rows:,} completed attempts of the last {args.window_days} days"
          f"{held_back}: {fitted.n_features_in_} features, {fitted.n_bins_} bins, "
          f"{model.router} router, {seconds:.1f} s; model{with_feasibility} written to {out}")
    return 0


def _check_window(args) -> None:
    """Refuse a window, calibration span or night count that cannot be, before any work."""
    if args.window_days < 1:
        raise _Fail(f"--window-days must be 1 or more, got {args.window_days}")
    calibration = getattr(args, "calibration_days", 0)
    if calibration < 0:
        raise _Fail(f"--calibration-days must be 0 or more, got {calibration}")
    if calibration >= args.window_days:
        raise _Fail(f"--calibration-days ({calibration}) must be less than --window-days "
                    f"({args.window_days}): the days before them are the ones fitted on")
    if getattr(args, "nights", 1) < 1:
        raise _Fail(f"--nights must be 1 or more, got {args.nights}")


def _inputs(args) -> list[str]:
    """The files and folders a command reads, which its output must not overwrite."""
    return [value for name in ("fleet", "attempts", "hardware", "submissions", "model")
            if (value := getattr(args, name, None))]


def _check_output(out: str | None, *, folder: bool = False, inputs=()) -> None:
    """Refuse, before any work, an output that could not be written: the nearest folder on the
    way to ``out`` must be one this process may create files in (the rest is created at the end)."""
    if out is not None and not str(out).strip():
        raise _Fail("--out is empty: give a path")
    if not out:
        return
    path = Path(out)
    for given in inputs:  # an output over an input would destroy what it was made from
        source = Path(given).resolve()
        if path.resolve() == source or (source.is_dir() and source in path.resolve().parents):
            raise _Fail(f"{out} would overwrite {given}, an input of this command: write elsewhere")
    if not folder and path.is_dir():
        raise _Fail(f"{out} is a folder: give a file name")
    if folder and path.exists() and not path.is_dir():
        raise _Fail(f"{out} is a file: give a folder")
    existing = path if folder else path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise _Fail(f"cannot write {out}: {existing} is not a folder")
    if not _can_create_in(existing):
        raise _Fail(f"cannot write {out}: no permission to create files in {existing.resolve()}")


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried: permission bits do not bind root)."""
    import tempfile

    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        fd, name = tempfile.mkstemp(prefix=".leapml-", suffix=".tmp", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def _output_file(out: str) -> Path:
    """``out`` as a path whose folder exists; a folder created here is said so."""
    path = Path(out)
    if path.exists() and path.is_dir():
        raise _Fail(f"{out} is a folder: give a file name")
    if not path.parent.exists():
        path.parent.mkdir(parents=True)
        print(f"created folder {path.parent}")
    return path


def _read_submissions(path: str) -> pd.DataFrame:
    import pandas as pd

    from .files import read_table
    from .schema import LAUNCH_COLUMNS

    frame = read_table(path)
    if len(frame) == 0:
        raise _Fail(f"{path} has no rows to score")
    missing = [c for c in ("job_id", *LAUNCH_COLUMNS) if c not in frame.columns]
    if missing:
        raise _Fail(f"{path} lacks column(s) {missing}")
    if "submit_time" in frame:
        from .schema import parse_times
        from .schema.times import time_problem

        parsed = parse_times(frame["submit_time"])
        if not pd.api.types.is_datetime64_any_dtype(parsed.dtype):
            def rows(bad):
                return f"{int(bad.sum())} row(s) {frame.index[bad][:5].tolist()} (counting from 0)"

            why = time_problem(frame["submit_time"], rows) or "not dates"
            raise _Fail(f"{path}: column 'submit_time': {why}")
        frame["submit_time"] = parsed
    from .schema import coerce_attempts

    # the spellings fit reads in a log ("1,024", counts as text, " FP16") read alike here
    return coerce_attempts(frame)


def _check_time_zones(submissions: pd.DataFrame, attempts: pd.DataFrame, args) -> None:
    """Submissions and the attempt log must both give times with a UTC offset, or neither."""
    if "submit_time" not in submissions or "submit_time" not in attempts:
        return
    aware = submissions["submit_time"].dt.tz is not None
    if aware != (attempts["submit_time"].dt.tz is not None):
        log = args.attempts or f"the attempt log of {args.fleet}"
        raise _Fail(f"{args.submissions}: submit_time {'has a' if aware else 'has no'} UTC offset but "
                    f"the times of {log} {'have none' if aware else 'have one'}: give both "
                    "offsets, or neither")


def _predict(args) -> int:
    import pandas as pd

    from .features import build_features
    from .model_file import load
    from .placement import with_model_sizes
    from .schema import RowsSchemaError, SchemaError

    _check_output(args.out, inputs=_inputs(args))
    model = load(args.model)
    attempts, hardware, _ = _load_log(args)
    submissions = _read_submissions(args.submissions)
    _check_time_zones(submissions, attempts, args)
    if "hardware_type" not in submissions:
        raise _Fail(f"{args.submissions} lacks column 'hardware_type' (use 'leapml rank' to score all types)")
    if "submit_time" not in submissions:
        submissions["submit_time"] = attempts["submit_time"].max() + pd.Timedelta(seconds=1)
    try:
        submissions = with_model_sizes(submissions, attempts)
        X = build_features(submissions, hardware, history=attempts)
    except RowsSchemaError as err:
        raise SchemaError(args.submissions, err.problems) from None
    out = submissions.copy()
    out["predicted_throughput"] = model.predict(X)
    return _emit(out, args.out)


def _rank(args) -> int:
    from .model_file import load, load_feasibility
    from .placement import explain_picks, place
    from .ranking import NEEDS_INTERVAL
    from .schema import RowsSchemaError, SchemaError

    _check_output(args.out, inputs=_inputs(args))
    model = load(args.model)
    if args.coverage != 0.8 and not hasattr(model, "calibration_"):
        warnings.warn(f"--coverage {args.coverage} has no effect: {args.model} has no prediction "
                      "intervals (fit it with --calibration-days 1)", UserWarning, stacklevel=2)
    if args.objective in NEEDS_INTERVAL and not hasattr(model, "calibration_"):
        raise _Fail(f"--objective {args.objective} needs prediction intervals, and {args.model} "
                    "has none: fit it with --calibration-days 1 (leapml fit)")
    feasibility = load_feasibility(args.model)
    attempts, hardware, _ = _load_log(args)
    submissions = _read_submissions(args.submissions)
    _check_time_zones(submissions, attempts, args)
    try:
        ranked = place(model, submissions, hardware, history=attempts, top_k=args.top_k,
                       feasibility=feasibility, min_fit_probability=args.min_fit_probability,
                       coverage=args.coverage, objective=args.objective,
                       if_none_fit=args.if_none_fit)
    except RowsSchemaError as err:  # the submissions' own rows are named
        raise SchemaError(args.submissions, err.problems) from None
    code = _emit(ranked, args.out)
    if args.explain:
        reasons = explain_picks(model, ranked, submissions, hardware, history=attempts)
        print("\ntop reasons of each pick (contribution to log throughput; +0.10 is about +10%):")
        for (job, hardware_type), rows in reasons.groupby(["job_id", "hardware_type"], sort=False):
            listed = ", ".join(f"{f}={v} ({c:+.2f})" for f, v, c in
                               zip(rows["feature"], rows["value"], rows["contribution"], strict=True))
            print(f"  {job} -> {hardware_type}: {listed}")
    return code


def _backtest(args) -> int:
    from .evaluation.backtest import default_models, nightly
    from .evaluation.report import model_trees, write_report

    _check_window(args)
    if args.n_jobs == 0:
        raise _Fail("--n-jobs must be 1 or more (-1: one per core), got 0")
    _check_output(args.out, folder=True, inputs=_inputs(args))
    attempts, hardware, fleet = _load_log(args)
    models = default_models(random_state=args.seed, n_estimators=args.n_estimators)
    result = nightly(
        attempts,
        hardware,
        models=models,
        window_days=args.window_days,
        nights=args.nights,
        oracle=fleet.expected_throughput if fleet is not None else None,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        progress=not args.quiet,
    )
    preset = fleet.params.get("preset") if fleet is not None else None
    path = write_report(result, args.out, preset=preset, window_days=args.window_days,
                        trees=model_trees(models))
    print(f"report written to {path}")
    return 0


def _emit(frame: pd.DataFrame, out: str | None) -> int:
    from .files import write_table

    if out:
        write_table(frame, _output_file(out))
        print(f"wrote {len(frame):,} rows to {out}")
    else:
        print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
