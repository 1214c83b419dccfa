"""The bin router: the model that places a row in a bin from its features alone.

Two kinds: a multiclass model of the bins (the published method; any
estimator with ``fit`` and ``predict_proba``), or one regressor of the bin
index (``router="ordinal"``), whose score gives the two nearest bins their
probabilities. Arrays are as in :mod:`leapml._cascade`: float64 features with
categorical columns as codes.
"""

from __future__ import annotations

import numbers

import lightgbm as lgb
import numpy as np
from sklearn.base import clone

from leapml._cascade import (
    _DATASET_KEYS,
    _SMALL_BATCH,
    _SMALL_FIT,
    ConstantModel,
    _is_lightgbm,
    lightgbm_params,
    predict_expert,
    train_booster,
)
from leapml._encoding import booster_predict

__all__ = [
    "default_classifier",
    "default_ordinal_router",
    "fit_router",
    "nearest_bin",
    "ordinal_router",
    "predict_between_bins",
    "predict_router",
    "router_scores",
]

def default_classifier():
    """The router used when ``classifier=None``: a LightGBM multiclass model.

    A multiclass model grows one tree per bin and round, so it costs about as
    much as all the experts together; a row subsample of one half per round
    halves that, and a learning rate of 0.15 makes up for part of it.

    Examples
    --------
    >>> default_classifier().get_params()["n_estimators"]
    100
    """
    return lgb.LGBMClassifier(n_estimators=100, learning_rate=0.15, num_leaves=31,
                              min_child_samples=20, subsample=0.5, subsample_freq=1,
                              verbose=-1)


def default_ordinal_router():
    """The router of ``router="ordinal"``: a LightGBM least-squares regressor of the bin index.

    The bins are ordered (they cut log throughput), so one regressor of the
    bin's index places a row as well as a multiclass model of one tree per
    bin and round, at a thirteenth of the trees (``benchmarks/README.md``).

    Examples
    --------
    >>> default_ordinal_router().get_params()["objective"]
    'l2'
    """
    return lgb.LGBMRegressor(objective="l2", n_estimators=100, learning_rate=0.1,
                             num_leaves=31, min_child_samples=20, verbose=-1)


def fit_router(X, labels, n_bins, *, classifier, sample_weight=None, categorical=(),
               dataset=None, seed=0, num_threads=1, ordinal=False, max_rows=None):
    """Fit the model that predicts each row's bin from its features.

    With ``ordinal=False`` the router is ``classifier``, a multiclass model
    of the bins; a LightGBM one trains on a class-stratified sample of at
    most ``max_rows`` rows (``None``: every row). With ``ordinal=True`` it is
    ``classifier`` fitted on every row as a regressor of the bin index (see
    :func:`default_ordinal_router`), and :func:`predict_router` turns its
    score into probabilities of the two nearest bins.

    Returns a :class:`lightgbm.Booster` (LightGBM models), a fitted clone
    of ``classifier``, or a :class:`ConstantModel` when a single bin holds
    every row (there is nothing to classify).

    Examples
    --------
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> router = fit_router(X, (X[:, 0] > 9).astype(int), 2,
    ...                     classifier=default_classifier().set_params(n_estimators=5,
    ...                                                                min_child_samples=5))
    >>> predict_router(router, X[[0, 19]], 2).argmax(axis=1)
    array([0, 1])
    """
    labels = np.asarray(labels, dtype=np.intp)
    present = np.unique(labels)
    if n_bins < 2 or present.size < 2:
        return ConstantModel(float(present[0]))
    if _is_lightgbm(classifier):
        params = lightgbm_params(classifier, seed=seed, num_threads=num_threads)
        class_weight = None if ordinal else classifier.get_params().get("class_weight")
        if class_weight is not None:
            # what LGBMClassifier.fit does with it: a factor on each row's weight
            sample_weight = _bin_weights(class_weight, labels, n_bins, sample_weight)
        if ordinal:
            # one tree per round: cheap enough to train on every row
            sample = None
        else:
            params.update(objective=_multiclass_objective(params.get("objective")),
                          num_class=int(n_bins))
            sample = _stratified_sample(labels, max_rows, seed)
        if len(labels) < _SMALL_FIT:
            params["num_threads"] = 1
        params.pop("num_class_", None)
        reuse = class_weight is None and dataset is not None and all(
            params.get(key) == dataset.params.get(key) for key in _DATASET_KEYS
        )
        if reuse:
            dataset.set_label(labels.astype(np.float64))
            # a subset of the binned Dataset copies its labels and weights
            train_set = dataset if sample is None else dataset.subset(sample)
        if sample is not None:
            X, labels = X[sample], labels[sample]
            sample_weight = None if sample_weight is None else sample_weight[sample]

        def binned_on_rows(layout):
            return lgb.Dataset(
                X, label=labels.astype(np.float64), weight=sample_weight,
                categorical_feature=list(categorical) if len(categorical) else "auto",
                params={k: v for k, v in dict(params, **layout).items() if k != "num_iterations"},
                free_raw_data=False,
            )

        return train_booster(params, train_set if reuse else binned_on_rows({}), binned_on_rows)
    model = clone(classifier)
    if "random_state" in model.get_params() and model.get_params()["random_state"] is None:
        model.set_params(random_state=seed)
    target = labels.astype(np.float64) if ordinal else labels
    if sample_weight is None:
        model.fit(X, target)
    else:
        model.fit(X, target, sample_weight=sample_weight)
    return model


