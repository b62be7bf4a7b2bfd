"""Load on `harness serve`: `python -m bench.serve_load` (run by `make bench`).

Starts `harness serve cassettes/` and `harness proxy` in front of it, each in a process
of its own, then:
(a) 200 concurrent streaming clients (`AsyncAnthropic`, `create(stream=True)`, read by
    the harness's adapter), each asking for the library's cassettes in turn by the
    `x-harness-cassette` header: every outcome is compared with direct replay of the same
    cassette, every event the SDK yields is counted against the cassette's, and the
    figures are events/s over the run and p50/p99 time to first event;
(b) the proxy's added latency to first byte: the same requests, one at a time,
    alternately straight to serve and through the proxy, compared at p50 and p99.
Figures are printed, never asserted; the exit status is 1 if any outcome differed or
any event was lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench.measure import harness_argv

ROOT: Final = Path(__file__).resolve().parent.parent
LIBRARY: Final = ROOT / "cassettes"
REQUEST: Final[dict[str, Any]] = {
    "model": "claude-harness-test",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "load"}],
}


@contextlib.contextmanager
def serving(argv: Sequence[str]) -> Iterator[tuple[str, int]]:
    """A server in a process of its own that announces `ANTHROPIC_BASE_URL=...` first on
    its first line (each SDK's base URL): (its base URL, its pid). The rest of its stdout
    is drained."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    # Its line a request must be read, or a full pipe would block it.
    drain = threading.Thread(target=process.stdout.read, daemon=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)
        first = process.stdout.readline().split(" ")[0].strip() if ready else ""
        if not first.startswith("ANTHROPIC_BASE_URL="):
            raise SystemExit(f"{' '.join(argv)} did not start: {first!r}")
        drain.start()
        yield first.removeprefix("ANTHROPIC_BASE_URL="), process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)
        if drain.is_alive():
            drain.join(timeout=30)
        process.stdout.close()


@contextlib.contextmanager
def started(*args: str) -> Iterator[str]:
    """A `harness` command in a process of its own; its base URL (its first line)."""
    with serving([*harness_argv(), *args]) as (url, _):
        yield url


@dataclass(frozen=True, slots=True)
class Expected:
    """What direct replay of one cassette gives, and the events the SDK yields for it."""

    name: str
    outcome: list[dict[str, Any]]
    events: int
    raw: list[dict[str, Any]]


def expected(paths: Sequence[str]) -> list[Expected]:
    from harness._cassette.codec import Cassette
    from harness._replay.direct import replay_outcome

    found = []
    for path in paths:
        count = 0
        for event in Cassette(path).events():
            if event["type"] == "error":
                break  # the SDK raises here: nothing after it is read
            count += event["type"] != "ping"  # the SDK passes pings over
        name = str(Path(path).relative_to(LIBRARY))
        raw = list(Cassette(path).events())
        found.append(Expected(name, replay_outcome(path).to_json_lines(), count, raw))
    return found


@dataclass(slots=True)
class Load:
    """What the clients saw."""

    first_event: list[float] = field(default_factory=list)
    events: int = 0
    lost: int = 0
    differing: list[str] = field(default_factory=list)


async def _one(client: Any, case: Expected, load: Load) -> None:
    """One streamed request: the outcome through the adapter, then the rest drained."""
    from anthropic import APIStatusError

    from harness._providers.anthropic.adapter import ato_model_events
    from harness._replay.direct import Outcome, acollect

    seen = 0
    start = time.perf_counter()

    async def counted(stream: Any) -> Any:
        nonlocal seen
        async for event in stream:
            if not seen:
                load.first_event.append(time.perf_counter() - start)
            seen += 1
            yield event

    headers = {"x-harness-cassette": case.name}
    try:
        stream = await client.messages.create(**REQUEST, stream=True, extra_headers=headers)
    except APIStatusError as error:
        outcome = Outcome(error=error)
    else:
        async with stream:
            events = counted(stream)
            outcome = await acollect(ato_model_events(events))
            with contextlib.suppress(APIStatusError):
                async for _ in events:  # what the adapter stopped short of: still counted
                    pass
    load.events += seen
    load.lost += max(case.events - seen, 0)
    if outcome.to_json_lines() != case.outcome:
        load.differing.append(case.name)


async def run_load(url: str, cases: list[Expected], clients: int, rounds: int) -> Load:
    """`clients` concurrent streams at all times, each `rounds` requests in a row."""
    import httpx2
    from anthropic import AsyncAnthropic

    load = Load()
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    http = httpx2.AsyncClient(limits=limits, timeout=120)
    async with AsyncAnthropic(
        base_url=url, api_key="load-test", max_retries=0, http_client=http
    ) as client:

        async def worker(number: int) -> None:
            for turn in range(rounds):
                await _one(client, cases[(number + turn) % len(cases)], load)

        await asyncio.gather(*(worker(number) for number in range(clients)))
    return load


