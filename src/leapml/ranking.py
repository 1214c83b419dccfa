"""Rank candidate hardware types for each job by predicted throughput per unit cost.

Vectorised end to end (one factorisation per key and one ``lexsort``), so the
same function serves one submission of ~25 candidates and a batch of hundreds
of thousands of rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral, Real
from statistics import NormalDist

import numpy as np
import pandas as pd

from leapml._frames import column_values, frame_of_arrays

__all__ = ["DEFAULT_OBJECTIVE", "IF_NONE_FIT", "NEEDS_INTERVAL", "OBJECTIVES", "READS_MEAN",
           "REASONS", "lognormal_mean", "rank_arrays", "rank_candidates"]

#: The ``objective`` that ranks candidates unless told otherwise (one of :data:`OBJECTIVES`).
DEFAULT_OBJECTIVE = "mean_throughput_per_cost"


def _fail_if_missing(frame, columns):
    missing = [c for c in columns if c is not None and c not in frame.columns]
    if missing:
        raise ValueError(
            f"predictions lacks column(s) {missing}; it has {list(frame.columns)}"
        )


def _column(frame, name):
    """The column ``name`` of ``frame``: an error naming it when ``frame`` has it more than once."""
    column = frame[name]
    if isinstance(column, pd.DataFrame):
        raise ValueError(
            f"predictions has {column.shape[1]} columns named {name!r}: keep one (which would "
            "be read is ambiguous)"
        )
    return column


def _float_column(frame, name):
    column = _column(frame, name)
    if column.dtype.kind in "fiu":
        # already numbers: skip to_numeric, which costs more than the rest on a few rows
        return column.to_numpy(np.float64)
    try:
        return pd.to_numeric(column, errors="raise").to_numpy(np.float64, na_value=np.nan)
    except (TypeError, ValueError) as err:
        raise ValueError(f"column {name!r} must be numeric: {err}") from err


def _cost_of(cost, hardware_type):
    """``cost[hardware_type]`` as a float: an error naming the type when it is no number."""
    value = cost[hardware_type]
    try:
        if isinstance(value, (str, bytes, bool, np.bool_)):  # float() reads "2" and True
            raise TypeError(type(value).__name__)
        return float(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"cost of hardware type {hardware_type!r} must be a number, got "
                         f"{value!r}") from err


def _positive_finite(values):
    # NaN and inf compare as they should: neither is a usable cost or count
    return (values > 0) & np.isfinite(values)


def _factorize(column):
    """Codes of ``column`` (-1 for missing) and its values in order of first appearance."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        # reuse the categorical's codes instead of hashing its values again
        codes = column.array.codes
        used, first = np.unique(codes[codes >= 0], return_index=True)
        used = used[np.argsort(first, kind="stable")]  # keep the order of first appearance
        remap = np.full(len(column.cat.categories) + 1, -1, dtype=np.intp)
        remap[used] = np.arange(len(used))
        return remap[codes], column.cat.categories.to_numpy(dtype=object)[used].tolist()
    codes, uniques = pd.factorize(column, sort=False)
    # a plain list: element access on arrow-backed uniques costs microseconds each
    return codes, np.asarray(uniques, dtype=object).tolist()


#: Why a candidate is not rankable, by code ("" when it is).
REASONS = ("", "no prediction", "marked infeasible", "fit probability below threshold",
           "most likely to fit, below threshold", "predicted throughput is zero",
           "no prediction interval")
#: The values ``rank_candidates`` takes for ``if_none_fit``.
IF_NONE_FIT = ("skip", "most_likely")
_REASON_DTYPE = pd.CategoricalDtype(list(REASONS))


