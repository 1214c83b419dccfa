"""The backtest, the nightly retrain and the features on a Dask cluster (optional extra).

Install with ``pip install "leapml[dask]"``. Nothing in the core package
imports this module.

* :func:`nightly` and :func:`held_out` run the local functions of
  :mod:`leapml.evaluation.backtest` with joblib's Dask backend: one task per night, or
  per held-out group, on the cluster's workers. The code that runs is the
  local code, so a fixed seed gives the same tables, bit for bit.
* :func:`build_features` builds the feature matrix of a Dask DataFrame
  partitioned by model family: every history the features read (the job's,
  its model type's, its family's) lies inside one family, so each partition
  is described on its own with :func:`leapml.features.build_features`.
* :func:`fit_regressor` fits a :class:`~leapml.LeapRegressor` on a Dask
  DataFrame too large for one machine: experts and router are trained with
  :mod:`lightgbm.dask` and the result is an ordinary fitted
  ``LeapRegressor`` (same model file, same ``predict`` on pandas).

:func:`nightly`, :func:`held_out` and :func:`fit_regressor` take ``client``:
a :class:`distributed.Client`, a scheduler's address, or None for the client
already set up in the session. :func:`build_features` returns a lazy Dask
DataFrame, computed by the session's client.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd

try:
    import dask
    import dask.dataframe as dd
    import distributed
    import joblib
    import lightgbm as lgb
    from dask.sizeof import sizeof
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'leapml.distributed needs Dask: install the extra with pip install "leapml[dask]"'
    ) from err

from sklearn.utils import check_random_state

from leapml import features as _features
from leapml._binning import assign_bins, equal_frequency_edges
from leapml._cascade import (
    MIN_ROWS_TO_FIT,
    ConstantModel,
    _reassignment_errors,
    _weighted_median,
    default_regressor,
    lightgbm_params,
    predict_expert,
)
from leapml._encoding import is_categorical, learn_categories
from leapml._router import default_classifier, ordinal_router
from leapml.evaluation import backtest as _backtest
from leapml.evaluation import held_out as _held_out
from leapml.regressor import LeapRegressor

__all__ = ["build_features", "fit_regressor", "held_out", "nightly"]

# Columns the fit keeps beside the encoded features (which are named Column_0, ...,
# as LightGBM names the columns of a numpy matrix).
_LOG_Y, _BIN, _MOVED, _LOSS = "log_throughput", "bin", "moved", "loss"
# what the bin experts learn when a shared expert comes first: log throughput minus its prediction
_RESIDUAL, _ANCHORED = "residual", "anchored"


@sizeof.register(_backtest._Context)
@sizeof.register(_held_out._HeldOut)
def _sizeof_fields(task_context) -> int:
    """The size of a backtest task's shared context: the size of what it holds.

    joblib's Dask backend sends an argument to the workers once, rather than
    in every task, when Dask finds it large; without this, Dask would size the
    context (the log, its features, the models) as an empty object.
    """
    return sum(sizeof(value) for value in vars(task_context).values())


@contextlib.contextmanager
def _connected(client) -> Iterator[distributed.Client]:
    """The client to use: the one given, one connected to an address, or the session's."""
    if isinstance(client, distributed.Client):
        yield client
    elif isinstance(client, str):
        with distributed.Client(client) as connected:
            yield connected
    elif client is None:
        try:
            current = distributed.get_client()
        except ValueError as err:
            raise ValueError(
                "no Dask client: pass client=distributed.Client(...) or a scheduler address, "
                "or create a Client before calling"
            ) from err
        yield current
    else:
        raise TypeError(
            f"client must be a distributed.Client, a scheduler address or None, "
            f"got {type(client).__name__}"
        )


def _refuse_n_jobs(options: dict, function: str) -> None:
    if "n_jobs" in options:
        raise TypeError(
            f"{function} runs one task per worker thread of the cluster: drop n_jobs "
            "(set the workers' threads instead)"
        )


