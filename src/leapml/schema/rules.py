"""The row rules of an attempt log, each with its message, written once.

:func:`~leapml.schema.validate_attempts` applies them to a whole log.
:func:`check_rows` applies them to the columns a reader needs (the features
read the launch configuration of the rows they describe and the ``ok`` rows of
a history log) and parses those columns on the way, in the same pass, so that
a value is judged by the same rule, in the same words, whichever way it comes
in. The names here are the schema's contract with :mod:`leapml.features`; they
are not re-exported from :mod:`leapml.schema`.
"""

from __future__ import annotations

import difflib
import numbers
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np
import pandas as pd

from leapml.schema.columns import (
    ATTEMPT_COLUMNS,
    MAX_COUNT,
    MAX_MODEL_SIZE,
    MODEL_SIZE_COLUMNS,
    OPTIONAL_ATTEMPT_COLUMNS,
    PRECISIONS,
    STATUSES,
    normalize_precision,
)

#: The count columns of an attempt log (trainers, batch size, ...): finite and > 0 where given.
COUNT_COLUMNS = tuple(c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.kind == "int")
#: Below this many rows a Python loop over values beats a pandas hash table.
FEW_ROWS = 256

_NULLABLE = frozenset(c.name for c in ATTEMPT_COLUMNS + OPTIONAL_ATTEMPT_COLUMNS if c.nullable)
_PRECISION_CODES = {name: code for code, name in enumerate(PRECISIONS)}
# Python-string categories: scoring reads them back as a list on every call
_PRECISION_DTYPE = pd.CategoricalDtype(pd.Index(list(PRECISIONS), dtype=object))
_normalized_precision = lru_cache(maxsize=1024)(normalize_precision)
_OK_CODES = {"ok": 0}
_STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}


# -- reading columns ------------------------------------------------------------


