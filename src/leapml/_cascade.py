"""The cascade: per-bin median regressors fitted by hard EM (the router is in :mod:`leapml._router`).

Every array here is plain numpy: ``X`` is a float64 matrix whose categorical
columns already hold integer codes (NaN for missing), ``log_y`` is
``log(throughput)``. Validation and pandas handling live in
:mod:`leapml.regressor`.

Two kinds of sub-models are supported:

* LightGBM models (the default, or a user's ``LGBMRegressor`` /
  ``LGBMClassifier``): trained with the native API on one
  :class:`lightgbm.Dataset` whose features are binned once; each bin's expert
  trains on a row subset of it, and the fitted models are
  :class:`lightgbm.Booster` objects.
* Any other scikit-learn style estimator: cloned and fitted on row subsets.

Small bins have a defined behaviour: a bin that holds no row after a
reassignment keeps the expert it had; a bin that holds a single row gets a
:class:`ConstantModel` predicting that row's log throughput.
"""

from __future__ import annotations

import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import lightgbm as lgb
import numpy as np
from sklearn.base import clone

from leapml._encoding import booster_predict

__all__ = [
    "CascadeResult",
    "ConstantModel",
    "default_base_regressor",
    "default_regressor",
    "fit_base",
    "fit_cascade",
    "lightgbm_params",
    "predict_expert",
    "train_booster",
]

#: Bins with fewer rows than this get a constant model instead of a fitted one.
MIN_ROWS_TO_FIT = 2

#: Below this many rows, LightGBM predicts on one thread (threads cost more than they
#: save). On 2 cores a 100-tree expert is slower on two threads at 48 rows and faster
#: from about 64 rows on (benchmarks/bench_predict_threads.py).
_SMALL_BATCH = 128
#: Below this many rows, LightGBM trains on one thread, for the same reason; with
#: ``deterministic=True`` the model does not depend on the thread count.
_SMALL_FIT = 50_000

# Parameters the shared Dataset is built with; the router reuses the Dataset
# only when its own values for these agree.
_DATASET_KEYS = ("max_bin", "min_data_in_bin", "bin_construct_sample_cnt", "use_missing",
                 "zero_as_missing", "linear_tree", "data_random_seed", "subsample_for_bin")


def default_regressor():
    """The expert used when ``regressor=None``: a LightGBM median (L1) regressor.

    Examples
    --------
    >>> default_regressor().get_params()["objective"]
    'l1'
    """
    return lgb.LGBMRegressor(objective="l1", n_estimators=100, learning_rate=0.1,
                             num_leaves=31, min_child_samples=20, verbose=-1)


#: From how many training rows the default shared expert learns at the faster rate (0.2 rather
#: than 0.1). Measured (``docs/method.md``, "Levers"): on logs of ~700,000 rows the faster rate
#: gains ~2 points within +-20% on new jobs; on ~70,000 rows it ranks worse (regret 5.1% against
#: 4.7%), on ~3,800 it loses 1.9 points within +-20%. Any count between the two larger logs
#: fits those measurements; this is a round one between them.
FAST_BASE_ROWS = 250_000


def default_base_regressor(n_rows=None):
    """The shared expert used when ``base="lightgbm"``: a LightGBM Huber regressor on every row.

    Huber with ``alpha`` (its threshold) 0.9 in log throughput is least
    squares for all but the runs more than 2.5 times off, which it treats as
    the median regressor would: one model of the whole range, whose gradients
    carry each residual's size (an L1 model's carry its sign only).

    Each split chooses among a random half of the columns
    (``feature_fraction_bynode=0.5``): the model cannot always lean on the
    column that answers best for the rows it trains on (a rerun's own runs on
    the type, the type's name), so it also learns what the datasheet and the
    job's runs elsewhere say, which is all it has for a type the job never
    ran on: the candidates a ranking compares. Sampled per split rather than
    per tree, a model of few columns keeps its one strong column within reach.

    Its 200 trees learn at rate 0.1, or 0.2 on ``n_rows`` of at least
    :data:`FAST_BASE_ROWS` training rows: on a large log, at 0.1 they stop
    short of the fit 400 trees reach, and twice the trees would cost twice
    the time at every prediction; on a smaller one the faster rate fits the
    noise (``docs/method.md``, "Levers"). ``n_rows=None`` is a large log.

    Examples
    --------
    >>> params = default_base_regressor().get_params()
    >>> params["objective"], params["num_leaves"], params["feature_fraction_bynode"]
    ('huber', 63, 0.5)
    >>> params["n_estimators"], params["learning_rate"]
    (200, 0.2)
    >>> default_base_regressor(n_rows=70_000).get_params()["learning_rate"]
    0.1
    """
    rate = 0.2 if n_rows is None or n_rows >= FAST_BASE_ROWS else 0.1
    return lgb.LGBMRegressor(objective="huber", alpha=0.9, n_estimators=200, learning_rate=rate,
                             num_leaves=63, min_child_samples=10, feature_fraction_bynode=0.5,
                             verbose=-1)


