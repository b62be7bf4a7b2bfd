"""Memory of `harness record` on a long stream: `python -m bench.record_memory --mib 400`.

A fake API in a process of its own (`--serve`) streams `--mib` MiB of text deltas of
`--provider` (Chat Completions by default, or Messages), made as they are sent; `harness
record` records them in another process, its standard error (the text shown as it
arrives) thrown away. Printed: the stream's size, the events, the cassette's size, the
wall time, and the recording process's peak resident memory (`ru_maxrss`, from
`os.wait4`, the server's not included). Figures are printed, never asserted
(docs/reliability.md quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from bench.measure import harness_argv

#: The text of each delta: 4 KiB, so a 400 MiB stream is about 100,000 events.
DELTA: Final = "memory " * 585
PATHS: Final = {"openai-chat": "/v1/chat/completions", "anthropic": "/v1/messages"}


def _chat(size: int) -> Iterator[bytes]:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    sent = 0
    while sent < size:
        delta = {"index": 0, "delta": {"content": DELTA}, "finish_reason": None}
        frame = f"data: {json.dumps({**chunk, 'choices': [delta]})}\n\n".encode()
        sent += len(frame)
        yield frame
    end = {"index": 0, "delta": {}, "finish_reason": "stop"}
    yield f"data: {json.dumps({**chunk, 'choices': [end]})}\n\ndata: [DONE]\n\n".encode()


def _messages(size: int) -> Iterator[bytes]:
    def frame(data: dict[str, Any]) -> bytes:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m"}
    usage = {"input_tokens": 1, "output_tokens": 1}
    start: dict[str, Any] = {**message, "content": [], "stop_reason": None, "usage": usage}
    yield frame({"type": "message_start", "message": start})
    block = {"type": "text", "text": ""}
    yield frame({"type": "content_block_start", "index": 0, "content_block": block})
    sent = 0
    while sent < size:
        delta = {"type": "text_delta", "text": DELTA}
        piece = frame({"type": "content_block_delta", "index": 0, "delta": delta})
        sent += len(piece)
        yield piece
    yield frame({"type": "content_block_stop", "index": 0})
    stop = {"stop_reason": "end_turn", "stop_sequence": None}
    yield frame({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 1}})
    yield frame({"type": "message_stop"})


def serve(provider: str, size: int) -> None:
    """Serve the stream to every POST until killed; the base URL on the first line."""
    frames = _chat if provider == "openai-chat" else _messages

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            for piece in frames(size):
                self.wfile.write(piece)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def measure(provider: str, mib: int) -> dict[str, float]:
    """Record `mib` MiB from the fake API; the figures of the run."""
    size = mib * 2**20
    serving = ["--serve", "--provider", provider, "--mib", str(mib)]
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.record_memory", *serving],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert server.stdout is not None
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        url = server.stdout.readline().strip() if ready else ""
        if not url.startswith("http://"):
            raise SystemExit("the fake API did not start")
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "rec.jsonl"
            base = url if provider == "anthropic" else f"{url}/v1"
            argv = [*harness_argv(), "record", "--provider", provider, "--base-url", base]
            argv += ["--model", "m", "--prompt", "p", "--out", str(out)]
            env = {**os.environ, "OPENAI_API_KEY": "sk-bench-0123456789"}
            env["ANTHROPIC_API_KEY"] = "sk-ant-bench-0123456789"
            started = time.monotonic()
            recorder = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
            )
            assert recorder.stdout is not None
            with recorder.stdout:
                said = recorder.stdout.read()
            _, status, usage = os.wait4(recorder.pid, 0)  # the child's own rusage
            recorder.returncode = os.waitstatus_to_exitcode(status)
            seconds = time.monotonic() - started
            if status != 0:
                raise SystemExit(f"harness record failed: {said!r}")
            events = int(said.rsplit(": ", 1)[1].split()[0])
            cassette = out.stat().st_size
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
    return {
        "stream_mib": size / 2**20,
        "events": events,
        "cassette_mib": cassette / 2**20,
        "seconds": seconds,
        "peak_rss_mb": usage.ru_maxrss * 1024 / 1e6,  # KiB on Linux
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=400, help="the stream's size (MiB)")
    parser.add_argument("--provider", choices=sorted(PATHS), default="openai-chat")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.serve:
        serve(options.provider, options.mib * 2**20)
        return 0
    figures = measure(options.provider, options.mib)
    print(f"harness record --provider {options.provider}, a {options.mib} MiB stream:")
    print(f"  events                 {figures['events']:,.0f}")
    print(f"  cassette               {figures['cassette_mib']:,.0f} MiB")
    print(f"  wall time              {figures['seconds']:,.1f} s")
    print(f"  peak resident memory   {figures['peak_rss_mb']:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