def require_frame(frame, name: str) -> None:
    """Raise TypeError unless ``frame`` is a DataFrame (``name`` says which argument), and
    ValueError if it has a column name twice (reading it would give a frame, not a column)."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    if not frame.columns.is_unique:
        repeated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise ValueError(f"{name} has column(s) {repeated} more than once: keep one of each")


def require_whole(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int, or a :class:`ValueError` naming ``name`` unless it is a whole
    number >= ``minimum`` (``2.0`` is one; ``1.5``, ``"2"``, ``True`` and NaN are not).

    Examples
    --------
    >>> require_whole("nights", 3.0)
    3
    >>> require_whole("nights", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: nights must be a whole number >= 1, got 1.5
    """
    whole = (isinstance(value, numbers.Integral) or (isinstance(value, numbers.Real)
             and float(value).is_integer())) and not isinstance(value, bool)
    if not whole or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def require_at_least(name: str, value, minimum) -> None:
    """A :class:`ValueError` naming ``name`` unless ``value`` is a number >= ``minimum``
    (NaN, text and ``True`` are no numbers).

    Examples
    --------
    >>> require_at_least("window_days", float("nan"), 1)
    Traceback (most recent call last):
    ...
    ValueError: window_days must be a number >= 1, got nan
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= minimum:
        raise ValueError(f"{name} must be a number >= {minimum}, got {value!r}")


def require_models(models) -> Mapping:
    """``models`` if it maps names to models, else a :class:`TypeError` that says so.

    Examples
    --------
    >>> require_models(["a model"])
    Traceback (most recent call last):
    ...
    TypeError: models must map names to models (a dict such as {'leap': LeapRegressor()}), got list
    """
    if not isinstance(models, Mapping):
        raise TypeError("models must map names to models (a dict such as "
                        f"{{'leap': LeapRegressor()}}), got {type(models).__name__}")
    return models


def require_function(name: str, function, *, optional: bool = True, of: str = "") -> None:
    """A :class:`TypeError` naming ``name`` (and what it is called with, ``of``) unless
    ``function`` can be called (or, when ``optional``, is None).

    Examples
    --------
    >>> require_function("oracle", None, optional=False)
    Traceback (most recent call last):
    ...
    TypeError: oracle must be a function, got NoneType
    """
    if not callable(function) and not (optional and function is None):
        raise TypeError(f"{name} must be a function{of and ' of ' + of}, got "
                        f"{type(function).__name__}")


def describe_rows(mask: np.ndarray, frame: pd.DataFrame, limit: int = 5) -> str:
    """Which rows a boolean mask selects: their count and the first index labels."""
    mask = np.asarray(mask, dtype=bool)
    labels = frame.index[mask][:limit].tolist()
    more = ", ..." if mask.sum() > limit else ""
    return f"{int(mask.sum())} row(s) (index {labels}{more})"


def null_mask(series: pd.Series) -> np.ndarray:
    """Where ``series`` is null, read from its array (a Series would cost more than the test)."""
    return np.asarray(series.array.isna(), dtype=bool)


def floats(series: pd.Series) -> np.ndarray:
    """A numeric column as floats, NaN where null."""
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(dtype=float)  # NaN already: no null mask to build
    return series.to_numpy(dtype=float, na_value=np.nan)


def text_codes(series: pd.Series, codes: dict[str, int]) -> np.ndarray:
    """The code of each value of ``series`` by its text (-1: absent from ``codes``, or null)."""
    values = series.array
    if isinstance(values, pd.Categorical):
        # map the few categories once instead of every row; code -1 (null) picks the appended -1
        mapping = [codes.get(str(c), -1) for c in values.categories.tolist()]
        return np.array([*mapping, -1], dtype=np.int64)[values.codes]
    if len(values) > FEW_ROWS and pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        # text already: look the distinct values up once
        found, uniques = pd.factorize(values)
        mapping = [codes.get(u, -1) for u in uniques]
        return np.array([*mapping, -1], dtype=np.int64)[found]
    found = np.fromiter(
        (codes.get(str(v), -1) for v in values.to_numpy(dtype=object)), np.int64, len(values)
    )
    return np.where(null_mask(series), -1, found)


def hardware_codes(hardware: pd.DataFrame) -> dict[str, int]:
    """Each hardware type of a catalog, by its text, to its row position."""
    return {str(name): code for code, name in enumerate(hardware["hardware_type"].to_numpy(dtype=object))}


def check_status(status: pd.Series, frame: pd.DataFrame, problems: list[str]) -> None:
    """Add a problem for every status that is none of :data:`STATUSES` (null included):
    read as "not ok", a status spelled ``"OK"`` would hide a log's history without a word."""
    bad = text_codes(status, _STATUS_CODES) < 0
    if bad.any():
        problems.append(f"status not in {list(STATUSES)} in {describe_rows(bad, frame)}, "
                        f"such as {status.iloc[int(np.argmax(bad))]!r} (coerce_attempts reads "
                        "other spellings)")


def ok_rows(status: pd.Series) -> np.ndarray:
    """Where an attempt's status is ``ok``: the rows that carry a throughput."""
    return text_codes(status, _OK_CODES) == 0


