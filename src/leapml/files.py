"""Files: atomic writes, and attempt logs and catalogs as Parquet or CSV tables.

Every write is atomic: the bytes go to a temporary file beside the target,
which is then renamed over it, so an interrupted run leaves the previous file
intact and never a half-written one.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

__all__ = ["atomic_path", "read_table", "refuse_repeated_header", "write_table"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    If the body raises (or the process is interrupted), the temporary file is
    removed and ``path`` keeps its previous content. The file gets the mode
    a plain ``open`` would give it (``0o666`` less the umask), so that other
    accounts read it as they would any other file of the writer's.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; name a file to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix + ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates the file 0o600, readable by its owner only
        if tmp_path.exists():
            os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a DataFrame to ``path`` atomically, as Parquet or CSV by extension.

    Parquet (``.parquet``) keeps categories, timestamps and nullable integers
    across a round trip; CSV (``.csv``) is for people and spreadsheets.

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> frame = pd.DataFrame({"hardware_type": pd.Categorical(["H100", "MI300X"])})
    >>> read_table(write_table(frame, path))["hardware_type"].dtype.name
    'category'
    """
    path = Path(path)
    fmt = _format_of(path)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, engine="pyarrow", index=False)
        else:
            frame.to_csv(tmp, index=False)
    return path


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a Parquet or CSV table written by :func:`write_table` or by a user.

    A CSV's id and category columns (``job_id``, ``attempt_id``,
    ``hardware_type``, ``precision``, ...) are read as text, so that an id
    such as ``00413`` keeps its zeros.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    IsADirectoryError
        If ``path`` is a directory.
    ValueError
        If the file cannot be parsed as the format its extension names.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("job_id,batch_size\\n7,32\\n")
    >>> read_table(path)["batch_size"].tolist()
    [32]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    fmt = _format_of(path)
    if path.is_dir():
        # pyarrow would read a folder as a dataset, even an empty or foreign one
        raise IsADirectoryError(f"{path} is a directory, not a {fmt} file")
    try:
        refuse_repeated_header(path)
        if fmt == "parquet":
            return pd.read_parquet(path, engine="pyarrow")
        # ids and categories stay text: job "00413" is not the number 413
        return pd.read_csv(path, dtype=dict.fromkeys(_text_columns(), str))
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"{path} is not a readable {fmt} file: {err}") from err


def refuse_repeated_header(path: str | os.PathLike, *, skip: int = 0) -> None:
    """Refuse a CSV or Parquet table whose header (the CSV's line after ``skip`` lines) names a
    column twice.

    pandas would read a CSV's second one as ``name.1`` and take the data
    from the first without a word.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("job_id,throughput,throughput\\n7,1.5,2.5\\n")
    >>> refuse_repeated_header(path)
    Traceback (most recent call last):
    ...
    ValueError: its header names 'throughput' in more than one column; keep one
    """
    if _format_of(Path(path)) == "parquet":
        import pyarrow.parquet as pq

        header = pq.read_schema(path).names
    else:
        with open(path, newline="", encoding="utf-8-sig") as file:
            header = next(itertools.islice(csv.reader(file), skip, None), [])
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        names = ", ".join(repr(name) for name in repeated)
        raise ValueError(f"its header names {names} in more than one column; keep one")


def _text_columns() -> list[str]:
    """The columns the schema holds as text (ids and categories), whatever they look like."""
    from leapml.schema import ATTEMPT_COLUMNS, HARDWARE_COLUMNS

    return sorted({c.name for c in (*ATTEMPT_COLUMNS, *HARDWARE_COLUMNS)
                   if c.kind in ("id", "category")})


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise ValueError(f"{path}: unknown table format {suffix!r}; use .parquet or .csv")
