"""Atomic file writes: the one way the harness replaces a file.

Data goes to a hidden temporary file in the target's folder, is flushed to disk, then
renamed over the target, so a failed or interrupted write leaves the old file as it was.

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


@contextlib.contextmanager
def _removed_on_termination(temporary: str) -> Iterator[None]:
    """While the block runs, a terminating signal removes `temporary` before the exit."""
    installed: list[signal.Signals] = []
    with _writing_lock:
        _writing.add(temporary)
        if threading.current_thread() is threading.main_thread():
            for signum in _TERMINATING:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    signal.signal(signum, _remove_and_die)
                    installed.append(signum)
    try:
        yield
    finally:
        with _writing_lock:
            _writing.discard(temporary)
            for installed_signal in installed:
                if not _writing and signal.getsignal(installed_signal) is _remove_and_die:
                    signal.signal(installed_signal, signal.SIG_DFL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's
    return True


def remove_stale_temporaries(target: str) -> list[str]:
    """Remove the temporary files of `target` left by processes that no longer run."""
    folder = os.path.dirname(os.path.abspath(target))
    prefix = f".{os.path.basename(target)}."
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
                continue
            pid, _, rest = entry.name[len(prefix) : -len(".tmp")].partition(".")
            if pid.isdigit() and rest and not _alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


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
    remove_stale_temporaries(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    try:
        with _removed_on_termination(temporary):
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