def precision_codes(series: pd.Series) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """Each value's precision code and the categories of the ``precision`` feature.

    Values are read through :func:`~leapml.schema.normalize_precision`: a
    family of :data:`~leapml.schema.PRECISIONS` gets its position, any other
    value a code past them (its own category, after the five, sorted), a null
    or blank value -1.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        raw, uniques = values.codes, values.categories.to_numpy(dtype=object).tolist()
    elif len(values) <= FEW_ROWS:
        uniques = values.to_numpy(dtype=object).tolist()
        raw = np.arange(len(uniques))
    else:
        raw, uniques = pd.factorize(values)
        uniques = np.asarray(uniques, dtype=object).tolist()
    names = [_normalized_precision(u) for u in uniques]
    extra = sorted({n for n in names if n is not None and n not in _PRECISION_CODES})
    codes = {**_PRECISION_CODES, **{n: len(PRECISIONS) + i for i, n in enumerate(extra)}}
    mapping = np.array([*(codes.get(n, -1) for n in names), -1], dtype=np.int64)
    dtype = pd.CategoricalDtype(pd.Index([*PRECISIONS, *extra], dtype=object)) if extra else _PRECISION_DTYPE
    return mapping[raw], dtype


def as_text(series: pd.Series) -> pd.Series:
    """An id or category column as text, so that 413 in one table matches "413" in another.

    A float column of whole numbers reads as the integers (a log with a
    missing id turns its ids into floats); nulls stay null.
    """
    values = series.array
    if isinstance(values, pd.Categorical):
        categories = values.categories
        if (categories.dtype != object and pd.api.types.is_string_dtype(categories.dtype)) or (
            pd.api.types.infer_dtype(categories, skipna=False) == "string"
        ):
            return series
        names = [str(c) for c in as_text(pd.Series(categories.to_numpy(dtype=object)))]
        if len(set(names)) == len(names):
            return pd.Series(pd.Categorical.from_codes(values.codes, categories=names),
                             index=series.index, name=series.name)
    elif pd.api.types.is_string_dtype(series.dtype) and (
        series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    ):
        return series
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iu":
        # NumPy integers are never null
        text = np.array([str(v) for v in series.tolist()], dtype=object)
        return pd.Series(text, index=series.index, name=series.name, dtype=object, copy=False)
    null = null_mask(series)
    if series.dtype.kind == "f" and (series[~null] % 1 == 0).all():
        series = series.astype("Int64")
    # str() value by value: several times cheaper than astype(str) on the few rows of a submission
    text = np.array([str(v) for v in series.tolist()], dtype=object)
    text[null] = None
    return pd.Series(text, index=series.index, name=series.name, dtype=object, copy=False)


def text_values(values) -> np.ndarray:
    """Ids or names as an array of text, as :func:`as_text` reads them (job 413 is "413")."""
    series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, dtype=object))
    return as_text(series).astype(str).to_numpy(dtype=object)


# -- the rules: each appends its problem (if any) to ``problems`` -----------------
# ``rows`` restricts a rule to a boolean mask of the frame (the ok rows of a history).


def _within(bad: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return bad if rows is None else bad & rows


def check_nulls(name: str, null: np.ndarray, frame, problems: list[str], rows=None) -> None:
    """A required column is never null."""
    bad = _within(null, rows)
    if bad.any():
        problems.append(f"column {name!r} is null in {describe_rows(bad, frame)}")


def check_positive(name: str, series: pd.Series, frame, problems: list[str], rows=None) -> np.ndarray:
    """A count or a size (trainers, memory, cost, ...) is finite and > 0 where given; returns floats."""
    values = floats(series)
    bad = _within(~np.isnan(values) & ~(np.isfinite(values) & (values > 0)), rows)
    if bad.any():
        problems.append(f"{name} must be finite and > 0; it is not in {describe_rows(bad, frame)}")
    return values


def check_count(name: str, series: pd.Series, frame, problems: list[str], rows=None) -> np.ndarray:
    """A count (trainers, batch size, sequence length, ...) is a whole number > 0 where given."""
    values = check_positive(name, series, frame, problems, rows)
    with np.errstate(invalid="ignore"):
        bad = _within(np.isfinite(values) & (values % 1 != 0), rows)
    if bad.any():
        problems.append(f"{name} must be a whole number; it is not in {describe_rows(bad, frame)}")
    huge = _within(np.isfinite(values) & (np.abs(values) > MAX_COUNT), rows)
    if huge.any():  # past 2**53 a float no longer holds every whole number, nor int64 past 2**63
        problems.append(f"{name} is beyond {MAX_COUNT:.0f} in {describe_rows(huge, frame)}")
    return values


def check_model_sizes(frame: pd.DataFrame, problems: list[str], rows=None, *,
                      check_dtypes: bool = True) -> dict[str, np.ndarray]:
    """The optional model-size columns, as floats (NaN where absent or null).

    ``param_count`` and ``flops_per_sample`` are finite and > 0 where given,
    ``embedding_gb`` finite and >= 0 (a model without embedding tables has 0).
    A column of another dtype than numbers is a problem (unless
    ``check_dtypes=False``: the validator names dtypes for every column at once).
    """
    sizes = {}
    for name in MODEL_SIZE_COLUMNS:
        if name not in frame.columns:
            sizes[name] = np.full(len(frame), np.nan)
            continue
        series = frame[name]
        if not _numeric(series.dtype):
            if check_dtypes:
                problems.append(f"column {name!r} has dtype {series.dtype}, expected numbers")
            sizes[name] = np.full(len(frame), np.nan)
            continue
        if name == "embedding_gb":
            values = floats(series)
            bad = _within(~np.isnan(values) & ~(np.isfinite(values) & (values >= 0)), rows)
            if bad.any():
                problems.append(f"{name} must be finite and >= 0; it is not in {describe_rows(bad, frame)}")
        else:
            values = check_positive(name, series, frame, problems, rows)
        # far beyond any model, and far below where the features' products overflow
        huge = _within(np.isfinite(values) & (values > MAX_MODEL_SIZE), rows)
        if huge.any():
            problems.append(f"{name} is beyond {MAX_MODEL_SIZE:g} in {describe_rows(huge, frame)}")
        sizes[name] = values
    return sizes


def check_precision(
    series: pd.Series, frame, problems: list[str], *, null=None, rows=None
) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """A precision is never blank (any other value is a category); returns :func:`precision_codes`."""
    codes, dtype = precision_codes(series)
    bad = _within((codes < 0) & ~(null_mask(series) if null is None else null), rows)
    if bad.any():
        problems.append(f"precision is blank in {describe_rows(bad, frame)}")
    return codes, dtype


def name_key(name: str) -> str:
    """A hardware name without case, spaces, ``-``, ``_`` or a leading vendor name:
    ``" a100_80gb-SXM4"`` and ``"NVIDIA A100-80GB-SXM4"`` -> ``"a10080gbsxm4"``."""
    return _VENDOR.sub("", re.sub(r"[\s_\-]+", "", name).casefold())


#: Vendor names a hardware name may start with ("NVIDIA A100-40GB-SXM4").
_VENDOR = re.compile(r"^(nvidia|amd|intel|habana|google)(?=.)")
#: Words of a hardware name that name its maker or line, not the device.
_MAKER_WORDS = frozenset({"nvidia", "amd", "intel", "habana", "google", "tesla", "instinct",
                          "geforce"})


def name_words(name: str) -> frozenset:
    """The words of a hardware name, without case or its maker's words: ``"Tesla
    V100-SXM2-16GB"`` and ``"V100-16GB-SXM2"`` have the same words."""
    return frozenset(re.split(r"[\s_\-]+", name.strip().casefold())) - _MAKER_WORDS - {""}


