"""A simulated fleet's tables (:class:`Fleet`), its truth, and its folder on disk."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import atomic_path, read_table, write_table
from ..schema import LAUNCH_COLUMNS, SchemaError, validate_attempts, validate_hardware
from .throughput import expected_pairs, launch_arrays, physics_arrays

__all__ = ["Fleet", "load_fleet"]

_TABLE_FILES = ("attempts", "hardware", "models", "jobs", "interactions", "releases")


# Columns the simulator reads from its own tables, beyond the schema's.
_REQUIRED_COLUMNS = {
    "hardware": ("hardware_type", "software"),
    "models": ("model_type", "model_family", "_kind"),
    "jobs": ("job_id", *LAUNCH_COLUMNS, "_variant", "_memory_factor"),
    "interactions": ("model_type", "hardware_type", "_interaction"),
    "releases": ("software", "time", "model_family", "factor"),
}


@dataclass
class Fleet:
    """A simulated fleet: the attempt log, its catalogs, its jobs and its hidden truth.

    Attributes
    ----------
    attempts : DataFrame
        One row per attempt, sorted by ``submit_time``: the columns of
        :data:`leapml.schema.ATTEMPT_COLUMNS` plus ``expected_throughput``
        (the noiseless truth, for evaluation only; NaN on ``oom`` rows).
    hardware : DataFrame
        The hardware catalog (:func:`leapml.fleet.hardware_catalog`).
    models : DataFrame
        The model catalog (:func:`leapml.fleet.model_catalog`); columns
        starting with ``_`` are hidden physics.
    jobs : DataFrame
        One row per job: ``job_id``, the launch columns
        (:data:`leapml.schema.LAUNCH_COLUMNS`) and hidden columns starting
        with ``_`` (``_variant``, ``_memory_factor``, ``_kind``, ...) that no
        feature may read.
    interactions : DataFrame
        Hidden per-(model type, hardware type) efficiency factor.
    releases : DataFrame
        Software releases: ``software``, ``time``, ``model_family``,
        ``factor`` (multiplies throughput from ``time`` on).
    params : dict
        The arguments of :func:`simulate` that made this fleet.

    Examples
    --------
    >>> from leapml.fleet import simulate
    >>> fleet = simulate("tiny", days=3, seed=0)
    >>> sorted(fleet.attempts["status"].unique())
    ['failed', 'ok', 'oom']
    >>> truth = fleet.expected_throughput(fleet.jobs.head(2), ["H100-80GB-SXM5", "T4-16GB"])
    >>> list(truth.columns)
    ['job_id', 'hardware_type', 'expected_throughput', 'feasible']
    """

    attempts: pd.DataFrame
    hardware: pd.DataFrame
    models: pd.DataFrame
    jobs: pd.DataFrame
    interactions: pd.DataFrame
    releases: pd.DataFrame
    params: dict = field(default_factory=dict)

    def save(self, directory: str | os.PathLike) -> Path:
        """Write every table as Parquet (atomically, file by file) and ``params.json``.

        Returns
        -------
        Path
            The directory.

        Examples
        --------
        >>> import tempfile
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=2, seed=0)
        >>> back = load_fleet(fleet.save(tempfile.mkdtemp()))
        >>> back.attempts.equals(fleet.attempts)
        True
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name in _TABLE_FILES:
            write_table(getattr(self, name), directory / f"{name}.parquet")
        with atomic_path(directory / "params.json") as tmp:
            tmp.write_text(json.dumps(self.params, indent=2, sort_keys=True, default=str))
        return directory

    @property
    def end(self) -> pd.Timestamp:
        """The end of the simulated period (exclusive)."""
        return pd.Timestamp(self.params["start"]) + pd.Timedelta(days=self.params["days"])

    def expected_throughput(self, jobs: pd.DataFrame, hardware_types, *, at=None) -> pd.DataFrame:
        """Noiseless throughput of each job on each hardware type (the counterfactual).

        Parameters
        ----------
        jobs : DataFrame
            Rows with the launch columns (``model_type``, ``trainer_count``,
            ``batch_size``, ``precision``, ``seq_len``, ``parallelism``) and
            usually ``job_id``: rows of :attr:`jobs` or of :attr:`attempts`.
            The hidden job factors are looked up by ``job_id`` when the frame
            lacks them; a job unknown to the fleet gets its model type's
            nominal figures.
        hardware_types : sequence of str
            Hardware types of the catalog to evaluate each row on.
        at : Timestamp or array-like, optional
            When (which software releases apply, which types exist). Default:
            each row's ``submit_time`` if the frame has one, else the end of
            the simulated period.

        Returns
        -------
        DataFrame
            One row per (input row, hardware type), input rows outer:
            ``job_id`` (when given), ``hardware_type``,
            ``expected_throughput`` (NaN where infeasible) and ``feasible``
            (the family's software runs on the type, the precision has a
            peak there, the memory fits and the type has been introduced).

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=2, seed=0)
        >>> ok = fleet.attempts[fleet.attempts["status"] == "ok"].head(1)
        >>> truth = fleet.expected_throughput(ok, [ok["hardware_type"].iloc[0]])
        >>> bool(truth["expected_throughput"].iloc[0] == ok["expected_throughput"].iloc[0])
        True
        """
        hardware_types = [str(h) for h in hardware_types]
        names = self.hardware["hardware_type"].astype(str).tolist()
        unknown = sorted(set(hardware_types) - set(names))
        if unknown:
            raise ValueError(f"hardware types not in the catalog: {unknown}")
        missing = [c for c in LAUNCH_COLUMNS if c not in jobs.columns and c != "model_family"]
        if missing:
            raise ValueError(f"jobs lacks launch column(s) {missing}")
        frame = jobs.reset_index(drop=True)
        n = len(frame)
        hidden = {"_variant": 1.0, "_memory_factor": 1.0}
        values = {}
        for col, default in hidden.items():
            if col in frame.columns:
                values[col] = frame[col].to_numpy(float)
            elif "job_id" in frame.columns:
                lookup = pd.Series(self.jobs[col].to_numpy(float), index=self.jobs["job_id"].to_numpy())
                values[col] = frame["job_id"].map(lookup).fillna(default).to_numpy(float)
            else:
                values[col] = np.full(n, default)
        if at is None:
            times = frame["submit_time"].to_numpy("datetime64[ns]") if "submit_time" in frame else np.full(n, self.end.to_datetime64())
        else:
            times = np.broadcast_to(pd.to_datetime(np.asarray(at)).to_numpy("datetime64[ns]") if np.ndim(at) else np.datetime64(pd.Timestamp(at), "ns"), (n,))
        hw_code = np.array([names.index(h) for h in hardware_types], dtype=np.int64)
        k = len(hw_code)
        rows = np.repeat(np.arange(n), k)
        hws = np.tile(hw_code, n)
        model_code, launch = launch_arrays(self.models, frame)
        launch = {name: array[rows] for name, array in launch.items()}
        launch["variant"] = values["_variant"][rows]
        launch["memory_factor"] = values["_memory_factor"][rows]
        ctx = physics_arrays(self.models, self.hardware, self.interactions, self.releases)
        thr, feasible = expected_pairs(ctx, model_code[rows], hws, launch, times[rows])
        result = {}
        if "job_id" in frame.columns:
            result["job_id"] = frame["job_id"].to_numpy()[rows]
        result["hardware_type"] = pd.Categorical.from_codes(hws, categories=self.hardware["hardware_type"].astype(str).tolist())
        result["expected_throughput"] = np.where(feasible, thr, np.nan)
        result["feasible"] = feasible
        return pd.DataFrame(result)

    def expected_at_submission(self, attempts: pd.DataFrame, *, max_runs: int = 8) -> np.ndarray:
        """Expected throughput of each attempt as a perfect submission-time predictor knows it.

        The job's hidden factor (``_variant``) is replaced by its best estimate
        from the job's runs whose outcome was known before the attempt's
        submission (the prior, a factor of 1, for a job with none):
        :func:`leapml.fleet.truth.expected_at_submission`.

        Parameters
        ----------
        attempts : DataFrame
            Rows of :attr:`attempts` (``job_id``, ``submit_time``, the launch
            columns, ``hardware_type``).
        max_runs : int, default=8
            The job's latest completed runs read.

        Returns
        -------
        ndarray
            One expected throughput per row.

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> ok = fleet.attempts[fleet.attempts["status"] == "ok"]
        >>> estimate = fleet.expected_at_submission(ok)
        >>> bool(((estimate > 0) & np.isfinite(estimate)).all())
        True
        """
        from .truth import expected_at_submission

        return expected_at_submission(self, attempts, max_runs=max_runs)

    def fit_probability_at_submission(self, jobs: pd.DataFrame, hardware_types, *,
                                      draws: int = 64, random_state: int = 0) -> pd.DataFrame:
        """Probability that each job fits on each type when its hidden factors are unknown.

        The best a scheduler can know of where a job that never ran fits:
        :func:`leapml.fleet.truth.fit_probability_at_submission`, with the
        same ``jobs`` and ``hardware_types`` as :meth:`expected_throughput`.

        Examples
        --------
        >>> from leapml.fleet import simulate
        >>> fleet = simulate("tiny", days=3, seed=0)
        >>> p = fleet.fit_probability_at_submission(fleet.jobs.head(2), ["T4-16GB", "H100-80GB-SXM5"])
        >>> list(p.columns)
        ['job_id', 'hardware_type', 'fit_probability']
        """
        from .truth import fit_probability_at_submission

        return fit_probability_at_submission(self, jobs, hardware_types, draws=draws,
                                             random_state=random_state)


