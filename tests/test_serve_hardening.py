"""Issue 20: `serve` and `proxy` against an unlucky or hostile world, one test a case."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess

import httpx2
from conftest import LIBRARY
from test_serve_cli import BODY, HARNESS, KEY, TEXT_ONLY, _whole_stream

from harness._http.hosting import LineLog


def _fill(pipe: int) -> None:
    """Write into `pipe` until it takes no more: its reader now reads nothing."""
    os.set_blocking(pipe, False)
    try:
        while True:
            os.write(pipe, b"." * 65536)
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(pipe, True)


def _read_until(pipe: int, marker: bytes, timeout: float = 30) -> bytes:
    """What `pipe` gives until `marker` has come; fails (does not hang) if it does not."""
    data = b""
    while marker not in data:
        ready, _, _ = select.select([pipe], [], [], timeout)
        assert ready, f"no {marker!r} in what was read: {data[-200:]!r}"
        chunk = os.read(pipe, 65536)
        assert chunk, f"the pipe closed before {marker!r}"
        data += chunk
    return data


def test_a_log_nobody_reads_never_blocks_and_counts_what_it_dropped() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as stream:
        _fill(write_end)
        log = LineLog(stream, backlog=10)
        for number in range(1000):
            log(f"line {number}")  # returns at once although the pipe is full
        got = _read_until(read_end, b"not read)\n").decode().lstrip(".").splitlines()
        log.close()
    os.close(read_end)
    shown = [line for line in got if line.startswith("line ")]
    (dropped,) = (line for line in got if "dropped" in line)
    count = re.fullmatch(r"\((\d+) log lines dropped: standard output was not read\)", dropped)
    assert count is not None, dropped
    assert len(shown) + int(count.group(1)) == 1000
    assert shown == [f"line {number}" for number in range(len(shown))]


def test_serve_keeps_answering_while_nobody_reads_its_output() -> None:
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [*HARNESS, "serve", str(LIBRARY)], stdout=write_end, stderr=subprocess.PIPE
    )
    try:
        first = _read_until(read_end, b"\n").decode()
        url = first.removeprefix("ANTHROPIC_BASE_URL=").strip()
        _fill(write_end)  # as a fixture that read the URL and never reads again
        headers = {"x-api-key": KEY, "x-harness-cassette": "text_only"}
        with httpx2.Client(timeout=30) as client:
            for _ in range(100):
                answer = client.post(f"{url}/v1/messages", json=BODY, headers=headers)
                assert answer.content == _whole_stream(TEXT_ONLY)
        log = _read_until(read_end, b"#100 POST").decode()
        assert "#1 POST /v1/messages stream -> 200 from text_only.jsonl" in log
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, err) == (0, b"harness serve: stopped (SIGTERM)\n")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
        os.close(read_end)
        os.close(write_end)
