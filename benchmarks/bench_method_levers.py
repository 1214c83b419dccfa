"""Benchmark: which LeapRegressor configuration earns its place against one LightGBM model.

Simulates ``window + nights`` days of a preset and runs the nightly backtest
(outcomes known when runs end, the next day scored) for a set of
``LeapRegressor`` configurations next to the single LightGBM reference (400
trees, the same features). For every model it prints the median over nights
of accuracy within +-20 % and +-10 % on all attempts, on new jobs and weighted
by device-hours, the gap to the submission-time ceiling, and the mean and p90
placement regret with known feasibility. The table in docs/method.md ("Levers")
comes from::

    python benchmarks/bench_method_levers.py --preset small --nights 3 --seeds 0 1 2

Configurations are named ``key=value,...`` over LeapRegressor's parameters
(``None`` for None); ``--seeds`` repeats it on several simulated fleets (the
small-log check: ``--preset tiny --window-days 14 --seeds 0 1 2``, under 5,000
training rows a night). ``--configs`` replaces the default list, e.g.
``--configs "published" "combine=soft,router=ordinal"``. Besides
``default`` and ``published``, three named references set apart what the
cascade adds from what its levers add: ``single_huber`` (one LightGBM model
of 400 trees on the Huber loss instead of L1), ``single+history`` and
``single_huber+history`` (those single models with the default's blend with
the job's own runs: a one-bin ``LeapRegressor`` around the model); and
``base_l1``, ``base_huber_0.3``, ``base_l2`` give the shared expert another
loss, not monotone, and ``base_all_columns`` the default shared expert
choosing each split among all the columns instead of half of them,
``base_columns_0.3`` among three in ten, ``base_extra_trees`` with random split
thresholds, and ``experts_columns_0.5`` the bin experts (and router) choosing
each split among half the columns (followed by ``,key=value`` for more
parameters).
``--no-model-sizes`` simulates the fleet without its model-size columns.
``--share-fits`` fits configurations that differ only in ``expert_weight`` (a
predict-time parameter) once a night and scores each weight from that fit;
``history_transfer=t`` ranks a configuration's candidates carrying ``t`` of a
job's miss on its types to its other ones, ``rank_margin=m`` and
``rank_spread=s`` move its ranking as :func:`_ranking_levers` says (these three
change the regret, not the accuracy, and share a fit with ``--share-fits``); ``--no-reference`` leaves the
single model out (its figures on the same fleet and nights are those of an
earlier run of the same command).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from lightgbm import LGBMRegressor

import leapml.evaluation.regret as regret_ranking
from leapml import PUBLISHED, LeapRegressor
from leapml._cascade import default_base_regressor, default_regressor
from leapml.evaluation.backtest import SUBMISSION_CEILING, nightly
from leapml.evaluation.baselines import single_model_reference
from leapml.features import feature_names
from leapml.fleet import simulate
from leapml.placement import HISTORY_TRANSFER, predict_by_job
from leapml.regressor import FASTER_HARDWARE, HISTORY_COLUMNS

RESULTS = Path(__file__).parent / "results"
DEFAULT_CONFIGS = (
    "published",
    "default",
    "monotone_increasing=None",
    "base=None",
    "history_prior=None",
    "base=None,history_prior=None,n_estimators=100",
    "n_estimators=100",
    "n_bins=5",
    "base_l1",
    "single_huber",
    "single+history",
    "single_huber+history",
)


def parse_config(text: str) -> dict:
    """``"a=1,b=x"`` -> ``{"a": 1, "b": "x"}``; ``"default"`` -> ``{}``; ``"published"`` -> the paper's."""
    if text == "default":
        return {}
    if text == "published":
        return dict(PUBLISHED)
    out = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if value == "None":
            out[key.strip()] = None
            continue
        for kind in (int, float):
            try:
                value = kind(value)
                break
            except ValueError:
                continue
        out[key.strip()] = value
    return out


def _single_settings(objective: str) -> dict:
    """The single-model reference's LightGBM settings, on another loss."""
    reference = single_model_reference().regressor
    return dict(reference.get_params(), objective=objective)


#: Named references: one model on the same features, with or without the default's blend.
REFERENCES = {
    "single_huber": lambda seed: single_model_reference(random_state=seed, objective="huber"),
    "single+history": lambda seed: LeapRegressor(
        n_bins=1, min_bin_rows=1, base=None, cold_start=0.0, anchor=None, random_state=seed,
        regressor=LGBMRegressor(**dict(_single_settings("l1"), random_state=seed))),
    "single_huber+history": lambda seed: LeapRegressor(
        n_bins=1, min_bin_rows=1, base=None, cold_start=0.0, anchor=None, random_state=seed,
        regressor=LGBMRegressor(**dict(_single_settings("huber"), random_state=seed))),
}


#: The shared expert's settings the configurations below start from: the default's on a log
#: under FAST_BASE_ROWS rows (rate 0.1), where they were measured; a user's ``base`` keeps
#: its own rate whatever the log's size.
_BASE = default_base_regressor(n_rows=0).get_params()