def nightly(attempts: pd.DataFrame, hardware: pd.DataFrame, *, client=None, **options):
    """:func:`leapml.evaluation.backtest.nightly` with one task per night on a Dask cluster.

    The nights run through joblib's Dask backend; the log, its features and
    the models are sent to the workers once. With a fixed ``random_state``
    the tables are those of a local run, bit for bit (``fit_seconds`` aside,
    which are timings).

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog, as for the local function.
    client : distributed.Client, str or None
        The cluster: a client, a scheduler address, or None for the current client.
    **options
        Any keyword option of :func:`leapml.evaluation.backtest.nightly` but ``n_jobs``
        (every worker thread takes nights).

    Returns
    -------
    BacktestResult

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from leapml import LeapRegressor
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=5, seed=0)
    >>> models = {"leap": LeapRegressor(n_estimators=5, random_state=0)}
    >>> with LocalCluster(n_workers=2, processes=False, dashboard_address=":0") as cluster, \\
    ...         Client(cluster) as client:
    ...     result = nightly(fleet.attempts, fleet.hardware, client=client, window_days=4,
    ...                      nights=1, models=models, progress=False)
    >>> result.scores["model"].unique().tolist()
    ['leap']
    """
    _refuse_n_jobs(options, "nightly")
    with (
        _connected(client) as dask_client,
        joblib.parallel_config(backend="dask", client=dask_client),
    ):
        return _backtest.nightly(attempts, hardware, n_jobs=-1, **options)


def held_out(attempts: pd.DataFrame, hardware: pd.DataFrame, *, client=None, **options):
    """:func:`leapml.evaluation.held_out.held_out` with one task per held-out group on a Dask cluster.

    The in-distribution reference is fitted once where this is called; each
    group's features and model are built on a worker. With a fixed seed in the
    model the table is that of a local run, bit for bit.

    Parameters
    ----------
    attempts, hardware : DataFrame
        The attempt log and the hardware catalog.
    client : distributed.Client, str or None
        The cluster: a client, a scheduler address, or None for the current client.
    **options
        Any keyword option of :func:`leapml.evaluation.held_out.held_out` but ``n_jobs``.

    Returns
    -------
    DataFrame
        One row per group, as :func:`leapml.evaluation.held_out.held_out` returns.
    """
    _refuse_n_jobs(options, "held_out")
    with (
        _connected(client) as dask_client,
        joblib.parallel_config(backend="dask", client=dask_client),
    ):
        return _held_out.held_out(attempts, hardware, n_jobs=-1, **options)


def build_features(
    attempts: dd.DataFrame, hardware: pd.DataFrame, *, npartitions: int | None = None
):
    """Features of a Dask DataFrame of attempts, computed family by family.

    The log is shuffled so that each partition holds whole model families,
    then each partition goes through :func:`leapml.features.build_features`
    with itself as history. A job's, a model type's and a family's earlier
    runs all lie in the row's family, so every row gets the features of a
    local run on the whole log (same as-of rules, same values).

    Parameters
    ----------
    attempts : dask DataFrame
        The attempt log (columns of :data:`leapml.features.HISTORY_COLUMNS`
        and :data:`leapml.features.QUERY_COLUMNS`). Each ``job_id`` must
        belong to one ``model_family``.
    hardware : DataFrame
        The hardware catalog (pandas: it is small and sent to every task).
    npartitions : int, optional
        Partitions after the shuffle; defaults to those of ``attempts``.

    Returns
    -------
    dask DataFrame
        The features, each row under the index of its attempt. Rows come
        grouped by family: align on the index (``sort_index`` after
        ``compute``, or a join) rather than on position.

    Raises
    ------
    TypeError
        If ``attempts`` is not a Dask DataFrame.
    ValueError
        If a column is missing or a job's rows belong to several families.
    """
    if not isinstance(attempts, dd.DataFrame):
        raise TypeError(
            f"attempts must be a dask DataFrame, got {type(attempts).__name__}; "
            "for a pandas frame use leapml.features.build_features"
        )
    missing = sorted(
        set(_features.QUERY_COLUMNS + _features.HISTORY_COLUMNS) - set(attempts.columns)
    )
    if missing:
        raise ValueError(f"attempts lacks the column(s) {missing}")
    spread = attempts.groupby("job_id")["model_family"].nunique()
    mixed = spread[spread > 1].compute()
    if len(mixed):
        raise ValueError(
            f"{len(mixed)} job id(s) have rows in several model families (first: "
            f"{mixed.index[:5].tolist()}): partitions by family would split their history"
        )
    by_family = attempts.shuffle(on="model_family", npartitions=npartitions)
    meta = _features.build_features(attempts._meta, hardware)
    return by_family.map_partitions(_features.build_features, hardware, meta=meta)


