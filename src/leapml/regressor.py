"""``LeapRegressor``: a 13-bin cascade of median regressors behind a bin classifier."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from leapml._binning import assign_bins, equal_frequency_edges
from leapml._cascade import default_regressor, fit_base, fit_cascade, predict_expert
from leapml._cold_start import with_cold_copies
from leapml._conformal import IntervalsMixin
from leapml._encoding import canonical_order, effective_threads, unit_free_weights
from leapml._explain import ExplainMixin
from leapml._inputs import EncodedInputMixin
from leapml._priors import PriorsMixin
from leapml._router import (
    default_classifier,
    fit_router,
    nearest_bin,
    ordinal_router,
    predict_between_bins,
    predict_router,
    router_scores,
)

__all__ = ["LeapRegressor"]


#: The published configuration (13 bins, multiclass router, hard routing, experts of 100
#: trees on their own bin only and on log throughput itself, no small-data rule, no blend
#: with the job's own runs, no cold-start copies): ``LeapRegressor(**PUBLISHED)``.
PUBLISHED = {"n_bins": 13, "router": "multiclass", "combine": "hard", "n_estimators": 100,
             "expert_overlap": 0.0, "min_bin_rows": 1, "anchor": None, "base": None,
             "history_prior": None, "cold_start": 0.0, "cold_start_hardware": 0.0}

#: Rows ``predict`` scores at a time. Each row's prediction is its own, so the chunks change
#: no number; a chunk's working copies (its rows sorted by bin, 32 MB at 62 columns) are
#: small enough for the allocator to reuse from one chunk to the next, where copies of a
#: whole batch are fresh memory each call (``benchmarks/README.md``, "Scoring in chunks").
PREDICT_ROWS = 65_536

#: The features holding the job's own runs in this configuration on this hardware
#: (their mean log throughput, their number), as :mod:`leapml.features` names them.
HISTORY_COLUMNS = ("job_config_mean_log_throughput_same_hardware", "job_config_runs_same_hardware")

#: Features along which more never means slower, all else equal: the hardware's peak
#: FLOP/s and bandwidths (per device and in total), as :mod:`leapml.features` names them.
FASTER_HARDWARE = ("peak_tflops", "memory_bw_gbps", "intra_node_bw_gbps", "inter_node_bw_gbps",
                   "communication_bw_gbps", "total_peak_tflops", "total_memory_bw_gbps")


class LeapRegressor(PriorsMixin, IntervalsMixin, ExplainMixin, EncodedInputMixin, RegressorMixin,
                    BaseEstimator):
    """Throughput regressor: equal-frequency log bins, per-bin median experts, a bin router.

    The target (throughput, > 0) is modelled on a log scale. ``log(y)`` is cut
    into ``n_bins`` equal-frequency bins; one median regressor is fitted per
    bin; every training row is then reassigned to the expert with the
    smallest absolute log error on it and the experts are refitted, until the
    share of rows that moved falls below ``tol`` or ``max_iter`` iterations
    have run (hard EM). A router then learns to predict each row's final bin
    from the features alone: a multiclass classifier, as published
    (``router="multiclass"``), or one regressor of the bin's index
    (``router="ordinal"``, as accurate or more on the nights measured and
    many times cheaper at predict time). ``predict`` uses the expert of the most probable bin
    (``combine="hard"``) or blends all experts' log predictions by the bin
    probabilities (``combine="soft"``). By default a shared expert fitted on
    every row first (``base``) gives each row an estimate that the bin experts
    correct, and a row carrying the job's own runs in its configuration on its
    hardware leans on them (``history_prior``). See ``docs/method.md``.

    Parameters
    ----------
    n_bins : int, default=13
        Requested number of bins. Fewer are used when ``y`` has fewer distinct
        values (see ``n_bins_``).
    max_iter : int, default=3
        Maximum number of fit-and-reassign iterations. On the simulated fleet
        the share of rows moved plateaus (~2.5%) by the third; later ones did
        not improve next-day accuracy (``benchmarks/README.md``).
    tol : float, default=0.01
        Stop when the (weighted) share of rows reassigned in an iteration is
        below ``tol``.
    combine : {"hard", "soft"}, default="soft"
        How the router's probabilities turn into a prediction. The published
        method routes hard; blending lets a candidate the router is unsure of
        (hardware the job never ran on) land between two experts instead of
        jumping a bin (``docs/method.md``, "Levers").
    n_estimators : int or "auto", default="auto"
        Boosting rounds of each default LightGBM expert and of the default
        router (``PUBLISHED``: 100). ``"auto"``: 50, or 30 behind the default
        shared expert on a log of 250,000 rows or more (``n_estimators_``). Behind
        it 50 rounds measured as accurate as 100, and 30 on a large log within 0.3
        points of 50, for less prediction time (``docs/method.md``). Ignored for
        a user-given ``regressor`` / ``classifier``, which carry their own settings.
    regressor : estimator, default=None
        The per-bin expert, fitted on ``log(y)`` (minus the shared expert's
        estimate). ``None``: a LightGBM median (L1) regressor of ``n_estimators``
        trees. LightGBM regressors are trained with the native API on one
        shared, once-binned Dataset and stored as
        :class:`lightgbm.Booster`; when a LightGBM regressor's ``objective`` is
        unset, L1 (the median) is used. Any other estimator with
        ``fit(X, y, sample_weight=...)`` and ``predict`` is cloned per bin.
    classifier : estimator, default=None
        The router, predicting the bin. ``None`` uses a LightGBM multiclass
        model (``n_estimators`` rounds, learning rate 0.15, half the rows per round). Any
        estimator with ``fit`` and ``predict_proba`` works. With
        ``router="ordinal"`` it must be ``None``.
    router : {"multiclass", "ordinal"}, default="ordinal"
        How the bin is predicted. ``"multiclass"``: ``classifier``, one tree
        per bin and round (1,300 trees for 13 bins and 100 rounds), as in the
        published method. ``"ordinal"``: one regressor of the bin index,
        fitted on every row: a copy of ``regressor`` (a LightGBM one switched
        to least squares), or by default a LightGBM least-squares regressor
        of ``n_estimators`` trees; a score ``s`` gives the bins ``floor(s)`` and
        ``floor(s) + 1`` probabilities by its distance to each, so the most
        probable bin is the nearest. On the four simulated nights measured it
        was 0.2 to 3.3 points more accurate within +-20% than ``"multiclass"``
        while predicting many times faster and fitting faster
        (``benchmarks/README.md``).
    expert_overlap : float in [0, 1], default=0.0
        Weight of the two neighbouring bins' rows, relative to its own, in each
        expert's training set. 0 trains an expert on its own bin only, as
        published; above 0 an expert has seen throughput just past its bin's
        edges, so a row routed one bin off is not predicted from the wrong side
        of an edge.
    min_bin_rows : int, default=200
        Fewest training rows per bin. When ``y`` has fewer than
        ``n_bins * min_bin_rows`` rows, ``n_bins_ = max(1, n_rows // min_bin_rows)``
        bins are used and a ``UserWarning`` says so: an expert fitted on a few
        dozen rows predicts little more than its bin's median.
    anchor : str, "auto" or None, default="auto"
        Name of a feature column holding an estimate of ``log(y)`` made before
        the fact (such as ``history_log_throughput_estimate``). The experts
        then learn ``log(y)`` minus the anchor, a correction, and predictions
        add the anchor back; rows where it is missing use the training
        median of ``log(y)`` (``anchor_fill_``). Bins and router still work
        on ``log(y)``. ``"auto"``: ``log_roofline_throughput`` (what the model's
        size allows on the hardware) where ``X`` has it with a value, else none;
        ``"compute"``: FLOPs per sample at 100 TFLOP/s a trainer, where ``X`` has them.
    base : "lightgbm", estimator or None, default="lightgbm"
        The shared expert: one regressor of ``log(y)`` (minus the anchor, if
        any) fitted on every training row before the bins; the bin experts
        then learn ``log(y)`` minus its prediction, and every prediction adds
        it back. ``"lightgbm"``: a LightGBM Huber regressor (200 trees, 63
        leaves, learning at 0.2 on logs of 250,000 rows or more and 0.1 below;
        ``leapml._cascade.default_base_regressor``); an estimator with
        ``fit`` and ``predict`` is cloned (a LightGBM one trains natively,
        Huber when its ``objective`` is unset); ``None``: the experts learn
        ``log(y)`` themselves, as published. A bin expert sees a slice of the
        throughput range; the shared expert sees all of it, so a candidate
        routed one bin off (hardware the job never ran on) keeps the shared
        estimate and loses only part of a correction (``docs/method.md``).
    expert_weight : float in [0, 1] or "auto", default="auto"
        Weight of the bin experts' corrections on the shared expert's log
        estimate (a shrinkage, as boosting shrinks each stage): 1 adds them
        whole, 0 keeps the shared estimate alone; below 1 it needs a ``base``.
        ``"auto"``: 0.5 behind the default shared expert on a log of 250,000
        rows or more, where it learns at its faster rate, else 1
        (``expert_weight_``, ``docs/method.md``).
    monotone_increasing : tuple of str or None, default=FASTER_HARDWARE
        Features along which the default shared expert's prediction may only
        rise, all else equal (LightGBM monotone constraints): more peak
        FLOP/s or bandwidth never makes a job slower. It carries what the
        log shows of slower types to a faster one it never saw, where trees
        alone stop at the fastest type they were trained on. Names absent
        from ``X`` are ignored; a user's ``base`` keeps its own settings.
    history_columns : tuple of two str or None, default=HISTORY_COLUMNS
        The feature columns holding, for each row, the mean measured
        ``log(y)`` of the job's earlier runs in this very configuration on this
        hardware type, and how many runs there were
        (``job_config_mean_log_throughput_same_hardware`` and
        ``job_config_runs_same_hardware`` of :mod:`leapml.features`). Ignored
        when ``X`` lacks either column (see ``history_columns_in_``).
    history_prior : float or None, default=0.25
        How many runs the model's own prediction counts for against the job's
        runs: a row with ``n`` of them is predicted by
        ``exp((1 - w) * log(model) + w * mean)``, ``w = n / (n + history_prior)``
        (``w = 0.8`` for one run). ``None``: no blend, as published.
    cold_start : float in [0, 1), default=0.3
        Share of the training rows fitted a second time as if their model were
        new to the fleet: model type, family and every history column of
        :mod:`leapml.features` blanked (``leapml._cold_start.COLD_START_COLUMNS``).
        A job of an unseen model family then meets trees that learned to
        predict from the launch, hardware and model-size columns alone instead
        of falling wherever a missing category lands (``docs/method.md``,
        "Levers"). Rows without those named columns (plain arrays) get no
        copies; 0 fits the rows once, as published.
    cold_start_hardware : float in [0, 1), default=0.3
        Share of the training rows fitted once more as if their hardware type
        were new to the fleet: its name and every run on it blanked
        (``leapml._cold_start.NEW_HARDWARE_COLUMNS``), the history estimate
        falling back to the job's or its model type's runs elsewhere, so that
        a type the log never saw is predicted from its specs (``docs/method.md``,
        section 7). 0 fits no such copies, as published.
    reassign_window : int or None, default=2
        Reassignment scores a row with the experts of the bins at most this
        many bins from its own; ``None`` scores every expert, as published.
        Rows move between neighbouring bins almost only, so the others'
        errors rarely win and cost most of the reassignment's time
        (``benchmarks/README.md``).
    router_max_rows : int or None, default=200_000
        A LightGBM multiclass router trains on a class-stratified sample of
        at most this many rows (``None``: every row, as published); it grows
        one tree per bin and round, so on a nightly window it would cost as
        much as all the experts. The ordinal router trains on every row.
    n_jobs : int, default=None
        Threads for LightGBM (``None`` means 1, ``-1`` all cores). Results do
        not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds every sub-model; an int gives identical models on every fit.

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_bins_ + 1,)
        Edges of the initial equal-frequency bins, on ``log(y)``.
    n_bins_ : int
        Number of bins used: ``min(n_bins, number of distinct y)``.
    regressors_ : list of length n_bins_
        The fitted experts (predicting ``log(y)``): :class:`lightgbm.Booster`
        for LightGBM experts, fitted clones of ``regressor`` otherwise, or a
        constant model for a bin that held a single row.
    base_ : object or None
        The fitted shared expert (:class:`lightgbm.Booster` for LightGBM), or
        None when ``base=None``.
    expert_weight_ : float
        The weight of the bin experts' corrections ``expert_weight`` gave.
    n_estimators_ : int
        The rounds of the default experts and router ``n_estimators`` gave.
    anchor_ : str or None
        The column the experts correct (``anchor``, resolved; or "compute"), or None.
    history_columns_in_ : tuple of two int or None
        Positions in ``X`` of ``history_columns``, or None when the prediction
        blends with no runs (``history_prior=None``, or ``X`` lacks them).
    classifier_ : object
        The fitted router (:class:`lightgbm.Booster` for LightGBM: a
        multiclass model, or with ``router="ordinal"`` a regressor of the bin
        index), or a constant model when only one bin is used.
    n_iter_ : int
        Number of fit-and-reassign iterations run.
    moved_ : ndarray of shape (n_iter_,)
        Share of training rows reassigned at each iteration.
    train_loss_ : ndarray of shape (n_iter_,)
        Mean absolute log error of each row's assigned expert after each
        iteration's reassignment.
    categories_ : list of length n_features_in_
        For each feature, ``None`` (numeric) or the list of categories learned
        in ``fit``; a category not in the list is treated as missing.
    encoder_ : ColumnEncoder
        What ``fit`` learned of its input's columns (names, categories), with
        which every predict call encodes its input; predict writes nothing.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit``, when ``X`` had string column names.
    calibration_ : dict
        Set by :meth:`calibrate` only: the held-back rows' absolute log
        errors (``residuals``), routed ``bins`` and ``groups``, from which
        :meth:`predict_interval` draws its widths.
    intervals_ : object
        Set by :meth:`calibrate` only: the conformal interval widths per
        category, learned from ``calibration_``.

    Examples
    --------
    >>> import numpy as np
    >>> from lightgbm import LGBMClassifier, LGBMRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 3))
    >>> y = np.exp(6 * X[:, 0] + X[:, 1])
    >>> model = LeapRegressor(
    ...     n_bins=4, min_bin_rows=50, random_state=0,
    ...     regressor=LGBMRegressor(n_estimators=20, verbose=-1),
    ...     router="multiclass", classifier=LGBMClassifier(n_estimators=20, verbose=-1),
    ... ).fit(X, y)
    >>> model.predict(X[:2]).shape, model.n_bins_
    ((2,), 4)
    >>> bool(np.all(model.predict(X) > 0))
    True
    """

    _parameter_constraints: dict = {
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "combine": [StrOptions({"hard", "soft"})],
        "n_estimators": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "regressor": [HasMethods(["fit", "predict"]), None],
        "classifier": [HasMethods(["fit", "predict_proba"]), None],
        "router": [StrOptions({"multiclass", "ordinal"})],
        "expert_overlap": [Interval(Real, 0, 1, closed="both")],
        "min_bin_rows": [Interval(Integral, 1, None, closed="left")],
        "anchor": [str, None],
        "base": [StrOptions({"lightgbm"}), HasMethods(["fit", "predict"]), None],
        "monotone_increasing": [tuple, None],
        "history_columns": [tuple, None],
        "history_prior": [Interval(Real, 0, None, closed="neither"), None],
        "expert_weight": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "cold_start": [Interval(Real, 0, 1, closed="left")],
        "cold_start_hardware": [Interval(Real, 0, 1, closed="left")],
        "reassign_window": [Interval(Integral, 1, None, closed="left"), None],
        "router_max_rows": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],  # 0 threads: none
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_bins=13, max_iter=3, tol=0.01, combine="soft", n_estimators="auto",
                 regressor=None, classifier=None, router="ordinal", expert_overlap=0.0,
                 min_bin_rows=200, anchor="auto", base="lightgbm", monotone_increasing=FASTER_HARDWARE,
                 history_columns=HISTORY_COLUMNS, history_prior=0.25, cold_start=0.3,
                 cold_start_hardware=0.3, reassign_window=2, router_max_rows=200_000, n_jobs=None,
                 random_state=None, expert_weight="auto"):
        self.n_bins = n_bins
        self.max_iter = max_iter
        self.tol = tol
        self.combine = combine
        self.n_estimators = n_estimators
        self.regressor = regressor
        self.classifier = classifier
        self.router = router
        self.expert_overlap = expert_overlap
        self.min_bin_rows = min_bin_rows
        self.anchor = anchor
        self.base = base
        self.monotone_increasing = monotone_increasing
        self.history_columns = history_columns
        self.history_prior = history_prior
        self.cold_start = cold_start
        self.cold_start_hardware = cold_start_hardware
        self.reassign_window = reassign_window
        self.router_max_rows = router_max_rows
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.expert_weight = expert_weight

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    # -- fit / predict ----------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the bins, the per-bin experts and the bin router.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features; DataFrame columns of category or string dtype are
            categorical. An object column is numeric when it holds numbers
            only, and categorical otherwise, its values read as text when it
            mixes text with numbers (3 and "3" are one category); both cases
            warn, since the column's dtype does not say. NaN means missing.
        y : array-like of shape (n_samples,)
            Throughput, strictly positive and finite.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights, used by the bins, every expert and the
            router. Only their ratios matter: they are divided by their mean,
            so weights in hours and the same weights in minutes fit the same
            model.

        Returns
        -------
        self : LeapRegressor
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        self._corrections_weight(self.base is not None)  # before any work
        for stale in ("calibration_", "intervals_"):  # a calibration is of the model it measured
            self.__dict__.pop(stale, None)
        X = self._validate_X(X, reset=True)
        y = column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64,
                                     ensure_all_finite=False, input_name="y"), warn=True)
        check_consistent_length(X, y)
        bad = ~np.isfinite(y) | (y <= 0)
        if bad.any():
            raise ValueError(
                f"y must be a strictly positive, finite throughput: {int(bad.sum())} of "
                f"{y.size} rows are not ({int(np.isnan(y).sum())} NaN, "
                f"{int(np.isinf(y).sum())} inf, {int((y <= 0).sum())} <= 0)."
            )
        if sample_weight is not None:
            sample_weight = unit_free_weights(_check_sample_weight(sample_weight, X, dtype=np.float64,
                                                            ensure_non_negative=True))
        # A canonical row order makes the fit independent of the order rows
        # arrive in, LightGBM's row sampling included.
        order = canonical_order(X, y, sample_weight)
        X, y = X[order], y[order]
        if sample_weight is not None:
            sample_weight = sample_weight[order]
        log_y = np.log(y)
        n_rows = len(y)  # the log's own rows, before any copies
        self.expert_weight_ = self._corrections_weight(self.base is not None, n_rows)
        self.n_estimators_ = self._rounds(n_rows)
        edges = equal_frequency_edges(log_y, self._bins_for(n_rows), sample_weight=sample_weight)
        n_bins = len(edges) - 1
        self.anchor_fill_, self.anchor_ = float(np.median(log_y)), self._anchor_name(lambda j: X[:, j])
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max - 1000))
        # the copies are drawn after the bins, which the log's own rows set
        X, log_y, sample_weight = with_cold_copies(X, log_y, sample_weight, share=self.cold_start,
                                                   names=self.encoder_.names, seed=seed + 1301,
                                                   hardware_share=self.cold_start_hardware)
        threads = effective_threads(self.n_jobs)
        categorical = [j for j, c in enumerate(self.categories_) if c is not None]
        regressor = self.regressor
        if regressor is None:
            regressor = default_regressor().set_params(n_estimators=self.n_estimators_)
        ordinal = self.router == "ordinal"
        classifier = self.classifier
        if ordinal and classifier is not None:
            raise ValueError(
                "classifier is used only with router='multiclass' (pass router='multiclass' to "
                "route with it); router='ordinal', the default, fits its own LightGBM regressor "
                "of the bin index (leave classifier=None)")
        if ordinal:
            classifier = ordinal_router(self.regressor, self.n_estimators_)
        elif classifier is None:
            classifier = default_classifier().set_params(n_estimators=self.n_estimators_)
        self.history_columns_in_ = self._history_columns()
        self.base_ = None
        if self.base is not None:
            self.base_ = fit_base(X, log_y - self._anchor_values(X),
                                  regressor=self._base_regressor(n_rows),
                                  sample_weight=sample_weight, categorical=categorical,
                                  seed=seed + 499, num_threads=threads)
        offset = self._offset(X, threads)
        result = fit_cascade(
            X, log_y - offset, assign_bins(log_y, edges), n_bins, regressor=regressor,
            sample_weight=sample_weight, categorical=categorical, max_iter=self.max_iter,
            tol=self.tol, seed=seed, num_threads=threads, overlap=self.expert_overlap,
            reassign_window=self.reassign_window,
        )
        self.classifier_ = fit_router(
            X, result.assignment, n_bins, classifier=classifier, sample_weight=sample_weight,
            categorical=categorical, dataset=result.dataset, seed=seed + 997,
            num_threads=threads, ordinal=ordinal, max_rows=self.router_max_rows,
        )
        self.bin_edges_, self.n_bins_, self.regressors_ = edges, n_bins, result.experts
        self.n_iter_, self.moved_ = result.n_iter, np.asarray(result.moved)
        self.train_loss_ = np.asarray(result.train_loss)
        return self

    def _bins_for(self, n_rows):
        """Bins to fit on ``n_rows`` rows: ``n_bins``, or fewer with a warning (``min_bin_rows``)."""
        affordable = max(1, n_rows // self.min_bin_rows)
        if affordable >= self.n_bins:
            return self.n_bins
        warnings.warn(
            f"{n_rows} training rows are too few for n_bins={self.n_bins} with "
            f"min_bin_rows={self.min_bin_rows}; fitting {affordable} bin(s) instead (lower "
            "min_bin_rows to keep more bins on small logs)", UserWarning, stacklevel=3)
        return affordable

    def _proba(self, X, threads):
        return predict_router(self.classifier_, X, self.n_bins_, num_threads=threads,
                              ordinal=self.router == "ordinal")

    def _chosen_bin(self, X, threads):
        if self.router == "ordinal":
            # the nearest bin, without building the probability matrix
            scores = router_scores(self.classifier_, X, num_threads=threads)
            return nearest_bin(scores, self.n_bins_)
        return np.argmax(self._proba(X, threads), axis=1)

    def predict_bin_proba(self, X):
        """Probability of each bin, shape ``(n_samples, n_bins_)``.

        Examples
        --------
        >>> import numpy as np
        >>> from lightgbm import LGBMClassifier, LGBMRegressor
        >>> X = np.arange(40.0).reshape(-1, 1)
        >>> model = LeapRegressor(n_bins=2, min_bin_rows=10, random_state=0, router="multiclass",
        ...                       regressor=LGBMRegressor(n_estimators=5, verbose=-1),
        ...                       classifier=LGBMClassifier(n_estimators=5, min_child_samples=5,
        ...                                                 verbose=-1))
        >>> model.fit(X, np.exp(X[:, 0] / 10)).predict_bin_proba(X[:3]).shape
        (3, 2)
        """
        check_is_fitted(self, "regressors_")  # named: no scan of every attribute
        return self._proba(self._validate_X(X, reset=False), effective_threads(self.n_jobs))

    def predict_bin(self, X):
        """Most probable bin of each row, shape ``(n_samples,)``.

        Examples
        --------
        >>> import numpy as np
        >>> from lightgbm import LGBMClassifier, LGBMRegressor
        >>> X = np.arange(40.0).reshape(-1, 1)
        >>> model = LeapRegressor(n_bins=2, min_bin_rows=10, random_state=0, router="multiclass",
        ...                       regressor=LGBMRegressor(n_estimators=5, verbose=-1),
        ...                       classifier=LGBMClassifier(n_estimators=5, min_child_samples=5,
        ...                                                 verbose=-1))
        >>> model.fit(X, np.exp(X[:, 0] / 10)).predict_bin(X[[0, 39]])
        array([0, 1])
        """
        return np.argmax(self.predict_bin_proba(X), axis=1)

    def predict(self, X):
        """Predicted throughput, shape ``(n_samples,)``, always > 0.

        Parameters
        ----------
        X : {array-like, DataFrame, mapping} of shape (n_samples, n_features)
            Rows laid out as in ``fit``; a DataFrame or a mapping of column
            name to 1-D array (such as :class:`leapml.features.FeatureColumns`)
            must have the columns ``fit`` saw, in order. Every predict method
            reads ``X`` the same way.

        Examples
        --------
        >>> import numpy as np
        >>> from lightgbm import LGBMClassifier, LGBMRegressor
        >>> X = np.arange(40.0).reshape(-1, 1)
        >>> model = LeapRegressor(n_bins=2, min_bin_rows=10, random_state=0, router="multiclass",
        ...                       regressor=LGBMRegressor(n_estimators=5, verbose=-1),
        ...                       classifier=LGBMClassifier(n_estimators=5, min_child_samples=5,
        ...                                                 verbose=-1))
        >>> bool(model.fit(X, np.exp(X[:, 0] / 10)).predict(X).min() > 0)
        True
        """
        check_is_fitted(self, "regressors_")  # named: no scan of every attribute
        return self._predict_encoded(self._validate_X(X, reset=False))

    def _route(self, encoded):
        """The bin each row's prediction comes from (the most probable one)."""
        return self._chosen_bin(encoded, effective_threads(self.n_jobs))

    def _predict_encoded(self, X):
        """Predicted throughput of encoded, validated rows, :data:`PREDICT_ROWS` at a time."""
        if len(X) <= PREDICT_ROWS:
            return self._predict_rows(X)
        out = np.empty(len(X))
        for start in range(0, len(X), PREDICT_ROWS):
            # one C-ordered copy of the chunk, which each booster reads as it is (LightGBM
            # copies a slice of column-major rows at every call)
            rows = np.ascontiguousarray(X[start:start + PREDICT_ROWS])
            out[start:start + PREDICT_ROWS] = self._predict_rows(rows)
        return out

    def _predict_rows(self, X):
        threads = effective_threads(self.n_jobs)
        if self.combine == "soft" and self.router == "ordinal":
            log_pred = predict_between_bins(self.regressors_, X,
                                            router_scores(self.classifier_, X, num_threads=threads),
                                            num_threads=threads)
        elif self.combine == "soft":
            proba = self._proba(X, threads)
            log_pred = np.zeros(len(X))
            for k, model in enumerate(self.regressors_):
                # only the rows this bin has weight on (two bins a row with the ordinal router)
                rows = np.flatnonzero(proba[:, k] > 0)
                if rows.size:
                    log_pred[rows] += proba[rows, k] * predict_expert(model, X[rows],
                                                                      num_threads=threads)
        else:
            # each row goes only to the expert of its most probable bin
            chosen = self._chosen_bin(X, threads)
            log_pred = np.empty(len(X))
            for k in np.unique(chosen):
                rows = chosen == k
                log_pred[rows] = predict_expert(self.regressors_[k], X[rows], num_threads=threads)
        log_pred *= self._corrections_weight(self.base_ is not None)
        return np.exp(self._blended(log_pred + self._offset(X, threads), X))

    def save(self, path):
        """Deprecated: use :func:`leapml.save` ``(model, path)``; this method goes in leapml 0.3.

        The file format lives with :func:`leapml.save`, which imports the
        estimator; the estimator does not import its file format.
        """
        warnings.warn(
            "LeapRegressor.save is deprecated; use leapml.save(model, path) "
            "(the method goes in leapml 0.3)",
            DeprecationWarning,
            stacklevel=2,
        )
        import leapml  # the package's public save, resolved lazily by the package itself

        return leapml.save(self, path)
