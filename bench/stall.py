"""The event loop's worst stall while a hostile body is processed: `python -m bench.stall`
(run by `make bench`, after `bench.serve_load`).

Starts `harness serve cassettes/` and `harness proxy` in front of it, each in a process
of its own. For each hostile body, one client sends it while another sends one small
streamed request after another (the `text_only` cassette): the figures are the small
requests' times while the hostile one was in flight (the worst of them is the stall
another client saw) against their median with nothing else in flight, the hostile
request's own time and answer, and the server's peak memory (Linux). The bodies are JSON
objects of a list of `{}`, within the 32 MB cap: 32 MB (11 million objects) and 1.5 MB
(half a million, whose commas and brackets are just within the value limit,
`harness._json.MAX_VALUES`: parsed, checked and kept). The
proxy is sent them as `text/plain`, which serve refuses before reading them: its
figures are the proxy's own work. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from bench.measure import harness_argv
from bench.serve_load import LIBRARY, serving

#: The small request another client keeps sending meanwhile.
PROBE: Final = b'{"model": "m", "max_tokens": 9, "messages": [], "stream": true}'
#: Small requests timed with nothing else in flight, for their median.
QUIET_PROBES: Final = 30


@dataclass(slots=True)
class Stall:
    """What the other client saw while one hostile body was processed."""

    label: str
    quiet: float
    during: list[float] = field(default_factory=list)
    hostile_seconds: float = 0.0
    hostile_status: str = ""
    peak_mib: int | None = None


def hostile_body(megabytes: float) -> bytes:
    """A JSON object of `megabytes` MB: a list of as many `{}` as fit."""
    count = int(megabytes * 1024 * 1024 - 100) // 3
    return b'{"messages":[' + b"{}," * (count - 1) + b"{}]}"


def _post(url: str, body: bytes, content_type: str, timeout: float) -> str:
    """One request on a connection of its own, its answer read whole: its status line."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
        f"content-type: {content_type}\r\nx-api-key: bench\r\n"
        f"x-harness-cassette: text_only\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as connection:
        connection.sendall(head + body)
        answer = bytearray()
        while piece := connection.recv(65536):
            answer += piece
    return bytes(answer.partition(b"\r\n")[0]).decode("latin-1")


def _probe(url: str) -> float:
    start = time.perf_counter()
    _post(url, PROBE, "application/json", 600)
    return time.perf_counter() - start


def _peak_mib(pid: int) -> int | None:
    """The process's peak resident memory in MiB (`VmHWM`), where /proc tells it."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def measure(label: str, url: str, pid: int, body: bytes, content_type: str) -> Stall:
    """The small requests' times before and while `body` is sent to `url` by another client."""
    stall = Stall(label, statistics.median(_probe(url) for _ in range(QUIET_PROBES)))
    done = threading.Event()

    def hostile() -> None:
        start = time.perf_counter()
        try:
            stall.hostile_status = _post(url, body, content_type, 600)
        except OSError as error:
            stall.hostile_status = f"({type(error).__name__})"
        stall.hostile_seconds = time.perf_counter() - start
        done.set()

    thread = threading.Thread(target=hostile, daemon=True)
    thread.start()
    while not done.is_set():
        stall.during.append(_probe(url))
    thread.join()
    stall.peak_mib = _peak_mib(pid)
    return stall


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def report(stalls: Sequence[Stall]) -> None:
    print("the loop's worst stall for another client while a hostile body is processed")
    for stall in stalls:
        during = stall.during or [0.0]
        peak = "n/a" if stall.peak_mib is None else f"{stall.peak_mib} MiB"
        print(f"  {stall.label}")
        print(f"    hostile request: {stall.hostile_status}, {stall.hostile_seconds:.2f} s")
        print(f"    small requests meanwhile       {len(stall.during):9d}")
        print(f"    their median, nothing else     {_ms(stall.quiet)}")
        print(f"    their median meanwhile         {_ms(statistics.median(during))}")
        print(f"    the worst (the stall)          {_ms(max(during))}")
        print(f"    server's peak memory           {peak:>12}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stall", description=__doc__)
    parser.add_argument(
        "--mb", default="32,1.5", help="sizes of the hostile bodies in MB, comma-separated"
    )
    options = parser.parse_args(argv)
    sizes = [float(size) for size in options.mb.split(",")]
    stalls = []
    for megabytes in sizes:  # a server of its own for each: its peak memory is the body's
        body = hostile_body(megabytes)
        what = f"{len(body) / 1e6:.1f} MB, {body.count(b'{}') / 1e6:.2f} million objects"
        with serving([*harness_argv(), "serve", str(LIBRARY)]) as (serve_url, serve_pid):
            stalls.append(measure(f"serve, {what}", serve_url, serve_pid, body, "application/json"))
            with (
                tempfile.TemporaryDirectory() as out,
                serving([*harness_argv(), "proxy", "--upstream", serve_url, "--out", out]) as (
                    proxy_url,
                    proxy_pid,
                ),
            ):
                label = f"proxy, {what} (as text/plain: serve refuses it unread)"
                stalls.append(measure(label, proxy_url, proxy_pid, body, "text/plain"))
    report(stalls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
