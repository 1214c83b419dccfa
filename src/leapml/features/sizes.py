"""The model sizes a log knows, for submissions that do not state them.

``param_count``, ``flops_per_sample`` and ``embedding_gb`` are optional
columns of a log, but a model fitted on a log that has them leans on the
features made of them: rows without them are far from anything it learned
(a submission of a job the log knows, its sizes left out, was predicted
400 times too slow). :class:`ModelSizes` reads the sizes the log records
for each job and each model type, so that a submission missing them gets
its own job's (the same model, exactly), else its model type's median, and
a warning says so. A job is its id and its model type: an id given again
for another model reads that model's median, not the first model's sizes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from leapml.schema.columns import MODEL_SIZE_COLUMNS
from leapml.schema.rules import floats, text_values

__all__ = ["ModelSizes", "lacking_sizes"]


def lacking_sizes(jobs: pd.DataFrame, columns) -> list[str]:
    """The model-size columns among ``columns`` that ``jobs`` lacks, or holds a null in."""
    return [c for c in MODEL_SIZE_COLUMNS
            if c in columns and (c not in jobs.columns or jobs[c].isna().any())]


class ModelSizes:
    """The model sizes of a log, by job (id and model type) and by model type (empty if none).

    Examples
    --------
    >>> log = pd.DataFrame({"job_id": [1, 1, 2], "model_type": ["gpt", "gpt", "gpt"],
    ...                     "param_count": [7e9, 7e9, 13e9]})
    >>> jobs = pd.DataFrame({"job_id": [1, 3], "model_type": ["gpt", "gpt"]})
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ModelSizes.of(log).fill(jobs)["param_count"].tolist()
    [7000000000.0, 10000000000.0]
    """

    def __init__(self, by_job: pd.DataFrame | None, by_model: pd.DataFrame | None):
        self.by_job, self.by_model = by_job, by_model

    @classmethod
    def of(cls, log: pd.DataFrame) -> ModelSizes:
        """The sizes ``log`` records: each job's latest, each model type's median over its jobs.

        Sizes are launch facts, not outcomes: every row of the log is read,
        whatever its status or time.
        """
        columns = [c for c in MODEL_SIZE_COLUMNS if c in log.columns]
        if not columns or "job_id" not in log.columns or "model_type" not in log.columns:
            return cls(None, None)
        frame = pd.DataFrame({c: floats(log[c]) for c in columns})
        frame["job_id"] = text_values(log["job_id"])
        frame["model_type"] = text_values(log["model_type"])
        frame = frame.dropna(how="all", subset=columns)
        if not len(frame):
            return cls(None, None)
        by_job = frame.groupby(["job_id", "model_type"], sort=False)[columns].last()
        # a model type's median over its jobs, each counted once however often it ran
        return cls(by_job, by_job.groupby(level="model_type")[columns].median())

    def updated(self, new: pd.DataFrame) -> ModelSizes:
        """These sizes with those of ``new`` attempts: ``ModelSizes.of`` of both logs together."""
        more = ModelSizes.of(new)
        if more.by_job is None:
            return self
        if self.by_job is None:
            return more
        by_job = pd.concat([self.by_job, more.by_job])
        by_job = by_job.groupby(level=["job_id", "model_type"], sort=False).last()
        # the medians over every job, as a fresh read of both logs gives them
        return ModelSizes(by_job, by_job.groupby(level="model_type").median())

    def fill(self, jobs: pd.DataFrame) -> pd.DataFrame:
        """``jobs`` with each size it lacks (a column absent, or a null) read from the log: its
        own job's, else its model type's median; a warning counts what was read."""
        if self.by_job is None or not isinstance(jobs, pd.DataFrame) or not len(jobs):
            return jobs
        lacking = lacking_sizes(jobs, self.by_job.columns)
        if not lacking or "job_id" not in jobs.columns or "model_type" not in jobs.columns:
            return jobs
        jobs = jobs.copy()
        ids, models = text_values(jobs["job_id"]), text_values(jobs["model_type"])
        jobs_of = pd.MultiIndex.from_arrays([ids, models], names=["job_id", "model_type"])
        read = {}
        for column in lacking:
            given = floats(jobs[column]) if column in jobs.columns else np.full(len(jobs), np.nan)
            own = self.by_job[column].reindex(jobs_of).to_numpy(dtype=float)
            kind = pd.Series(models).map(self.by_model[column]).to_numpy(dtype=float)
            value = np.where(np.isnan(given), np.where(np.isnan(own), kind, own), given)
            read[column] = int((np.isnan(given) & ~np.isnan(value)).sum())
            jobs[column] = value
        if any(read.values()):
            warnings.warn(f"the jobs lack model sizes the log holds; read from the same job's runs, "
                          f"else its model type's median: {read} row(s) (a model fitted on sizes "
                          "predicts far off without them)", UserWarning, stacklevel=3)
        return jobs

