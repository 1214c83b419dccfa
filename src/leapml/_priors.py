"""What the experts correct and what the prediction leans on (``LeapRegressor``'s priors).

Three sources of a prior estimate of ``log(y)``, each optional:

* ``anchor``: a feature column holding one (a log throughput made before the fact): by
  default the roofline of the model's size on the hardware, where the rows carry one;
* ``base``: the shared expert, one model fitted on every training row; the bin
  experts learn what it misses;
* the job's own runs: where a row carries the mean measured log throughput of
  the job's earlier runs in this very configuration on this hardware (and how
  many there were), the prediction is blended with it by their number,
  ``n / (n + history_prior)``: the runs themselves are the best estimate of a
  rerun, and a model that has to learn the identity from trees loses to them.
"""

from __future__ import annotations

import numpy as np

from leapml._cascade import (
    DEFAULT_ROUNDS,
    default_base_regressor,
    default_expert_weight,
    default_rounds,
    predict_expert,
)

#: The largest |log| whose exp is a finite, non-zero float64 (exp(709.8) overflows).
_LARGEST_LOG = 700.0

#: The column ``anchor="auto"`` anchors on: the log of the throughput the model's size allows
#: on the hardware (``leapml.features``, "model_size"), so that the experts learn the share of
#: it a run reaches, a figure that carries to a model family the log has never seen.
ROOFLINE_ANCHOR = "log_roofline_throughput"

#: ``anchor="compute"``: the log throughput of the model's FLOPs per sample at
#: :data:`COMPUTE_ANCHOR_FLOPS` a trainer, the same on every hardware type, so that the
#: experts learn the FLOP/s a run reaches from the datasheet (``leapml.features``'
#: ``trainer_count`` and ``flops_per_sample``; explained as ``flops_per_sample``'s share).
COMPUTE_ANCHOR = "compute"
COMPUTE_ANCHOR_FLOPS = 1e14
_COMPUTE_COLUMNS = ("trainer_count", "flops_per_sample")