def fit_regressor(estimator: LeapRegressor, X: dd.DataFrame, y: dd.Series, *, client=None):
    """Fit a :class:`~leapml.LeapRegressor` on a Dask DataFrame with :mod:`lightgbm.dask`.

    The fit of :meth:`LeapRegressor.fit <leapml.LeapRegressor.fit>`, phase by
    phase, with the rows left on the workers:

    1. categories are learned from the whole frame and every partition is
       encoded by the estimator's own encoder;
    2. the bin edges come from :func:`~leapml._binning.equal_frequency_edges`
       on the log throughput, gathered here (one float per row: 60 MB for
       7.5 million rows);
    3. the shared expert (``base``), when there is one, is trained with
       :class:`lightgbm.DaskLGBMRegressor` on every row (on the log
       throughput minus the ``anchor``, when one is chosen), and every
       partition keeps what it misses, which the experts learn;
    4. each hard-EM round trains the experts one after the other with
       :class:`lightgbm.DaskLGBMRegressor` on the rows of their bin (one
       training at a time: concurrent ones can hang), then every partition
       reassigns its rows with the experts' boosters;
    5. the router is trained with :class:`lightgbm.DaskLGBMRegressor` under
       LightGBM's multiclass objective with one class per bin, which is the
       local router's native model (:class:`lightgbm.DaskLGBMClassifier`
       would renumber the classes when a bin ends up empty), on a
       class-stratified Bernoulli sample of about ``router_max_rows`` rows;
       the ordinal router is a regressor of the bin index on every row.

    The result is an ordinary fitted ``LeapRegressor``: its experts and router
    are :class:`lightgbm.Booster` objects, so ``save``/``load`` and ``predict``
    on pandas work as for a local fit. LightGBM builds its histograms from
    each worker's rows, so the model differs slightly from a local fit on the
    same rows. Early stopping is not used (:mod:`lightgbm.dask` does not
    support it), nor are sample weights (not supported here yet).

    Parameters
    ----------
    estimator : LeapRegressor
        Unfitted or fitted; its parameters are used and it is fitted in place.
        Its ``regressor`` and ``classifier``, when given, must be LightGBM models.
    X : dask DataFrame
        Features, with string column names (such as from :func:`build_features`).
    y : dask Series
        Throughput, strictly positive, partitioned like ``X``.
    client : distributed.Client, str or None
        The cluster: a client, a scheduler address, or None for the current client.

    Returns
    -------
    LeapRegressor
        ``estimator``, fitted.

    Raises
    ------
    TypeError
        If ``X`` or ``y`` is not a Dask collection or a sub-model is not LightGBM.
    ValueError
        If ``y`` holds values that are not strictly positive and finite, or
        ``X`` has no rows.
    """
    model = _checked_estimator(estimator)
    if not isinstance(X, dd.DataFrame) or not isinstance(y, dd.Series):
        raise TypeError(
            f"X must be a dask DataFrame and y a dask Series, got {type(X).__name__} and "
            f"{type(y).__name__}; for pandas use LeapRegressor.fit"
        )
    with _connected(client) as dask_client:
        frame, log_y = _encoded(model, X, y, dask_client)
        edges = equal_frequency_edges(log_y, model._bins_for(len(log_y)))
        n_bins = len(edges) - 1
        seed = int(check_random_state(model.random_state).randint(np.iinfo(np.int32).max - 1000))
        categorical = [j for j, c in enumerate(model.categories_) if c is not None]
        trainer = _DaskTrainer(dask_client, model.n_features_in_, categorical)
        frame = dask_client.persist(frame.map_partitions(_with_bins, edges))
        model.history_columns_in_ = model._history_columns()
        model.expert_weight_ = model._corrections_weight(model.base is not None, len(log_y))
        model.n_estimators_ = model._rounds(len(log_y))
        model.anchor_fill_ = float(np.median(log_y))
        model.anchor_ = model._anchor_name(
            lambda j: frame[_column(j)].compute().to_numpy(np.float64))
        model.base_, target = None, _LOG_Y
        if model.anchor_ is not None:  # the experts learn what the anchor misses
            frame = dask_client.persist(frame.map_partitions(
                _with_anchored, model, meta=frame._meta.assign(**{_ANCHORED: np.zeros(0)})))
            target = _ANCHORED
        if model.base is not None:
            native = lightgbm_params(model._base_regressor(len(log_y)), seed=seed + 499,
                                     num_threads=1)
            native.setdefault("objective", "huber")
            model.base_ = trainer.fit(native, frame, target)
            frame = dask_client.persist(frame.map_partitions(
                _with_residual, model.base_, model.n_features_in_, target,
                meta=frame._meta.assign(**{_RESIDUAL: np.zeros(0)})))
            target = _RESIDUAL
        frame, cascade = _fit_cascade(trainer, frame, log_y, n_bins, model, seed, target)
        model.classifier_ = _fit_router(trainer, frame, n_bins, model, seed + 997)
    model.bin_edges_ = edges
    model.n_bins_ = n_bins
    model.regressors_, model.n_iter_, model.moved_, model.train_loss_ = cascade
    return model


