"""The harness against its floors and peers: `python -m bench.floors` (run by `make bench`).

Four figures, each a ratio to a floor or a peer measured in the same run, side by side
(interleaved where the runs are short), CPU time (user + sys) of whole processes unless
said otherwise, so that other work on a shared machine moves the ratios less:

(1) `harness replay` of a small cassette against `python -c pass` (median of runs);
(2) a suite of tests, each given a client by a fixture (made for the test, closed after
    it) and reading one streamed answer to the end: through the plugin's
    `harness_client`, and through the SDK on a bare `httpx2.MockTransport` serving the
    same bytes in the same chunks (one an event, as the fixture sends them, as a server
    flushes); each less the same number of empty tests with the same imports, so the
    ratio is of the cost a test. Shown for reference: the bare client made in the test's
    own body (pytest then sets up no fixture, a cost of pytest's that any suite getting
    its client from a fixture pays), and the bare transport handing over the whole body
    at once (the difference is the SDK's and httpx's own work for each chunk);
(3) `harness serve` against a minimal aiohttp server sending the same bytes (one write an
    event), the same load of concurrent bare HTTP clients on each: server CPU a stream
    (read from /proc), every body compared byte for byte;
(4) `harness import` of a folder of vcrpy cassettes against vcrpy's own loading of the
    same files (`FilesystemPersister.load_cassette`), wall time (the import's syncs are
    waits, not CPU) and CPU.
Figures are printed, never asserted; the targets table says which are met.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from bench.measure import harness_argv, run_child
from bench.serve_load import serving
from bench.synthetic import synthetic_events

__all__ = ["Options", "main", "run"]

ROOT: Final = Path(__file__).resolve().parent.parent
#: the small cassette of figure (1)
SMALL_CASSETTE: Final = ROOT / "cassettes" / "interleaved.jsonl"
#: deltas of the stream of figures (2) and (3): 120 events with the start and the stops
STREAM_DELTAS: Final = 113
REQUEST: Final[dict[str, Any]] = {
    "model": "claude-sonnet-5",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "benchmark"}],
}
#: the targets (docs/performance.md)
REPLAY_TARGET: Final = 5.0
SUITE_TARGET: Final = 1.10
SERVE_TARGET: Final = 1.5
IMPORT_TARGET: Final = 3.0


@dataclass(frozen=True, slots=True)
class Options:
    """How much to measure: start-up runs, suite tests, served streams and concurrent
    clients, imported files, and rounds of the suite and import runs (the median counts)."""

    runs: int = 15
    tests: int = 300
    streams: int = 2000
    clients: int = 50
    files: int = 2000
    rounds: int = 5
    sections: tuple[int, ...] = (1, 2, 3, 4)

    @classmethod
    def quick(cls) -> Options:
        """The smoke run: every figure, on small counts."""
        return cls(runs=2, tests=10, streams=40, clients=4, files=20, rounds=1)


@dataclass(slots=True)
class Results:
    """Each figure's (ours, floor or peer), in seconds."""

    replay: tuple[float, float] = (0.0, 0.0)
    suite: tuple[float, float] = (0.0, 0.0)
    serve: tuple[float, float] = (0.0, 0.0)
    serve_lost: int = 0
    imported: tuple[float, float] = (0.0, 0.0)
    notes: list[str] = field(default_factory=list)