class PriorsMixin:
    """The offset the experts add to and the blend with the job's own runs, for :class:`~leapml.LeapRegressor`."""

    def _base_regressor(self, n_rows=None):
        """The shared expert to fit on ``n_rows`` training rows (the log's, before any copies):
        the user's, or the default with its monotone constraints and the rate for that size."""
        if self.base != "lightgbm":
            return self.base
        base = default_base_regressor(n_rows)
        names = list(getattr(self, "feature_names_in_", []))
        increasing = set(self.monotone_increasing or ())
        constraints = [int(name in increasing) for name in names]
        if any(constraints):
            for name in increasing & set(names):
                self._numeric_column(name, "monotone_increasing", "numbers")
            base.set_params(monotone_constraints=constraints)
        return base

    def _rounds(self, n_rows):
        """Boosting rounds of the default bin experts and router: ``n_estimators``; with
        ``"auto"``, the count for a log of ``n_rows`` rows (fewer behind the default shared
        expert on a large log, :func:`~leapml._cascade.default_rounds`)."""
        if not isinstance(self.n_estimators, str):
            return int(self.n_estimators)
        return default_rounds(n_rows) if self.base == "lightgbm" else DEFAULT_ROUNDS

    def _anchor_name(self, values_of=None):
        """The column the experts correct, or None: ``anchor``; with ``"auto"``, the roofline
        where the training rows have it with a value on some row (``values_of(j)``: their
        encoded column ``j``). Without ``values_of``, the name ``fit`` chose (``anchor_``; a
        model pickled before it: ``anchor``)."""
        if values_of is None:
            return getattr(self, "anchor_", self.anchor)
        if self.anchor == COMPUTE_ANCHOR:
            _, flops = self._compute_columns()
            return COMPUTE_ANCHOR if np.isfinite(values_of(flops)).any() else None
        if self.anchor != "auto":
            return self.anchor
        names = list(getattr(self, "feature_names_in_", []))
        if ROOFLINE_ANCHOR not in names or self.categories_[names.index(ROOFLINE_ANCHOR)] is not None:
            return None
        finite = np.isfinite(values_of(names.index(ROOFLINE_ANCHOR))).any()
        return ROOFLINE_ANCHOR if finite else None

    def _anchor_column(self):
        """Index of the anchor column in the encoded rows, or None."""
        name = self._anchor_name()
        if name is None:
            return None
        if name == COMPUTE_ANCHOR:
            return self._compute_columns()[1]  # its share explained on the FLOPs' column
        return self._numeric_column(name, "anchor", "a log throughput")

    def _compute_columns(self):
        """Indices of the trainer count and FLOPs per sample ``anchor="compute"`` reads."""
        names = list(getattr(self, "feature_names_in_", []))
        lacking = [name for name in _COMPUTE_COLUMNS if name not in names]
        if lacking:
            raise ValueError(f"anchor='compute' reads the columns {list(_COMPUTE_COLUMNS)} "
                             f"(as leapml.features builds them); X lacks {lacking}")
        return tuple(self._numeric_column(name, "anchor", "numbers") for name in _COMPUTE_COLUMNS)

    def _numeric_column(self, name, parameter, what):
        names = list(getattr(self, "feature_names_in_", []))
        if name not in names:
            raise ValueError(
                f"{parameter}={name!r} is not a column of X (fit X on a DataFrame that has it)"
            )
        j = names.index(name)
        if self.categories_[j] is not None:
            raise ValueError(f"{parameter}={name!r} must be a numeric column ({what})")
        return j

    def _anchor_values(self, X):
        """The anchor per row (the training median where it is missing), or 0 without one."""
        j = self._anchor_column()
        if j is None:
            return 0.0  # no per-row array on the prediction path when nothing is anchored
        values = np.asarray(X[:, j], dtype=np.float64)
        if self._anchor_name() == COMPUTE_ANCHOR:
            trainers = np.asarray(X[:, self._compute_columns()[0]], dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):  # no size, or none: unknown
                values = np.log(trainers) + np.log(COMPUTE_ANCHOR_FLOPS) - np.log(values)
        known = np.isfinite(values)
        unusable = known & (np.abs(values) > _LARGEST_LOG)  # exp would be inf or 0
        if unusable.any():
            if self.anchor in ("auto", COMPUTE_ANCHOR):  # absurd sizes: unknown, not an error
                known &= ~unusable
            else:
                worst = values[unusable][np.argmax(np.abs(values[unusable]))]
                raise ValueError(f"anchor column {self._anchor_name()!r} must hold the natural "
                                 f"log of a throughput; it holds {worst:g}, whose exp is not a "
                                 "usable number")
        return np.where(known, values, self.anchor_fill_)

    def _corrections_weight(self, base=True, n_rows=None):
        """What the bin experts' log predictions count for: ``expert_weight``; with ``"auto"``,
        the weight ``fit`` chose for a log of ``n_rows`` (1 but behind the default shared expert)."""
        weight = getattr(self, "expert_weight", 1.0)  # a model pickled before the parameter: 1
        if isinstance(weight, str):  # "auto"
            if n_rows is None:
                return getattr(self, "expert_weight_", 1.0)
            return default_expert_weight(n_rows) if base and self.base == "lightgbm" else 1.0
        if float(weight) != 1.0 and not base:
            raise ValueError(f"expert_weight={weight:g} shrinks the bin experts' corrections "
                             "towards the shared expert, and base=None has none; give a base "
                             "or expert_weight=1")
        return float(weight)

    def _offset(self, X, threads=1):
        """What the experts' log predictions are added to: the anchor, plus the shared expert."""
        offset = self._anchor_values(X)
        base = getattr(self, "base_", None)
        if base is not None:
            offset = offset + predict_expert(base, X, num_threads=threads)
        return offset

    def _history_columns(self):
        """``(mean, count)`` column indices the prediction blends with, or None (fit time)."""
        names = list(getattr(self, "feature_names_in_", []))
        if self.history_prior is None or self.history_columns is None:
            return None
        if len(self.history_columns) != 2 or not all(isinstance(c, str) for c in self.history_columns):
            raise ValueError("history_columns must be two column names (the runs' mean log "
                             f"throughput, their number), got {self.history_columns!r}")
        if not all(name in names for name in self.history_columns):
            return None  # X does not carry the job's own runs: nothing to blend with
        return tuple(self._numeric_column(name, "history_columns", "numbers")
                     for name in self.history_columns)

    def _history_weight(self, X):
        """Weight of the job's own runs in each row's log prediction, and their mean log throughput."""
        columns = getattr(self, "history_columns_in_", None)
        if columns is None:
            return None, None
        mean = np.asarray(X[:, columns[0]], dtype=np.float64)
        runs = np.asarray(X[:, columns[1]], dtype=np.float64)
        known = np.isfinite(mean) & np.isfinite(runs) & (runs > 0)
        if (np.abs(mean[known]) > _LARGEST_LOG).any():  # exp would be inf or 0
            worst = mean[known][np.argmax(np.abs(mean[known]))]
            raise ValueError(f"column {self.history_columns[0]!r} must hold the natural log of a "
                             f"throughput; it holds {worst:g}, whose exp is not a usable number")
        weight = np.where(known, runs / (np.where(known, runs, 0.0) + self.history_prior), 0.0)
        return weight, np.where(known, mean, 0.0)

    def _blended(self, log_pred, X):
        """The log prediction blended with the job's own runs where it has some."""
        weight, mean = self._history_weight(X)
        if weight is None:
            return log_pred
        return (1.0 - weight) * log_pred + weight * mean
