"""The performance benchmark: `python -m bench`, `make bench` or `harness bench`, from a checkout.

Measures in one run, side by side, on synthetic streams of 10^3 to 10^6 events
(`bench.synthetic`):
(a) the adapter (`StreamAdapter.feed`) over prebuilt SDK event objects against the
    SDK's own accumulator (`anthropic.lib.streaming._messages.accumulate_event`, what
    `client.messages.stream()` runs at every event) on the same stream's objects, each
    in a fresh process (`bench.measure.measure_alone` says why);
(b) `harness replay --format json` end to end, in a subprocess writing to /dev/null,
    against the floor: a bare subprocess that reads the file, parses each line with
    orjson and builds the SDK's event objects with the SDK's own `construct_type`;
(c) the peak memory (`ru_maxrss`) of both subprocesses at each size;
(d) start-up: `harness --help` and `harness replay` of a small cassette against a bare
    `python -c "import anthropic"` (median of several runs);
(e) one request through the SDK (`client.messages.create(stream=True)`, read to the
    end) answered by a cassette client, against vcrpy replaying the same ~120-event
    stream to the same call from a vcrpy cassette this run writes (median of rounds);
(f) `harness.strict` on the same 120-event stream read through `messages.stream()`,
    against the plain cassette client, a request of each side by side, the order
    turning (the median pair's ratio);
(g) `harness conform` on the TypeScript example, a node process a case against one a
    job (`--persistent`), in stdin mode and `--serve` (`bench.conform_speed`);
(h) each adapter against its floor, `orjson.loads` of the same lines, per event: the
    OpenAI Chat and Responses adapters, and the Anthropic one beside them as replay
    feeds it (`bench.openai_adapters`);
(i) `harness view`: the page of a stream of 10^3 to 10^5 events, its size, its rows,
    the seconds to build it and (with a Chromium installed) to paint it (`bench.view`);
(j) the AWS event-stream decoder against botocore's own, per frame (`bench.eventstream`).
In-process times are CPU time and subprocess ratios use user+sys CPU time, so that
other work on a shared machine does not move the ratios; wall times are printed too.
Figures are printed, never asserted: the targets table says which are met.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from bench import eventstream, openai_adapters
from bench.conform_speed import CONFORM_TARGET_S, ConformRun, section_conform
from bench.measure import (
    FLOOR_SCRIPT,
    Child,
    harness_argv,
    measure_alone,
    run_child,
    sdk_estimate,
)
from bench.strict_openai import TARGET as STRICT_OPENAI_TARGET, section_strict_openai
from bench.synthetic import SHAPES, synthetic_events
from bench.view import section_view
from harness._cassette.codec import make_header, write_cassette

__all__ = ["Options", "main", "run"]

SIZES: Final = (10**3, 10**4, 10**5, 10**6)
SIZE_SHAPES: Final = ("text", "tool", "mixed")
MIXED_TARGET_SIZE: Final = 10**5


@dataclass(frozen=True, slots=True)
class Options:
    """What to measure: delta counts, shapes, the one block's deltas, start-up runs,
    rounds of adapter runs (the median counts), and the seconds the SDK accumulator may
    take at one size (estimated from the sizes before)."""

    sizes: tuple[int, ...]
    shapes: tuple[str, ...]
    one_block: int
    runs: int
    rounds: int
    sdk_budget: float
    client_requests: int = 100
    quick: bool = False

    @classmethod
    def make(cls, *, quick: bool = False, sizes: tuple[int, ...] | None = None) -> Options:
        """The full run, or the quick smoke run (one shape, small sizes, one run each)."""
        options = cls(SIZES, SIZE_SHAPES, 8000, runs=7, rounds=3, sdk_budget=60.0)
        if quick:
            options = cls(
                (300, 1000),
                ("mixed",),
                300,
                runs=1,
                rounds=1,
                sdk_budget=5.0,
                client_requests=20,
                quick=True,
            )
        return options if sizes is None else dataclasses.replace(options, sizes=sizes)


@dataclass(slots=True)
class Results:
    """Every figure the targets are judged on, filled in as the run goes."""

    adapter_ns: dict[tuple[str, int], float] = field(default_factory=dict)
    sdk_ratio: dict[tuple[str, int], float] = field(default_factory=dict)
    replay: dict[tuple[str, int], tuple[Child, Child]] = field(default_factory=dict)
    start: dict[str, float] = field(default_factory=dict)
    #: seconds per request: "cassette client" and "vcrpy"
    per_request: dict[str, float] = field(default_factory=dict)
    #: CPU seconds per `messages.stream()` request, median: "plain" and "harness.strict"
    per_stream: dict[str, float] = field(default_factory=dict)
    #: harness.strict against plain: the median of the requests' ratios, side by side
    strict_ratio: float | None = None
    #: harness.strict against plain for an openai client, per dialect (median pair)
    strict_openai: dict[str, float] = field(default_factory=dict)
    #: `harness conform` on the TypeScript example (None: node or the build missing)
    conform: list[ConformRun] | None = None
    #: each adapter against `orjson.loads` of the same lines (section h)
    floors: list[openai_adapters.Row] = field(default_factory=list)
    #: the event-stream decoder's CPU time against botocore's (section i; None: not run)
    eventstream: float | None = None


class Report:
    """Aligned tables written as the run goes."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = [
                cell.rjust(width) if i else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            self.line("  " + "  ".join(cells).rstrip())