def _base(objective: str, **params):
    """The default shared expert on another loss."""
    return LGBMRegressor(**dict(_BASE, objective=objective, **params))


def _monotone_base(**params):
    """The default shared expert, monotone as the default makes it, with other ``params``.

    A user's ``base`` keeps its own settings, so the constraints the default
    derives from ``monotone_increasing`` are spelled out here over the columns
    :func:`leapml.features.build_features` gives, in its order.
    """
    constraints = [int(name in FASTER_HARDWARE) for name in feature_names()]
    return LGBMRegressor(**dict(_BASE, monotone_constraints=constraints, **params))


#: Named LeapRegressor configurations whose parameters are estimators, in ``key=value`` form
#: after the name (``base_l1,n_estimators=50``).
NAMED = {
    "base_l1": lambda: {"base": _base("l1")},
    "base_huber_0.3": lambda: {"base": _base("huber", alpha=0.3)},
    "base_l2": lambda: {"base": _base("l2")},
    # the shared expert choosing every split among all the columns (the default before
    # it sampled half of them at each split)
    "base_all_columns": lambda: {"base": _monotone_base(feature_fraction_bynode=1.0)},
    # fewer columns at each split than the default's half
    "base_columns_0.3": lambda: {"base": _monotone_base(feature_fraction_bynode=0.3)},
    # the shared expert learning at one rate whatever the log's size (the default: 0.1 under
    # FAST_BASE_ROWS training rows, 0.2 from there on; 200 trees either way)
    "base_lr_0.1": lambda: {"base": _monotone_base(learning_rate=0.1)},
    "base_lr_0.2": lambda: {"base": _monotone_base(learning_rate=0.2)},
    # half the shared expert's trees at a faster rate: half its cost at every prediction
    "base_100_lr_0.3": lambda: {"base": _monotone_base(n_estimators=100, learning_rate=0.3)},
    "base_100_lr_0.4": lambda: {"base": _monotone_base(n_estimators=100, learning_rate=0.4)},
    # the shared expert's trees with half the leaves (31, not 63): shallower, cheaper to score
    "base_leaves_31": lambda: {"base": _monotone_base(num_leaves=31)},
    # the shared expert's split thresholds drawn at random (LightGBM's extremely randomized trees)
    "base_extra_trees": lambda: {"base": _monotone_base(extra_trees=True)},
    # the bin experts (and the router, a copy of them) choosing each split among half the columns
    "experts_columns_0.5": lambda: {"regressor": LGBMRegressor(
        **dict(default_regressor().get_params(), n_estimators=50, feature_fraction_bynode=0.5))},
}


class SharedFit(LeapRegressor):
    """A LeapRegressor that takes the fit of the last one of equal parameters but
    ``expert_weight`` on the same rows: that weight acts at predict time only, so
    every weight of a configuration is scored from one fit."""

    _last: dict = {}

    def fit(self, X, y, sample_weight=None):
        params = self.get_params(deep=False)
        weight = params.pop("expert_weight")
        key = (id(X), len(X), float(np.sum(y)), repr(sorted(params.items())), sample_weight is None)
        if SharedFit._last.get("key") != key:
            SharedFit._last = {"key": key, "model": LeapRegressor(**params).fit(X, y, sample_weight)}
        self.__dict__.update(SharedFit._last["model"].__dict__)
        self.expert_weight = weight
        return self


#: Parameters of the ranking, not of the model: set per configuration, they change the regret
#: and no accuracy (the predictions scored are ``model.predict``'s).
RANKING = ("history_transfer", "rank_margin", "rank_spread")


def _ranked_with_transfer(model, X, job_codes, **kwargs):
    """The regret's ranking of a job's candidates, carrying the model's own share of its miss,
    then moved by the configuration's ranking levers (:func:`_ranking_levers`)."""
    kwargs.setdefault("transfer", getattr(model, "history_transfer", HISTORY_TRANSFER))
    predicted, shift = predict_by_job(model, X, job_codes, **kwargs)
    return _ranking_levers(model, X, job_codes, predicted), shift


def _ranking_levers(model, X, job_codes, predicted):
    """Two levers of a job's ranking, tried against the winner's curse of ranking by estimates.

    ``rank_margin=m`` adds ``m`` to the log throughput of the types the job ran on in its
    configuration, which are predicted from its runs (a ranking then leaves what it knows
    only for a gain of more than ``m``); ``rank_spread=s`` scales each candidate's log
    distance from the mean of its job's candidates by ``s`` (under 1: the differences
    between types trusted less, so the cost weighs more).
    """
    margin = float(getattr(model, "rank_margin", 0.0))
    spread = float(getattr(model, "rank_spread", 1.0))
    if margin == 0.0 and spread == 1.0:
        return predicted
    log = np.log(predicted)
    if spread != 1.0:
        job = pd.factorize(np.asarray(job_codes))[0]
        mean = (np.bincount(job, weights=log) / np.bincount(job))[job]
        log = mean + spread * (log - mean)
    if margin != 0.0:
        columns = getattr(model, "history_columns", None) or HISTORY_COLUMNS  # as predict_by_job
        runs = np.asarray(X[columns[1]], dtype=float)
        log = log + margin * (np.nan_to_num(runs) > 0)
    return np.exp(log)


