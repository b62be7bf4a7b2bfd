"""A command `harness conform` runs, read as a stream with caps and a deadline.

`BoundedProcess` starts a command in a process group of its own and exchanges bytes
with it through one `selectors` loop: what it is given is written as its standard
input takes it (a command that reads nothing never blocks us), and what it prints is
read as it comes, standard output split into lines, both pipes capped
(`MAX_OUTPUT_BYTES`, `MAX_OUTPUT_LINE_BYTES`, `MAX_STDERR_BYTES`). `exchange` ends at
the deadline whatever the command does: its group is killed, and pipes still held open
by a process that left the group are closed on our side, never waited on. The same loop
serves a case a process (read to the end of output) and the persistent mode (read up
to the case separator line, the process kept for the next case).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import orjson

from harness._cassette.codec import MAX_LINE_BYTES

__all__ = [
    "MAX_OUTPUT_BYTES",
    "MAX_OUTPUT_LINE_BYTES",
    "MAX_STDERR_BYTES",
    "TIMED_OUT",
    "BoundedProcess",
    "Exchange",
]

#: What a command may print on standard output for one case: 16 MiB.
MAX_OUTPUT_BYTES: Final = 16 * 2**20
#: The longest line of output read: the cassette line limit (an event is no longer).
MAX_OUTPUT_LINE_BYTES: Final = MAX_LINE_BYTES
#: What a command may write on standard error for one case: 1 MiB.
MAX_STDERR_BYTES: Final = 2**20
#: The failure of an exchange that reached its deadline (a reason may follow).
TIMED_OUT: Final = "timed out"
_CHUNK: Final = 65536
#: After the kill, the longest wait for the killed process to be reaped.
_REAP_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one case's exchange read: standard output's complete lines (the separator
    excluded), what standard error held, and why it ended: None when the output ended
    (or the separator came), else the failure in a few words (the process is then dead)."""

    lines: list[bytes]
    stderr: bytes
    failure: str | None
    #: the exit status when the process had ended, else None
    status: int | None
    #: whether the separator line ended the exchange (persistent mode)
    separated: bool = False


class BoundedProcess:
    """A command in its own process group, its three pipes driven by one selector loop."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else dict(env),
            start_new_session=True,
            bufsize=0,
        )
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._stdin = self.process.stdin.fileno()
        self._stdout = self.process.stdout.fileno()
        self._stderr = self.process.stderr.fileno()
        for fd in (self._stdin, self._stdout, self._stderr):
            os.set_blocking(fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self._selector.register(self._stderr, selectors.EVENT_READ)
        self._pending = bytearray()
        self._close_input = False
        self._input_open = True
        self._leftover = b""
        self._stderr_leftover = b""
        self._open = {self._stdout, self._stderr}
        self.dead = False

    def send(self, data: bytes, *, close: bool = False) -> None:
        """Queue bytes for standard input (written as the command reads), then perhaps EOF."""
        self._pending += data
        self._close_input = self._close_input or close
        if self._input_open and (self._pending or self._close_input):
            self._want_write()

    def _want_write(self) -> None:
        with contextlib.suppress(KeyError):
            self._selector.get_key(self._stdin)
            return
        self._selector.register(self._stdin, selectors.EVENT_WRITE)

    def _write(self) -> None:
        try:
            written = os.write(self._stdin, self._pending[:_CHUNK]) if self._pending else 0
        except BlockingIOError:
            return
        except (BrokenPipeError, OSError):  # the command closed its input: the rest is unread
            self._pending.clear()
            self._end_input()
            return
        del self._pending[:written]
        if not self._pending:
            if self._close_input:
                self._end_input()
            else:
                self._selector.unregister(self._stdin)

    def _end_input(self) -> None:
        with contextlib.suppress(KeyError):
            self._selector.unregister(self._stdin)
        if self._input_open:
            self._input_open = False
            assert self.process.stdin is not None
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def exchange(self, deadline: float, separator: bytes | None = None) -> Exchange:
        """Read until the output ends (both pipes at EOF), or, with `separator`, until the
        line whose JSON value is the separator's; a flood, an over-long line or the
        `deadline` (a `time.monotonic()` value) kills the process and ends it there."""
        output = _Output(separator, self._leftover)
        output.stderr += self._stderr_leftover
        self._leftover = self._stderr_leftover = b""
        while not output.separated and self._open:
            failure = output.failure()
            if failure is not None:
                return self._killed(output, failure)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._killed(output, self._why_timed_out())
            for key, _ in self._selector.select(remaining):
                if key.fd == self._stdin:
                    self._write()
                    continue
                try:
                    data = os.read(key.fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    self._selector.unregister(key.fd)
                    self._open.discard(key.fd)
                elif key.fd == self._stdout:
                    output.take(data)
                elif output.separated:  # the case is over: it belongs to the next one
                    self._stderr_leftover += data
                else:
                    output.stderr += data
        failure = output.failure()
        if failure is not None:
            return self._killed(output, failure)
        if output.separated:
            self._leftover = bytes(output.partial)
            return Exchange(output.lines, bytes(output.stderr), None, None, separated=True)
        output.end()
        status = self._reap(deadline)
        if status is None:
            return self._killed(output, self._why_timed_out())
        self._close()
        return Exchange(output.lines, bytes(output.stderr), None, status)

    def _reap(self, deadline: float) -> int | None:
        """The exit status, waited for until the deadline at most (None: still running)."""
        try:
            return self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None

    def _why_timed_out(self) -> str:
        if self.process.poll() is not None:
            return f"{TIMED_OUT}: the command exited, but a process it started kept its output open"
        return TIMED_OUT

    def _killed(self, output: _Output, failure: str) -> Exchange:
        status = self.process.poll()
        self.kill()
        output.end()
        return Exchange(output.lines, bytes(output.stderr), failure, status)

    def kill(self) -> None:
        """Kill the process group, close our ends of the pipes, reap the command."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=_REAP_S)

    def _close(self) -> None:
        """Close our ends of the three pipes (a process still holding them gets EPIPE)."""
        self._end_input()
        self._selector.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._open.clear()
        self.dead = True


