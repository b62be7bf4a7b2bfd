"""Atomic file writes: the one way the harness replaces a file.

Data goes to a hidden temporary file in the target's folder, is flushed to disk, then
renamed over the target, so a failed or interrupted write leaves the old file as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO


def _file_mode(target: str) -> int:
    """The mode a plain `open(target, "w")` would give: the old file's, else 0o666 less umask.

    `mkstemp` creates 0o600 files; a cassette is data meant to be shared and committed.
    """
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, overwrite: bool = True) -> Iterator[IO[bytes]]:
    """Open a binary handle whose content replaces `path` only when the block ends cleanly.

    With `overwrite=False` an existing `path` raises `FileExistsError`, checked before
    writing and again at the link, so a file that appeared meanwhile is not replaced.
    """
    target = os.fspath(path)
    if not overwrite and os.path.exists(target):
        raise FileExistsError(target)
    folder = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, _file_mode(target))
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temporary, target)
        else:
            os.link(temporary, target)
            os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