def _events(size: int) -> str:
    return f"{size:,}"


def section_adapter(options: Options, report: Report, results: Results) -> None:
    report.line("(a) adapter (StreamAdapter.feed) vs the SDK's accumulate_event, same events")
    rows: list[list[str]] = []
    plan = [(shape, size) for shape in options.shapes for size in options.sizes]
    plan.append(("one_block", options.one_block))
    # a process a case; the quick run's in one (`measure_alone`)
    batches = [plan] if options.quick else [[case] for case in plan]
    adapter: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for _ in range(options.rounds):  # interleaved: a busy spell falls on every size alike
        for batch in batches:
            for case, got in zip(batch, measure_alone("adapter", batch), strict=True):
                adapter.setdefault(case, []).append(got)
    sdk_quick = dict(zip(plan, measure_alone("sdk", plan), strict=True)) if options.quick else {}
    sdk_runs: dict[str, list[tuple[int, float]]] = {}
    for shape, size in plan:
        estimate = sdk_estimate(sdk_runs.get(shape, []), size)
        with_sdk = estimate <= options.sdk_budget
        events = adapter[(shape, size)][0][0]
        ours = statistics.median(seconds for _, seconds in adapter[(shape, size)])
        theirs = None
        if with_sdk:
            _, theirs = sdk_quick.get((shape, size)) or measure_alone("sdk", [(shape, size)])[0]
        results.adapter_ns[(shape, size)] = ours / events * 1e9
        sdk_cell, ratio_cell = f"skipped (est. {estimate:.0f} s)", "-"
        if theirs is not None:
            sdk_runs.setdefault(shape, []).append((size, theirs))
            results.sdk_ratio[(shape, size)] = theirs / ours
            sdk_cell, ratio_cell = f"{theirs:.3f}", f"{theirs / ours:,.0f}x"
        rows.append(
            [
                shape,
                _events(events),
                f"{ours:.3f}",
                f"{ours / events * 1e9:,.0f}",
                sdk_cell,
                ratio_cell,
            ]
        )
    header = ["shape", "events", "adapter s", "adapter ns/event", "SDK s", "SDK/adapter"]
    report.table(header, rows)
    report.line()


def section_replay(options: Options, report: Report, results: Results, folder: Path) -> None:
    report.line("(b, c) harness replay --format json vs floor (read + orjson + construct_type)")
    rows: list[list[str]] = []
    for shape in options.shapes:
        for size in options.sizes:
            path = folder / f"{shape}-{size}.jsonl"
            about = make_header(f"benchmark: {SHAPES[shape]}, {size} deltas")
            write_cassette(path, synthetic_events(shape, size), header=about)
            replay = run_child([*harness_argv(), "replay", "--format", "json", str(path)])
            floor = run_child([sys.executable, "-c", FLOOR_SCRIPT, str(path)])
            path.unlink()
            if replay.status or floor.status:
                raise RuntimeError(f"{path}: replay exit {replay.status}, floor {floor.status}")
            results.replay[(shape, size)] = (replay, floor)
            rows.append(
                [
                    shape,
                    _events(size),
                    f"{replay.cpu:.2f}",
                    f"{replay.wall:.2f}",
                    f"{floor.cpu:.2f}",
                    f"{floor.wall:.2f}",
                    f"{replay.cpu / floor.cpu:.2f}x",
                    f"{replay.peak_mb:.0f}",
                    f"{floor.peak_mb:.0f}",
                ]
            )
    header = [
        "shape",
        "deltas",
        "replay cpu s",
        "wall s",
        "floor cpu s",
        "wall s",
        "replay/floor",
        "replay MB",
        "floor MB",
    ]
    report.table(header, rows)
    report.line()