def _rank_arrays(job_codes, hardware_codes, hardware_names, throughput, hourly, feasible, top_k,
                 unlikely=None, score=None, fallback=None):
    """The ranking of :func:`rank_candidates` on checked arrays, one entry per candidate.

    The arguments as :func:`rank_arrays` takes them, checked; ``unlikely`` marks the
    candidates below the threshold of fitting, ``score`` (default: throughput per cost)
    orders them, and ``fallback`` (the probability of fitting) ranks a job with no rankable
    candidate by ``if_none_fit="most_likely"``. Returns the rows kept, best first within
    each job, and the columns ``rank_candidates`` adds, at those rows.
    """
    n = len(job_codes)
    marked = feasible
    if unlikely is not None:
        feasible = feasible & ~unlikely
    # Hardware names sorted as strings give the documented, type-independent tie-break.
    name_rank = np.argsort(np.argsort(np.asarray([str(h) for h in hardware_names]), kind="stable"))
    hardware_order = name_rank[hardware_codes] if n else np.empty(0, dtype=np.intp)
    per_cost = throughput / hourly
    score = per_cost if score is None else score
    # a throughput of zero is no throughput: nothing to rank, whatever it costs
    zero = throughput == 0
    predicted = ~np.isnan(score) & ~zero
    rankable = feasible & predicted
    chosen = None
    if fallback is not None and unlikely is not None and n:
        chosen = _most_likely(job_codes, rankable, marked & unlikely & predicted, fallback)
        rankable = rankable | chosen
    # lexsort sorts by the last key first; NaN keys are replaced so they sort last
    keys = [hardware_order, np.nan_to_num(-throughput, nan=np.inf),
            np.nan_to_num(-score, nan=np.inf), ~rankable]
    block = _block_size(job_codes)
    if block:
        # job after job, as many rows each: sort within each job alone (a
        # stable sort of each row of a jobs x candidates matrix is the same
        # order as the stable sort of all rows by job first, and much faster)
        within = np.lexsort([key.reshape(-1, block) for key in keys], axis=-1)
        order = (within + np.arange(0, n, block)[:, None]).ravel()
        rank = np.tile(np.arange(1, block + 1), n // block)
    else:
        order = np.lexsort((*keys, job_codes))
        sorted_jobs = job_codes[order]
        starts = np.flatnonzero(np.r_[True, sorted_jobs[1:] != sorted_jobs[:-1]]) if n else np.empty(0, int)
        sizes = np.diff(np.r_[starts, n])
        rank = np.arange(n) - np.repeat(starts, sizes) + 1

    if top_k is not None:
        keep = rank <= top_k
        order, rank = order[keep], rank[keep]
    # a score without a throughput is no prediction; a throughput without a score lacks the
    # low end of its interval (the interval objectives)
    reason = np.select([np.isnan(throughput), np.isnan(score), zero], [1, 6, 5], 0).astype(np.int8)
    if unlikely is not None:
        reason[unlikely] = 3
    if chosen is not None:
        reason[chosen] = 4
    reason[~marked] = 2
    return order, {
        "cost_per_hour": hourly[order],
        "throughput_per_cost": per_cost[order],
        "rankable": rankable[order],
        "rank": rank.astype(np.int64),
        "reason": pd.Categorical.from_codes(reason[order], dtype=_REASON_DTYPE, validate=False),
        "score": score[order],
    }


def _most_likely(job_codes, rankable, eligible, probability):
    """For each job with no rankable candidate, its eligible candidates of the highest probability."""
    n_jobs = int(job_codes.max()) + 1
    stuck = np.bincount(job_codes, weights=rankable, minlength=n_jobs) == 0
    eligible = eligible & stuck[job_codes]
    p = np.where(eligible, probability, -np.inf)
    best = np.full(n_jobs, -np.inf)
    np.maximum.at(best, job_codes, p)
    return eligible & (p == best[job_codes])


def rank_arrays(job_codes, hardware_codes, hardware_names, throughput, hourly, *,
                fit_probability=None, min_fit_probability=0.5, feasible=None, top_k=None,
                objective=DEFAULT_OBJECTIVE, throughput_low=None, if_none_fit="skip",
                throughput_mean=None, _low_name="throughput_low"):
    """The ranking of :func:`rank_candidates`, on arrays: one entry per candidate.

    For callers that hold their candidates as arrays already (such as
    :func:`leapml.placement.place` scoring one submission): the same checks
    and the same order as :func:`rank_candidates`, without a frame.

    Parameters
    ----------
    job_codes : array-like of int
        Each candidate's job, numbered 0, 1, ... in order of first appearance.
    hardware_codes : array-like of int
        Each candidate's hardware type, as a position in ``hardware_names``.
    hardware_names : list
        The hardware types (ties go to the type that sorts first by name).
    throughput : array-like of float
        Predicted throughput, >= 0 and finite (NaN: no prediction; 0 is not
        rankable either).
    hourly : array-like of float
        Cost per hour of each candidate (cost per device-hour times its
        trainer count), > 0 and finite.
    fit_probability, min_fit_probability, feasible, top_k, objective, if_none_fit
        As for :func:`rank_candidates`, ``fit_probability`` and ``feasible``
        as arrays (NaN probability: unknown).
    throughput_low : array-like of float, optional
        The low end of each prediction interval, read by the objectives
        that use it.
    throughput_mean : array-like of float, optional
        The mean of each prediction (such as :func:`lognormal_mean`), read by
        the objectives of :data:`READS_MEAN` (NaN: the prediction).

    Returns
    -------
    order : ndarray of int
        The candidates kept, best first within each job.
    columns : dict
        The columns :func:`rank_candidates` adds, at the rows of ``order``.

    Raises
    ------
    ValueError
        As :func:`rank_candidates` raises it, and for arrays of unequal
        length or a code out of range.

    Examples
    --------
    >>> import numpy as np
    >>> order, columns = rank_arrays([0, 0, 0], [0, 1, 2], ["a100", "h100", "l4"],
    ...                              np.array([100.0, 250.0, np.nan]), np.array([2.0, 4.0, 0.5]))
    >>> order.tolist(), columns["rank"].tolist()
    ([1, 0, 2], [1, 2, 3])
    """
    _check_top_k(top_k)
    if if_none_fit not in IF_NONE_FIT:
        raise ValueError(f"if_none_fit must be one of {list(IF_NONE_FIT)}, got {if_none_fit!r}")
    job_codes = np.asarray(job_codes, dtype=np.int64)
    hardware_codes = np.asarray(hardware_codes, dtype=np.int64)
    throughput = np.asarray(throughput, dtype=np.float64)
    hourly = np.asarray(hourly, dtype=np.float64)
    n = len(job_codes)
    given = {"hardware_codes": hardware_codes, "throughput": throughput, "hourly": hourly}
    optional = {"fit_probability": fit_probability, "feasible": feasible,
                "throughput_low": throughput_low, "throughput_mean": throughput_mean}
    given.update({name: np.asarray(values) for name, values in optional.items() if values is not None})
    lengths = {name: len(values) for name, values in given.items() if len(values) != n}
    if lengths:
        raise ValueError(f"every array needs one entry per candidate ({n}, as job_codes); {lengths}")
    if n and (job_codes.min() < 0 or hardware_codes.min() < 0
              or hardware_codes.max() >= len(hardware_names)):
        raise ValueError("job_codes must be >= 0 and hardware_codes positions in hardware_names")
    bad = np.isinf(throughput) | (throughput < 0)
    if bad.any():
        raise ValueError("throughput must be >= 0 (or NaN for no prediction): "
                         f"{int(bad.sum())} row(s) are negative or infinite")
    if not _positive_finite(hourly).all():
        raise ValueError(f"cost per hour must be > 0 and finite: {int((~_positive_finite(hourly)).sum())} "
                         "row(s) are not")
    unlikely = None
    if fit_probability is not None:
        unlikely = _below(given["fit_probability"].astype(np.float64), "fit_probability",
                          min_fit_probability)
    else:
        _check_threshold(min_fit_probability)
    feasible = np.ones(n, dtype=bool) if feasible is None else given["feasible"].astype(bool)
    low = None if throughput_low is None else given["throughput_low"].astype(np.float64)
    probability = None if fit_probability is None else given["fit_probability"].astype(np.float64)
    mean = None if throughput_mean is None else given["throughput_mean"].astype(np.float64)
    score = _score(objective, throughput, hourly, low, probability, _low_name, mean)
    pair = job_codes * max(len(hardware_names), 1) + hardware_codes
    if n and (np.diff(np.sort(pair)) == 0).any():  # by sorting: np.unique hashes, 10x slower
        duplicated = np.flatnonzero(pd.Series(pair).duplicated(keep=False).to_numpy())
        raise ValueError(
            f"{len(duplicated)} candidates sharing a (job, hardware type) pair, at rows "
            f"{duplicated[:6].tolist()}{', ...' if len(duplicated) > 6 else ''}; keep one "
            "candidate per pair (is a job given twice?)"
        )
    fallback = probability if if_none_fit == "most_likely" else None
    return _rank_arrays(job_codes, hardware_codes, hardware_names, throughput, hourly, feasible,
                        top_k, unlikely, score, fallback)


def _check_top_k(top_k):
    if top_k is not None and (not isinstance(top_k, Integral) or isinstance(top_k, bool) or top_k < 1):
        raise ValueError(f"top_k must be None or an int >= 1, got {top_k!r}")


def _check_threshold(threshold):
    if not (isinstance(threshold, Real) and 0 <= threshold <= 1):
        raise ValueError(f"min_fit_probability must be a number in [0, 1], got {threshold!r}")


def _below(probability, name, threshold):
    """Rows whose probability of fitting is below ``threshold``, after checking both."""
    _check_threshold(threshold)
    bad = (probability < 0) | (probability > 1)
    if bad.any():
        raise ValueError(
            f"{name!r} must be a probability in [0, 1] (or NaN for unknown): "
            f"{int(bad.sum())} row(s) are not"
        )
    return probability < threshold


#: The values ``rank_candidates`` takes for ``objective``.
OBJECTIVES = ("throughput_per_cost", "lower_quantile_per_cost", "expected_utility",
              "expected_throughput_per_cost", "mean_throughput_per_cost")
#: The objectives that read the low end of a prediction interval.
NEEDS_INTERVAL = ("lower_quantile_per_cost", "expected_utility")
#: The objectives that read the mean of the predicted throughput where a candidate has one.
READS_MEAN = ("mean_throughput_per_cost",)
#: The objectives weighted by the probability of fitting.
_WEIGHTED = ("expected_utility", "expected_throughput_per_cost", "mean_throughput_per_cost")


def lognormal_mean(predicted, low, high, coverage):
    """The mean throughput of a log-normal prediction: ``predicted * exp(sigma**2 / 2)``.

    A model fitted on log throughput to the median (as ``LeapRegressor``'s
    experts are) predicts the median; a ranking that counts what a launch
    delivers on average wants the mean. ``sigma``, the spread of log
    throughput, is read from the prediction interval ``[low, high]`` of
    ``coverage``: its log width over that of a normal interval of the same
    coverage. NaN where the interval is missing, infinite or zero.

    Examples
    --------
    An 80% interval of [50, 200] around 100 is a sigma of ln(4) / 2.563:

    >>> round(float(lognormal_mean(100.0, 50.0, 200.0, 0.8)[0]), 1)
    115.8
    """
    if not (isinstance(coverage, Real) and 0 < coverage < 1):
        raise ValueError(f"coverage must be a number in (0, 1), got {coverage!r}")
    predicted, low, high = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (predicted, low, high))
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.log(high / low) / (2 * NormalDist().inv_cdf((1 + coverage) / 2))
    return predicted * np.exp(np.where(np.isfinite(sigma) & (sigma >= 0), sigma, np.nan) ** 2 / 2)


