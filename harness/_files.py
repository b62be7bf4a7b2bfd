"""Atomic file writes: the one way the harness replaces a file.

Data goes to a hidden temporary file in the target's folder, is flushed to disk, then
renamed over the target, so a failed or interrupted write leaves the old file as it was.
`AtomicBatch` does the same for many files at once (`harness import`): every temporary
file is written, then one sync puts them all on disk, then each is renamed over its
target and the folders are synced. A crash at any point leaves each target either as
it was or whole, as one `atomic_write` a file does, at the cost of one sync, not one a
file, and each folder is scanned for stale temporaries once, not at every file.

The temporary file is `.NAME.PID.RANDOM.tmp`. It is removed when the write fails, on
Ctrl-C (`KeyboardInterrupt`), and on SIGTERM or SIGHUP while their action is the
default one (the handler removes it, then the process dies of the signal as it would
have). A SIGKILL leaves it behind: the next write of the same file removes every
`.NAME.PID.*.tmp` whose process is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from types import FrameType
from typing import IO, Final

#: Signals whose default action kills the process, cleaned up after while writing.
_TERMINATING: Final = (signal.SIGTERM, signal.SIGHUP)
#: Temporary files this process is writing now.
_writing: set[str] = set()
_writing_lock = threading.Lock()


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


def _remove_and_die(signum: int, frame: FrameType | None) -> None:
    """SIGTERM/SIGHUP during a write: remove the temporary files, then die of the signal."""
    for temporary in list(_writing):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


#: The signals whose handler this module installed, while `_writing` is not empty.
_installed: list[signal.Signals] = []


def _track(temporary: str) -> None:
    """A terminating signal removes `temporary` before the exit, until `_untrack`."""
    with _writing_lock:
        _writing.add(temporary)
        if threading.current_thread() is threading.main_thread():
            for signum in _TERMINATING:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    signal.signal(signum, _remove_and_die)
                    _installed.append(signum)


def _untrack(temporary: str) -> None:
    with _writing_lock:
        _writing.discard(temporary)
        if _writing or threading.current_thread() is not threading.main_thread():
            return
        for installed_signal in _installed:
            if signal.getsignal(installed_signal) is _remove_and_die:
                signal.signal(installed_signal, signal.SIG_DFL)
        _installed.clear()


@contextlib.contextmanager
def _removed_on_termination(temporary: str) -> Iterator[None]:
    """While the block runs, a terminating signal removes `temporary` before the exit."""
    _track(temporary)
    try:
        yield
    finally:
        _untrack(temporary)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's
    return True


def _stale_pid(name: str) -> int | None:
    """The writer's pid of a temporary file's name (`.NAME.PID.RANDOM.tmp`), else None."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name[1 : -len(".tmp")].rsplit(".", 2)
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2]:
        return None
    return int(parts[1])


def _remove_stale(folder: str, prefix: str = ".") -> list[str]:
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            pid = _stale_pid(entry.name) if entry.name.startswith(prefix) else None
            if pid is not None and not _alive(pid):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


def remove_stale_temporaries(target: str) -> list[str]:
    """Remove the temporary files of `target` left by processes that no longer run."""
    folder = os.path.dirname(os.path.abspath(target))
    return _remove_stale(folder, f".{os.path.basename(target)}.")


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, overwrite: bool = True) -> Iterator[IO[bytes]]:
    """Open a binary handle whose content replaces `path` only when the block ends cleanly.

    With `overwrite=False` an existing `path` raises `FileExistsError`, checked before
    writing and again at the link, so a file that appeared meanwhile is not replaced.

    An existing `path` that is no regular file (a FIFO, a device: `/dev/stdout`, a shell's
    `>(...)`) is written into as it is, as any tool writes into one: replacing it would
    put a file where the device or the pipe was, and "whole or not at all" means nothing
    for a stream of bytes. A write it refuses (`/dev/full`) raises its `OSError`.
    """
    target = os.fspath(path)
    if not overwrite and os.path.exists(target):
        raise FileExistsError(target)
    if _special(target):
        with open(target, "wb") as handle:
            yield handle
        return
    remove_stale_temporaries(target)
    with _said_of(target):
        fd, temporary = _temporary(target)
    try:
        with _removed_on_termination(temporary):
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            with _said_of(target):
                if overwrite:
                    os.replace(temporary, target)
                else:
                    os.link(temporary, target)
                    os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _said_of(target: str) -> Iterator[None]:
    """An `OSError` of making the temporary file or putting it in place names `target`,
    the file the caller asked for, not the hidden temporary beside it."""
    try:
        yield
    except OSError as error:
        if error.filename is None:
            raise
        raise type(error)(error.errno, error.strerror, target) from None