def section_start(options: Options, report: Report, results: Results, folder: Path) -> None:
    report.line(f"(d) start-up, seconds, median of {options.runs} interleaved runs")
    small = folder / "small.jsonl"
    write_cassette(small, synthetic_events("mixed", 20), header=make_header("benchmark: small"))
    commands = {
        'python -c "import anthropic"': [sys.executable, "-c", "import anthropic"],
        "harness --help": [*harness_argv(), "--help"],
        "harness replay, 20 deltas": [*harness_argv(), "replay", str(small)],
    }
    runs: dict[str, list[Child]] = {name: [] for name in commands}
    for _ in range(options.runs):  # interleaved: a busy spell falls on every command alike
        for name, argv in commands.items():
            runs[name].append(run_child(argv))
    rows = []
    for name, children in runs.items():
        results.start[name] = statistics.median(child.wall for child in children)
        cpu = statistics.median(child.cpu for child in children)
        rows.append([name, f"{results.start[name]:.3f}", f"{cpu:.3f}"])
    report.table(["command", "wall s", "cpu s"], rows)
    report.line()


#: deltas of the mixed stream section (e) replays: 120 events with the start and the stops
CLIENT_STREAM_DELTAS: Final = 113
CLIENT_REQUEST: Final = {
    "model": "claude-sonnet-5",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "benchmark"}],
}