class _Output:
    """Standard output split into lines as it comes (up to the separator line, if any),
    and standard error, with what each cap needs to know."""

    def __init__(self, separator: bytes | None, leftover: bytes) -> None:
        self.separator = separator
        self.lines: list[bytes] = []
        self.partial = bytearray()
        self.stderr = bytearray()
        self.total = 0
        self.separated = False
        self.long_line: int | None = None
        if leftover:
            self.take(leftover)

    def take(self, data: bytes) -> None:
        """Add bytes of standard output: complete lines are kept, the rest waits."""
        self.total += len(data)
        if b"\n" not in data or self.separated:
            self.partial += data
            if len(self.partial) > MAX_OUTPUT_LINE_BYTES and not self.separated:
                self.long_line = self.long_line or len(self.lines) + 1
            return
        buffer = bytes(self.partial) + data
        start = 0
        while not self.separated and (end := buffer.find(b"\n", start)) != -1:
            line = buffer[start:end]
            start = end + 1
            if self.separator is not None and _is_separator(line, self.separator):
                self.separated = True
                continue
            self.lines.append(line)
            if len(line) > MAX_OUTPUT_LINE_BYTES and self.long_line is None:
                self.long_line = len(self.lines)
        self.partial = bytearray(buffer[start:])
        if len(self.partial) > MAX_OUTPUT_LINE_BYTES and not self.separated:
            self.long_line = self.long_line or len(self.lines) + 1

    def end(self) -> None:
        """The output is over: a last line without its newline still counts."""
        if self.partial and not self.separated:
            self.lines.append(bytes(self.partial))
        self.partial = bytearray()

    def failure(self) -> str | None:
        """The cap the output went past, in a few words, or None."""
        if self.long_line is not None:
            return (
                f"line {self.long_line} of the output is longer than "
                f"{MAX_OUTPUT_LINE_BYTES} bytes, the limit"
            )
        if self.total > MAX_OUTPUT_BYTES:
            return f"the output went past {MAX_OUTPUT_BYTES} bytes, the limit"
        if len(self.stderr) > MAX_STDERR_BYTES:
            return f"standard error went past {MAX_STDERR_BYTES} bytes, the limit"
        return None


def _is_separator(line: bytes, separator: bytes) -> bool:
    """Whether a line is the separator, as a JSON value (spacing and key order aside)."""
    if b"harness" not in line:
        return False
    try:
        return bool(orjson.loads(line) == orjson.loads(separator))
    except orjson.JSONDecodeError:
        return False
