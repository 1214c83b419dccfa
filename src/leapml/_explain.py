"""Per-prediction feature contributions through the routed experts (``LeapRegressor.explain``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from leapml._encoding import booster_predict, effective_threads


class ExplainMixin:
    """:meth:`explain` for :class:`~leapml.LeapRegressor`."""

    def explain(self, X):
        """Each feature's contribution to each row's log prediction, through the routed experts.

        LightGBM's per-prediction contributions (SHAP values of the trees,
        ``pred_contrib=True``) of the shared expert (``base``) plus those of
        the bin expert each row is routed to (``combine="hard"``), or of every
        bin expert weighted by the router's probability of its bin
        (``combine="soft"``). An ``anchor`` counts on its own column. Where
        the prediction leans on the job's own runs (``history_prior``), the
        model's contributions are scaled by the model's share and the runs'
        share goes to their mean's column. The contributions of a row,
        ``"(baseline)"`` included, add up to ``log`` of its :meth:`predict`.
        Needs LightGBM experts (the default).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows to explain, as for :meth:`predict`.

        Returns
        -------
        DataFrame
            Tidy: one row per (row, feature), ``row`` (position in ``X``),
            ``feature`` (name, or ``x0``, ``x1``, ... without names; plus
            ``"(baseline)"``, the expected log prediction) and
            ``contribution`` (in log throughput: +0.1 means about 10% more).

        Raises
        ------
        TypeError
            If an expert is not a LightGBM model.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from leapml import LeapRegressor
        >>> X = pd.DataFrame({"memory_gb": np.arange(40.0), "noise": np.zeros(40)})
        >>> model = LeapRegressor(n_bins=2, min_bin_rows=10, n_estimators=10, random_state=0)
        >>> model = model.fit(X, np.exp(X["memory_gb"] / 10))
        >>> reasons = model.explain(X.head(2))
        >>> sorted(reasons["feature"].unique())
        ['(baseline)', 'memory_gb', 'noise']
        >>> total = reasons.groupby("row")["contribution"].sum()
        >>> bool(np.allclose(np.exp(total), model.predict(X.head(2))))
        True
        """
        import lightgbm as lgb

        from leapml._cascade import ConstantModel

        check_is_fitted(self)
        encoded = self._validate_X(X, reset=False)
        threads = effective_threads(self.n_jobs)
        n, width = encoded.shape
        weights = np.zeros((n, self.n_bins_))
        if self.combine == "soft":
            weights = self._proba(encoded, threads)
        else:
            weights[np.arange(n), self._chosen_bin(encoded, threads)] = 1.0
        weights *= self._corrections_weight(getattr(self, "base_", None) is not None)
        contributions = np.zeros((n, width + 1))
        for k, expert in enumerate(self.regressors_):
            rows = weights[:, k] > 0
            if not rows.any():
                continue
            if isinstance(expert, ConstantModel):
                part = np.zeros((int(rows.sum()), width + 1))
                part[:, -1] = expert.value
            elif isinstance(expert, lgb.Booster):
                part = booster_predict(expert, encoded[rows], pred_contrib=True, num_threads=threads)
            else:
                raise TypeError(
                    f"explain needs LightGBM experts; expert {k} is a {type(expert).__name__}"
                )
            contributions[rows] += weights[rows, k][:, None] * part
        anchor = self._anchor_column()
        if anchor is not None:
            contributions[:, anchor] += self._anchor_values(encoded)  # the experts correct the anchor
        base = getattr(self, "base_", None)
        if base is not None:
            if not isinstance(base, lgb.Booster):
                raise TypeError(f"explain needs a LightGBM base; it is a {type(base).__name__}")
            contributions += booster_predict(base, encoded, pred_contrib=True, num_threads=threads)
        weight, mean = self._history_weight(encoded)
        if weight is not None:
            contributions *= (1.0 - weight)[:, None]
            contributions[:, self.history_columns_in_[0]] += weight * mean
        names = getattr(self, "feature_names_in_", None)
        names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(width)]
        return pd.DataFrame({
            "row": np.repeat(np.arange(n), width + 1),
            "feature": np.tile(np.asarray([*names, "(baseline)"], dtype=object), n),
            "contribution": contributions.ravel(),
        })