def _score(objective, throughput, hourly, low, probability, low_name, mean=None):
    """The value of ``objective`` from arrays (None: throughput per cost, computed later)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}")
    if objective in READS_MEAN and mean is not None:
        if ((mean < 0) | np.isinf(mean)).any():
            raise ValueError("the mean throughput must be >= 0 and finite (or NaN)")
        throughput = np.where(np.isnan(mean) | np.isnan(throughput), throughput, mean)  # no mean: the prediction
    weighted = objective in _WEIGHTED and probability is not None
    if not weighted and objective not in NEEDS_INTERVAL:  # throughput per cost, later
        return None if objective not in READS_MEAN or mean is None else throughput / hourly
    if objective in NEEDS_INTERVAL:
        # a column of NaN beside predictions is a model that gives no intervals, not "no prediction"
        if low is None or np.isnan(low).all() and not np.isnan(throughput).all():
            raise ValueError(
                f"objective {objective!r} needs the low end of a prediction interval in column "
                f"{low_name!r}, and there is none (a calibrated model gives it: "
                "fit_window(..., calibration_days=1))"
            )
        if ((low < 0) | np.isinf(low)).any():
            raise ValueError(f"{low_name!r} must be >= 0 and finite (or NaN)")
        above = low > throughput
        if above.any():
            warnings.warn(f"{int(above.sum())} candidate(s) have {low_name!r} above their predicted "
                          "throughput; the prediction is their low end", UserWarning, stacklevel=4)
        # no prediction, or no low end, no score: neither alone makes a candidate rankable
        low = np.minimum(low, throughput)
    score = (low if objective in NEEDS_INTERVAL else throughput) / hourly
    if weighted:  # a failed launch is worth nothing; an unknown probability weighs 1
        score = score * np.where(np.isnan(probability), 1.0, probability)
    return score


def _block_size(job_codes) -> int:
    """Rows per job when the rows come job after job, jobs 0, 1, ... with as many rows each, else 0."""
    n = len(job_codes)
    if n == 0 or job_codes[-1] + 1 == 0 or n % (job_codes[-1] + 1):
        return 0
    block = n // (job_codes[-1] + 1)
    expected = np.repeat(np.arange(job_codes[-1] + 1), block)
    return int(block) if np.array_equal(job_codes, expected) else 0


def rank_candidates(predictions, *, cost, job_col="job_id", hardware_col="hardware_type",
                    prediction_col="predicted_throughput", feasible_col=None, top_k=None,
                    trainer_col="trainer_count", fit_probability_col="fit_probability",
                    min_fit_probability=0.5, objective=DEFAULT_OBJECTIVE,
                    low_col="throughput_low", if_none_fit="skip", mean_col="throughput_mean"):
    """Order each job's candidate hardware types by predicted throughput per unit cost.

    By default each candidate's throughput per cost is weighted by its
    probability of fitting, where ``predictions`` has one (a failed launch
    delivers nothing; see ``objective``).

    Parameters
    ----------
    predictions : DataFrame
        One row per (job, candidate hardware type) with a predicted throughput.
    cost : str or mapping
        Cost per device-hour: the name of a column of ``predictions``, or a
        mapping from hardware type to cost. It is multiplied by the row's
        trainer count when the ``trainer_col`` column is present.
    job_col, hardware_col, prediction_col : str
        Column names of the job id, the hardware type and the predicted
        throughput (samples/s; NaN means no prediction).
    feasible_col : str, default=None
        Optional boolean column; ``False`` marks a candidate that cannot run
        (e.g. the job does not fit in its memory).
    top_k : int, default=None
        Keep only the ``top_k`` best rows of each job (after ranking, so a job
        whose candidates are all unrankable still shows its flagged rows).
    trainer_col : str, default="trainer_count"
        Column holding the number of devices; ignored when absent.
    fit_probability_col : str, default="fit_probability"
        Column holding each candidate's probability of fitting (such as
        :func:`~leapml.placement.predict_candidates` gives with a
        feasibility model); ignored when absent. NaN means unknown and
        does not block a candidate.
    min_fit_probability : float, default=0.5
        Candidates whose probability of fitting is below this are not
        rankable.
    objective : str, default="mean_throughput_per_cost"
        What orders each job's rankable candidates, best first (without
        ``fit_probability_col`` and ``mean_col`` the default is throughput
        per cost):

        - ``"throughput_per_cost"``: predicted throughput / cost per hour;
        - ``"lower_quantile_per_cost"``: the low end of the prediction
          interval / cost per hour (a pessimist's throughput per cost);
        - ``"expected_utility"``: probability of fitting (1 when unknown)
          times the low end of the interval / cost per hour, which
          discounts both uncertain and barely fitting candidates (a failed
          launch is worth nothing);
        - ``"expected_throughput_per_cost"``: probability of fitting (1 when
          unknown) times predicted throughput / cost per hour, the
          throughput per cost a launch is expected to deliver when a failed
          launch delivers none. With a candidate's regret counted as 1 when
          it does not fit, ranking by it puts first the candidate of the
          least expected regret; it needs no interval. Without probabilities
          it is ``"throughput_per_cost"``.
        - ``"mean_throughput_per_cost"`` (the default): the same with the
          mean throughput (``mean_col``, which
          :func:`~leapml.placement.predict_candidates` gives for a calibrated
          model) in place of the prediction, a median; a candidate without a
          mean (no interval) is ranked by its prediction.
    low_col : str, default="throughput_low"
        Column holding the low end of the prediction interval, read by the
        objectives that use it (such as
        :func:`~leapml.placement.predict_candidates` gives for a
        calibrated model).
    if_none_fit : {"skip", "most_likely"}, default="skip"
        A job none of whose candidates is likely enough to fit: ``"skip"``
        leaves it with no rankable candidate (the scheduler decides);
        ``"most_likely"`` ranks its candidates of the highest probability
        of fitting (with a prediction above zero, not marked infeasible), by the
        objective, with the reason ``"most likely to fit, below
        threshold"``.
    mean_col : str, default="throughput_mean"
        Column of the mean throughput (``"mean_throughput_per_cost"``); the default may be absent.

    Returns
    -------
    DataFrame
        The rows of ``predictions`` (plus the columns below), grouped by job in
        order of first appearance and ordered best first within each job, with
        a fresh index:

        - ``cost_per_hour``: cost per device-hour times the trainer count;
        - ``throughput_per_cost``: predicted throughput / ``cost_per_hour``;
        - ``rankable``: ``False`` for infeasible candidates, candidates
          unlikely to fit, NaN predictions, predictions of zero
          throughput and, under an interval objective, a NaN low end,
          which always rank after every rankable candidate;
        - ``rank``: 1 for the best candidate of each job, then 2, 3, ...;
        - ``reason``: why a candidate is not rankable (a category among
          :data:`REASONS`: ``"marked infeasible"``, ``"fit probability below
          threshold"``, ``"no prediction"``, ``"predicted throughput is
          zero"``, ``"no prediction interval"``), ``""`` when it is, or
          ``"most likely to fit, below threshold"`` for a candidate ranked by
          ``if_none_fit="most_likely"``;
        - ``score``: the objective's value (NaN: no prediction).

        Ties in ``throughput_per_cost`` go to the higher predicted throughput,
        then to the hardware type that sorts first by name.

    Raises
    ------
    ValueError
        For missing columns, a column it reads given twice, a row without a
        hardware type, a hardware type without a cost, a cost that is not a
        number, <= 0, infinite or NaN, a trainer count
        <= 0 or infinite, a negative or infinite predicted
        throughput, a non-boolean feasibility column, duplicate (job,
        hardware type) rows, a ``top_k`` below 1, or a probability of
        fitting (or ``min_fit_probability``) outside [0, 1].

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "job_id": [1, 1, 1],
    ...     "hardware_type": ["a100", "h100", "l4"],
    ...     "predicted_throughput": [100.0, 250.0, float("nan")],
    ... })
    >>> ranked = rank_candidates(frame, cost={"a100": 2.0, "h100": 4.0, "l4": 0.5})
    >>> ranked[["hardware_type", "throughput_per_cost", "rank", "rankable"]]
      hardware_type  throughput_per_cost  rank  rankable
    0          h100                 62.5     1      True
    1          a100                 50.0     2      True
    2            l4                  NaN     3     False
    """
    if not isinstance(predictions, pd.DataFrame):
        raise TypeError(f"predictions must be a pandas DataFrame, got {type(predictions).__name__}")
    if isinstance(cost, pd.Series):
        cost = cost.to_dict()
    cost_is_column = isinstance(cost, str)
    if not cost_is_column and not isinstance(cost, Mapping):
        raise TypeError(
            f"cost must be a column name or a mapping hardware type -> cost, got {type(cost).__name__}"
        )
    _fail_if_missing(predictions, [job_col, hardware_col, prediction_col, feasible_col]
                     + ([cost] if cost_is_column else []))
    n = len(predictions)
    hardware = _column(predictions, hardware_col)

    throughput = _float_column(predictions, prediction_col)
    hardware_codes, hardware_names = _factorize(hardware)
    job_codes, _ = pd.factorize(_column(predictions, job_col), sort=False)
    for codes, what, name in ((hardware_codes, "hardware type", hardware_col), (job_codes, "job", job_col)):
        if (codes < 0).any():  # a candidate of no job would be ranked with every other such
            raise ValueError(f"{int((codes < 0).sum())} row(s) have no {what} in {name!r}")
    if cost_is_column:
        unit_cost = _float_column(predictions, cost)
        bad = ~_positive_finite(unit_cost)
        if bad.any():
            kinds = sorted({str(h) for h in hardware[bad].unique()})
            raise ValueError(
                f"cost column {cost!r} must be > 0 and finite: {int(bad.sum())} row(s) are "
                f"not, for hardware type(s) {kinds}"
            )
    else:
        missing = [h for h in hardware_names if h not in cost]
        if missing:
            as_text = {str(k): k for k in cost}
            typed = [(h, as_text[str(h)]) for h in missing if str(h) in as_text]
            hint = (f" (its key {typed[0][1]!r} is of type {type(typed[0][1]).__name__}, the "
                    f"hardware type {typed[0][0]!r} of type {type(typed[0][0]).__name__}: give "
                    "both as text)"
                    if typed else "")
            raise ValueError(
                f"cost has no entry for hardware type(s) {sorted(map(str, missing))}{hint}")
        per_type = np.array([_cost_of(cost, h) for h in hardware_names], dtype=np.float64)
        bad_types = [str(h) for h, ok in zip(hardware_names, _positive_finite(per_type), strict=True)
                     if not ok]
        if bad_types:
            raise ValueError(f"cost must be > 0 and finite; it is not for {sorted(bad_types)}")
        unit_cost = per_type[hardware_codes] if n else np.empty(0)

    if trainer_col is not None and trainer_col in predictions.columns:
        trainers = _float_column(predictions, trainer_col)
        bad = ~_positive_finite(trainers)
        if bad.any():
            raise ValueError(f"{trainer_col!r} must be > 0 and finite: {int(bad.sum())} row(s) "
                             "are not")
        hourly = unit_cost * trainers
    else:
        hourly = unit_cost

    if feasible_col is not None:
        feasible = _column(predictions, feasible_col)
        if not (pd.api.types.is_bool_dtype(feasible.dtype) and not feasible.isna().any()):
            raise ValueError(
                f"feasible column {feasible_col!r} must be boolean without missing values, "
                f"got dtype {feasible.dtype}"
            )
        feasible = feasible.to_numpy(dtype=bool)
    else:
        feasible = np.ones(n, dtype=bool)
    probability = low = None
    if fit_probability_col is not None and fit_probability_col in predictions.columns:
        probability = _float_column(predictions, fit_probability_col)
    if objective in NEEDS_INTERVAL and low_col in predictions.columns:
        low = _float_column(predictions, low_col)
    if objective in READS_MEAN and mean_col not in predictions.columns and mean_col != "throughput_mean":
        _fail_if_missing(predictions, [mean_col])  # a name given, not found: a typo
    mean = (_float_column(predictions, mean_col)
            if objective in READS_MEAN and mean_col in predictions.columns else None)
    order, added = rank_arrays(job_codes, hardware_codes, hardware_names, throughput, hourly,
                               fit_probability=probability, min_fit_probability=min_fit_probability,
                               feasible=feasible, top_k=top_k, objective=objective,
                               throughput_low=low, if_none_fit=if_none_fit, throughput_mean=mean,
                               _low_name=low_col)  # errors name the caller's column
    if not predictions.columns.is_unique:
        ranked = predictions.iloc[order].reset_index(drop=True)
        for name, values in added.items():
            ranked[name] = values
        return ranked
    # one frame built from its arrays: inserting columns one by one, or the
    # DataFrame constructor, costs more than the ranking on one submission
    names = [name for name in predictions.columns if name not in added]
    arrays = [column_values(predictions[name], order) for name in names] + list(added.values())
    return frame_of_arrays(arrays, pd.Index([*names, *added]), pd.RangeIndex(len(order)))