#: What the bin experts' corrections count for (``expert_weight="auto"``) behind the default
#: shared expert at its faster rate, on a log of :data:`FAST_BASE_ROWS` rows or more: that
#: expert's estimate already holds much of what they correct. Measured (``docs/method.md``,
#: "Levers"): on ten ``production`` nights (~700,000 rows) half the corrections gain 0.7 points
#: within +-20% on new jobs and 1.7 by their device-hours, at the same regret; on ~70,000 rows,
#: where the shared expert learns at 0.1, the whole corrections score best.
FAST_BASE_EXPERT_WEIGHT = 0.5


#: Boosting rounds of each default bin expert and of the default router (``n_estimators="auto"``).
DEFAULT_ROUNDS = 50

#: The rounds ``n_estimators="auto"`` gives them behind the default shared expert on a log of
#: :data:`FAST_BASE_ROWS` rows or more, where their corrections count for half. Measured
#: (``docs/method.md``, "Levers"): on ten ``production`` nights 30 rounds score within 0.3 points
#: of 50 (44.5% against 44.8% within +-20% on new jobs, regret 3.09% against 3.05%), and a
#: day's batch of candidates is placed 1.3 times as fast (``benchmarks/README.md``).
FAST_BASE_ROUNDS = 30


def default_rounds(n_rows):
    """The rounds ``n_estimators="auto"`` gives the default bin experts and router behind the
    default shared expert on a log of ``n_rows`` rows.

    Examples
    --------
    >>> default_rounds(700_000), default_rounds(70_000)
    (30, 50)
    """
    return FAST_BASE_ROUNDS if n_rows >= FAST_BASE_ROWS else DEFAULT_ROUNDS


def default_expert_weight(n_rows):
    """The weight ``expert_weight="auto"`` gives the default shared expert's bin experts.

    Examples
    --------
    >>> default_expert_weight(700_000), default_expert_weight(70_000)
    (0.5, 1.0)
    """
    return FAST_BASE_EXPERT_WEIGHT if n_rows >= FAST_BASE_ROWS else 1.0


@dataclass
class ConstantModel:
    """A model that predicts one value for every row (log throughput or a bin index).

    Examples
    --------
    >>> ConstantModel(2.5).predict(np.zeros((3, 1)))
    array([2.5, 2.5, 2.5])
    """

    value: float

    def predict(self, X):
        return np.full(len(X), float(self.value))


@dataclass
class CascadeResult:
    """What :func:`fit_cascade` returns."""

    experts: list
    assignment: np.ndarray
    n_iter: int
    moved: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    dataset: object = None


def lightgbm_params(estimator, *, seed, num_threads):
    """Native LightGBM parameters equivalent to a LightGBM scikit-learn ``estimator``.

    ``seed`` and ``num_threads`` fill ``random_state`` / ``n_jobs`` when the
    estimator leaves them unset. ``deterministic`` is switched on so that the
    same seed gives the same model whatever the number of threads.

    Examples
    --------
    >>> p = lightgbm_params(default_regressor(), seed=0, num_threads=1)
    >>> p["objective"], p["num_iterations"], p["deterministic"]
    ('l1', 100, True)
    """
    params = {k: v for k, v in estimator.get_params().items() if v is not None}
    for key in ("importance_type", "class_weight"):
        params.pop(key, None)
    num_iterations = params.pop("n_estimators", 100)
    est_threads = params.pop("n_jobs", None)
    est_seed = params.pop("random_state", None)
    if isinstance(est_seed, numbers.Integral):
        seed = int(est_seed)
    elif est_seed is not None:
        # a RandomState instance: draw the seed from it, as scikit-learn does
        seed = int(est_seed.randint(np.iinfo(np.int32).max))
    if est_threads is not None and est_threads > 0:
        num_threads = int(est_threads)
    params.update(
        num_iterations=int(num_iterations),
        seed=int(seed),
        num_threads=int(num_threads),
        deterministic=True,
        force_col_wise=True,
        # the shared Dataset must not drop features based on one model's min_data_in_leaf
        feature_pre_filter=False,
    )
    params.setdefault("verbose", -1)
    return params


