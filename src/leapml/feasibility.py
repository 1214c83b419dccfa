"""``FeasibilityClassifier``: does a launch configuration fit on a hardware type?

Learned from the attempt log's outcomes alone: an attempt that ran (``ok``)
fitted, one that ran out of memory (``oom``) did not; other failures say
nothing about memory and are left out (see
:func:`leapml.placement.fit_feasibility`). The features are the same
submission-time columns the throughput model reads (launch configuration,
hardware specifications such as memory, precision support and devices per
host, and the job's history).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from leapml._class_labels import fitting_class, read_labels
from leapml._encoding import ColumnEncoder, booster_predict, effective_threads, refuse_infinity
from leapml._memory_keys import (
    ceilings_of,
    floors_of,
    key_columns,
    require_columns,
    signed_keys,
    smallest_memory,
    untried,
)
from leapml._memory_need import (
    HEADROOM,
    MIN_PEAK_ROWS,
    best_need,
    check_products,
    fit_need,
    headroom,
    measured_margin,
    need_matrix,
    predict_need,
    read_measured,
)

__all__ = ["FeasibilityClassifier"]


class FeasibilityClassifier(ClassifierMixin, BaseEstimator):
    """Gradient-boosted classifier of whether a job fits on a hardware type.

    A LightGBM classifier over the submission-time features, with category
    columns (DataFrame columns of category or string dtype) encoded as in
    :class:`~leapml.LeapRegressor`. Trained on ``status == "ok"`` versus
    ``status == "oom"`` it gives each candidate its probability of fitting,
    which :func:`~leapml.placement.place` compares with a threshold.

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds.
    learning_rate : float, default=0.1
        Shrinkage of each round.
    num_leaves : int, default=31
        Leaves per tree.
    min_child_samples : int, default=10
        Fewest rows in a leaf.
    n_jobs : int, default=None
        Threads for LightGBM (``None`` means 1, ``-1`` all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds LightGBM; an int gives identical models on every fit.
    evidence_columns : list of tuple of str, default=None
        Keys that must have been seen fitting: a row whose key (e.g. ``("model_family",
        "hardware_type")``) never came with the fitting class in ``fit`` gets probability 0
        (a log cannot teach that a family's software does not run on a type) if its values
        but the last did: a family the log never saw fit is left to the classifier.
        ``None``: no such rule.
    monotone : dict of str to int, default=None
        Features along which the probability of fitting may only rise
        (``1``, e.g. device memory) or only fall (``-1``, e.g. batch size),
        by name; needs DataFrame input with these columns. It carries what a
        log shows near the limit to configurations nobody tried.
    memory_floor_columns : list of tuple of str, default=None
        Keys below whose smallest fitting memory nothing is let fit: a row
        whose key (e.g. ``("model_type", "precision", "parallelism")``) was
        seen fitting in ``fit`` only on more memory (``memory_gb``) than the
        row's gets probability 0. A log rarely shows a model on smaller memory
        than a scheduler put it on, so no ``oom`` teaches the limit there.
        Needs DataFrame input with ``memory_gb``. ``None``: no such rule.
    memory_floor_load : dict of str to int, default=None
        Columns along which a configuration needs more memory: ``1`` when
        larger needs more (``batch_size``), ``-1`` when smaller does
        (``trainer_count``). A row's floor is the smallest memory on which a
        configuration of its key needing as much by every such column fitted
        (else the key's smallest); NaN counts as 0. ``None``: every
        configuration counts. ``memory_ceiling_columns`` reads it too.
    memory_floor_ratio : float in (0, 1], default=1.0
        Probability 0 where ``memory_gb < memory_floor_ratio * floor``: a
        ratio below 1 lets the classifier judge devices somewhat smaller
        than any a configuration was seen fitting on.
    memory_floor_override : float in (0, 1] or None, default=None
        The classifier's probability at or above which a row below its floor
        keeps it (near 1: only near certainty). ``None``: the floor is whole.
    memory_override_columns : list of tuple of str, default=None
        Keys that must back ``memory_floor_override``: a row below its floor
        keeps the classifier's probability only if a configuration of its key
        (e.g. ``("model_family", "precision", "parallelism")``) needing as
        much by every ``memory_override_load`` column fitted on at most the
        row's memory.
    memory_override_load : dict of str to int, default=None
        Columns along which a configuration needs more memory, for
        ``memory_override_columns``, as ``memory_floor_load`` is for the
        floors (e.g. ``{"batch_size": 1, "model_state_gb_per_device": 1}``).
    memory_ceiling_columns : list of tuple of str, default=None
        Keys at or below whose largest out-of-memory device memory nothing is
        let fit: for each tuple of column names, a row whose key ran out of
        memory in ``fit`` (the class that is not the fitting one) on at
        least as much memory as the row's, with a configuration needing no
        more by every ``memory_floor_load`` column, gets probability 0: what
        ran out of memory with less to hold runs out with more. Needs
        DataFrame input with these columns and ``memory_gb``.
    memory_need_features : list of str, default=None
        Columns from which to learn the memory one trainer needs, when ``fit``
        gets the runs' measured ``peak_memory_gb``: columns that do not
        depend on the device's memory (launch configuration, model sizes,
        devices per host). A LightGBM regressor of the log of the peak on
        them gives each row a predicted need, and the classifier reads one
        more feature, the row's *headroom* ``log(memory_gb / need)``, along
        which fitting only gets likelier. A need learned where the log put
        a model carries to memory it never put it on, where an ``oom`` label
        cannot. The classifier learns from needs predicted without the row's
        configuration (two folds by configuration), as for a new one. Below
        its memory floor a row then answers to ``memory_need_override`` and
        ``memory_need_quantile`` instead of ``memory_floor_override`` and
        ``memory_override_columns``. Needs DataFrame input with these columns
        and ``memory_gb``. ``None``, or fewer than 50 peaks in ``fit``: no
        need model.
    memory_need_products : list of tuple of str, default=None
        Products of numeric columns whose log the need model also reads, e.g.
        ``[("flops_per_sample", "batch_size")]``, the FLOPs of one trainer's
        step, which its activations grow with (a tree splits on one column at
        a time). NaN where a factor is unknown or not positive.
    memory_need_quantile : float in (0, 1), default=0.9
        With a need model, the headroom a row below its floor must have to
        keep the classifier's probability: this quantile of the completed
        runs' log of measured over predicted need (``memory_need_margin_``).
    memory_need_override : float in (0, 1] or None, default=0.9
        With a need model, the classifier's probability at or above which a
        row below its floor whose headroom clears the margin keeps it.
        ``None``: the floor keeps out every row below it.
    measured_need_column : str, default=None
        A column of ``X`` holding what one trainer of the row's job in its
        launch configuration was measured to need before, GB (e.g. the
        largest peak of its earlier completed runs,
        :data:`leapml.features.MEASURED_PEAK`; NaN where none). The
        classifier reads it as a headroom, ``log(memory_gb / measured)``,
        along which fitting only gets likelier; with a need model, a row
        with a measured need is judged by it in place of the predicted one,
        and below its floor by a margin of its own
        (``memory_measured_margin_``); where the classifier gives it at least
        ``memory_need_override`` and its headroom clears that margin, other
        jobs' memory ceilings do not keep it out either. Needs DataFrame
        input with the column and ``memory_gb``.
    rule_factor : float in [0, 1], default=0.0
        What each memory rule a row breaks (floor, ceiling) multiplies its
        probability by ("probability 0" above). A small one (``1e-6`` in
        :func:`leapml.training.feasibility_model`) keeps such rows below any
        threshold but in order (fewest rules broken, then the classifier),
        for ``if_none_fit="most_likely"``. The evidence rule gives 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes_,)
        The class labels seen in ``fit``.
    booster_ : lightgbm.Booster or None
        The fitted model; ``None`` when ``fit`` saw a single class (every
        prediction is then that class).
    evidence_ : list of set of tuple
        For each tuple of ``evidence_columns``, the value tuples seen with
        the fitting class (``True`` or ``"ok"``) in ``fit``.
    memory_floor_ : list of dict
        For each tuple of ``memory_floor_columns``, by value tuple: rows
        ``[*load, memory]``, each configuration (signed so that larger needs
        more) seen fitting and its smallest ``memory_gb``.
    memory_override_ : list of dict
        As ``memory_floor_``, for each tuple of ``memory_override_columns``
        (configurations by ``memory_override_load``).
    memory_need_ : lightgbm.Booster or None
        The need model (log GB one trainer needs, from ``memory_need_features``),
        or ``None`` when none was fitted.
    memory_need_margin_ : float
        The ``memory_need_quantile`` of the completed runs' log of measured
        over out-of-fold predicted need (``nan`` without a need model).
    memory_measured_margin_ : float
        As ``memory_need_margin_``, for rows with a measured need, over the
        need measured before (``nan`` with fewer than 50 such runs: such rows
        then answer to ``memory_need_margin_``).
    memory_ceiling_ : list of dict
        For each tuple of ``memory_ceiling_columns``, by value tuple: rows
        ``[*load, memory]``, each configuration seen running out of memory
        and its largest ``memory_gb``.
    categories_ : list of length n_features_in_
        For each feature, ``None`` (numeric) or the categories learned in
        ``fit``; a category not in the list is treated as missing.
    encoder_ : ColumnEncoder
        The column encoder learned in ``fit``, which every predict call reads.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit``, when ``X`` had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> memory_gb = rng.choice([16.0, 40.0, 80.0], size=400)
    >>> needed_gb = rng.uniform(1, 100, size=400)
    >>> fits = needed_gb < memory_gb
    >>> X = np.c_[memory_gb, needed_gb]
    >>> clf = FeasibilityClassifier(n_estimators=30, random_state=0).fit(X, fits)
    >>> clf.predict([[80.0, 10.0], [16.0, 90.0]])
    array([ True, False])
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "evidence_columns": [list, None],
        "monotone": [dict, None],
        "memory_floor_columns": [list, None],
        "memory_floor_load": [dict, None],
        "memory_ceiling_columns": [list, None],
        "memory_floor_ratio": [Interval(Real, 0, 1, closed="right")],
        "memory_floor_override": [Interval(Real, 0, 1, closed="right"), None],
        "memory_override_columns": [list, None],
        "memory_override_load": [dict, None],
        "memory_need_features": [list, None],
        "memory_need_products": [list, None],
        "memory_need_quantile": [Interval(Real, 0, 1, closed="neither")],
        "memory_need_override": [Interval(Real, 0, 1, closed="right"), None],
        "measured_need_column": [str, None],
        "rule_factor": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, *, n_estimators=100, learning_rate=0.1, num_leaves=31,
                 min_child_samples=10, n_jobs=None, random_state=None, evidence_columns=None,
                 monotone=None, memory_floor_columns=None, memory_floor_load=None,
                 memory_ceiling_columns=None, memory_floor_ratio=1.0, memory_floor_override=None,
                 memory_override_columns=None, memory_override_load=None,
                 memory_need_features=None, memory_need_products=None, memory_need_quantile=0.9,
                 memory_need_override=0.9, measured_need_column=None, rule_factor=0.0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.evidence_columns = evidence_columns
        self.monotone = monotone
        self.memory_floor_columns = memory_floor_columns
        self.memory_floor_load = memory_floor_load
        self.memory_ceiling_columns = memory_ceiling_columns
        self.memory_floor_ratio = memory_floor_ratio
        self.memory_floor_override = memory_floor_override
        self.memory_override_columns = memory_override_columns
        self.memory_override_load = memory_override_load
        self.memory_need_features = memory_need_features
        self.memory_need_products = memory_need_products
        self.memory_need_quantile = memory_need_quantile
        self.memory_need_override = memory_need_override
        self.measured_need_column = measured_need_column
        self.rule_factor = rule_factor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _validate_X(self, X, *, reset):
        """Validate ``X`` and encode it with the encoder learned in ``fit`` (NaN: unseen category)."""
        # an array for a model fitted on category columns is encoded as a DataFrame would be
        if isinstance(X, pd.DataFrame) or (not reset and self.encoder_.any_categorical):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if reset:
                self.encoder_ = ColumnEncoder.learn(X)
            X = check_array(self.encoder_.encode(X), dtype=np.float64, ensure_all_finite=False,
                            estimator=self)
        else:
            X = validate_data(self, X, reset=reset, dtype=np.float64, ensure_all_finite=False)
            if reset:
                self.encoder_ = ColumnEncoder([None] * X.shape[1])
        if reset:
            self.categories_ = self.encoder_.categories
        refuse_infinity(X, getattr(self, "feature_names_in_", None))
        return X

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, peak_memory_gb=None):
        """Fit the classifier.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features; NaN means missing.
        y : array-like of shape (n_samples,)
            Class labels, e.g. ``True`` where the attempt fitted (a pandas
            boolean column, nullable or Arrow, stays boolean).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights.
        peak_memory_gb : array-like of shape (n_samples,), default=None
            Each run's measured peak memory per trainer, GB (NaN: unknown;
            read on the fitting rows only), for ``memory_need_features``.

        Returns
        -------
        self : FeasibilityClassifier
        """
        import lightgbm as lgb

        evidence_keys = key_columns(X, self.evidence_columns, "evidence_columns")
        floor_keys, memory, load = self._floor_keys(X, "floor")
        ceiling_keys, ceiling_memory, ceiling_load = self._floor_keys(X, "ceiling")
        backing_keys, backing_memory, backing_load = self._floor_keys(X, "backing")
        device_memory = (self._need_memory(X) if self.memory_need_features
                         and peak_memory_gb is not None else None)
        measured = self._measured(X)
        X = self._read_measured(self._validate_X(X, reset=True), measured)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        y = read_labels(y)
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        fitted = fitting_class(self.classes_.tolist())
        self.evidence_ = [
            set() if fitted is None else set(zip(*(column[y == fitted] for column in key),
                                                 strict=True))
            for key in evidence_keys
        ]
        self.memory_floor_ = [{} if fitted is None else smallest_memory(key, memory, load, y == fitted)
                              for key in floor_keys]
        self.memory_override_ = [
            {} if fitted is None else smallest_memory(key, backing_memory, backing_load, y == fitted)
            for key in backing_keys
        ]
        # largest memory of each configuration that ran out of it: the smallest, negated
        self.memory_ceiling_ = [
            {pair: [[*row[:-1], -row[-1]] for row in rows] for pair, rows in smallest_memory(
                key, -ceiling_memory, ceiling_load, y != fitted).items()}
            for key in ceiling_keys
        ]
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        X = self._fit_need(X, device_memory, peak_memory_gb, y == fitted, measured)
        if len(self.classes_) == 1:
            self.booster_ = None  # one class seen: every prediction is that class
            return self
        codes = encoder.transform(y)
        binary = len(self.classes_) == 2
        params = {"objective": "binary" if binary else "multiclass",
                  "num_class": 1 if binary else len(self.classes_), **self._lightgbm_params()}
        if self.monotone or self.memory_need_ is not None or self.measured_need_column:
            # constraints are on the chance of fitting; a binary booster scores classes_[1]
            sign = -1 if binary and fitted is not None and fitted == self.classes_[0] else 1
            params["monotone_constraints"] = [sign * c for c in self._monotone_constraints(X.shape[1])]
        categorical = [j for j, c in enumerate(self.categories_) if c is not None]
        dataset = lgb.Dataset(X, codes, weight=sample_weight, categorical_feature=categorical,
                              free_raw_data=True, params={"verbose": -1})
        self.booster_ = lgb.train(params, dataset, num_boost_round=int(self.n_estimators))
        return self

    def predict_proba(self, X):
        """Probability of each class, shape ``(n_samples, n_classes_)``.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.arange(60.0).reshape(-1, 1)
        >>> clf = FeasibilityClassifier(n_estimators=10, random_state=0).fit(X, X[:, 0] < 30)
        >>> clf.predict_proba(X[:2]).shape
        (2, 2)
        """
        check_is_fitted(self)
        return self._proba(self._features(X)[0])

    def _features(self, X):
        """``X`` encoded, with the headroom column where a need model was fitted, the
        headroom, the margin each row's headroom answers to (``None`` without a need model) and
        whether the row's need was measured."""
        measured = self._measured(X)
        if self.memory_need_ is None:
            return self._read_measured(self._validate_X(X, reset=False), measured), None, None, None
        device_memory = self._need_memory(X)
        X = self._read_measured(self._validate_X(X, reset=False), measured)
        log_need = predict_need(self.memory_need_, self._need_matrix(X), self.n_jobs)
        margin = np.full(len(X), self.memory_need_margin_)
        own = np.zeros(len(X), dtype=bool) if measured is None else measured[1] > 0
        if measured is not None:
            log_need = best_need(log_need, measured[1])
            if np.isfinite(self.memory_measured_margin_):
                margin[own] = self.memory_measured_margin_
        room = headroom(device_memory, log_need)
        return np.column_stack([X, room]), room, margin, own

    def _proba(self, X):
        """Probability of each class of encoded rows."""
        if self.booster_ is None:
            return np.ones((len(X), 1))
        raw = booster_predict(self.booster_, X, num_threads=effective_threads(self.n_jobs))
        if raw.ndim == 1:
            return np.column_stack([1.0 - raw, raw])
        return raw

    def predict(self, X):
        """The most probable class of each row, shape ``(n_samples,)``."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def fit_probability(self, X):
        """Probability that each row fits: that of the class ``True`` (or ``"ok"``).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.arange(60.0).reshape(-1, 1)
        >>> clf = FeasibilityClassifier(n_estimators=10, random_state=0).fit(X, X[:, 0] < 30)
        >>> bool(clf.fit_probability([[0.0]])[0] > 0.5)
        True
        """
        check_is_fitted(self)
        encoded, room, margin, own = self._features(X)
        proba = self._proba(encoded)
        labels = self.classes_.tolist()
        fitted = fitting_class(labels)
        if fitted is None:
            if not all(c is False or c == "oom" for c in labels):
                raise ValueError(f"fit_probability needs the class True (or 'ok') among "
                                 f"classes_ {labels}")
            return np.zeros(len(proba))  # only failures were seen
        probability = proba[:, labels.index(fitted)].copy()
        heard = None  # rows whose headroom outweighs the memory rules below
        if room is not None and self.memory_need_override is not None:
            with np.errstate(invalid="ignore"):  # NaN headroom: not heard
                heard = (probability >= self.memory_need_override) & (room >= margin)
        for seen, key in zip(self.evidence_, key_columns(X, self.evidence_columns, "evidence_columns"), strict=True):
            probability[untried(seen, key)] = 0.0
        if self.memory_floor_columns:
            floor, memory = self._memory_floors(X)
            below = memory < self.memory_floor_ratio * floor  # NaN (key or memory unknown): no rule
            if heard is not None:
                below &= ~heard
            elif room is None and self.memory_floor_override is not None:
                backed = probability >= self.memory_floor_override
                if self.memory_override_columns:
                    backing, _ = self._memory_floors(X, backing=True)
                    backed &= memory >= backing  # NaN: nothing similar fitted, no trust
                below &= ~backed
            probability[below] *= self.rule_factor
        if self.memory_ceiling_columns:
            ceiling, memory = self._memory_ceilings(X)
            ceiled = memory <= ceiling
            if heard is not None:  # what the job itself measured outweighs other jobs' oom
                ceiled &= ~(heard & own)
            probability[ceiled] *= self.rule_factor
        return probability

    def predict_memory_need(self, X):
        """GB one trainer of each row needs, as the need model predicts it from
        ``memory_need_features`` (not a measured need); NaN without a need model."""
        check_is_fitted(self)
        encoded = self._validate_X(X, reset=False)
        if self.memory_need_ is None:
            return np.full(len(encoded), np.nan)
        self._need_memory(X)  # checks the need model's columns
        return np.exp(predict_need(self.memory_need_, self._need_matrix(encoded), self.n_jobs))

    def _lightgbm_params(self):
        """The LightGBM parameters the classifier and the need model share."""
        return {"learning_rate": float(self.learning_rate), "num_leaves": int(self.num_leaves),
                "min_data_in_leaf": int(self.min_child_samples),
                "min_data_per_group": int(self.min_child_samples),
                "num_threads": effective_threads(self.n_jobs),
                "seed": int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max)),
                "deterministic": True, "verbose": -1}

    def _need_memory(self, X):
        """``memory_gb`` of ``X`` as floats, checking that ``X`` has the need model's columns."""
        require_columns(X, [(*self.memory_need_features, MEMORY_COLUMN)], "memory_need_features")
        check_products(X, self.memory_need_products or [])
        return pd.to_numeric(X[MEMORY_COLUMN], errors="coerce").to_numpy(dtype=float,
                                                                          na_value=np.nan)

    def _need_matrix(self, X):
        """The need model's input: ``memory_need_features``, then the logs of the products."""
        names = [str(n) for n in self.feature_names_in_]
        return need_matrix(X, [names.index(name) for name in self.memory_need_features],
                           [[names.index(name) for name in product]
                            for product in self.memory_need_products or []])

    def _measured(self, X):
        """``memory_gb`` and ``measured_need_column`` of ``X`` as floats (NaN where the
        measured need is not positive), or ``None`` without the column."""
        if self.measured_need_column is None:
            return None
        return read_measured(X, self.measured_need_column, MEMORY_COLUMN)

    def _read_measured(self, X, measured):
        """Encoded ``X`` with the measured need's column read as a headroom."""
        if measured is not None:
            column = [str(n) for n in self.feature_names_in_].index(self.measured_need_column)
            X[:, column] = headroom(measured[0], np.log(measured[1]))
        return X

    def _fit_need(self, X, device_memory, peak_memory_gb, fitted, measured):
        """Fit the need model when there are peaks to learn from; ``X`` with the headroom
        column added when it was fitted."""
        self.memory_need_, self.memory_need_margin_ = None, float("nan")
        self.memory_measured_margin_ = float("nan")
        if device_memory is None:
            return X
        peak = column_or_1d(check_array(peak_memory_gb, ensure_2d=False, dtype=np.float64,
                                        ensure_all_finite="allow-nan", input_name="peak_memory_gb"))
        if len(peak) != len(X):
            raise ValueError(f"X has {len(X)} rows but peak_memory_gb has {len(peak)}")
        known = fitted & np.isfinite(peak) & (peak > 0)
        if known.sum() < MIN_PEAK_ROWS:
            return X  # too few peaks to learn a need from
        names = [str(n) for n in self.feature_names_in_]
        categorical = [i for i, name in enumerate(self.memory_need_features)
                       if self.categories_[names.index(name)] is not None]
        self.memory_need_, need, self.memory_need_margin_ = fit_need(
            self._need_matrix(X), peak, known, categorical=categorical, params=self._lightgbm_params(),
            rounds=int(self.n_estimators), quantile=self.memory_need_quantile)
        if measured is not None:
            self.memory_measured_margin_ = measured_margin(peak, measured[1], known,
                                                           self.memory_need_quantile)
            need = best_need(need, measured[1])
        return np.column_stack([X, headroom(device_memory, need)])

    def _monotone_constraints(self, n_features):
        """``monotone`` as LightGBM's per-feature list, checked against the fitted names."""
        names = [str(n) for n in getattr(self, "feature_names_in_", [])]
        monotone = dict(self.monotone or {})
        if self.measured_need_column is not None:
            monotone = {self.measured_need_column: 1, **monotone}
        if self.memory_need_ is not None:
            names.append(HEADROOM)
            monotone = {HEADROOM: 1, **monotone}
        unknown = sorted(set(monotone) - set(names))
        if unknown:
            raise ValueError(f"monotone names feature(s) {unknown} that X does not have")
        bad = {k: v for k, v in monotone.items() if v not in (-1, 0, 1)}
        if bad:
            raise ValueError(f"monotone values must be -1, 0 or 1, got {bad}")
        return [int(monotone.get(name, 0)) for name in names] or [0] * n_features

    def _floor_keys(self, X, kind):
        """:func:`signed_keys` of the key columns of ``kind`` (``"floor"``, ``"ceiling"`` or
        ``"backing"``) and their load (see :data:`_KEY_OPTIONS`)."""
        columns_option, load_option = _KEY_OPTIONS[kind]
        columns = getattr(self, columns_option)
        if not columns:
            return [], None, None
        return signed_keys(X, columns, dict(getattr(self, load_option) or {}), MEMORY_COLUMN,
                           columns_option, load_option)

    def _memory_floors(self, X, *, backing=False):
        """Each row's memory floor, or with ``backing`` its backing (see :func:`floors_of`)."""
        keys, memory, load = self._floor_keys(X, "backing" if backing else "floor")
        return floors_of(self.memory_override_ if backing else self.memory_floor_, keys, load,
                         backing=backing), memory

    def _memory_ceilings(self, X):
        """Each row's memory ceiling (NaN: none; see :func:`ceilings_of`)."""
        keys, memory, load = self._floor_keys(X, "ceiling")
        return ceilings_of(self.memory_ceiling_, keys, load), memory

#: The column of device memory that ``memory_floor_columns`` compares.
MEMORY_COLUMN = "memory_gb"
#: Each kind of memory key: the parameter naming its key columns and the one naming its load.
_KEY_OPTIONS = {"floor": ("memory_floor_columns", "memory_floor_load"),
                "ceiling": ("memory_ceiling_columns", "memory_floor_load"),
                "backing": ("memory_override_columns", "memory_override_load")}
