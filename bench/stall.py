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
figures are the proxy's own work.

Then the hostile peer is upstream: `harness proxy` (and `harness proxy --strict`) in
front of a scripted upstream (`--upstream`, a process of its own) that answers one
request with one huge event, each time another client streams small answers through
the same proxy: one event-stream frame of `--frame-mb` MB (a Bedrock `chunk` whose
base64 `bytes` is an event padded with `{}`s, and a ConverseStream delta padded the
same way: past the 8 MiB an event may hold, within botocore's 24 MiB), one SSE
event of `{}`s of `--event-mb` MB, within the 8 MiB line limit, and two Gemini streamed
JSON arrays (`streamGenerateContent` without `alt=sse`) of one element of
`--element-mb` MB: a chunk padded with `{}`s, and a chunk of one long text (past the
8 MiB an element may hold, within the 16 MiB the array reader held before). Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from bench.measure import harness_argv
from bench.serve_load import LIBRARY, serving

#: The small request another client keeps sending meanwhile.
PROBE: Final = b'{"model": "m", "max_tokens": 9, "messages": [], "stream": true}'
#: Small requests timed with nothing else in flight, for their median.
QUIET_PROBES: Final = 30
MB: Final = 1024 * 1024
#: The header naming the hostile answer the scripted upstream sends (`HOSTILE`).
HOSTILE_HEADER: Final = "x-bench-hostile"
#: Gemini's stream, answered as a streamed JSON array (no `alt=sse`), and a request for it.
GEMINI: Final = "/v1beta/models/gemini-bench:streamGenerateContent"
GEMINI_REQUEST: Final = b'{"contents": [{"role": "user", "parts": [{"text": "Go"}]}]}'


@dataclass(frozen=True, slots=True)
class Hostile:
    """One hostile answer of the scripted upstream, and the request the proxy gets it for."""

    name: str
    what: str
    path: str
    request: bytes


#: The huge events an upstream sends, each to the call of its framing.
HOSTILE: Final = (
    Hostile(
        "chunk",
        "Bedrock chunk frame",
        "/model/anthropic.claude-bench/invoke-with-response-stream",
        b'{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": []}',
    ),
    Hostile(
        "converse", "ConverseStream frame", "/model/bench/converse-stream", b'{"messages": []}'
    ),
    Hostile("sse", "SSE event", "/v1/messages", PROBE),
    Hostile("array", "Gemini array element of {}s", GEMINI, GEMINI_REQUEST),
    Hostile("array-text", "Gemini array element of text", GEMINI, GEMINI_REQUEST),
)


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


def _post(
    url: str,
    body: bytes,
    content_type: str,
    timeout: float,
    path: str = "/v1/messages",
    hostile: str = "",
) -> str:
    """One request on a connection of its own, its answer read whole: its status line
    (`hostile`: the answer the scripted upstream sends, `HOSTILE_HEADER`)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    asked = f"{HOSTILE_HEADER}: {hostile}\r\n" if hostile else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
        f"content-type: {content_type}\r\nx-api-key: bench\r\n{asked}"
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


def measure(
    label: str,
    url: str,
    pid: int,
    body: bytes,
    content_type: str,
    path: str = "/v1/messages",
    hostile: str = "",
) -> Stall:
    """The small requests' times before and while `body` is sent to `url` by another client
    (at `path`, asking the scripted upstream for its `hostile` answer)."""
    stall = Stall(label, statistics.median(_probe(url) for _ in range(QUIET_PROBES)))
    done = threading.Event()

    def hostile_call() -> None:
        start = time.perf_counter()
        try:
            stall.hostile_status = _post(url, body, content_type, 600, path, hostile)
        except OSError as error:
            stall.hostile_status = f"({type(error).__name__})"
        stall.hostile_seconds = time.perf_counter() - start
        done.set()

    thread = threading.Thread(target=hostile_call, daemon=True)
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


def _padded(event: dict[str, Any], size: int) -> dict[str, Any]:
    """`event` with a `pad` list of as many `{}` as make its JSON about `size` bytes."""
    return {**event, "pad": [{}] * max(0, (size - len(orjson.dumps(event)) - 12) // 3)}


def hostile_answers(
    frame_mb: float, event_mb: float, element_mb: float
) -> dict[str, tuple[str, bytes]]:
    """Each hostile answer's content type and body, by its name (`HOSTILE`)."""
    from harness._hosts import bedrock
    from harness._json import MAX_LINE_BYTES
    from harness._providers import jsonarray
    from harness._providers.anthropic.framing import encode_event as sse_event
    from harness._providers.bedrock_converse import framing as converse

    frame = int(frame_mb * MB)
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    chunk = bedrock.encode_event(_padded(delta, frame * 3 // 4 - 200))  # base64: 4/3
    text = {"contentBlockIndex": 0, "delta": {"text": "x"}}
    converse_frame = converse.encode_event({"contentBlockDelta": _padded(text, frame - 200)})
    within = min(int(event_mb * MB), MAX_LINE_BYTES) - 40  # its framing within the limit
    sse = sse_event(_padded({"type": "ping"}, within))
    element = int(element_mb * MB)
    part = {"candidates": [{"content": {"parts": [{"text": "x"}], "role": "model"}, "index": 0}]}
    crowded = orjson.dumps(_padded(part, element))
    long = orjson.dumps({**part, "pad": "x" * max(0, element - len(orjson.dumps(part)) - 10)})
    return {
        "chunk": (bedrock.CONTENT_TYPE, chunk),
        "converse": (converse.CONTENT_TYPE, converse_frame),
        "sse": ("text/event-stream", sse),
        **{
            name: (jsonarray.CONTENT_TYPE, jsonarray.OPENING + body + jsonarray.CLOSING)
            for name, body in (("array", crowded), ("array-text", long))
        },
    }


async def _serve_upstream(frame_mb: float, event_mb: float, element_mb: float) -> None:
    """The scripted upstream: a request naming a hostile answer gets it, any other the
    `text_only` cassette's stream; announces its URL as `harness serve` does."""
    from aiohttp import web

    from harness._cassette.codec import Cassette
    from harness._providers.anthropic.framing import encode_event as sse_event

    answers = hostile_answers(frame_mb, event_mb, element_mb)
    small = b"".join(sse_event(event) for event in Cassette(LIBRARY / "text_only.jsonl").events())

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        found = answers.get(request.headers.get(HOSTILE_HEADER, ""))
        if found is None:
            return web.Response(body=small, content_type="text/event-stream")
        return web.Response(body=found[1], headers={"content-type": found[0]})

    app = web.Application(client_max_size=64 * MB)
    app.router.add_post("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"ANTHROPIC_BASE_URL=http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()


def _upstream_stalls(frame_mb: float, event_mb: float, element_mb: float) -> list[Stall]:
    """Each hostile answer relayed by the proxy (and by the proxy under `--strict`), a
    proxy of its own for each: its peak memory is that answer's."""
    argv = [sys.executable, "-m", "bench.stall", "--upstream"]
    argv += ["--frame-mb", str(frame_mb), "--event-mb", str(event_mb)]
    argv += ["--element-mb", str(element_mb)]
    answers = hostile_answers(frame_mb, event_mb, element_mb)
    sizes = {name: len(body) for name, (_, body) in answers.items()}
    stalls = []
    with serving(argv) as (upstream_url, _):
        for strict in ([], ["--strict"]):
            for hostile in HOSTILE:
                proxy = [*harness_argv(), "proxy", "--upstream", upstream_url, *strict]
                with (
                    tempfile.TemporaryDirectory() as out,
                    serving([*proxy, "--out", out]) as (url, pid),
                ):
                    what = f"a {sizes[hostile.name] / 1e6:.1f} MB {hostile.what} from upstream"
                    label = f"proxy {' '.join(strict)}".strip() + f", {what}"
                    stalls.append(
                        measure(
                            label,
                            url,
                            pid,
                            hostile.request,
                            "application/json",
                            hostile.path,
                            hostile.name,
                        )
                    )
    return stalls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stall", description=__doc__)
    parser.add_argument(
        "--mb", default="32,1.5", help="sizes of the hostile bodies in MB, comma-separated"
    )
    parser.add_argument(
        "--frame-mb", type=float, default=17.0, help="size of upstream's hostile frames in MB"
    )
    parser.add_argument(
        "--event-mb",
        type=float,
        default=8.0,
        help="size of upstream's hostile SSE event in MB (kept within the 8 MiB line limit)",
    )
    parser.add_argument(
        "--element-mb",
        type=float,
        default=15.0,
        help="size of the one element of upstream's hostile Gemini arrays in MB",
    )
    parser.add_argument("--upstream", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.upstream:
        asyncio.run(_serve_upstream(options.frame_mb, options.event_mb, options.element_mb))
        return 0
    sizes = [float(size) for size in options.mb.split(",") if float(size) > 0]
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
    stalls += _upstream_stalls(options.frame_mb, options.event_mb, options.element_mb)
    report(stalls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