def _checked_estimator(estimator) -> LeapRegressor:
    if not isinstance(estimator, LeapRegressor):
        raise TypeError(f"fit_regressor fits a LeapRegressor, got {type(estimator).__name__}")
    estimator._validate_params()
    for name in ("regressor", "classifier", "base"):
        sub_model = getattr(estimator, name)
        if sub_model not in (None, "lightgbm") and not isinstance(sub_model, lgb.LGBMModel):
            raise TypeError(
                f"fit_regressor trains LightGBM sub-models with lightgbm.dask: {name}="
                f"{type(sub_model).__name__} is not one (leave it None or give a LightGBM model)"
            )
    if estimator.router == "ordinal" and estimator.classifier is not None:
        raise ValueError(
            "classifier is used only with router='multiclass'; router='ordinal' fits its "
            "own LightGBM regressor of the bin index (set classifier=None)"
        )
    if estimator.expert_overlap > 0:
        raise ValueError(
            "fit_regressor does not train overlapping experts yet; set expert_overlap=0, or "
            "fit on one machine with LeapRegressor.fit"
        )
    return estimator


def _column(j: int) -> str:
    return f"Column_{j}"


def _categories(column: dd.Series) -> list:
    """A categorical column's categories as ``LeapRegressor.fit`` learns them."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) and column.cat.known:
        return dtype.categories.tolist()
    values = column.dropna().unique().compute()
    return learn_categories(pd.Series(np.asarray(values, dtype=object)))


def _encoded(model: LeapRegressor, X: dd.DataFrame, y: dd.Series, client):
    """Learn the encoder on ``X`` and encode it; returns the persisted frame and log throughput."""
    names = X.columns.tolist()
    if not all(isinstance(name, str) for name in names):
        raise TypeError("X's column names must all be strings")
    if _LOG_Y in names or _BIN in names:
        raise ValueError(f"X has a column named {_LOG_Y!r} or {_BIN!r}, which the fit uses")
    skeleton = X.head(1, npartitions=-1)
    if len(skeleton) == 0:
        raise ValueError("X has no rows")
    for name in names:
        if is_categorical(X._meta[name]):
            skeleton[name] = pd.Categorical(
                skeleton[name].astype(object), categories=_categories(X[name])
            )
    # the estimator's own validation: names, width and categories, as in fit
    model._validate_X(skeleton, reset=True)
    meta = pd.DataFrame(
        {_column(j): np.empty(0) for j in range(len(names))} | {_LOG_Y: np.empty(0)}
    )
    frame = client.persist(dd.map_partitions(_encode_partition, X, y, model, meta=meta))
    log_y = frame[_LOG_Y].compute().to_numpy(np.float64)
    bad = ~np.isfinite(log_y)
    if bad.any():
        raise ValueError(
            f"y must be a strictly positive, finite throughput: {int(bad.sum())} of "
            f"{bad.size} rows are not"
        )
    return frame, log_y


def _encode_partition(X: pd.DataFrame, y: pd.Series, model: LeapRegressor) -> pd.DataFrame:
    columns = [_column(j) for j in range(X.shape[1])]
    encoded = np.empty((0, X.shape[1])) if len(X) == 0 else model._validate_X(X, reset=False)
    out = pd.DataFrame(encoded, columns=columns, index=X.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[_LOG_Y] = np.log(y.to_numpy(np.float64))
    return out


def _with_bins(part: pd.DataFrame, edges: np.ndarray) -> pd.DataFrame:
    return part.assign(**{_BIN: assign_bins(part[_LOG_Y].to_numpy(), edges)})


class _DaskTrainer:
    """Trains one LightGBM model at a time on the non-empty partitions of a frame."""

    def __init__(self, client, n_features: int, categorical: list[int]):
        self.client = client
        self.n_features = n_features
        self.columns = [_column(j) for j in range(n_features)]
        self.categorical = categorical or "auto"

    def fit(self, native: dict, rows: dd.DataFrame, label: str) -> lgb.Booster:
        """A booster trained with native LightGBM parameters ``native`` on ``rows``."""
        params = {key: value for key, value in native.items() if key != "num_threads"}
        params["n_estimators"] = params.pop("num_iterations")
        params["random_state"] = params.pop("seed")
        rows = self.client.persist(rows)
        # a worker holding only empty partitions would get a Dataset of no rows
        lengths = rows.map_partitions(len).compute().tolist()
        rows = rows.partitions[[i for i, n in enumerate(lengths) if n]]
        model = lgb.DaskLGBMRegressor(client=self.client, **params)
        with warnings.catch_warnings():
            # threads come from the workers; LightGBM says so for every fit
            warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
            model.fit(rows[self.columns], rows[label], categorical_feature=self.categorical)
        return model.to_local().booster_


def _fit_cascade(trainer: _DaskTrainer, frame, log_y, n_bins: int, model: LeapRegressor, seed: int,
                 target: str = _LOG_Y):
    """The hard-EM rounds of :func:`leapml._cascade.fit_cascade`, one expert fit at a time.

    The experts learn the column ``target``: the log throughput, or what the
    shared expert misses of it.
    """
    regressor = model.regressor
    if regressor is None:
        regressor = default_regressor().set_params(n_estimators=model.n_estimators_)
    native = lightgbm_params(regressor, seed=seed, num_threads=1)
    native.setdefault("objective", "l1")
    first = log_y if target == _LOG_Y else frame[target].compute().to_numpy(np.float64)
    experts = [ConstantModel(_weighted_median(first, None))] * n_bins
    moved, losses = [], []
    for _ in range(max(int(model.max_iter), 1)):
        counts = _bin_counts(frame, n_bins)
        for k in np.flatnonzero(counts).tolist():
            rows = frame[frame[_BIN] == k]
            if counts[k] < MIN_ROWS_TO_FIT:
                experts[k] = ConstantModel(
                    _weighted_median(rows[target].compute().to_numpy(), None)
                )
            else:
                experts[k] = trainer.fit(dict(native, seed=native["seed"] + k), rows, target)
        reassigned = frame.map_partitions(
            _reassigned,
            dask.delayed(list(experts)),
            trainer.n_features,
            model.reassign_window,
            target,
            meta=frame._meta.assign(**{_MOVED: np.zeros(0, bool), _LOSS: np.zeros(0)}),
        )
        frame = trainer.client.persist(reassigned)
        totals = frame[[_MOVED, _LOSS]].sum().compute()
        moved.append(float(totals[_MOVED]) / len(log_y))
        losses.append(float(totals[_LOSS]) / len(log_y))
        if moved[-1] < model.tol:
            break
    return frame, (list(experts), len(moved), np.asarray(moved), np.asarray(losses))


def _with_anchored(part: pd.DataFrame, model: LeapRegressor) -> pd.DataFrame:
    """The partition with each row's log throughput minus its anchor (as the local fit's)."""
    X = np.ascontiguousarray(part.iloc[:, :model.n_features_in_].to_numpy(np.float64))
    return part.assign(**{_ANCHORED: part[_LOG_Y].to_numpy(np.float64) - model._anchor_values(X)})


def _with_residual(part: pd.DataFrame, base: lgb.Booster, n_features: int,
                   target: str) -> pd.DataFrame:
    """The partition with what the shared expert misses of each row's ``target``."""
    X = np.ascontiguousarray(part.iloc[:, :n_features].to_numpy(np.float64))
    return part.assign(**{_RESIDUAL: part[target].to_numpy(np.float64) - predict_expert(base, X)})