def load_fleet(directory: str | os.PathLike) -> Fleet:
    """Read a fleet written by :meth:`Fleet.save`.

    Raises
    ------
    FileNotFoundError
        If ``directory`` is not a folder or a table of the fleet is missing.
    ValueError
        If a table is not readable Parquet or ``params.json`` is not JSON
        (the file is named).
    SchemaError
        If ``attempts.parquet`` or ``hardware.parquet`` does not follow the
        schema (not a fleet written by :meth:`Fleet.save`; the file is named).

    Examples
    --------
    >>> import tempfile
    >>> from leapml.fleet import simulate
    >>> path = simulate("tiny", days=2, seed=3).save(tempfile.mkdtemp())
    >>> load_fleet(path).params["seed"]
    3
    """
    directory = Path(directory)
    if not directory.is_dir():
        why = "a file, not a folder" if directory.exists() else "no such directory"
        raise FileNotFoundError(f"{directory} is not a fleet folder ({why})")
    tables = {name: read_table(directory / f"{name}.parquet") for name in _TABLE_FILES}
    # a foreign or hand-edited table is named here, not deep inside a later call
    for name, required in _REQUIRED_COLUMNS.items():
        missing = [c for c in required if c not in tables[name].columns]
        if missing:
            raise SchemaError(str(directory / f"{name}.parquet"), [f"missing column(s): {missing}"])
    try:
        validate_hardware(tables["hardware"])
    except SchemaError as err:
        raise SchemaError(str(directory / "hardware.parquet"), err.problems) from None
    try:
        validate_attempts(tables["attempts"], tables["hardware"])
    except SchemaError as err:
        raise SchemaError(str(directory / "attempts.parquet"), err.problems) from None
    params_path = directory / "params.json"
    try:
        params = json.loads(params_path.read_text()) if params_path.exists() else {}
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"{params_path} is not readable JSON: {err}") from None
    return Fleet(**tables, params=params)
