"""`harness proxy`: a recording reverse proxy in front of the Messages API.

Every request goes upstream as the client sent it (its own API key included: passed
on, never written), and the answer comes back to the client as it arrives, piece by
piece, never buffered: the first event reaches the client while upstream still
streams. Each `POST /v1/messages` answer is also kept as a cassette in the output
folder, written atomically once the answer has ended:

- a stream: every event, each after `{"harness": "at", "ms": N}` (its arrival offset
  from the request); a stream upstream broke off ends in `{"harness": "cut"}`;
- a non-streaming `Message`: the events a stream of it carries (`events_from_message`),
  the header's `synthesized_from: "message"` saying so;
- an HTTP error: one `{"harness": "http_error", ...}` line (status, the headers a
  client's retry logic reads, the error JSON).

The header holds the request without credentials (`redact_request`). Files are named
`turn-NN.jsonl` by request arrival (`harness._cassette.sessions`), numbered after any
turn already in the folder, so the folder is a session `harness serve` answers turn by
turn. Other endpoints pass through and are
listed on the log, not recorded. A stop (SIGINT/SIGTERM) or a client leaving mid-answer
writes nothing for that answer.

With `strict=True` (`harness proxy --strict`) each streamed Messages answer also passes
the strict adapter on its way (`harness._strict.guard.StreamGuard`): each event reaches
the client once the adapter has accepted it, and at a violation the proxy ends the answer
with an SSE `error` event naming the code (`strict_error_event`) and closes the
connection, so the client's SDK raises, in any language. Upstream is asked for an
uncompressed answer then (the guard reads the bytes it forwards); the recording keeps
what upstream sent up to there, so it replays to the same error.
"""

from __future__ import annotations

import asyncio
import os
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import orjson
from aiohttp import web
from multidict import CIMultiDict

from harness._cassette.codec import make_header, write_cassette
from harness._cassette.directives import AT, CUT
from harness._cassette.sessions import last_turn, turn_path
from harness._cassette.sse import SSEFormatError, StreamingDecoder, encode_event
from harness._http.hosting import MAX_BODY, TOO_DEEP, api_error, harness_app
from harness._json import deeper_than_limit, may_be_too_deep
from harness._redact import redact_request
from harness._replay.plan import lines_of_answer

if TYPE_CHECKING:
    from harness._strict.guard import StreamGuard

__all__ = ["RecordingProxy"]

MESSAGES_PATH: Final = "/v1/messages"
#: Headers of one hop, never forwarded (RFC 9110 §7.6.1), plus those aiohttp sets itself.
HOP_HEADERS: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: Headers aiohttp would add to a request that lacks them: the request goes as it came.
AUTO_HEADERS: Final = ("Accept-Encoding", "User-Agent", "Content-Type")


