"""Reading and writing: attempt logs and catalogs as Parquet, models as safe files.

Every write is atomic: the bytes go to a temporary file beside the target,
which is then renamed over it, so an interrupted run leaves the previous file
intact and never a half-written one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

__all__ = ["atomic_path", "read_table", "write_table"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    If the body raises (or the process is interrupted), the temporary file is
    removed and ``path`` keeps its previous content.

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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix + ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a DataFrame to ``path`` atomically, as Parquet or CSV by extension.

    Parquet (``.parquet``) keeps categories, timestamps and nullable integers
    across a round trip; CSV (``.csv``) is for people and spreadsheets.

    Returns
    -------
    Path
        The path written.
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

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file cannot be parsed as the format its extension names.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    fmt = _format_of(path)
    try:
        if fmt == "parquet":
            return pd.read_parquet(path, engine="pyarrow")
        return pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"{path} is not a readable {fmt} file: {err}") from err


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise ValueError(f"{path}: unknown table format {suffix!r}; use .parquet or .csv")