def _bin_counts(frame, n_bins: int) -> np.ndarray:
    """Rows in each bin: a bincount per partition, added up here (no shuffle)."""
    parts = [dask.delayed(np.bincount)(part, minlength=n_bins) for part in frame[_BIN].to_delayed()]
    return np.sum(dask.compute(*parts), axis=0)


def _reassigned(part: pd.DataFrame, experts: list, n_features: int, window,
                target: str = _LOG_Y) -> pd.DataFrame:
    """Each row moved to the expert with the smallest absolute log error, as in the local fit."""
    X = np.ascontiguousarray(part.iloc[:, :n_features].to_numpy(np.float64))
    log_y = part[target].to_numpy(np.float64)
    assignment = part[_BIN].to_numpy(np.intp)
    errors = _reassignment_errors(experts, X, log_y, assignment, window, 1)
    rows = np.arange(len(part))
    best = np.argmin(errors, axis=1) if len(part) else assignment
    # keep a row where it is unless another expert is strictly better
    new = np.where(errors[rows, assignment] <= errors[rows, best], assignment, best)
    return part.assign(**{_BIN: new, _MOVED: new != assignment, _LOSS: errors[rows, new]})


def _fit_router(trainer: _DaskTrainer, frame, n_bins: int, model: LeapRegressor, seed: int):
    """The router of :func:`leapml._router.fit_router`, trained with lightgbm.dask."""
    counts = _bin_counts(frame, n_bins)
    if n_bins < 2 or np.count_nonzero(counts) < 2:
        return ConstantModel(float(np.flatnonzero(counts)[0]))
    if model.router == "ordinal":
        native = lightgbm_params(
            ordinal_router(model.regressor, model.n_estimators_), seed=seed, num_threads=1
        )
        return trainer.fit(native, frame, _BIN)
    classifier = model.classifier
    if classifier is None:
        classifier = default_classifier().set_params(n_estimators=model.n_estimators_)
    native = lightgbm_params(classifier, seed=seed, num_threads=1)
    native.update(objective="multiclass", num_class=int(n_bins))
    return trainer.fit(native, _stratified(frame, counts, n_bins, model, seed), _BIN)


def _stratified(frame, counts: np.ndarray, n_bins: int, model: LeapRegressor, seed: int):
    """A class-stratified Bernoulli sample of about ``model.router_max_rows`` rows (all if fewer)."""
    n, max_rows = int(counts.sum()), model.router_max_rows
    if max_rows is None or n <= max_rows:
        return frame
    # each bin keeps its share, rounded up, so a rare bin keeps a row on average
    keep = np.zeros(n_bins)
    for k in np.flatnonzero(counts):
        keep[k] = min(1.0, math.ceil(counts[k] * max_rows / n) / counts[k])
    return frame.map_partitions(_sampled, keep, seed, meta=frame._meta)


def _sampled(part: pd.DataFrame, keep: np.ndarray, seed: int, partition_info=None) -> pd.DataFrame:
    number = 0 if partition_info is None else partition_info["number"]
    draw = np.random.default_rng([seed, number]).random(len(part))
    return part[draw < keep[part[_BIN].to_numpy(np.intp)]]
