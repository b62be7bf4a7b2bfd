"""Issue 37: `harness record` writes each event as it arrives, never holding the stream.

The fake API of `bench.record_memory` runs in a process of its own (its memory is not
counted) and streams 16 MiB of text deltas; the recording, in this process, is traced
with `tracemalloc`: its peak must stay far below the stream (holding the lines took more
than the stream itself). docs/reliability.md has the figures of a 400 MiB stream.
"""

from __future__ import annotations

import select
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from bench.record_memory import main
from harness._record.live import record
from harness._record.over_http import record_over_http

MIB = 16
#: What the recording may hold at its peak: a quarter of the stream, generously.
BOUND = MIB * 2**20 // 4


@pytest.fixture
def fake_api(request: pytest.FixtureRequest) -> Iterator[str]:
    argv = [sys.executable, "-m", "bench.record_memory", "--serve", "--mib", str(MIB)]
    server = subprocess.Popen(
        [*argv, "--provider", request.param], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert server.stdout is not None
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        assert ready, "the fake API did not start"
        yield server.stdout.readline().strip()
    finally:
        server.kill()
        server.wait()
        server.stdout.close()


@pytest.mark.parametrize("fake_api", ["openai-chat", "anthropic"], indirect=True)
@pytest.mark.slow
def test_recording_a_long_stream_holds_no_more_than_a_few_events(
    fake_api: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    provider = request.node.callspec.params["fake_api"]

    def recording(out: Path) -> int:
        if provider == "anthropic":
            return record(
                {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "p"}]},
                str(out),
                api_key="sk-ant-test-0123456789",
                base_url=fake_api,
            )
        return record_over_http(
            provider,
            {"model": "m", "messages": [{"role": "user", "content": "p"}]},
            str(out),
            api_key="sk-test-0123456789",
            base_url=f"{fake_api}/v1",
            timeout=60,
            max_duration=600,
        )

    recording(tmp_path / "first.jsonl")  # untraced: what is loaded once (the SDK, the
    out = tmp_path / "rec.jsonl"  # schema's validators) is not the recording's memory
    tracemalloc.start()
    try:
        events = recording(out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.stat().st_size > MIB * 2**20 * 0.9  # the whole stream was written
    assert events > MIB * 2**20 // 4096 * 0.9  # deltas of 4 KiB
    assert peak < BOUND, f"peak {peak} bytes while recording a {MIB} MiB stream"


@pytest.mark.slow
def test_the_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--mib", "2"]) == 0
    printed = capsys.readouterr().out
    for row in ("events", "cassette", "wall time", "peak resident memory"):
        assert row in printed
