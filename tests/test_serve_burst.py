"""Issue 37: `harness serve` under a burst of connections past its descriptor limit.

`harness serve` runs in a process whose limit of open descriptors is lowered to 64
(`preexec_fn`), and 200 connections arrive at once, each sending the start of a request.
asyncio fails to accept past the limit; it must be told in one log line, never a
traceback on standard error (read only at the end here, as a terminal nobody scrolls:
the tracebacks filled the pipe and stopped the server for good), and once the burst's
clients leave the server answers again.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from conftest import LIBRARY
from test_serve_cli import BODY, HARNESS, _whole_stream

from harness._http.bounds import DESCRIPTORS

#: The descriptors `serve` may hold in the burst test, and the connections of the burst.
LIMIT = 64
BURST = 200
HEAD = (
    b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")


class Serve:
    """`harness serve` started with `limits` (soft, hard) on its open descriptors; its
    stdout read as it comes, its stderr left in the pipe until it stops."""

    def __init__(self, limits: Callable[[], tuple[int, int]]) -> None:
        def lower() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits())

        self.process = subprocess.Popen(
            [*HARNESS, "serve", str(LIBRARY)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lower,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, found: Callable[[str], bool], timeout: float = 30) -> str:
        """The first stdout line `found` accepts; fails (does not hang) if none comes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if found(line):
                    return line
            time.sleep(0.05)
        raise AssertionError(f"no such line in {self.lines[-5:]}")

    def base_url(self) -> str:
        first = self.wait_for(lambda line: line.startswith("ANTHROPIC_BASE_URL="))
        return first.split()[0].removeprefix("ANTHROPIC_BASE_URL=")

    def stop(self) -> str:
        """SIGTERM, then what it wrote on stderr."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        self._reader.join(timeout=5)
        return err


@pytest.fixture
def serve_at_64() -> Iterator[Serve]:
    served = Serve(lambda: (LIMIT, LIMIT))
    try:
        yield served
    finally:
        if served.process.poll() is None:
            served.process.kill()
            served.process.communicate()


def _burst(url: str) -> list[socket.socket]:
    """`BURST` connections at once, each sending the start of a request, left open."""
    host, port = url.removeprefix("http://").split(":")
    opened = []
    for _ in range(BURST):
        connection = socket.socket()
        connection.setblocking(False)
        with contextlib.suppress(BlockingIOError):  # connecting goes on
            connection.connect((host, int(port)))
        opened.append(connection)
    for connection in opened:
        with contextlib.suppress(OSError):  # not connected yet: the server's queue is full
            connection.send(HEAD)
    return opened


@pytest.mark.slow
def test_a_burst_past_the_descriptor_limit_is_one_line_and_the_server_answers_after(
    serve_at_64: Serve,
) -> None:
    url = serve_at_64.base_url()
    opened = _burst(url)
    told = serve_at_64.wait_for(lambda line: "socket.accept() out of system resource" in line)
    assert told.startswith("harness: ")
    assert f"all {LIMIT} descriptors in use: new connections wait until others close" in told
    for connection in opened:
        connection.close()
    headers = {"x-harness-cassette": "text_only", "x-api-key": "sk-test"}
    answer = httpx2.post(f"{url}/v1/messages", json=BODY, headers=headers, timeout=60)
    assert answer.status_code == 200
    assert answer.content == _whole_stream(LIBRARY / "text_only.jsonl")
    err = serve_at_64.stop()
    assert "Traceback" not in err
    assert err == "harness serve: stopped (SIGTERM)\n"
    accept_lines = [line for line in serve_at_64.lines if "socket.accept()" in line]
    assert 1 <= len(accept_lines) <= 5  # one a burst, and one every 5 s while it lasts


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc/PID/limits")
@pytest.mark.slow
def test_serve_raises_its_soft_descriptor_limit_as_far_as_the_hard_one_allows() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= LIMIT:
        pytest.skip(f"the hard limit is {hard}: nothing to raise")
    served = Serve(lambda: (LIMIT, hard))
    try:
        served.base_url()
        limits = Path(f"/proc/{served.process.pid}/limits").read_text()
        [row] = [line for line in limits.splitlines() if line.startswith("Max open files")]
        soft = int(row.split()[3])
        wanted = DESCRIPTORS if hard == resource.RLIM_INFINITY else min(DESCRIPTORS, hard)
        assert soft == wanted
    finally:
        assert served.stop() == "harness serve: stopped (SIGTERM)\n"