def _is_lightgbm(estimator):
    return isinstance(estimator, lgb.LGBMModel)


def _weighted_median(values, weight):
    if weight is None:
        return float(np.median(values))
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weight[order])
    if cumulative[-1] <= 0:
        return float(np.median(values))
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)])


def predict_expert(model, X, *, num_threads=1):
    """Log-throughput predictions of one expert on the rows of ``X``.

    Examples
    --------
    >>> predict_expert(ConstantModel(1.0), np.zeros((2, 3)))
    array([1., 1.])
    """
    if len(X) == 0:
        return np.empty(0)
    if isinstance(model, lgb.Booster):
        threads = 1 if len(X) < _SMALL_BATCH else num_threads
        return booster_predict(model, X, num_threads=threads)
    return np.asarray(model.predict(X), dtype=np.float64).ravel()


class _LightGBMTrainer:
    """Fits experts on row subsets of one LightGBM Dataset binned once."""

    def __init__(self, params, X, log_y, sample_weight, categorical):
        self.params = params
        self.dataset = lgb.Dataset(
            X, label=log_y, weight=sample_weight,
            categorical_feature=categorical if categorical else "auto",
            params={k: v for k, v in params.items() if k != "num_iterations"},
            free_raw_data=False,
        ).construct()

    def fit(self, rows, k, num_threads=None, weight=None):
        params = dict(self.params, seed=self.params["seed"] + k)
        if len(rows) < _SMALL_FIT:
            params["num_threads"] = 1
        if num_threads is not None:
            params["num_threads"] = num_threads
        subset = self.dataset.subset(rows)
        if weight is not None:
            subset.construct().set_weight(weight)

        def binned_on_rows(layout):
            if weight is None and self.dataset.get_weight() is not None:
                row_weight = self.dataset.get_weight()[rows]
            else:
                row_weight = weight
            return lgb.Dataset(self.dataset.data[rows], label=self.dataset.get_label()[rows],
                               weight=row_weight, categorical_feature=self.dataset.categorical_feature,
                               params=dict(self.dataset.params, **layout), free_raw_data=False)

        return train_booster(params, subset, binned_on_rows)


#: How LightGBM reports the failed check of its split bookkeeping (lightgbm issue 3679):
#: a count of zero rows on one side of the best split, raised by some row subsets of a
#: Dataset binned on other rows.
_SPLIT_CHECK = "best_split_info"


def train_booster(params, train_set, binned_on_rows):
    """``lgb.train`` on ``train_set``; where LightGBM's own split check fails, on the same rows
    binned on their own (``binned_on_rows(layout)`` builds that Dataset with the extra
    parameters ``layout``), column-wise then row-wise.

    The check fails for some row subsets of a Dataset binned on every row (a
    LightGBM bug, not the data's): the same rows binned on their own train.
    Any other error, or the check failing every way, is raised.
    """
    rounds = params["num_iterations"]
    try:
        return lgb.train(params, train_set, num_boost_round=rounds)
    except lgb.basic.LightGBMError as error:
        if _SPLIT_CHECK not in str(error):
            raise
        failure = error
    for layout in ({}, {"force_col_wise": False, "force_row_wise": True}):
        try:
            booster = lgb.train(dict(params, **layout), binned_on_rows(layout), num_boost_round=rounds)
            warnings.warn(f"LightGBM failed its own split check ({str(failure).strip()}) on a subset of the "
                          "shared Dataset; these rows were binned on their own and trained",
                          RuntimeWarning, stacklevel=2)
            return booster
        except lgb.basic.LightGBMError as error:
            if _SPLIT_CHECK not in str(error):
                raise
            failure = error
    raise failure