#: A word of a hardware name that gives its memory or its form factor, not the device
#: ("80GB", "40G", "SXM4", "PCIe").
_DETAIL = re.compile(r"^(?:(\d+(?:\.\d+)?)gb?|sxm\d?|pcie)$")
#: A word that gives the memory's kind ("HBM3", "GDDR6X") or a power limit ("(400W)"),
#: which catalog names leave out.
_NOT_DEVICE = re.compile(r"^(?:(?:hbm|gddr)\d*[a-z]?|\(?\d+w\)?)$")


def name_parts(name: str) -> tuple[frozenset, frozenset]:
    """The words of a hardware name that name the device, and those that give its memory
    (as ``<n>gb``) or its form factor.

    Examples
    --------
    >>> device, details = name_parts("NVIDIA A100-SXM-80 GB")
    >>> sorted(device), sorted(details)
    (['a100'], ['80gb', 'sxm'])
    """
    joined = re.sub(r"(?<=\d)[\s_\-]+(?=gb?\b)", "", name.casefold())  # "80 GB": one word
    words = {word for word in name_words(joined) if not _NOT_DEVICE.match(word)}
    details = {}
    for word in words:
        if found := _DETAIL.match(word):
            details[word] = f"{found.group(1)}gb" if found.group(1) else word
    return frozenset(words - set(details)), frozenset(details.values())