def _table(out: IO[str], header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [
            cell.rjust(width) if i else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        out.write("  " + "  ".join(cells).rstrip() + "\n")
    out.flush()


def _stream_files(folder: Path) -> tuple[Path, Path]:
    """The 120-event stream of figures (2) and (3): a cassette and its SSE bytes."""
    from harness._cassette.codec import make_header, write_cassette
    from harness._providers.sse import encode_event

    events = list(synthetic_events("mixed", STREAM_DELTAS))
    cassette = folder / "cassettes" / "stream.jsonl"
    cassette.parent.mkdir(parents=True, exist_ok=True)
    write_cassette(cassette, events, header=make_header("benchmark: one stream"))
    sse = folder / "stream.sse"
    sse.write_bytes(b"".join(encode_event(event) for event in events))
    return cassette, sse


# -- (1) replay start-up ---------------------------------------------------------------


def section_replay(options: Options, out: IO[str], results: Results) -> None:
    out.write(
        f"(1) harness replay of a small cassette ({SMALL_CASSETTE.name}) against "
        f"python -c pass, CPU s, median of {options.runs} interleaved runs\n"
    )
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "harness replay": [*harness_argv(), "replay", str(SMALL_CASSETTE)],
    }
    runs: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(options.runs):
        for name, argv in commands.items():
            child = run_child(argv)
            if child.status != 0:
                raise SystemExit(f"{name} exited {child.status}")
            runs[name].append(child.cpu)
    cpu = {name: statistics.median(values) for name, values in runs.items()}
    _table(out, ["command", "cpu s"], [[name, f"{value:.3f}"] for name, value in cpu.items()])
    results.replay = (cpu["harness replay"], cpu["python -c pass"])
    out.write("\n")


# -- (2) a suite through the plugin against the SDK on a bare MockTransport ----------------

SUITE_HEAD: Final = """\
import anthropic
import httpx2
import pytest
{imports}
REQUEST = {request!r}
"""

HARNESS_TEST: Final = """
@pytest.mark.cassette("stream")
@pytest.mark.parametrize("number", range({tests}))
def test_stream(harness_client, number):
    for _ in harness_client.messages.create(**REQUEST, stream=True):
        pass
"""

BARE_ANSWER: Final = """
BODY = open({sse!r}, "rb").read()
CHUNKS = [event + b"\\n\\n" for event in BODY.split(b"\\n\\n") if event]
HEADERS = {{"content-type": "text/event-stream; charset=utf-8"}}
URL = "https://api.anthropic.com"


def answer(request):
    return httpx2.Response(200, headers=HEADERS, content={content})
"""

#: the same suite as HARNESS_TEST: the client comes from a fixture, made for each test
#: and closed after it, as `harness_client` is
BARE_FIXTURE_TEST: Final = (
    BARE_ANSWER
    + """

@pytest.fixture
def client():
    transport = httpx2.MockTransport(answer)
    http = httpx2.Client(transport=transport, base_url=URL)
    client = anthropic.Anthropic(api_key="benchmark", base_url=URL, http_client=http)
    yield client
    client.close()


@pytest.mark.parametrize("number", range({tests}))
def test_stream(client, number):
    for _ in client.messages.create(**REQUEST, stream=True):
        pass
"""
)

#: the client made in the test's own body, never closed: pytest asked for no fixture
BARE_TEST: Final = (
    BARE_ANSWER
    + """

@pytest.mark.parametrize("number", range({tests}))
def test_stream(number):
    transport = httpx2.MockTransport(answer)
    http = httpx2.Client(transport=transport, base_url=URL)
    client = anthropic.Anthropic(api_key="benchmark", base_url=URL, http_client=http)
    for _ in client.messages.create(**REQUEST, stream=True):
        pass
"""
)

EMPTY_TEST: Final = """
@pytest.mark.parametrize("number", range({tests}))
def test_stream(number):
    pass
"""

#: the CPU time of the test loop alone (not pytest's start-up), written where it is asked
SUITE_CONFTEST: Final = """\
import os
import time

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    begin = time.process_time()
    yield
    with open(os.environ["HARNESS_BENCH_CPU"], "w") as out:
        out.write(str(time.process_time() - begin))
"""

#: what the plugin's fixtures import on first use: the empty harness tests import it too
HARNESS_IMPORTS: Final = "import harness._replay.clients\nimport harness._testing.client_session"


def _suite(folder: Path, name: str, imports: str, body: str) -> Path:
    path = folder / f"test_{name}.py"
    path.write_text(SUITE_HEAD.format(imports=imports, request=REQUEST) + body)
    return path


def _body(template: str, tests: int, sse: Path, content: str = "") -> str:
    return template.format(tests=tests, sse=str(sse), content=content)


def section_suite(options: Options, out: IO[str], results: Results, folder: Path) -> None:
    _, sse = _stream_files(folder)
    tests = options.tests
    suites = {
        "harness_client": _suite(
            folder, "harness", HARNESS_IMPORTS, _body(HARNESS_TEST, tests, sse)
        ),
        "bare MockTransport": _suite(
            folder, "bare", "", _body(BARE_FIXTURE_TEST, tests, sse, "iter(CHUNKS)")
        ),
        "bare, in the test": _suite(
            folder, "bare_inline", "", _body(BARE_TEST, tests, sse, "iter(CHUNKS)")
        ),
        "bare, whole body": _suite(
            folder, "bare_whole", "", _body(BARE_FIXTURE_TEST, tests, sse, "BODY")
        ),
        "harness, empty": _suite(
            folder, "harness_empty", HARNESS_IMPORTS, _body(EMPTY_TEST, tests, sse)
        ),
        "bare, empty": _suite(folder, "bare_empty", "", _body(EMPTY_TEST, tests, sse)),
    }
    (folder / "conftest.py").write_text(SUITE_CONFTEST)
    out.write(
        f"(2) {tests} tests, each a client and one streamed answer of 120 events read to "
        f"the end, CPU s of pytest's test loop; {options.rounds} rounds of the four "
        "suites, each round's ratios taken side by side, the median round shown\n"
    )
    cpu: dict[str, list[float]] = {name: [] for name in suites}
    measured = folder / "cpu.txt"

    def measure(name: str) -> None:
        path = suites[name]
        # the plugins these suites have no use for, off: they cost each run seconds of
        # start-up (langsmith's, which langchain brings, about 3), never the test loop
        unused = [
            "-p",
            "no:cacheprovider",
            "-p",
            "no:langsmith_plugin",
            "-p",
            "no:hypothesispytest",
        ]
        argv = [sys.executable, "-m", "pytest", "-q", *unused, str(path)]
        child = run_child([*argv, "--rootdir", str(folder)])
        if child.status != 0:
            raise SystemExit(f"the {name} suite failed (exit {child.status}): {argv}")
        cpu[name].append(float(measured.read_text()))

    measured_suites = [
        "harness_client",
        "bare MockTransport",
        "bare, in the test",
        "bare, whole body",
    ]
    os.environ["HARNESS_BENCH_CPU"] = str(measured)
    try:
        for name in ("harness, empty", "bare, empty"):
            measure(name)
        for number in range(options.rounds):  # the order turns: a drift hits each suite
            turned = number % len(measured_suites)
            for name in measured_suites[turned:] + measured_suites[:turned]:
                measure(name)
        if options.rounds > 1:  # the empty suites again, after the drift of the rounds
            for name in ("harness, empty", "bare, empty"):
                measure(name)
    finally:
        del os.environ["HARNESS_BENCH_CPU"]
    empty = {name: statistics.median(cpu[name]) for name in ("harness, empty", "bare, empty")}

    def a_test(name: str, index: int) -> float:
        base = empty["harness, empty" if name == "harness_client" else "bare, empty"]
        return (cpu[name][index] - base) / tests

    def median_round(peer: str) -> tuple[float, float, str]:
        rounds = sorted(
            (a_test("harness_client", i) / a_test(peer, i), i) for i in range(options.rounds)
        )
        _, middle = rounds[len(rounds) // 2]
        spread = " ".join(f"{ratio:.2f}" for ratio, _ in rounds)
        return a_test("harness_client", middle), a_test(peer, middle), spread

    rows = [[name, " ".join(f"{value:.2f}" for value in values)] for name, values in cpu.items()]
    _table(out, ["suite", "cpu s, each run"], rows)
    ours, bare, spread = median_round("bare MockTransport")
    _, inline, inline_spread = median_round("bare, in the test")
    _, whole, whole_spread = median_round("bare, whole body")
    out.write(
        f"  a test, less the empty ones, median round: harness_client {ours * 1000:.2f} ms, "
        f"bare MockTransport {bare * 1000:.2f} ms (the rounds' ratios: {spread})\n"
        f"  for reference, the bare client made in the test's body, pytest asked for no "
        f"fixture: {inline * 1000:.2f} ms (the rounds' ratios to it: {inline_spread}); "
        f"the bare transport handing over the whole body at once: {whole * 1000:.2f} ms "
        f"(the rounds' ratios to it: {whole_spread})\n\n"
    )
    results.suite = (ours, bare)


# -- (3) harness serve against a minimal aiohttp server -------------------------------------

MINIMAL_SERVER: Final = """\
import asyncio, sys
from aiohttp import web

BODY = open(sys.argv[1], "rb").read()
CHUNKS = [piece + b"\\n\\n" for piece in BODY.split(b"\\n\\n") if piece]
HEADERS = {"content-type": "text/event-stream; charset=utf-8"}


async def messages(request):
    await request.read()
    response = web.StreamResponse(status=200, headers=HEADERS)
    await response.prepare(request)
    for chunk in CHUNKS:
        await response.write(chunk)
    await response.write_eof()
    return response


async def main():
    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"ANTHROPIC_BASE_URL=http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


async def _load(url: str, body: bytes, streams: int, clients: int) -> int:
    """`streams` streamed requests, `clients` at a time; how many bodies were not `body`."""
    import aiohttp

    request = {**REQUEST, "stream": True}
    differing = 0
    left = streams
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal left, differing
            while left > 0:
                left -= 1
                headers = {"x-harness-cassette": "stream"}
                async with session.post(f"{url}/v1/messages", json=request, headers=headers) as r:
                    received = await r.read()
                differing += received != body

        await asyncio.gather(*(worker() for _ in range(clients)))
    return differing


def section_serve(options: Options, out: IO[str], results: Results, folder: Path) -> None:
    cassette, sse = _stream_files(folder)
    body = sse.read_bytes()
    servers = {
        "harness serve": [*harness_argv(), "serve", str(cassette.parent)],
        "minimal aiohttp": [sys.executable, "-c", MINIMAL_SERVER, str(sse)],
    }
    out.write(
        f"(3) {options.streams} streams of 120 events, {options.clients} concurrent bare "
        "aiohttp clients, server CPU (from /proc) ms a stream\n"
    )
    rows = []
    per_stream: dict[str, float] = {}
    lost = 0
    for name, argv in servers.items():
        with serving(argv) as (url, pid):
            asyncio.run(_load(url, body, min(20, options.streams), 2))  # warm up
            before = _process_cpu(pid)
            start = time.perf_counter()
            differing = asyncio.run(_load(url, body, options.streams, options.clients))
            wall = time.perf_counter() - start
            cpu = _process_cpu(pid) - before
        per_stream[name] = cpu / options.streams
        lost += differing
        rows.append(
            [
                name,
                f"{per_stream[name] * 1000:.3f}",
                f"{options.streams / wall:.0f}",
                f"{options.streams - differing}/{options.streams}",
            ]
        )
    _table(out, ["server", "cpu ms/stream", "streams/s", "bodies identical"], rows)
    out.write("\n")
    results.serve = (per_stream["harness serve"], per_stream["minimal aiohttp"])
    results.serve_lost = lost


# -- (4) harness import against vcrpy's own loading ------------------------------------------

VCR_LOAD: Final = """\
import sys
from pathlib import Path
from vcr.persisters.filesystem import FilesystemPersister
from vcr.serializers import yamlserializer

for path in sorted(Path(sys.argv[1]).glob("*.yaml")):
    FilesystemPersister.load_cassette(str(path), yamlserializer)
"""


def _vcr_files(folder: Path, count: int) -> Path:
    """`count` vcrpy cassettes (YAML, vcrpy's own serializer) of one streamed exchange each."""
    import json

    from vcr.serializers import compat, yamlserializer

    from harness._providers.sse import encode_event

    events = list(synthetic_events("mixed", 12))
    body = b"".join(encode_event(event) for event in events).decode()
    interaction = {
        "request": {
            "method": "POST",
            "uri": "https://api.anthropic.com/v1/messages",
            "body": json.dumps({**REQUEST, "stream": True}),
            "headers": {"content-type": ["application/json"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["text/event-stream; charset=utf-8"]},
            "body": {"string": body},
        },
    }
    text = yamlserializer.serialize(
        {"interactions": [compat.convert_to_unicode(interaction)], "version": 1}
    )
    recordings = folder / "vcr"
    recordings.mkdir()
    for number in range(count):
        (recordings / f"test_{number:05d}.yaml").write_text(text)
    return recordings


def section_import(options: Options, out: IO[str], results: Results, folder: Path) -> None:
    recordings = _vcr_files(folder, options.files)
    out.write(
        f"(4) {options.files} vcrpy cassettes (one streamed exchange of 16 events each), "
        f"seconds, median of {options.rounds} rounds\n"
    )
    runs: dict[str, list[tuple[float, float]]] = {"harness import": [], "vcrpy loading": []}
    for number in range(options.rounds):
        target = folder / f"imported-{number}"
        commands = {
            "harness import": [*harness_argv(), "import", str(recordings), "--out", str(target)],
            "vcrpy loading": [sys.executable, "-c", VCR_LOAD, str(recordings)],
        }
        for name, argv in commands.items():
            child = run_child(argv)
            if child.status != 0:
                raise SystemExit(f"{name} exited {child.status}: {argv}")
            runs[name].append((child.wall, child.cpu))
        written = len(list(target.glob("*.jsonl")))
        if written != options.files:
            raise SystemExit(f"harness import wrote {written} of {options.files} cassettes")
    rows = []
    wall: dict[str, float] = {}
    for name, measured in runs.items():
        wall[name] = statistics.median(w for w, _ in measured)
        cpu = statistics.median(c for _, c in measured)
        rows.append([name, f"{wall[name]:.2f}", f"{cpu:.2f}"])
    _table(out, ["command", "wall s", "cpu s"], rows)
    out.write("\n")
    results.imported = (wall["harness import"], wall["vcrpy loading"])


# -- the targets ---------------------------------------------------------------------------


def targets(results: Results) -> list[list[str]]:
    """One row a target: what, the figures, the ratio, met or not."""
    rows = []

    def add(name: str, figures: str, pair: tuple[float, float], limit: float) -> None:
        ours, floor = pair
        if not floor:
            rows.append([name, "not run", "-", "-"])
            return
        ratio = ours / floor if floor > 0 else float("inf")
        rows.append([name, figures, f"{ratio:.2f}x", "yes" if ratio <= limit else "NO"])

    ours, floor = results.replay
    add(
        f"harness replay <= {REPLAY_TARGET:g}x python -c pass (CPU)",
        f"{ours * 1000:.0f} ms / {floor * 1000:.0f} ms",
        results.replay,
        REPLAY_TARGET,
    )
    ours, floor = results.suite
    add(
        f"harness_client test <= {SUITE_TARGET:.2f}x bare MockTransport (CPU)",
        f"{ours * 1000:.2f} ms / {floor * 1000:.2f} ms",
        results.suite,
        SUITE_TARGET,
    )
    ours, floor = results.serve
    lost = f", {results.serve_lost} lost" if results.serve_lost else ""
    add(
        f"harness serve <= {SERVE_TARGET:g}x minimal aiohttp (CPU a stream)",
        f"{ours * 1000:.3f} ms / {floor * 1000:.3f} ms{lost}",
        (ours, floor) if not results.serve_lost else (float("inf"), floor),
        SERVE_TARGET,
    )
    ours, floor = results.imported
    add(
        f"harness import <= {IMPORT_TARGET:g}x vcrpy loading (wall)",
        f"{ours:.2f} s / {floor:.2f} s",
        results.imported,
        IMPORT_TARGET,
    )
    return rows


def run(options: Options, out: IO[str]) -> Results:
    """Measure every figure, print the tables and the targets; return the figures."""
    out.write(f"stream-harness against its floors: Python {sys.version.split()[0]}, ")
    out.write(f"{os.cpu_count()} CPUs\n\n")
    results = Results()
    with tempfile.TemporaryDirectory(prefix="harness-floors-") as temporary:
        folder = Path(temporary)
        if 1 in options.sections:
            section_replay(options, out, results)
        for number, section in enumerate((section_suite, section_serve, section_import), 2):
            if number in options.sections:
                inner = folder / str(number)
                inner.mkdir()
                section(options, out, results, inner)
    out.write("Targets\n")
    _table(out, ["target", "ours / floor", "ratio", "met"], targets(results))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.floors [--quick]`."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.floors",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: small counts")
    parser.add_argument(
        "--sections", help="the figures to measure, e.g. 1,3 (default: all four)", default=""
    )
    arguments = parser.parse_args(argv)
    options = Options.quick() if arguments.quick else Options()
    if arguments.sections:
        chosen = tuple(int(part) for part in arguments.sections.split(","))
        options = dataclasses.replace(options, sections=chosen)
    run(options, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