def _decompressor(encoding: str) -> Callable[[bytes], bytes]:
    """Bytes as sent (the client gets them so) to bytes as meant (the cassette keeps those)."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress
    if encoding == "deflate":
        return zlib.decompressobj().decompress
    if encoding == "br":
        import brotli

        return brotli.Decompressor().process  # type: ignore[no-any-return]
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress
    return bytes


class _Answer:
    """One Messages answer as it passes through: what the cassette will hold."""

    def __init__(self, status: int, headers: Any, start: float) -> None:
        self.status = status
        self.headers = {name.lower(): value for name, value in headers.items()}
        self.start = start
        self.streamed = status == 200 and self.headers.get("content-type", "").startswith(
            "text/event-stream"
        )
        self._decode = _decompressor(self.headers.get("content-encoding", "identity"))
        self._sse = StreamingDecoder()
        self._body = bytearray()
        self.lines: list[dict[str, Any]] = []
        self.unusable: str | None = None

    def _at(self) -> dict[str, Any]:
        return {"harness": AT, "ms": round((time.monotonic() - self.start) * 1000)}

    def feed(self, piece: bytes) -> None:
        if self.unusable is not None:
            return
        try:
            data = self._decode(piece)
            if not self.streamed:
                if not self.lines:
                    self.lines.append(self._at())  # the first byte's arrival
                self._body += data
                return
            for event in self._sse.feed(data):
                self.lines += [self._at(), event]
        except (SSEFormatError, zlib.error, ValueError) as error:
            self.unusable = str(error)

    def cut(self) -> None:
        """Upstream broke off: the cassette ends where the client's stream did."""
        self.lines.append({"harness": CUT})

    def finish(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The cassette's lines and header fields; `ValueError` when it cannot be one."""
        if self.unusable is not None:
            raise ValueError(self.unusable)
        if self.streamed:
            if not self.lines or self.lines[-1].get("harness") != CUT:
                try:
                    for event in self._sse.finish():
                        self.lines += [self._at(), event]
                except SSEFormatError as error:
                    raise ValueError(str(error)) from None
            if not any("type" in line for line in self.lines):
                raise ValueError("the stream held no event")
            return self.lines, {}
        lines, metadata = lines_of_answer(self.status, self.headers, bytes(self._body))
        return [*self.lines[:1], *lines], metadata


class RecordingProxy:
    """The proxy's aiohttp app: `RecordingProxy(upstream, out, log=print).app()`."""

    def __init__(
        self,
        upstream: str,
        out: str | os.PathLike[str],
        *,
        log: Callable[[str], None] = lambda line: None,
        max_body: int = MAX_BODY,
        strict: bool = False,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.strict = strict
        self.out = os.fspath(out)
        self.log = log
        self.max_body = max_body
        self.written: list[str] = []
        self._turn = last_turn(self.out)
        self._session: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        app = harness_app(self.log, max_body=self.max_body)
        app.router.add_route("*", "/{tail:.*}", self.forward)
        app.on_startup.append(self._open)
        app.on_cleanup.append(self._close)
        return app

    async def _open(self, app: web.Application) -> None:
        if self.strict:  # the guard's event classes, loaded before the first answer waits
            from harness._replay.direct import adapter_event_builder

            await asyncio.to_thread(adapter_event_builder)
        self._session = aiohttp.ClientSession(
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
            connector=aiohttp.TCPConnector(limit=0),
        )

    async def _close(self, app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    def _next_path(self) -> str:
        self._turn += 1
        return os.fspath(turn_path(self.out, self._turn))

    async def forward(self, request: web.Request) -> web.StreamResponse:
        """Send the request upstream and stream the answer back; keep a Messages answer."""
        assert self._session is not None
        body = await request.read()
        start = time.monotonic()
        where = f"{request.method} {request.path}"
        request_json = _messages_request(request, body)
        guard = self._guard() if request_json is not None else None
        if request_json is not None and may_be_too_deep(body) and deeper_than_limit(request_json):
            self.log(f"{where}: not recorded: {TOO_DEEP}")  # upstream still gets it
            request_json = None
        target = self._next_path() if request_json is not None else None
        headers = CIMultiDict(
            (name, value)
            for name, value in request.headers.items()
            if name.lower() not in HOP_HEADERS
        )
        if guard is not None:
            headers["Accept-Encoding"] = "identity"
        try:
            upstream = await self._session.request(
                request.method,
                self.upstream + request.rel_url.raw_path_qs,
                headers=headers,
                data=body,
                allow_redirects=False,
                skip_auto_headers=AUTO_HEADERS,
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            self.log(f"{where} -> 502 (upstream unreachable: {type(error).__name__})")
            return api_error(502, f"harness proxy: upstream {self.upstream} unreachable: {error}")
        async with upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP_HEADERS:
                    response.headers.add(name, value)
            if guard is not None and not _guarded(upstream.status, upstream.headers):
                guard = None  # an HTTP error or a non-streaming answer: passed as it is
            await response.prepare(request)
            answer = None
            if request_json is not None:
                answer = _Answer(upstream.status, upstream.headers, start)
            broke_off = False
            pieces = upstream.content.iter_any().__aiter__()
            while True:
                try:
                    piece = await pieces.__anext__()
                except StopAsyncIteration:
                    break
                except (aiohttp.ClientError, OSError):
                    broke_off = True  # the client will see the same drop, the cassette a cut
                    break
                if answer is not None:
                    answer.feed(piece)
                try:
                    released = piece if guard is None else guard.feed(piece)
                except SSEFormatError as error:
                    self.log(f"{where}: --strict: {error}: the connection is closed")
                    broke_off = True  # the client sees a drop: there is no event to end with
                    break
                try:
                    if released:
                        await response.write(released)
                except (ConnectionResetError, aiohttp.ClientConnectionError):
                    self.log(f"{where} -> {upstream.status}, the client left: not recorded")
                    return response
                if guard is not None and guard.failure is not None:
                    break
            if guard is not None and not broke_off:
                await self._end_strictly(where, response, guard)
        # The cassette is on disk before the client's answer ends: once a client has its
        # answer, its recording can be read.
        if answer is not None and target is not None:
            if broke_off:
                answer.cut()
            await self._write(where, target, request_json or {}, answer)
        else:
            self.log(f"{where} -> {upstream.status} (passed through, not recorded)")
        if broke_off:
            if request.transport is not None:
                request.transport.close()
        else:
            await response.write_eof()
        return response

    def _guard(self) -> StreamGuard | None:
        """A guard for a Messages answer under `strict`, else None."""
        if not self.strict:
            return None
        from harness._strict.guard import StreamGuard

        return StreamGuard()

    async def _end_strictly(
        self, where: str, response: web.StreamResponse, guard: StreamGuard
    ) -> None:
        """The rest of a guarded answer, or the `error` event ending a broken one."""
        from harness._strict.guard import strict_error_event

        if guard.failure is None:
            rest = guard.finish()
            if rest:
                await response.write(rest)
        if guard.failure is not None:
            await response.write(encode_event(strict_error_event(guard.failure)))
            response.force_close()
            self.log(f"{where}: --strict: {guard.failure.code}: the answer ends in an error event")

    async def _write(
        self, where: str, target: str, request: dict[str, Any], answer: _Answer
    ) -> None:
        try:
            lines, extra = answer.finish()
        except ValueError as error:
            self.log(f"{where} -> {answer.status}, not recorded: {error}")
            return
        model = str(request.get("model", "unknown model"))
        header = make_header(
            f"Recorded by harness proxy from {model}",
            "recorded",
            model=model,
            request=redact_request(request),
            recorded_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            **extra,
        )
        try:
            os.makedirs(self.out, exist_ok=True)
            await asyncio.to_thread(write_cassette, target, lines, header=header, overwrite=False)
        except OSError as error:
            self.log(f"{where} -> {answer.status}, not recorded: {target}: {error.strerror}")
            return
        self.written.append(target)
        events = sum(1 for line in lines if "type" in line)
        cut = ", upstream broke off" if lines[-1] == {"harness": CUT} else ""
        self.log(f"{where} -> {answer.status}, {events} events{cut}: wrote {target}")


def _guarded(status: int, headers: Any) -> bool:
    """Whether an answer is a stream the strict guard reads: a 200 SSE body, not compressed."""
    return (
        status == 200
        and str(headers.get("content-type", "")).startswith("text/event-stream")
        and str(headers.get("content-encoding", "identity")).strip().lower() == "identity"
    )


def _messages_request(request: web.Request, body: bytes) -> dict[str, Any] | None:
    """The JSON body of a Messages call (the one endpoint recorded), else None."""
    if request.method != "POST" or request.path.rstrip("/") != MESSAGES_PATH:
        return None
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None
