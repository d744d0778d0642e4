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