def make_model(text: str, seed: int, *, shared: bool = False):
    """The model a configuration names: a reference of :data:`REFERENCES`, or a LeapRegressor
    (a :class:`SharedFit` when ``shared``). ``history_transfer=t`` among the parameters ranks
    its candidates carrying ``t`` of a job's miss instead of
    :data:`leapml.placement.HISTORY_TRANSFER`, and ``rank_margin`` and ``rank_spread`` move
    its ranking (:func:`_ranking_levers`); the accuracy does not change."""
    if text in REFERENCES:
        return REFERENCES[text](seed)
    kind = SharedFit if shared else LeapRegressor
    name, _, rest = text.partition(",")
    params = parse_config(rest) if name in NAMED else parse_config(text)
    ranking = {key: params.pop(key) for key in RANKING if key in params}
    if ranking:
        kind = type("Ranked", (kind,), ranking)
    if name in NAMED:
        return kind(random_state=seed, **NAMED[name](), **params)
    return kind(random_state=seed, **params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small")
    parser.add_argument("--nights", type=int, default=5)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    parser.add_argument("--out", default=None, help="JSON file for the table (default: results/)")
    parser.add_argument("--no-model-sizes", action="store_true",
                        help="simulate the fleet without its model-size columns")
    parser.add_argument("--share-fits", action="store_true",
                        help="configurations differing only in expert_weight share one fit a night")
    parser.add_argument("--no-reference", action="store_true",
                        help="leave the single LightGBM reference out")
    args = parser.parse_args()

    started = time.perf_counter()
    regret_ranking.predict_by_job = _ranked_with_transfer  # a configuration may set its own transfer
    tables, attempts = [], 0
    for seed in args.seeds:
        fleet = simulate(args.preset, days=args.window_days + args.nights, seed=seed,
                         model_sizes=not args.no_model_sizes)
        attempts += len(fleet.attempts)
        models = {} if args.no_reference else {
            "single_lightgbm": single_model_reference(random_state=seed)}
        for text in args.configs:
            models[text] = make_model(text, seed, shared=args.share_fits)
        result = nightly(fleet.attempts, fleet.hardware, models=models,
                         window_days=args.window_days, nights=args.nights,
                         oracle=fleet.expected_throughput,
                         submission_oracle=fleet.expected_at_submission, random_state=seed)
        tables.append(summarize(result, list(models)).assign(seed=seed))
    table = pd.concat(tables).rename_axis("model").reset_index()
    pd.set_option("display.width", 250)
    if len(args.seeds) > 1:
        print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        print("\nmean over seeds; vs_single: within_20 minus the single model's, same seed")
    mean = table.drop(columns="seed").groupby("model", sort=False).mean()
    if not args.no_reference:
        single = table[table["model"] == "single_lightgbm"].set_index("seed")["within_20"]
        table["vs_single"] = table["within_20"] - table["seed"].map(single)
        mean["worst_vs_single"] = table.groupby("model", sort=False)["vs_single"].min()
    print(mean.to_string(float_format=lambda v: f"{v:.1f}"))
    seconds = time.perf_counter() - started
    print(f"\n{attempts:,} attempts, seeds {args.seeds}, {args.nights} nights, "
          f"{args.window_days}-day window, {seconds:.0f} s")
    seeds = "-".join(map(str, args.seeds))
    out = Path(args.out) if args.out else RESULTS / f"method_levers_{args.preset}_seeds{seeds}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python", "benchmarks/bench_method_levers.py", *sys.argv[1:]])
    out.write_text(json.dumps({"command": command, "preset": args.preset, "nights": args.nights,
                               "window_days": args.window_days, "seeds": args.seeds,
                               "model_sizes": not args.no_model_sizes,
                               "seconds": round(seconds), "table": table.to_dict("records")},
                              indent=1))


def summarize(result, names: list[str]) -> pd.DataFrame:
    """One row per model: medians over nights, in percent (points for the gap)."""
    scores = result.scores

    def median(slice_: str, metric: str) -> pd.Series:
        rows = scores[scores["slice"] == slice_]
        return 100 * rows.groupby("model", observed=True)[metric].median()

    gap = 100 * result.gap_to(SUBMISSION_CEILING).loc["all"]
    regret = 100 * result.regret_summary(candidates="known_feasible")
    table = pd.DataFrame({
        "within_20": median("all", "within_20"),
        "within_10": median("all", "within_10"),
        "new_jobs_20": median("job_new", "within_20"),
        "new_jobs_10": median("job_new", "within_10"),
        "new_jobs_device_hours_20": median("job_new", "within_20_by_device_hours"),
        "device_hours_20": median("all", "within_20_by_device_hours"),
        "device_hours_10": median("all", "within_10_by_device_hours"),
        "new_jobs_device_hours_10": median("job_new", "within_10_by_device_hours"),
        "gap_to_submission_ceiling": gap,
        "mean_regret": regret["mean_regret"],
        "p90_regret": regret["p90_regret"],
    })
    return table.reindex([n for n in names if n in table.index])


if __name__ == "__main__":
    main()