def _vcr_cassette(events: list[dict[str, Any]], path: Path) -> None:
    """A vcrpy cassette (JSON serializer) holding one streamed Messages exchange."""
    from harness._providers.sse import encode_event

    body = b"".join(encode_event(event) for event in events).decode()
    interaction = {
        "request": {
            "method": "POST",
            "uri": "https://api.anthropic.com/v1/messages",
            "body": json.dumps({**CLIENT_REQUEST, "stream": True}),
            "headers": {"content-type": ["application/json"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["text/event-stream; charset=utf-8"]},
            "body": {"string": body},
        },
    }
    path.write_text(json.dumps({"interactions": [interaction], "version": 1}))


def _per_request(client: Any, requests: int) -> float:
    """CPU seconds per streamed request read to the end (median of 3 rounds)."""
    rounds = []
    for _ in range(3):
        begin = time.process_time()
        for _ in range(requests):
            for _ in client.messages.create(**CLIENT_REQUEST, stream=True):
                pass
        rounds.append((time.process_time() - begin) / requests)
    return statistics.median(rounds)


def section_clients(options: Options, report: Report, results: Results, folder: Path) -> None:
    import vcr
    from anthropic import Anthropic

    from harness._cassette.codec import Cassette
    from harness._replay.clients import cassette_client

    events = list(synthetic_events("mixed", CLIENT_STREAM_DELTAS))
    requests = options.client_requests
    report.line(
        f"(e) one streamed request read to the end through the SDK, {len(events)} events, "
        f"CPU ms per request (median of 3 rounds of {requests})"
    )
    path = folder / "client.jsonl"
    write_cassette(path, events, header=make_header("benchmark: client"))
    cassette = Cassette(path)
    with cassette_client([cassette] * (3 * requests), max_retries=0) as client:
        results.per_request["cassette client"] = _per_request(client, requests)
    vcr_path = folder / "client.vcr.json"
    _vcr_cassette(events, vcr_path)
    recorder = vcr.VCR(serializer="json", record_mode="none")
    with (
        recorder.use_cassette(str(vcr_path), allow_playback_repeats=True),
        Anthropic(api_key="benchmark", max_retries=0) as client,
    ):
        results.per_request["vcrpy"] = _per_request(client, requests)
    rows = [[name, f"{seconds * 1000:.2f}"] for name, seconds in results.per_request.items()]
    report.table(["answered by", "ms/request"], rows)
    report.line()


def _per_stream(client: Any, requests: int) -> float:
    """CPU seconds per request through `messages.stream()`, the final message read."""
    begin = time.process_time()
    for _ in range(requests):
        with client.messages.stream(**CLIENT_REQUEST) as stream:
            stream.get_final_message()
    return (time.process_time() - begin) / requests


def section_strict(options: Options, report: Report, results: Results, folder: Path) -> None:
    from harness._cassette.codec import Cassette
    from harness._replay.clients import cassette_client
    from harness._strict.client import strict

    events = list(synthetic_events("mixed", CLIENT_STREAM_DELTAS))
    pairs = 5 * options.client_requests  # 500 in the full run
    report.line(
        f"(f) harness.strict: one request through messages.stream(), {len(events)} events, "
        f"CPU ms per request; {pairs} pairs of requests, one plain and one strict side by "
        "side, the order turning; the median pair's ratio"
    )
    path = folder / "strict.jsonl"
    write_cassette(path, events, header=make_header("benchmark: strict"))
    cassette = Cassette(path)
    warm = max(1, pairs // 25)
    answers = [cassette] * (pairs + warm)
    plain_client = cassette_client(answers, max_retries=0, match_on=None)
    strict_client = strict(cassette_client(answers, max_retries=0, match_on=None))
    for client in (plain_client, strict_client):
        _per_stream(client, warm)  # warm: imports, first-call caches
    # A request at a time, each strict one beside a plain one: the machine's load, which
    # moves rounds of many requests by a fifth either way, weighs on both sides alike.
    plain: list[float] = []
    guarded: list[float] = []
    for number in range(pairs):
        if number % 2:
            guarded.append(_per_stream(strict_client, 1))
            plain.append(_per_stream(plain_client, 1))
        else:
            plain.append(_per_stream(plain_client, 1))
            guarded.append(_per_stream(strict_client, 1))
    plain_client.close()
    strict_client.close()
    ratios = sorted(g / p for p, g in zip(plain, guarded, strict=True))
    results.strict_ratio = statistics.median(ratios)
    results.per_stream.update(
        {"plain": statistics.median(plain), "harness.strict": statistics.median(guarded)}
    )
    rows = [[name, f"{seconds * 1000:.2f}"] for name, seconds in results.per_stream.items()]
    report.table(["client", "ms/request, median"], rows)
    quartiles = statistics.quantiles(ratios, n=4)
    report.line(
        f"  strict against plain, the median pair: {results.strict_ratio:.3f}x "
        f"(quartiles {quartiles[0]:.3f}x, {quartiles[2]:.3f}x)"
    )
    report.line()


def section_floors(options: Options, report: Report, results: Results) -> None:
    deltas, pieces, rounds, passes = (100, 20, 2, 3) if options.quick else (2000, 200, 7, 30)
    report.line(
        f"(h) adapters vs orjson.loads of the same lines, ns per event ({deltas:,} text "
        f"deltas, a call of {pieces} pieces; {rounds} interleaved rounds)"
    )
    results.floors = openai_adapters.measure(deltas, pieces, rounds, passes)
    openai_adapters.print_rows(results.floors, report.out)
    report.line()


def targets(options: Options, results: Results) -> list[list[str]]:
    """One row per performance target (docs/performance.md): what, measured figure, met or not."""
    rows: list[list[str]] = []

    def add(name: str, measured: str, met: bool | None) -> None:
        rows.append([name, measured, "n/a" if met is None else "yes" if met else "NO"])

    mixed_size = max((s for s in options.sizes if s <= MIXED_TARGET_SIZE), default=0)
    ratio = results.sdk_ratio.get(("mixed", mixed_size))
    add(
        f"adapter >= 50x SDK, mixed {mixed_size:,}",
        f"{ratio:,.0f}x" if ratio else "not run",
        ratio >= 50 if ratio else None,
    )
    ratio = results.sdk_ratio.get(("one_block", options.one_block))
    add(
        f"adapter >= 500x SDK, one block of {options.one_block:,}",
        f"{ratio:,.0f}x" if ratio else "not run",
        ratio >= 500 if ratio else None,
    )
    for shape in options.shapes:
        costs = [results.adapter_ns[(shape, size)] for size in options.sizes]
        spread = max(costs) / min(costs)
        add(
            f"adapter ns/event flat, {shape} (max/min <= 1.5)",
            " / ".join(f"{cost:,.0f}" for cost in costs) + f" ({spread:.2f}x)",
            spread <= 1.5,
        )
    largest = max(options.sizes)
    worst = max(
        (results.replay[(shape, largest)] for shape in options.shapes),
        key=lambda pair: pair[0].cpu / pair[1].cpu,
    )
    add(
        f"replay <= 1.3x floor at {largest:,} (worst shape, CPU)",
        f"{worst[0].cpu / worst[1].cpu:.2f}x",
        worst[0].cpu / worst[1].cpu <= 1.3,
    )
    peaks = [
        results.replay[(shape, size)][0].peak_mb
        for shape in options.shapes
        for size in options.sizes
    ]
    top = max(results.replay[(shape, largest)][0].peak_mb for shape in options.shapes)
    add(
        f"replay peak memory at {largest:,} < 150 MB (flat)",
        f"{top:.0f} MB (all sizes {min(peaks):.0f}-{max(peaks):.0f})",
        top < 150,
    )
    bare = results.start['python -c "import anthropic"']
    help_ratio = results.start["harness --help"] / bare
    add("harness --help <= 0.15x import anthropic", f"{help_ratio:.2f}x", help_ratio <= 0.15)
    small_ratio = results.start["harness replay, 20 deltas"] / bare
    add("small replay <= 1.15x import anthropic", f"{small_ratio:.2f}x", small_ratio <= 1.15)
    ours, theirs = results.per_request["cassette client"], results.per_request["vcrpy"]
    add(
        "cassette client per request <= vcrpy",
        f"{ours * 1000:.2f} ms vs {theirs * 1000:.2f} ms",
        ours <= theirs,
    )
    ratio = results.strict_ratio
    add(
        "harness.strict <= 1.10x plain, messages.stream()",
        f"{ratio:.3f}x" if ratio else "not run",
        None if ratio is None else ratio <= 1.10,
    )
    for dialect, helper in (("chat", "chat.completions"), ("responses", "responses")):
        ratio = results.strict_openai.get(dialect)
        add(
            f"harness.strict <= {STRICT_OPENAI_TARGET:.2f}x plain, {helper}.stream()",
            f"{ratio:.3f}x" if ratio else "not run",
            None if ratio is None else ratio <= STRICT_OPENAI_TARGET,
        )
    served = results.conform[-1] if results.conform else None
    add(
        f"conform --serve --persistent, every default case, TypeScript < {CONFORM_TARGET_S:g} s",
        "skipped (no node or no build)"
        if served is None
        else f"{served.wall:.1f} s ({served.count})",
        None if served is None or options.quick else served.wall < CONFORM_TARGET_S,
    )
    for row in results.floors:
        add(
            f"{row.dialect} adapter <= {openai_adapters.TARGET:g}x orjson.loads",
            f"{row.ratio:.2f}x (rounds {min(row.ratios):.2f}-{max(row.ratios):.2f}x)",
            row.met,
        )
    ratio = results.eventstream
    add(
        f"event-stream decoding <= {eventstream.TARGET:g}x botocore's",
        f"{ratio:.2f}x" if ratio else "not run (no botocore)",
        None if ratio is None else ratio <= eventstream.TARGET,
    )
    return rows


def run(options: Options, out: IO[str]) -> Results:
    """Measure everything, print the tables and the targets; return the figures."""
    import anthropic

    report = Report(out)
    report.line(
        f"stream-harness benchmark: Python {sys.version.split()[0]}, "
        f"anthropic {anthropic.__version__}, {os.cpu_count()} CPUs"
    )
    report.line()
    results = Results()
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as temporary:
        folder = Path(temporary)
        section_adapter(options, report, results)
        section_replay(options, report, results, folder)
        section_start(options, report, results, folder)
        section_clients(options, report, results, folder)
        section_strict(options, report, results, folder)
        results.strict_openai = section_strict_openai(options.client_requests, report)
        results.conform = section_conform(options.quick, report)
        section_floors(options, report, results)
        section_view(options.sizes, report, runs=1 if options.quick else 3)
        results.eventstream = eventstream.section_eventstream(options.quick, report.out)
    report.line("Targets")
    report.table(["target", "measured", "met"], targets(options, results))
    return results


def parse_sizes(text: str) -> tuple[int, ...]:
    """`"1e3,1e4"` -> `(1000, 10000)`; `ValueError` with a one-line reason otherwise."""
    try:
        sizes = tuple(int(float(part)) for part in text.split(","))
    except (ValueError, OverflowError):
        raise ValueError(f"not a comma-separated list of numbers: {text!r}") from None
    if min(sizes) < 10:
        raise ValueError(f"every size must be at least 10: {text!r}")
    return sizes


def _sizes_argument(text: str) -> tuple[int, ...]:
    try:
        return parse_sizes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench [--quick] [--sizes 1e3,1e4,...]`."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: small, one shape")
    parser.add_argument(
        "--sizes", type=_sizes_argument, help="comma-separated delta counts, e.g. 1e3,1e5"
    )
    arguments = parser.parse_args(argv)
    run(Options.make(quick=arguments.quick, sizes=arguments.sizes), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
