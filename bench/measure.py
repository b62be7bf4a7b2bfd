"""Measuring one case of the benchmark, each in a process of its own.

- `run_child`: a command's wall and CPU seconds and peak memory, started by a small
  launcher (Linux counts the memory of the process that forks into a child's peak);
- `time_adapter` / `time_sdk`: CPU time of the adapter, or of the SDK's own accumulator,
  over the SDK's event objects for one synthetic stream; `measure_alone` runs either in
  a fresh process.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench.synthetic import synthetic_events
from harness._providers.anthropic.adapter import StreamAdapter

__all__ = [
    "FLOOR_SCRIPT",
    "Child",
    "harness_argv",
    "measure_alone",
    "run_child",
    "sdk_estimate",
    "time_adapter",
    "time_sdk",
]

#: events built at a time: few enough to stay in the CPU's cache while the adapter's
#: passes go over them, as in replay, where each event is fed as soon as it is built
BATCH: Final = 1000
#: fewest passes of the adapter over a stream (more for small ones: 10^5 events at least)
ADAPTER_PASSES: Final = 5

FLOOR_SCRIPT: Final = """\
import sys
import orjson
from anthropic._models import construct_type
from anthropic.types import RawMessageStreamEvent
with open(sys.argv[1], "rb") as handle:
    for raw in handle:
        if raw.strip():
            data = orjson.loads(raw)
            if "cassette" in data or "harness" in data or data["type"] in ("ping", "error"):
                continue
            construct_type(type_=RawMessageStreamEvent, value=data)
"""


LAUNCHER_SCRIPT: Final = """\
import json, os, subprocess, sys, time
begin = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - begin
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps([wall, cpu, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]))
"""


@dataclass(frozen=True, slots=True)
class Child:
    """One subprocess: wall and CPU seconds, peak resident memory, exit status."""

    wall: float
    cpu: float
    peak_mb: float
    status: int


def run_child(argv: Sequence[str]) -> Child:
    """Run `argv` with output to /dev/null, started and measured (`wait4`) by a small
    launcher: Linux counts the memory of the process that forks into a child's peak, so
    this benchmark, which holds SDK objects, must not start the children itself."""
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER_SCRIPT, *argv], capture_output=True, text=True, check=True
    )
    wall, cpu, peak_kb, status = json.loads(launched.stdout)
    return Child(wall, cpu, peak_kb / 1024, status)


def harness_argv() -> list[str]:
    """The installed `harness` script next to this interpreter, else the same via `-c`."""
    script = Path(sys.executable).with_name("harness")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from harness_cli.main import main; main()"]


def _batches(shape: str, size: int) -> Iterator[list[Any]]:
    """The SDK's event objects for a synthetic stream, `BATCH` at a time."""
    from harness._providers.anthropic.construct import event_builder

    build = event_builder()
    batch: list[Any] = []
    for data in synthetic_events(shape, size):
        batch.append(build(data))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def time_adapter(shape: str, size: int) -> tuple[int, float]:
    """(events, adapter CPU seconds) on one stream. The adapter takes milliseconds, so
    it makes several passes (one machine each, batch by batch) and the median counts."""
    passes = max(ADAPTER_PASSES, min(100, 100_000 // size))
    adapters = [StreamAdapter() for _ in range(passes)]
    seconds = [0.0] * passes
    events = 0
    for batch in _batches(shape, size):
        events += len(batch)
        for number, adapter in enumerate(adapters):
            begin = time.process_time()
            for event in batch:
                adapter.feed(event)
            seconds[number] += time.process_time() - begin
    for number, adapter in enumerate(adapters):
        begin = time.process_time()
        adapter.finish()
        seconds[number] += time.process_time() - begin
    return events, statistics.median(seconds)


def time_sdk(shape: str, size: int) -> tuple[int, float]:
    """(events, CPU seconds of the SDK's `accumulate_event`) on the same stream."""
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    seconds = 0.0
    events = 0
    for batch in _batches(shape, size):
        events += len(batch)
        begin = time.process_time()
        for event in batch:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        seconds += time.process_time() - begin
    return events, seconds


def sdk_estimate(runs: Sequence[tuple[int, float]], size: int) -> float:
    """Seconds the SDK accumulator would take at `size`, from its (size, seconds) so far:
    the growth seen between the last two sizes (between linear and quadratic), else
    quadratic (its cost grows with the square of a block's deltas)."""
    if not runs:
        return 0.0
    exponent = 2.0
    if len(runs) >= 2 and runs[-1][0] > runs[-2][0] and min(runs[-1][1], runs[-2][1]) > 0:
        growth = math.log(runs[-1][1] / runs[-2][1]) / math.log(runs[-1][0] / runs[-2][0])
        exponent = min(2.0, max(1.0, growth))
    last_size, last_seconds = runs[-1]
    return float(last_seconds * (size / last_size) ** exponent)


def measure_alone(what: str, cases: Sequence[tuple[str, int]]) -> list[tuple[int, float]]:
    """`time_adapter` or `time_sdk` on each `(shape, size)` of `cases` in turn, in one fresh
    process, after a warm-up (pydantic builds its schemas on first use). The full run
    gives each case a process: apart, neither pays for the other's garbage (the SDK's
    snapshot keeps every tool input it parsed, which the collector walks again and again),
    and fresh, the SDK's text accumulation (`text += delta`, a new string each time) does
    not depend on the order of the run: glibc serves a big string from mmap, page-faulted
    anew, until freeing one of that size has raised its threshold. The quick run, a smoke
    run, gives all its cases one (each process imports the SDK: seconds of CPU)."""
    code = (
        "import json\n"
        f"from bench.measure import time_{what} as measure\n"
        "measure('mixed', 100)\n"
        f"print(json.dumps([measure(shape, size) for shape, size in {list(cases)!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [(events, seconds) for events, seconds in json.loads(done.stdout)]