def catalog_spelling(name: str, catalog_names: Iterable[str]) -> str | None:
    """The one catalog name that ``name`` spells otherwise, or None.

    In turn: the catalog name of the same :func:`name_key` (case, spaces,
    ``-``, ``_``, a leading maker's name), of the same :func:`name_words`
    (their order, the maker's words), or of the same device words whose
    memory and form factor hold every one ``name`` gives (``"SXM"`` is any
    SXM): a name that leaves them out means the one such device of the
    catalog. Each step answers only if exactly one catalog name fits: ``"A100
    80GB"`` fits both A100s of 80 GB and is left unmatched, and so is a name
    whose device words differ (``"MI250"`` is not ``"MI250-GCD"``, one half
    of it).

    Examples
    --------
    >>> names = ["A100-80GB-PCIe", "A100-80GB-SXM4", "B200-180GB-SXM", "MI250-GCD"]
    >>> [catalog_spelling(n, names) for n in ["a100 80gb pcie", "NVIDIA A100-SXM-80GB", "B200",
    ...                                       "A100 80GB", "MI250"]]
    ['A100-80GB-PCIe', 'A100-80GB-SXM4', 'B200-180GB-SXM', None, None]
    """
    catalog = list(dict.fromkeys(catalog_names))
    device, details = name_parts(name)

    def fits(other):
        other_device, other_details = name_parts(other)
        return other_device == device and all(
            word in other_details or (word == "sxm" and any(d.startswith("sxm") for d in other_details))
            for word in details)

    for same in (lambda other: name_key(other) == name_key(name),
                 lambda other: name_words(other) == name_words(name), fits):
        found = [other for other in catalog if same(other)]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def closest_names(unknown: Iterable[str], catalog_names: Iterable[str]) -> dict[str, list[str]]:
    """Up to three catalog names close to each of (the first ten) ``unknown`` names.

    Catalog names holding the whole name (``"v100"``: the V100s) first, then
    those the name holds (``"Tesla V100"``: V100), then the similar ones;
    names with none are left out.

    Examples
    --------
    >>> closest_names(["h100 80gb pcie", "zzz"], ["H100-80GB-PCIe", "H100-80GB-SXM5", "T4-16GB"])
    {'h100 80gb pcie': ['H100-80GB-PCIe', 'H100-80GB-SXM5']}
    """
    keys = {name_key(name): name for name in catalog_names}
    words = {key: name_words(name) for key, name in keys.items()}
    closest = {}
    for name in list(unknown)[:10]:
        key, own = name_key(name), name_words(name)
        # the same words in another order ("A100-PCIE-40GB"), then names holding all of them
        same = sorted((k for k in keys if own and own <= words[k]), key=lambda k: len(words[k]))
        holding = sorted((k for k in keys if key and key in k), key=len)
        held = sorted((k for k in keys if len(k) >= 3 and k in key), key=len, reverse=True)
        matches = list(dict.fromkeys(
            same + holding + held + difflib.get_close_matches(key, list(keys), n=3, cutoff=0.6)))[:3]
        if matches:
            closest[name] = [keys[k] for k in matches]
    return closest


def absent_from_catalog(unknown: list[str], where: str = "", catalog_names=()) -> str:
    """The problem of hardware types the catalog lacks (``where``: the rows, if any), with
    the catalog's closest names where some are close."""
    closest = closest_names(unknown, catalog_names)
    return (f"hardware_type absent from the catalog: {unknown[:10]}" + (f" in {where}" if where else "")
            + (f"; the catalog's closest names: {closest}" if closest else ""))


def check_hardware_types(
    series: pd.Series, codes: dict[str, int], frame, problems: list[str], *, null=None, rows=None
) -> np.ndarray:
    """Every hardware type is in the catalog (``codes``: :func:`hardware_codes`); returns the codes."""
    found = text_codes(series, codes)
    bad = _within((found < 0) & ~(null_mask(series) if null is None else null), rows)
    if bad.any():
        unknown = sorted({str(v) for v in series.to_numpy(dtype=object)[bad]})
        problems.append(absent_from_catalog(unknown, describe_rows(bad, frame), codes))
    return found


def check_ok_throughput(series: pd.Series, ok: np.ndarray, frame, problems: list[str]) -> np.ndarray:
    """An ``ok`` row's throughput is finite and > 0; returns the throughput as floats."""
    values = floats(series)
    bad = ok & ~(np.isfinite(values) & (values > 0))
    if bad.any():
        problems.append(
            f"throughput must be finite and > 0 on ok rows; it is not in {describe_rows(bad, frame)}"
        )
    return values


