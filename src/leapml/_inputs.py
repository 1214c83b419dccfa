"""How ``LeapRegressor`` reads its input: one entry that checks and encodes every ``X``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.sparse import issparse
from sklearn.utils.validation import check_array, validate_data

from leapml._encoding import ColumnEncoder, refuse_infinity
from leapml._frames import require_unique_columns, some_values


class EncodedInputMixin:
    """``_validate_X`` and its helpers: names and width checked as scikit-learn checks
    them, then every input encoded by the ``encoder_`` that ``fit`` learned."""

    def _validate_X(self, X, *, reset):
        """The one entry of every input: check names and width, then encode with ``encoder_``.

        ``fit`` (``reset=True``) learns the encoder; every later call reads it
        and writes nothing. A DataFrame or a mapping of named columns (such as
        :class:`leapml.features.FeatureColumns`) must have the fitted columns,
        in order; arrays go through scikit-learn's validation.
        """
        if reset and isinstance(X, Mapping) and not issparse(X):  # a dok_matrix is a dict
            # fit reads named columns as predict does: as their frame
            X = X.to_frame() if hasattr(X, "to_frame") else pd.DataFrame(dict(X))
        _refuse_shapeless(X)
        require_unique_columns(X, "X")
        if isinstance(X, pd.DataFrame):
            self._check_labels(X, reset=reset)
        encoder = ColumnEncoder.learn(X) if reset else self.encoder_
        if isinstance(X, Mapping) and not reset:
            encoded = encoder.encode_columns(self._named_columns(X))
        elif isinstance(X, pd.DataFrame) and (encoder.any_categorical or not reset):
            self._check_names(X, reset=reset)
            encoded = encoder.encode(X)
        elif encoder.any_categorical:  # an array, at predict time, for a model fitted on categories
            validate_data(self, X, reset=False, skip_check_array=True)
            encoded = encoder.encode(X)
        else:  # plain numbers: scikit-learn's own checks, empty input included
            encoded = validate_data(self, X, reset=reset, dtype=np.float64, ensure_all_finite=False,
                                    order="C")
        if len(encoded) == 0:
            # scikit-learn's own error for empty input
            check_array(encoded, dtype=np.float64, ensure_all_finite="allow-nan", estimator=self)
        refuse_infinity(encoded, getattr(self, "feature_names_in_", None))
        self._check_missing(encoded, encoder, reset=reset)
        return self._learned(encoder, encoded, reset)

    def _check_missing(self, encoded, encoder, *, reset):
        """Warn of number columns missing at predict where ``fit`` had every value: the trees
        never learned where such a row goes (a job without its batch size is predicted as
        if it had the smallest, by 70 to 190 times less throughput on ``tiny``)."""
        missing = np.isnan(encoded).any(axis=0) if len(encoded) else np.zeros(encoded.shape[1], bool)
        if reset:
            # categories are left out: an unseen one is warned of where it is encoded
            self._complete_columns = [not m and j not in encoder.codes for j, m in enumerate(missing)]
            return
        complete = getattr(self, "_complete_columns", None)  # None: saved by an earlier version
        columns = [] if complete is None else np.flatnonzero(missing & np.asarray(complete, bool))
        if not len(columns):
            return
        names = getattr(self, "feature_names_in_", None)
        counts = {str(names[j]) if names is not None else j: int(np.isnan(encoded[:, j]).sum())
                  for j in columns}
        warnings.warn(f"rows missing values of column(s) that every row of fit had, which the "
                      f"model never learned to read (predictions for them can be far off): "
                      f"{some_values(counts.items(), 8)} (column, rows)", UserWarning, stacklevel=4)

    def _learned(self, encoder, encoded, reset):
        """Keep the encoder learned by ``fit``, named as the validated input; return ``encoded``."""
        if reset:
            self.categories_ = encoder.categories
            self.encoder_ = ColumnEncoder(encoder.categories, getattr(self, "feature_names_in_", None))
        return encoded

    def _check_labels(self, X, *, reset):
        """Column labels that are not text (scikit-learn checks only text names) must come
        back as ``fit`` saw them: read by position, columns in another order would be
        predicted on in silence."""
        labels = X.columns.tolist()
        if reset:
            self._column_labels = (None if all(isinstance(v, str) for v in labels)
                                   else label_keys(labels))
            return
        fitted = getattr(self, "_column_labels", None)
        if fitted is not None and label_keys(labels) != fitted:
            given, known = (some_values([text for _, text in keys], 8, bare=True)
                            for keys in (label_keys(labels), fitted))
            raise ValueError(f"X's columns are {given}, but {type(self).__name__} was fitted on "
                             f"columns {known}: give the same columns, in that order")

    def _check_names(self, X, *, reset):
        """A DataFrame's column names and count, checked as scikit-learn checks them."""
        names = None if reset else self.encoder_.names
        if names is None or X.shape[1] != len(names) or X.columns.tolist() != names:
            validate_data(self, X, reset=reset, skip_check_array=True)

    def _named_columns(self, X):
        """The columns of a mapping of named columns, checked against the fitted names."""
        names, keys = self.encoder_.names, list(X.keys())
        if names is None or keys != names:
            # scikit-learn's own message, from the names alone
            validate_data(self, pd.DataFrame(columns=keys), reset=False, skip_check_array=True)
            raise ValueError(
                f"X is a mapping of {len(keys)} named columns, but {type(self).__name__} was "
                "fitted without feature names: give it the rows as an array"
            )
        # arrays and Series as they are; lists and scalars (one row) as arrays
        columns = [c if hasattr(c, "dtype") and np.ndim(c) else np.atleast_1d(np.asarray(c))
                   for c in (X[k] for k in keys)]
        lengths = {len(c) for c in columns}
        if len(lengths) > 1:
            raise ValueError(f"X's columns differ in length: {sorted(lengths)}")
        indexes = [c.index for c in columns if isinstance(c, pd.Series)]
        if any(not index.equals(indexes[0]) for index in indexes[1:]):
            # read by position, rows of different labels would be mixed in silence
            raise ValueError("X's columns are Series whose indexes differ: give a DataFrame "
                             "(pandas aligns it by label) or Series of one index")
        return columns


def label_keys(labels) -> list:
    """Column labels as ``[type name, text]`` pairs, compared in place of the labels: a
    model file keeps them (JSON has no tuple or timestamp), and ``1``, ``1.0`` and ``"1"``
    stay three labels.

    Examples
    --------
    >>> label_keys([0, 1.5, ("a", 2)])
    [['int', '0'], ['float', '1.5'], ['tuple', "('a', 2)"]]
    """
    return [[type(v).__name__, str(v)] for v in labels]


def _refuse_shapeless(X):
    """A clear error for a frame without columns and for one Series (a row or a column?)."""
    if isinstance(X, pd.Series):
        raise ValueError(
            "X must be rows by columns, got one Series; give one row as a DataFrame "
            "(series.to_frame().T) or a dict of column -> value, and one column as series.to_frame()"
        )
    if isinstance(X, pd.DataFrame) and X.shape[1] == 0:
        raise ValueError(f"X has {len(X)} row(s) and no columns: give at least one feature "
                         "(leapml.build_features builds them from an attempt log)")
