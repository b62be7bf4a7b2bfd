"""A fake Messages API on 127.0.0.1 for offline recording tests.

`FakeMessagesAPI(events)` serves `POST /v1/messages` as the API does: status 200, an SSE
body with a `Content-Length`, and the response headers that can carry account data
(`request-id`, `anthropic-organization-id`, a cookie, a `*-token` header), so tests can
check that none of them is kept. `drop_after=N` sends N events and half of the next,
then closes the connection; `pace=S` waits S seconds between events. A request without
`"stream": true` is answered with the `Message` JSON the events fold into, as the API
does. `errors=[(status, body, headers), ...]` are answered first, one a request (a 529
the SDK retries, say). `GET /status` answers plain JSON, an exchange that is not a
Messages stream. Used as a context manager: a thread serves on a free port until exit.

`behaviour` makes it hostile (see `BEHAVIOURS`): a 200 that is JSON, HTML or empty,
an invalid SSE `data:` line, a line that is not UTF-8, headers then silence, or
keep-alive comments without end. The endless ones stop by themselves after `hold`
seconds, or at once when the server exits, so no test can hang on them. `gzip=True`
compresses every 200 answer (`content-encoding: gzip`), whatever the request accepts.
"""

from __future__ import annotations

import gzip as gzip_module
import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from harness._providers.anthropic.message import message_from_events
from harness._providers.sse import encode_event

__all__ = ["BEHAVIOURS", "FakeMessagesAPI", "ReceivedRequest"]

#: behaviour -> (content-type, body) for the hostile answers that are one body.
BODIES: dict[str, tuple[str, bytes]] = {
    "json": ("application/json", b'{"id": "msg_1", "type": "message", "content": []}'),
    "html": ("text/html; charset=utf-8", b"<html><body>Service Unavailable</body></html>"),
    "empty": ("text/event-stream", b""),
    "comments_only": ("text/event-stream", b": keep-alive\n\n: still here\n\n"),
    "invalid_sse": (
        "text/event-stream",
        b'event: message_start\ndata: {"type": "message_start", "message": \n\n',
    ),
    "not_utf8": ("text/event-stream", b'event: ping\ndata: {"type": "ping\xff"}\n\n'),
}
#: Every behaviour: `stream` (the default, a real stream), the bodies, and the endless ones.
BEHAVIOURS = ("stream", *BODIES, "silent", "keepalive")

ACCOUNT_HEADERS = {
    "request-id": "req_011CFakeRequestIdentifier",
    "anthropic-organization-id": "0f9a1d2e-fake-org-id",
    "set-cookie": "__cf_bm=fake-cookie-value; Path=/; HttpOnly",
    "x-session-token": "fake-session-token-value",
}


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request the fake API received: method, path, headers (lower-cased names), body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class _QuietServer(ThreadingHTTPServer):
    """A client hanging up mid-answer is what the hostile tests provoke: the server says
    nothing (http.server would print a traceback to stderr, which a CliRunner running
    at the same moment captures as the command's own output)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a broken pipe here is the client's choice, not the server's fault."""


class FakeMessagesAPI:
    """Serves one stream of raw events to every `POST /v1/messages`."""

    def __init__(
        self,
        events: list[dict[str, Any]],
        *,
        drop_after: int | None = None,
        pace: float = 0.0,
        errors: list[tuple[int, dict[str, Any], dict[str, str]]] | None = None,
        behaviour: str = "stream",
        hold: float = 10.0,
        gzip: bool = False,
    ) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {BEHAVIOURS}, not {behaviour!r}")
        self.events = events
        self.errors = list(errors or [])
        self.drop_after = drop_after
        self.pace = pace
        self.behaviour = behaviour
        self.hold = hold
        self.gzip = gzip
        self._stopping = threading.Event()
        self.received: list[ReceivedRequest] = []
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # a short poll: shutdown() waits up to one poll interval, at every test's end
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def pieces(self) -> tuple[int, list[bytes]]:
        """The SSE body's length, and the pieces sent (one an event; half of one at a drop)."""
        pieces = [encode_event(event) for event in self.events]
        length = sum(map(len, pieces))
        if self.drop_after is None:
            return length, pieces
        cut = pieces[self.drop_after]
        return length, [*pieces[: self.drop_after], cut[: len(cut) // 2]]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _receive(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                api.received.append(
                    ReceivedRequest(
                        self.command,
                        self.path,
                        {name.lower(): value for name, value in self.headers.items()},
                        self.rfile.read(length),
                    )
                )

            def do_GET(self) -> None:
                self._receive()
                payload = b'{"status": "ok"}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _answer_json(self, status: int, body: Any, headers: dict[str, str]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                if api.gzip and status == 200:
                    payload = gzip_module.compress(payload)
                    self.send_header("content-encoding", "gzip")
                self.send_header("content-length", str(len(payload)))
                for name, value in {**ACCOUNT_HEADERS, **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _answer(self, content_type: str, body: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _endless(self) -> None:
                """SSE headers, then silence or keep-alive comments, until `hold` or exit."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.flush()
                self.close_connection = True
                deadline = time.monotonic() + api.hold
                while time.monotonic() < deadline and not api._stopping.is_set():
                    if api.behaviour == "keepalive":
                        try:
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                        except OSError:
                            return  # the client gave up
                    api._stopping.wait(api.pace or 0.05)

            def do_POST(self) -> None:
                self._receive()
                if self.path.split("?")[0] != "/v1/messages":
                    self.send_error(404)
                    return
                if api.behaviour in BODIES:
                    self._answer(*BODIES[api.behaviour])
                    return
                if api.behaviour in ("silent", "keepalive"):
                    self._endless()
                    return
                if api.errors:
                    self._answer_json(*api.errors.pop(0))
                    return
                if api.received[-1].json().get("stream") is not True:
                    self._answer_json(200, message_from_events(api.events), {})
                    return
                length, pieces = api.pieces()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                if api.gzip:
                    pieces = [gzip_module.compress(b"".join(pieces))]
                    length = len(pieces[0])
                    self.send_header("content-encoding", "gzip")
                self.send_header("content-length", str(length))
                for name, value in ACCOUNT_HEADERS.items():
                    self.send_header(name, value)
                self.end_headers()
                for number, piece in enumerate(pieces):
                    if number and api.pace:
                        time.sleep(api.pace)
                    self.wfile.write(piece)
                    self.wfile.flush()
                if api.drop_after is not None:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read `received`, not a log."""

        return Handler

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