#: LightGBM's names of its two multiclass objectives (softmax, and one-vs-all).
_MULTICLASS = ("multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr")


def _multiclass_objective(objective):
    """The router's objective: the classifier's own multiclass one, else softmax."""
    if objective is None or objective in _MULTICLASS:
        return objective or "multiclass"
    raise ValueError(
        f"classifier has objective={objective!r}; the bin router is a multiclass model: use "
        "'multiclass' or 'multiclassova', or leave it unset"
    )


def _bin_weights(class_weight, labels, n_bins, sample_weight):
    """Row weights times the class weight of each row's bin (``"balanced"`` or {bin: weight})."""
    counts = np.bincount(labels, minlength=n_bins)
    if isinstance(class_weight, str) and class_weight == "balanced":
        # as scikit-learn: n_samples / (n_classes * count), over the bins that hold rows
        factor = np.where(counts > 0, len(labels) / (np.count_nonzero(counts) * np.maximum(counts, 1)),
                          1.0)
    elif isinstance(class_weight, dict):
        unknown = [k for k in class_weight
                   if not isinstance(k, numbers.Integral) or not 0 <= k < n_bins]
        values = np.array(list(class_weight.values()), dtype=np.float64)
        if unknown or not (np.isfinite(values) & (values >= 0)).all():
            raise ValueError(
                f"classifier's class_weight must map bin indices 0..{n_bins - 1} to finite "
                f"weights >= 0; got {class_weight!r}"
            )
        factor = np.array([float(class_weight.get(k, 1.0)) for k in range(n_bins)])
    else:
        raise ValueError(
            f"classifier's class_weight must be 'balanced' or a dict {{bin: weight}}, got "
            f"{class_weight!r}"
        )
    weight = factor[labels]
    return weight if sample_weight is None else sample_weight * weight


def _stratified_sample(labels, max_rows, seed):
    """Sorted row indices of a class-stratified sample of ``max_rows`` rows, or None for all.

    Each class keeps its share of the rows (rounded up, so a rare bin keeps
    at least one row); the draw depends only on ``seed``.
    """
    n = len(labels)
    if max_rows is None or n <= max_rows:
        return None
    rng = np.random.default_rng(seed)
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    keep = np.ceil(counts * (max_rows / n)).astype(np.intp)
    picked = [order[start + rng.choice(count, size=k, replace=False)]
              for start, count, k in zip(starts, counts, keep, strict=True) if k]
    return np.sort(np.concatenate(picked))


def predict_router(router, X, n_bins, *, num_threads=1, ordinal=False):
    """Bin probabilities, shape ``(n_samples, n_bins)``, from a fitted router.

    An ordinal router's score ``s`` (clipped to ``[0, n_bins - 1]``) puts
    weight ``1 - (s - floor(s))`` on bin ``floor(s)`` and the rest on the
    next bin, so the most probable bin is the nearest one.

    Examples
    --------
    >>> predict_router(ConstantModel(1.0), np.zeros((2, 1)), 3)
    array([[0., 1., 0.],
           [0., 1., 0.]])
    >>> predict_router(ConstantModel(1.25), np.zeros((1, 1)), 3, ordinal=True)
    array([[0.  , 0.75, 0.25]])
    """
    n = len(X)
    if isinstance(router, ConstantModel) and not ordinal:
        proba = np.zeros((n, n_bins))
        proba[:, int(router.value)] = 1.0
        return proba
    if n == 0:
        return np.zeros((0, n_bins))
    if ordinal:
        return _ordinal_proba(router_scores(router, X, num_threads=num_threads), n_bins)
    if isinstance(router, lgb.Booster):
        threads = 1 if n < _SMALL_BATCH else num_threads
        return np.asarray(booster_predict(router, X, num_threads=threads)).reshape(n, n_bins)
    raw = np.asarray(router.predict_proba(X), dtype=np.float64)
    proba = np.zeros((n, n_bins))
    proba[:, np.asarray(router.classes_, dtype=np.intp)] = raw
    return proba


