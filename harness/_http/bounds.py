"""What keeps a server of ours bounded, whatever its peers do: its log and its descriptors.

`LineLog` is the request log that never holds up the event loop: lines wait for a slow
reader in a bounded backlog (`LOG_BACKLOG`), and beyond it are dropped and counted.
Under a burst of connections: at start the soft limit of open descriptors
(`RLIMIT_NOFILE`) is raised as far as the hard limit allows, up to `DESCRIPTORS`
(`raise_descriptor_limit`); past it, asyncio's failure to accept is told in one log
line (`LoopErrors`), at most once every `LOOP_ERROR_EVERY` seconds with a count of those
not told, where asyncio would print a traceback for each, hundreds a second, writing to
standard error from the event loop itself (a full pipe there stopped the server for
good). The connections waiting are accepted once others close, and the server goes on.
"""

from __future__ import annotations

import asyncio
import errno
import io
import os
import queue
import resource
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Final

from harness._terminal import printable

__all__ = [
    "DESCRIPTORS",
    "LOG_BACKLOG",
    "LOG_DRAIN_SECONDS",
    "LOOP_ERROR_EVERY",
    "LineLog",
    "LoopErrors",
    "raise_descriptor_limit",
]

#: Log lines waiting for a slow reader at most; beyond, lines are dropped and counted.
LOG_BACKLOG: Final = 10_000
#: How long a stopping server waits for its last log lines to be read.
LOG_DRAIN_SECONDS: Final = 1.0

#: The soft limit of open descriptors `serve` and `proxy` raise theirs to, at most (the
#: hard limit permitting): a connection is one, a proxied one two.
DESCRIPTORS: Final = 65536
#: Seconds between two log lines telling the same failure of the event loop.
LOOP_ERROR_EVERY: Final = 5.0


class LineLog:
    """A log of lines that never blocks its caller: `log(line)` queues and returns.

    A thread writes the lines in order. Nobody reading the stream (a pipe whose reader
    took the first line and stopped) blocks that thread only: the event loop goes on
    answering, at most `LOG_BACKLOG` lines wait, and the lines beyond are dropped and
    counted in one line once the reader is back. A reader gone for good (`| head -1`)
    ends the writing quietly. A stream with a file descriptor is written with
    `os.write`, so a writer blocked at exit holds no lock of `sys.stdout`. Each line is
    escaped by that thread (`harness._terminal.printable`): a request path holding an
    escape sequence or a newline reaches the terminal as `\\u001b`, in one line.
    """

    def __init__(self, stream: IO[str] | None = None, *, backlog: int = LOG_BACKLOG) -> None:
        self._stream = sys.stdout if stream is None else stream
        self._fd: int | None
        try:
            self._stream.flush()
            self._fd = self._stream.fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            self._fd = None  # an in-memory stream (click's test runner): never blocks
        self._backlog = backlog
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._dropped = 0
        self._dropped_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def __call__(self, line: str) -> None:
        if self._thread is None:
            with self._start_lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._write_all, name="harness-log", daemon=True
                    )
                    self._thread.start()
        if self._lines.qsize() >= self._backlog:
            with self._dropped_lock:
                self._dropped += 1
            return
        self._lines.put(line)

    def close(self, timeout: float = LOG_DRAIN_SECONDS) -> None:
        """Write what is queued, waiting `timeout` seconds at most for a slow reader."""
        if self._thread is not None:
            self._lines.put(None)
            self._thread.join(timeout)

    def _write_all(self) -> None:
        while True:
            batch = [self._lines.get()]
            while not self._lines.empty() and batch[-1] is not None:
                batch.append(self._lines.get_nowait())
            lines = [printable(line) for line in batch if line is not None]
            with self._dropped_lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                lines.append(f"({dropped} log lines dropped: standard output was not read)")
            try:
                self._write("".join(line + "\n" for line in lines))
            except (OSError, ValueError):  # the reader has gone: the lines after it go nowhere
                return
            if batch[-1] is None:
                return

    def _write(self, text: str) -> None:
        if self._fd is None:
            self._stream.write(text)
            self._stream.flush()
            return
        data = text.encode("utf-8", errors="replace")
        while data:
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:  # a non-blocking stdout: wait until it takes more
                select.select([], [self._fd], [])


def raise_descriptor_limit(target: int = DESCRIPTORS) -> int:
    """Raise the soft limit of open descriptors to `target`, or the hard limit if lower
    (never lowering it); return the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):  # a system cap below the hard limit: kept as it was
            pass
    return soft


class LoopErrors:
    """An event loop's exception handler telling each failure in one line on `log`
    (asyncio's default prints a traceback to standard error from the loop itself).

    The same failure again within `every` seconds is counted, not told, and the count is
    added to the next line telling it: asyncio reports a failed `accept` once for each
    connection waiting, each time it tries again.
    """

    def __init__(self, log: Callable[[str], None], *, every: float = LOOP_ERROR_EVERY) -> None:
        self._log = log
        self._every = every
        self._told: dict[str, float] = {}
        self._untold: dict[str, int] = {}

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message") or "an error in the event loop")
        error = context.get("exception")
        what = message
        if isinstance(error, BaseException):
            what = f"{message}: {type(error).__name__}"
            if isinstance(error, OSError) and error.errno == errno.EMFILE:
                limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                what += (
                    f" (all {limit} descriptors in use: new connections wait until others close)"
                )
        now = time.monotonic()
        if now - self._told.get(what, -self._every) < self._every:
            self._untold[what] = self._untold.get(what, 0) + 1
            return
        self._told[what] = now
        untold = self._untold.pop(what, 0)
        again = f" ({untold} more like it in the last {self._every:g} s)" if untold else ""
        self._log(f"harness: {what}{again}")


#: How a request line starts (the URL, as aiohttp's C parser quotes it, or the method).
