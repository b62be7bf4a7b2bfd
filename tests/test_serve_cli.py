"""`harness serve` and `harness proxy` as commands: the first line, curl, signals, bad input."""

from __future__ import annotations

import contextlib
import json
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from conftest import LIBRARY

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.sse import encode_event

KEY = "sk-ant-cli-test-key-0123456789"
TEXT_ONLY = LIBRARY / "text_only.jsonl"
BODY = {"model": "claude-harness-test", "max_tokens": 9, "messages": [], "stream": True}
HARNESS = [sys.executable, "-c", "from harness_cli.main import main; main()"]


class Running:
    """A `harness` command started in the background, read line by line, stopped at exit."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [*HARNESS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def line(self, timeout: float = 30) -> str:
        """The next stdout line; fails (does not hang) if none comes."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "no line from the command"
        return self.process.stdout.readline().rstrip("\n")

    def base_url(self) -> str:
        """The Anthropic SDK's base URL, from the first line (each SDK's: `VAR=URL ...`)."""
        first = self.line()
        urls = dict(pair.split("=", 1) for pair in first.split(" "))
        assert urls["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:"), first
        return urls["ANTHROPIC_BASE_URL"]

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> tuple[int, str, str]:
        """Send `sig`, wait; the exit status, the rest of stdout, and stderr."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=30)


@contextlib.contextmanager
def running(*args: str) -> Iterator[Running]:
    command = Running(*args)
    try:
        yield command
    finally:
        command.close()


def _whole_stream(path: Path) -> bytes:
    return b"".join(encode_event(event) for event in Cassette(path).events())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_gets_the_sse_stream_and_sigterm_stops_the_server_cleanly() -> None:
    with running("serve", str(LIBRARY)) as serve:
        url = serve.base_url()
        curl = subprocess.run(
            ["curl", "-sN", f"{url}/v1/messages", "-H", "x-harness-cassette: text_only",
             "-H", f"x-api-key: {KEY}", "-H", "content-type: application/json",
             "-d", json.dumps(BODY)],
            capture_output=True, check=True, timeout=30,
        )  # fmt: skip
        assert serve.line() == "#1 POST /v1/messages stream -> 200 from text_only.jsonl"
        status, out, err = serve.stop(signal.SIGTERM)
    assert curl.stdout == _whole_stream(TEXT_ONLY)
    assert (status, out, err) == (0, "", "harness serve: stopped (SIGTERM)\n")


@pytest.mark.slow
def test_ctrl_c_stops_the_server_with_status_130() -> None:
    with running("serve", str(TEXT_ONLY)) as serve:
        serve.base_url()
        status, _, err = serve.stop(signal.SIGINT)
    assert (status, err) == (130, "harness serve: stopped (SIGINT)\n")


@pytest.mark.slow
def test_a_port_in_use_is_one_line_and_status_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*HARNESS, "serve", str(TEXT_ONLY), "--port", str(port)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"harness serve: port {port} on 127.0.0.1 is in use\n"


@pytest.mark.slow
def test_listening_beyond_localhost_is_said(tmp_path: Path) -> None:
    with running("proxy", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path),
                 "--host", "0.0.0.0") as proxy:  # fmt: skip
        first = proxy.line()
        # the proxy forwards for every SDK: each one's base URL, on the one first line
        assert re.fullmatch(
            r"ANTHROPIC_BASE_URL=http://0\.0\.0\.0:(\d+) ANTHROPIC_BEDROCK_BASE_URL=http://0\.0\.0\.0:\1"
            r" ANTHROPIC_VERTEX_BASE_URL=http://0\.0\.0\.0:\1/v1 OPENAI_BASE_URL=http://0\.0\.0\.0:\1/v1"
            r" AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://0\.0\.0\.0:\1"
            r" GOOGLE_GEMINI_BASE_URL=http://0\.0\.0\.0:\1 GOOGLE_VERTEX_BASE_URL=http://0\.0\.0\.0:\1",
            first,
        ), first
        _, _, err = proxy.stop()
    assert err.splitlines()[0] == (
        "harness proxy: listening on 0.0.0.0, not 127.0.0.1: other machines can reach it (--host)"
    )


@pytest.mark.slow
def test_an_unusable_cassette_is_one_line_and_status_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "message_start"}\n')
    result = subprocess.run(
        [*HARNESS, "serve", str(broken)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"harness serve: {broken}:1: event line does not match")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.slow
def test_a_proxy_stopped_mid_stream_leaves_no_cassette(tmp_path: Path) -> None:
    events = list(Cassette(TEXT_ONLY).events())
    stalled = tmp_path / "stalled.jsonl"
    lines = [*events[:2], {"harness": "stall", "ms": 20000}, *events[2:]]
    stalled.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    upstream = CassetteServer([str(stalled)]).app()
    with (
        ServerThread(upstream) as upstream_url,
        running("proxy", "--upstream", upstream_url, "--out", str(out)) as proxy,
    ):
        url = proxy.base_url()
        with (
            httpx2.Client(timeout=30) as client,
            client.stream(
                "POST", f"{url}/v1/messages", json=BODY, headers={"x-api-key": KEY}
            ) as response,
        ):
            pieces = response.iter_bytes()
            assert next(pieces).startswith(b"event: message_start")
            status, _, err = proxy.stop(signal.SIGINT)
            with pytest.raises(httpx2.RemoteProtocolError):
                b"".join(pieces)
    assert (status, err) == (130, "harness proxy: stopped (SIGINT)\n")
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.slow
def test_harness_help_loads_neither_aiohttp_nor_the_server() -> None:
    probe = (
        "import sys\n"
        "from harness_cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'aiohttp' "
        "or m in ('harness._http.server', 'harness._http.proxy')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "serve" in result.stdout
    assert result.stdout.splitlines()[-1] == "[]"


def _shown_commands(doc: Path) -> list[tuple[str, str]]:
    """Each 4-space-indented `$ harness ...` block of `doc`: the command and its output."""
    blocks: list[tuple[str, str]] = []
    lines = doc.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.startswith("    $ harness ") and not lines[number - 1].strip():
            output = []
            for following in lines[number + 1 :]:
                if not following.startswith("    "):
                    break
                output.append(following[4:])
            blocks.append((line[len("    $ ") :], "\n".join(output)))
    return blocks


@pytest.mark.slow
def test_the_server_docs_show_real_output() -> None:
    from conftest import ROOT

    shown = _shown_commands(ROOT / "docs" / "server.md")
    assert shown
    for command, output in shown:
        argv = command.split()[1:]
        result = subprocess.run(
            [*HARNESS, *argv], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
        )
        assert (result.stdout + result.stderr).rstrip("\n") == output, command