def fit_base(X, log_y, *, regressor, sample_weight=None, categorical=(), seed=0, num_threads=1):
    """Fit the shared expert on every row: what the bin experts then correct.

    A LightGBM regressor trains natively (its ``objective`` left unset means
    Huber) on all threads and comes back as a :class:`lightgbm.Booster`; any
    other estimator is cloned and fitted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 2)); log_y = 3 * X[:, 0]
    >>> base = fit_base(X, log_y, regressor=default_base_regressor().set_params(n_estimators=20))
    >>> bool(np.abs(predict_expert(base, X) - log_y).mean() < 0.2)
    True
    """
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if _is_lightgbm(regressor):
        params = lightgbm_params(regressor, seed=seed, num_threads=num_threads)
        params.setdefault("objective", "huber")
        trainer = _LightGBMTrainer(params, X, log_y, weight, list(categorical))
        rows = np.arange(len(log_y))
        return trainer.fit(rows, 0, num_threads=1 if len(rows) < _SMALL_FIT else num_threads)
    return _EstimatorTrainer(regressor, X, log_y, weight, seed).fit(np.arange(len(log_y)), 0)


def _reassignment_errors(experts, X, log_y, assignment, window, num_threads):
    """Absolute log error of each row under each expert; ``inf`` outside the window.

    With ``window=None`` every expert scores every row. Otherwise expert ``k``
    scores only the rows currently in bins ``k - window .. k + window``.
    """
    n, n_bins = len(log_y), len(experts)
    if window is None or 2 * window + 1 >= n_bins:
        errors = np.empty((n, n_bins))
        for k, model in enumerate(experts):
            errors[:, k] = np.abs(predict_expert(model, X, num_threads=num_threads) - log_y)
        return errors
    errors = np.full((n, n_bins), np.inf)
    for k, model in enumerate(experts):
        rows = np.flatnonzero(np.abs(assignment - k) <= window)
        if rows.size:
            errors[rows, k] = np.abs(
                predict_expert(model, X[rows], num_threads=num_threads) - log_y[rows]
            )
    return errors


class _EstimatorTrainer:
    """Fits clones of a scikit-learn style estimator on row subsets."""

    def __init__(self, estimator, X, log_y, sample_weight, seed):
        self.estimator, self.X, self.log_y = estimator, X, log_y
        self.sample_weight, self.seed = sample_weight, seed
        self.dataset = None

    def fit(self, rows, k, num_threads=None, weight=None):
        model = clone(self.estimator)
        if "random_state" in model.get_params() and model.get_params()["random_state"] is None:
            model.set_params(random_state=self.seed + k)
        if weight is None and self.sample_weight is not None:
            weight = self.sample_weight[rows]
        if weight is None:
            model.fit(self.X[rows], self.log_y[rows])
        else:
            model.fit(self.X[rows], self.log_y[rows], sample_weight=weight)
        return model


def _expert_rows(k, order, bounds, assignment, weight, overlap):
    """Rows expert ``k`` trains on and their weights: ``(rows, k, weight or None)``.

    Its own bin at full weight; with ``overlap > 0`` also the two neighbouring
    bins, each row at ``overlap`` times its weight, so an expert has seen the
    throughput just past its bin's edges when the router sends it a row that
    belongs next door.
    """
    own = np.sort(order[bounds[k]:bounds[k + 1]])
    if overlap <= 0:
        return own, k, None
    first, last = max(k - 1, 0), min(k + 1, len(bounds) - 2)
    rows = np.sort(order[bounds[first]:bounds[last + 1]])
    w = np.where(assignment[rows] == k, 1.0, float(overlap))
    if weight is not None:
        w = w * weight[rows]
    return rows, k, w


