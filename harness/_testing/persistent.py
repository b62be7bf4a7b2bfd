"""`harness conform --persistent`: one process of the command handles case after case.

A Node or JVM adapter spends most of a case starting up; here it pays that once per job.
Each case written to the command ends in the separator line `{"harness": "case_end"}`
(in stdin mode after the case's raw events; with `--serve` alone, each separator asking
for one request), and the command ends its output for the case with the same line. A
case that ends without it (a timeout, a crash, a flood) costs the process: it is killed
and the next case gets a fresh one. The protocol, whole: docs/conform.md.
"""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

import orjson

from harness._testing.bounded import BoundedProcess, Exchange

__all__ = ["SEPARATOR", "SEPARATOR_LINE", "Worker", "Workers"]

#: The line that ends a case, on the command's standard input and on its output.
SEPARATOR: Final = {"harness": "case_end"}
SEPARATOR_LINE: Final = orjson.dumps(SEPARATOR) + b"\n"
#: How long a process is given to exit once its input is closed, after the last case.
_EXIT_S: Final = 2.0


class Worker:
    """One long-lived process of the command, started on first use and after a failure."""

    def __init__(
        self, command: Sequence[str], env: Mapping[str, str] | None = None, name: str = ""
    ) -> None:
        self.command = list(command)
        self.env = env
        #: the worker's own `HARNESS_CASSETTE` (`--serve`): the server points it at each case
        self.name = name
        self.process: BoundedProcess | None = None

    def exchange(self, payload: bytes, timeout: float) -> Exchange:
        """Send one case (its payload, then the separator) and read its output up to the
        separator; the process is dropped when the case did not end with one."""
        if self.process is None or self.process.dead:
            self.process = BoundedProcess(self.command, self.env)
        process = self.process
        process.send(payload + SEPARATOR_LINE)
        exchange = process.exchange(time.monotonic() + timeout, separator=SEPARATOR_LINE)
        if not exchange.separated:
            process.kill()
            self.process = None
        return exchange

    def close(self) -> None:
        """Close the command's input (no more cases), let it exit, kill what remains."""
        if self.process is None or self.process.dead:
            return
        self.process.send(b"", close=True)
        self.process.exchange(time.monotonic() + _EXIT_S)
        self.process.kill()


class Workers:
    """`jobs` workers, each lent to one case at a time (threads share the pool)."""

    def __init__(self, make: Callable[[int], Worker], jobs: int) -> None:
        self.all = [make(number) for number in range(1, jobs + 1)]
        self._free: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        for worker in self.all:
            self._free.put(worker)

    @contextlib.contextmanager
    def lend(self) -> Iterator[Worker]:
        """A free worker, for the length of a `with` block."""
        worker = self._free.get()
        try:
            yield worker
        finally:
            self._free.put(worker)

    def close(self) -> None:
        for worker in self.all:
            worker.close()