def router_scores(router, X, *, num_threads=1):
    """An ordinal router's raw scores (a real-valued bin index), shape ``(n_samples,)``.

    Examples
    --------
    >>> router_scores(ConstantModel(2.0), np.zeros((2, 1)))
    array([2., 2.])
    """
    if isinstance(router, lgb.Booster):
        threads = 1 if len(X) < _SMALL_BATCH else num_threads
        return booster_predict(router, X, num_threads=threads)
    return np.asarray(router.predict(X), dtype=np.float64).ravel()


def nearest_bin(scores, n_bins):
    """The bin an ordinal router's scores place each row in: the nearest index.

    Halves go down, matching ``argmax`` of :func:`predict_router`.

    Examples
    --------
    >>> nearest_bin(np.array([-3.0, 0.5, 0.51, 2.2, 9.0]), 3)
    array([0, 0, 1, 2, 2])
    """
    return np.ceil(np.clip(scores, 0, n_bins - 1) - 0.5).astype(np.intp)


def predict_between_bins(experts, X, scores, *, num_threads=1):
    """Log predictions of an ordinal router's soft combination: each row blends two experts.

    The same numbers as summing ``predict_router(..., ordinal=True)[:, k]``
    times expert ``k``'s prediction over the bins, without the
    ``(n_samples, n_bins)`` matrix: the rows are sorted once by the lower of
    their two bins, so that the rows expert ``k`` weighs (lower bin ``k`` or
    ``k - 1``) are one contiguous block and each expert is called once on it.

    Examples
    --------
    >>> experts = [ConstantModel(0.0), ConstantModel(10.0), ConstantModel(20.0)]
    >>> predict_between_bins(experts, np.zeros((3, 1)), np.array([0.25, 1.5, 7.0]))
    array([ 2.5, 15. , 20. ])
    """
    n_bins = len(experts)
    scores = np.clip(np.asarray(scores, dtype=np.float64), 0, n_bins - 1)
    low = np.minimum(np.floor(scores).astype(np.intp), n_bins - 1)
    order = np.argsort(low, kind="stable")
    low, upper = low[order], (scores - np.floor(scores))[order]
    starts = np.searchsorted(low, np.arange(n_bins + 1))
    X = X[order]
    log_pred = np.zeros(len(order))
    for k in range(n_bins):
        first, last = starts[max(k - 1, 0)], starts[k + 1]
        if first == last:
            continue
        # rows whose lower bin is k weigh expert k by 1 - upper; those whose lower bin is k - 1, by upper
        weight = np.where(low[first:last] == k, 1.0 - upper[first:last], upper[first:last])
        log_pred[first:last] += weight * predict_expert(experts[k], X[first:last],
                                                        num_threads=num_threads)
    out = np.empty_like(log_pred)
    out[order] = log_pred
    return out


def _ordinal_proba(scores, n_bins):
    scores = np.clip(np.asarray(scores, dtype=np.float64), 0, n_bins - 1)
    low = np.minimum(np.floor(scores).astype(np.intp), n_bins - 1)
    high = np.minimum(low + 1, n_bins - 1)
    upper = scores - low
    rows = np.arange(len(scores))
    proba = np.zeros((len(scores), n_bins))
    proba[rows, low] = 1.0 - upper
    # at the last bin low == high and the two weights add up to one there
    proba[rows, high] += upper
    return proba


def ordinal_router(regressor, n_estimators):
    """The ordinal router: the expert's own kind of model, fitted to the bin index by least squares."""
    if regressor is None:
        return default_ordinal_router().set_params(n_estimators=n_estimators)
    router = clone(regressor)
    if isinstance(router, lgb.LGBMRegressor):
        # a median of bin indices would round away the between-bin position
        router.set_params(objective="l2")
    return router