def fit_cascade(X, log_y, initial_bins, n_bins, *, regressor, sample_weight=None,
                categorical=(), max_iter=10, tol=0.01, seed=0, num_threads=1, overlap=0.0,
                reassign_window=None):
    """Fit one median regressor per bin and reassign rows until few move.

    Each iteration fits every non-empty bin's expert on the rows assigned to
    it, then moves every row to the expert with the smallest absolute log
    error on it (keeping its current bin on ties). The loop stops when the
    (weighted) share of rows that moved is below ``tol`` or after
    ``max_iter`` iterations. The experts returned are the ones of the last
    iteration and ``assignment`` is where they place each row: the labels the
    router learns.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    log_y : ndarray of shape (n_samples,)
    initial_bins : ndarray of int of shape (n_samples,)
        Starting bin of every row, in ``[0, n_bins)``.
    n_bins : int
    regressor : estimator
        A LightGBM scikit-learn regressor (trained natively) or any estimator
        with ``fit(X, y, sample_weight=...)`` and ``predict(X)``.
    sample_weight : ndarray of shape (n_samples,), default=None
    categorical : sequence of int
        Columns of ``X`` that hold category codes (LightGBM only).
    max_iter : int
    tol : float
    seed, num_threads : int
    overlap : float, default=0.0
        Weight, relative to its own rows, of the neighbouring bins' rows in
        each expert's training set (0: an expert sees its own bin only, as
        published).
    reassign_window : int, default=None
        Compare each row's error under the experts of the bins at most this
        many bins from its current one; ``None`` compares every expert.

    Returns
    -------
    CascadeResult
        ``moved[t]`` is the share of rows reassigned at iteration ``t`` and
        ``train_loss[t]`` the (weighted) mean absolute log error of each row's
        expert after that reassignment.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(60, 2))
    >>> log_y = np.where(X[:, 0] > 0.5, 3.0, 0.0) + X[:, 1]
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> result = fit_cascade(X, log_y, (log_y > 1.5).astype(int), 2,
    ...                      regressor=DecisionTreeRegressor(max_depth=2))
    >>> len(result.experts), result.n_iter >= 1
    (2, True)
    """
    n = len(log_y)
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    assignment = np.asarray(initial_bins, dtype=np.intp).copy()
    total_weight = n if weight is None else float(weight.sum())
    if total_weight <= 0:
        total_weight, weight_for_share = n, None
    else:
        weight_for_share = weight
    counts = np.bincount(assignment, minlength=n_bins)
    trainer = None
    if np.any(counts >= MIN_ROWS_TO_FIT):
        if _is_lightgbm(regressor):
            if regressor.get_params().get("class_weight") is not None:
                raise ValueError(
                    "regressor has a class_weight, which only a classifier reads; weight rows "
                    "with fit(..., sample_weight=...) instead"
                )
            params = lightgbm_params(regressor, seed=seed, num_threads=num_threads)
            params.setdefault("objective", "l1")
            trainer = _LightGBMTrainer(params, X, log_y, weight, list(categorical))
        else:
            trainer = _EstimatorTrainer(regressor, X, log_y, weight, seed)
    experts = [ConstantModel(_weighted_median(log_y, weight))] * n_bins
    result = CascadeResult(experts=experts, assignment=assignment, n_iter=0,
                           dataset=getattr(trainer, "dataset", None))
    rows_index = np.arange(n)
    window = reassign_window
    # with several threads, the experts of one iteration fit concurrently, one
    # thread each: small fits scale badly across threads
    parallel = num_threads > 1 and isinstance(trainer, _LightGBMTrainer)
    for iteration in range(max(int(max_iter), 1)):
        order = np.argsort(assignment, kind="stable")
        bounds = np.searchsorted(assignment[order], np.arange(n_bins + 1))
        jobs = []
        for k in range(n_bins):
            rows = np.sort(order[bounds[k]:bounds[k + 1]])
            if rows.size == 0:
                continue  # an empty bin keeps its previous expert
            if rows.size < MIN_ROWS_TO_FIT:
                w = None if weight is None else weight[rows]
                experts[k] = ConstantModel(_weighted_median(log_y[rows], w))
            else:
                jobs.append(_expert_rows(k, order, bounds, assignment, weight, overlap))
        if parallel and len(jobs) > 1:
            # largest first, so the pool does not end on one long fit
            jobs.sort(key=lambda job: -job[0].size)
            with ThreadPoolExecutor(max_workers=num_threads) as pool:
                fitted = list(pool.map(
                    lambda job: trainer.fit(job[0], job[1], num_threads=1, weight=job[2]), jobs))
            for (_, k, _), model in zip(jobs, fitted, strict=True):
                experts[k] = model
        else:
            for rows, k, w in jobs:
                experts[k] = trainer.fit(rows, k, weight=w)
        errors = _reassignment_errors(experts, X, log_y, assignment, window, num_threads)
        best = np.argmin(errors, axis=1)
        current = errors[rows_index, assignment]
        # keep a row where it is unless another expert is strictly better
        new_assignment = np.where(current <= errors[rows_index, best], assignment, best)
        changed = new_assignment != assignment
        if weight_for_share is None:
            moved = float(changed.mean())
            loss = float(errors[rows_index, new_assignment].mean())
        else:
            moved = float(weight_for_share[changed].sum() / total_weight)
            loss = float(np.average(errors[rows_index, new_assignment], weights=weight))
        assignment = new_assignment
        result.moved.append(moved)
        result.train_loss.append(loss)
        result.n_iter = iteration + 1
        if moved < tol:
            break
    result.experts = list(experts)
    result.assignment = assignment
    return result