def check_time_zones(end: pd.Series, submit: pd.Series, problems: list[str]) -> bool:
    """When an outcome is known and ``submit_time`` are both time-zone aware, or both naive.

    Returns whether they are: times of both kinds cannot be compared.
    """
    if (end.dt.tz is None) != (submit.dt.tz is None):
        problems.append("end_time and submit_time differ in time-zone awareness")
        return False
    return True


def check_ends_after_submission(early: np.ndarray, frame, problems: list[str]) -> None:
    """A run never ends before it is submitted (``early``: the rows where it does)."""
    if early.any():
        problems.append(f"end_time is before submit_time in {describe_rows(early, frame)}")


def _numeric(dtype) -> bool:
    if isinstance(dtype, np.dtype):  # the common case, without pandas' dtype dispatch
        return dtype.kind in "iufc"
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def check_rows(
    frame: pd.DataFrame,
    columns: Iterable[str],
    *,
    hardware_codes: dict[str, int],
    problems: list[str],
    rows: np.ndarray | None = None,
    text_columns: Iterable[str] = (),
) -> tuple[dict[str, pd.Series], dict[str, np.ndarray]]:
    """Check the attempt-log ``columns`` a reader needs from ``frame``, and parse them.

    The rules are those of :func:`~leapml.schema.validate_attempts` for these
    columns; numbers may be floats (``8.0`` trainers) as long as their values
    pass. Problems are appended to ``problems``.

    Parameters
    ----------
    frame : DataFrame
        Rows with (some of) the columns of an attempt log.
    columns : iterable of str
        The columns read; a missing one is a problem.
    hardware_codes : dict
        The catalog's hardware types (:func:`hardware_codes`).
    problems : list of str
        Where the problems found are appended.
    rows : ndarray of bool, optional
        Restricts the value checks to these rows (the ``ok`` rows of a
        history log, the only ones read); the throughput is then checked on
        them. None: every row, and the throughput is not read.
    text_columns : iterable of str
        Id and category columns returned as text (:func:`as_text`).

    Returns
    -------
    read : dict of Series
        The columns read, the text columns as text.
    parsed : dict of ndarray
        What was parsed on the way: ``hardware_type`` codes,
        ``precision`` codes (and ``precision_dtype``, their categories),
        counts and ``throughput`` as floats.
    """
    required = list(columns)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        problems.append(f"missing column(s): {missing}")
    read = {c: frame[c] for c in required if c in frame.columns}
    for name in text_columns:
        if name in read:
            read[name] = as_text(read[name])
    parsed: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    for name, series in read.items():
        if name not in _NULLABLE:
            nulls[name] = null_mask(series)
            check_nulls(name, nulls[name], frame, problems, rows)
    if "submit_time" in read and not pd.api.types.is_datetime64_any_dtype(read["submit_time"].dtype):
        problems.append(
            f"column 'submit_time' has dtype {read['submit_time'].dtype}, expected a timestamp "
            "(convert it with pandas.to_datetime or leapml.schema.coerce_attempts)"
        )
    for name in COUNT_COLUMNS:
        if name not in read:
            continue
        if not _numeric(read[name].dtype):
            problems.append(f"column {name!r} has dtype {read[name].dtype}, expected numbers")
            continue
        parsed[name] = check_count(name, read[name], frame, problems, rows)
    if "precision" in read:
        if _numeric(read["precision"].dtype):
            problems.append(f"column 'precision' has dtype {read['precision'].dtype}, expected category")
        else:
            parsed["precision"], parsed["precision_dtype"] = check_precision(
                read["precision"], frame, problems, null=nulls["precision"], rows=rows
            )
    if "hardware_type" in read:
        parsed["hardware_type"] = check_hardware_types(
            read["hardware_type"], hardware_codes, frame, problems, null=nulls["hardware_type"], rows=rows
        )
    if "throughput" in read and rows is not None:
        if not pd.api.types.is_numeric_dtype(read["throughput"].dtype):
            problems.append(f"column 'throughput' has dtype {read['throughput'].dtype}, expected numbers")
        else:
            parsed["throughput"] = check_ok_throughput(read["throughput"], rows, frame, problems)
    return read, parsed