async def run_raw_load(url: str, cases: list[Expected], clients: int, rounds: int) -> Load:
    """The same load from bare HTTP clients (aiohttp, SSE decoded): the server's own pace,
    without the SDK's per-request cost in the clients' process. Every event is compared."""
    import aiohttp

    from harness._providers.sse import StreamingDecoder

    load = Load()
    body = {**REQUEST, "stream": True}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker(number: int) -> None:
            for turn in range(rounds):
                case = cases[(number + turn) % len(cases)]
                headers = {"x-harness-cassette": case.name}
                start = time.perf_counter()
                received: list[dict[str, Any]] = []
                async with session.post(f"{url}/v1/messages", json=body, headers=headers) as r:
                    decoder = StreamingDecoder()
                    async for piece in r.content.iter_any():
                        events = decoder.feed(piece)
                        if events and not received:
                            load.first_event.append(time.perf_counter() - start)
                        received += events
                load.events += len(received)
                load.lost += max(len(case.raw) - len(received), 0)
                if received != case.raw:
                    load.differing.append(case.name)

        await asyncio.gather(*(worker(number) for number in range(clients)))
    return load


def first_byte_times(url: str, names: list[str], samples: int) -> list[float]:
    """Seconds to the first body byte of `samples` streamed requests, one at a time."""
    import httpx2

    times = []
    body = {**REQUEST, "stream": True}
    with httpx2.Client(timeout=60) as client:
        for number in range(samples):
            headers = {"x-harness-cassette": names[number % len(names)], "x-api-key": "load"}
            start = time.perf_counter()
            with client.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as r:
                pieces = r.iter_raw()
                next(pieces)
                times.append(time.perf_counter() - start)
                for _ in pieces:
                    pass
    return times


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.2f} ms"


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) > 1 else values[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve_load", description=__doc__)
    parser.add_argument("--clients", type=int, default=200, help="concurrent streams (200)")
    parser.add_argument("--rounds", type=int, default=5, help="requests a client (5)")
    parser.add_argument("--samples", type=int, default=200, help="first-byte samples (200)")
    options = parser.parse_args(argv)

    from harness._cassette.codec import expand_paths, of_provider

    cases = expected(of_provider(expand_paths([str(LIBRARY)]))[0])  # what serve answers from
    names = [case.name for case in cases if case.events]
    streams = options.clients * options.rounds
    loads = {}
    with started("serve", str(LIBRARY)) as serve_url:
        for label, run in (("AsyncAnthropic + adapter", run_load), ("bare aiohttp", run_raw_load)):
            start = time.perf_counter()
            load = asyncio.run(run(serve_url, cases, options.clients, options.rounds))
            loads[label] = (load, time.perf_counter() - start)
        with (
            tempfile.TemporaryDirectory() as out,
            started("proxy", "--upstream", serve_url, "--out", out) as proxy_url,
        ):
            direct: list[float] = []
            proxied: list[float] = []
            for _ in range(2):  # interleaved, so that drift hits both alike
                direct += first_byte_times(serve_url, names, options.samples // 2)
                proxied += first_byte_times(proxy_url, names, options.samples // 2)

    failed = False
    print(f"harness serve, {options.clients} concurrent streaming clients, {streams} streams")
    print(f"of the {len(cases)} library cassettes, clients in one process (load below)")
    for label, (load, wall) in loads.items():
        same = "outcomes" if label.startswith("Async") else "event lists"
        print(f"  clients: {label}")
        print(f"    {same} identical to direct replay  {streams - len(load.differing)}/{streams}")
        print(f"    events received / lost         {load.events} / {load.lost}")
        print(f"    wall time                      {wall:7.2f} s")
        print(f"    events/s                       {load.events / wall:7.0f}")
        print(f"    streams/s                      {streams / wall:7.0f}")
        print(f"    time to first event, p50       {_ms(statistics.median(load.first_event))}")
        print(f"    time to first event, p99       {_ms(_p99(load.first_event))}")
        failed = failed or bool(load.differing or load.lost)
    print(f"harness proxy in front of serve: time to first byte, {options.samples} requests")
    print("one at a time, alternately straight and through the proxy")
    for label, times in (("straight to serve", direct), ("through the proxy", proxied)):
        print(f"  {label}, p50 / p99    {_ms(statistics.median(times))} / {_ms(_p99(times))}")
    added = statistics.median(proxied) - statistics.median(direct)
    print(f"  added by the proxy, p50         {_ms(added)}")
    if failed:
        print("FAILED: an outcome differed or an event was lost")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
