"""What keeps a server of ours bounded, whatever its peers do: its log, its descriptors,
the requests it reads and the work they cost.

`LineLog` is the request log that never holds up the event loop: lines wait for a slow
reader in a bounded backlog (`LOG_BACKLOG`), and beyond it are dropped and counted.
Under a burst of connections: at start the soft limit of open descriptors
(`RLIMIT_NOFILE`) is raised as far as the hard limit allows, up to `DESCRIPTORS`
(`raise_descriptor_limit`); past it, asyncio's failure to accept is told in one log
line (`LoopErrors`), at most once every `LOOP_ERROR_EVERY` seconds with a count of those
not told, where asyncio would print a traceback for each, hundreds a second, writing to
standard error from the event loop itself (a full pipe there stopped the server for
good). The connections waiting are accepted once others close, and the server goes on.

A request's head must arrive within `HEAD_TIMEOUT` seconds of its connection opening (or
of the answer before it ending), else the connection is closed: aiohttp's own
`keepalive_timeout`, which closes a connection idle that long too (`hosting._start`). Its
body is read by `request_body`: a `Content-Length` past the app's `client_max_size` is
refused at once with the 413; the body waits its turn while `BODIES_AT_ONCE` bytes of
bodies are held (`BodyBudget`), and must have arrived within `BODY_TIMEOUT` seconds of the
head, wait included, else the 408, the connection closed. The heavy part of a request
(parsing a large body, redacting it, reading a large answer into a cassette's lines) is
done `off_loop`, by one of `WORKERS` threads, so that the event loop goes on answering
every other client meanwhile.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import errno
import io
import os
import queue
import resource
import select
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Final, TypeVar

from aiohttp import web

from harness._terminal import printable

__all__ = [
    "BODIES_AT_ONCE",
    "BODY_TIMEOUT",
    "DESCRIPTORS",
    "HEAD_TIMEOUT",
    "INLINE_BYTES",
    "LOG_BACKLOG",
    "LOG_DRAIN_SECONDS",
    "LOOP_ERROR_EVERY",
    "WORKERS",
    "BodyBudget",
    "LineLog",
    "LoopErrors",
    "off_loop",
    "raise_descriptor_limit",
    "request_body",
]

T = TypeVar("T")

#: Log lines waiting for a slow reader at most; beyond, lines are dropped and counted.
LOG_BACKLOG: Final = 10_000
#: How long a stopping server waits for its last log lines to be read.
LOG_DRAIN_SECONDS: Final = 1.0

#: The soft limit of open descriptors `serve` and `proxy` raise theirs to, at most (the
#: hard limit permitting): a connection is one, a proxied one two.
DESCRIPTORS: Final = 65536
#: Seconds between two log lines telling the same failure of the event loop.
LOOP_ERROR_EVERY: Final = 5.0

#: Seconds a request's head (request line and headers) may take to arrive, from its
#: connection's opening or the end of the answer before it; a connection idle that long
#: is closed too.
HEAD_TIMEOUT: Final = 60.0
#: Seconds a request's body may take to arrive once its head has, its wait for its turn
#: (`BODIES_AT_ONCE`) included: 32 MB at half a megabyte a second.
BODY_TIMEOUT: Final = 60.0
#: Bytes of request bodies a server reads and holds at once, at most (eight of 32 MB);
#: a body past them waits its turn.
BODIES_AT_ONCE: Final = 256 * 1024 * 1024
#: Threads doing requests' heavy work (`off_loop`): at most this many large bodies are
#: parsed, and held parsed, at once.
WORKERS: Final = 2
#: A body (or an answer) up to this many bytes is parsed on the event loop itself, in
#: less time than the hop to a worker thread and back costs.
INLINE_BYTES: Final = 64 * 1024


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


class BodyBudget:
    """The bytes of request bodies held at once, at most `total`: `holding(size)` waits,
    first come first served, until `size` more fit (a body larger than `total` waits
    until it is alone)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.held = 0
        self._waiting: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()

    @contextlib.asynccontextmanager
    async def holding(self, size: int) -> AsyncIterator[None]:
        size = min(size, self.total)
        if self._waiting or self.held + size > self.total:
            turn = asyncio.get_running_loop().create_future()
            entry = (size, turn)
            self._waiting.append(entry)
            try:
                await turn
            except BaseException:  # a timeout, a client gone: its turn is given on
                if turn.done() and not turn.cancelled():
                    self._give_back(size)  # its turn had come
                else:
                    with contextlib.suppress(ValueError):  # unless given on already
                        self._waiting.remove(entry)
                    self._give_turns()
                raise
        else:
            self.held += size
        try:
            yield
        finally:
            self._give_back(size)

    def _give_back(self, size: int) -> None:
        self.held -= size
        self._give_turns()

    def _give_turns(self) -> None:
        while self._waiting and self.held + self._waiting[0][0] <= self.total:
            size, turn = self._waiting.popleft()
            if not turn.done():  # a waiter gone meanwhile takes nothing
                self.held += size
                turn.set_result(None)


#: Each app's `BodyBudget` (`request_body`), set where the app is made (`harness_app`).
BUDGET: Final[web.AppKey[BodyBudget]] = web.AppKey("harness-body-budget")


@contextlib.asynccontextmanager
async def request_body(request: web.Request) -> AsyncIterator[bytes]:
    """The body of `request`, read within the bounds (module) and held, against its app's
    `BodyBudget`, until the block ends.

    A `Content-Length` past the app's `client_max_size` raises the 413 before any byte is
    read, a body growing past it the 413 as soon as it does; a body that has not arrived
    within `BODY_TIMEOUT` seconds (its wait for its turn included) the 408. A body counts
    as its `Content-Length`, one sent in chunks as the largest it may be.
    """
    limit = request.client_max_size
    declared = request.content_length
    if declared is not None and declared > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=declared)
    budget = request.app.get(BUDGET)
    size = declared if declared is not None else limit if request.body_exists else 0
    async with contextlib.AsyncExitStack() as held:
        try:
            async with asyncio.timeout(BODY_TIMEOUT):
                if budget is not None and size:
                    await held.enter_async_context(budget.holding(size))
                body = await _read(request, limit)
        except TimeoutError:
            said = f"the request body did not arrive within {BODY_TIMEOUT:g} s"
            raise web.HTTPRequestTimeout(text=f"harness: {said}") from None
        yield body


async def _read(request: web.Request, limit: int) -> bytes:
    """The body, kept by nobody else: not `request.read()`, whose copy would stay with the
    request as long as its answer lasts (unless a middleware has read it already)."""
    if not request.can_read_body:
        return await request.read()
    body = bytearray()
    while piece := await request.content.readany():
        body += piece
        if len(body) > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=len(body))
    return bytes(body)


_workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="harness-worker")


async def off_loop(function: Callable[..., T], *args: Any, size: int | None = None) -> T:
    """`function(*args)`, run by one of the `WORKERS` threads in the caller's context (its
    context variables with it) while the event loop answers other clients; on the event
    loop itself where the work is over `size` bytes up to `INLINE_BYTES`."""
    if size is not None and size <= INLINE_BYTES:
        return function(*args)
    run = contextvars.copy_context().run
    return await asyncio.get_running_loop().run_in_executor(_workers, run, function, *args)