def check_can_create(folder: str | os.PathLike[str]) -> None:
    """Raise the `OSError` that creating a file in `folder` would raise, so an output is
    known writable before the work that makes it. Nothing is left there, even if the
    process is then killed: the file has no name where the system allows it (Linux's
    `O_TMPFILE`), else it is removed as soon as it is made."""
    with tempfile.TemporaryFile(dir=folder):
        pass


def _special(target: str) -> bool:
    """Whether `target` exists as something that is neither a regular file nor a folder."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _temporary(target: str) -> tuple[int, str]:
    """A new temporary file beside `target`, with the mode `target` would get."""
    folder = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, _file_mode(target))
    except BaseException:
        os.close(fd)
        os.unlink(temporary)
        raise
    return fd, temporary


def _sync_all(paths: list[str]) -> None:
    """Put the files' data on disk: one `sync` on Linux (it returns once all is written),
    else each file's own `fsync`."""
    if sys.platform.startswith("linux"):
        os.sync()
        return
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sync_folder(folder: str) -> None:
    """Put a folder's entries (the renames into it) on disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class AtomicBatch:
    """Many files replaced together: each is written to its temporary file by `write`, and
    `commit` puts them all on disk with one sync, renames each over its target and syncs
    the folders. Until the commit no target changes; `abort` (or leaving the `with`
    block without a commit) removes the temporary files. Each folder is scanned for
    stale temporaries once, at its first file."""

    def __init__(self) -> None:
        #: (temporary, target, overwrite) of the files written and not yet committed
        self._pending: list[tuple[str, str, bool]] = []
        self._scanned: set[str] = set()

    def __len__(self) -> int:
        return len(self._pending)

    def __enter__(self) -> AtomicBatch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.abort()

    @contextlib.contextmanager
    def write(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> Iterator[IO[bytes]]:
        """A binary handle whose content replaces `path` at the commit. With
        `overwrite=False` an existing `path` raises `FileExistsError` now, and one that
        appears before the commit is left as it was (`commit` names it)."""
        target = os.fspath(path)
        if not overwrite and os.path.exists(target):
            raise FileExistsError(target)
        folder = os.path.dirname(os.path.abspath(target))
        if folder not in self._scanned:
            _remove_stale(folder)
            self._scanned.add(folder)
        fd, temporary = _temporary(target)
        _track(temporary)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            _untrack(temporary)
            raise
        self._pending.append((temporary, target, overwrite))

    def commit(self) -> list[str]:
        """Sync once, rename every file over its target, sync the folders; return the
        targets left as they were because they appeared meanwhile (`overwrite=False`)."""
        pending, self._pending = self._pending, []
        if not pending:
            return []
        kept: list[str] = []
        folders: set[str] = set()
        try:
            _sync_all([temporary for temporary, _, _ in pending])
            while pending:
                temporary, target, overwrite = pending[0]
                if overwrite:
                    os.replace(temporary, target)
                else:
                    try:
                        os.link(temporary, target)
                    except FileExistsError:
                        kept.append(target)
                    os.unlink(temporary)
                pending.pop(0)
                _untrack(temporary)
                folders.add(os.path.dirname(os.path.abspath(target)))
        finally:
            self._pending = pending  # what a failure left: `abort` removes it
        for folder in folders:
            _sync_folder(folder)
        return kept

    def abort(self) -> None:
        """Remove the temporary files not committed; no target changes."""
        pending, self._pending = self._pending, []
        for temporary, _, _ in pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            _untrack(temporary)
