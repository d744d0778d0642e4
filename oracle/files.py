"""Directories made for files the oracle writes, with an error that says why not."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def make_directory(path: Path) -> None:
    """`mkdir -p path`. OSError when it cannot be made; a file in the way is reported as
    NotADirectoryError ("Not a directory"), as the system says of the paths below such a
    file, rather than mkdir's misleading "File exists"."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text`: a crash leaves the old file or the new one, never part
    of one, and the new one is on disk when this returns (written beside it, fsynced,
    renamed over it, then the directory, which holds the rename, fsynced)."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
