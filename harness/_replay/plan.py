"""What the API would answer a request with, as a plan any transport or server can carry out.

`plan_response(cassette, stream=...)` turns a cassette into a `PlannedResponse`: a status,
headers, and a body of pieces — byte chunks, cut as a `Chunking` says, with `Stall` and
`Cut` markers between them. An in-process transport (`harness._replay.sdk.ReplayTransport`) and
the socket server (`harness serve`) only execute the plan: write bytes, sleep on a stall,
drop the connection on a cut. So one cassette answers the same way everywhere.

Directive lines the plan obeys (`harness._directives`; with `realtime`, an `at`
line becomes a stall until its offset from the plan's start, so every transport paces
the way it carries out a stall, blocking or not):
- `{"harness": "http_error", "status": S, "headers": {...}, "body": {...}}`: the answer is
  this HTTP error instead of a stream; it stands before any event.
- `{"harness": "cut"}`: the connection drops here; with `"after_bytes": N`, after the
  first N bytes of the next event's SSE encoding (mid-line).
- `{"harness": "stall", "ms": N}`: no byte for N ms before the next one.
- `{"harness": "frame", ...}`: on a host whose streams travel in event-stream frames
  (Bedrock's), the next event's frame broken, or a frame of its own sent here
  (`harness._providers.frame_rows`); served as SSE, such a cassette is refused
  (`ReplayError`), and a non-streamed answer (JSON, no frames) passes it over.

A streamed answer is SSE (`text/event-stream`), an `error` event included, as the API
sends one mid-stream, unless the dialect's framing gives its own content type (Bedrock's
ConverseStream: event-stream frames, each line's bytes its `encode`). A non-streaming
answer is the JSON the events fold into, or the HTTP error an API error line stands
for. Both are the cassette's provider's framing (`cassette.dialect.framing`: Anthropic's
`Message`, Chat's `chat.completion` and `data: [DONE]` for a `done` line, a Responses
`response`); nothing here names an event.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, overload

from harness._cassette.codec import Cassette, DirectiveHandler, KeptCassette, pass_over
from harness._directives import AT, CUT, DONE, FRAME, HTTP_ERROR, STALL
from harness._exceptions import APIErrorEvent, ReplayError
from harness._hosts import Host, error_answer_at, framed
from harness._providers import Provider
from harness._providers.frame_rows import UNFRAMED, Framed, broken_frame, own_frame
from harness._providers.wire import Delimited

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "AsyncPacer",
    "Chunking",
    "Cut",
    "Piece",
    "PlannedResponse",
    "RealtimePacer",
    "Stall",
    "connection_cut",
    "plan_response",
    "read_timed_out",
    "replay_error_response",
    "sse_pieces",
    "unframed_line",
]

#: Largest chunk drawn when only a chunk seed is given.
DEFAULT_SEEDED_MAX: Final = 16
SSE_HEADERS: Final = {"content-type": "text/event-stream; charset=utf-8"}
JSON_HEADERS: Final = {"content-type": "application/json"}


@dataclass(frozen=True, slots=True)
class Stall:
    """No byte for `ms` milliseconds before the next piece: a `stall` line's, or with
    `paced` a pause of realtime pacing until the next `at` offset."""

    ms: int
    paced: bool = False


@dataclass(frozen=True, slots=True)
class Cut:
    """The connection drops here: the body ends without its proper end."""


Piece = bytes | Stall | Cut


@dataclass(frozen=True, slots=True)
class Chunking:
    """How the byte stream is cut on the way to the client.

    Neither set: one chunk an event (a server flushing after each event). `size` alone:
    chunks of exactly `size` bytes (the last one shorter). `seed`: chunk lengths drawn
    from 1..`size` (default 16) by `random.Random(seed)`, the same cuts for the same seed.
    A stall or a cut ends the chunk before it.
    """

    size: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and (type(self.size) is not int):
            raise ValueError(f"chunk size must be a whole number, not {self.size!r}")
        if self.size is not None and self.size < 1:
            raise ValueError(f"chunk size must be at least 1, not {self.size}")

    @overload
    def cut(self, pieces: Iterable[bytes]) -> Iterator[bytes]: ...
    @overload
    def cut(self, pieces: Iterable[Piece]) -> Iterator[Piece]: ...

    def cut(self, pieces: Iterable[Piece]) -> Iterator[Piece]:
        """Re-cut a stream of pieces, lazily, holding at most one chunk."""
        if self.size is None and self.seed is None:
            return iter(pieces)  # as they are: no layer between the pieces and the reader
        return self._recut(pieces)

    def _recut(self, pieces: Iterable[Piece]) -> Iterator[Piece]:
        rng = random.Random(self.seed) if self.seed is not None else None
        largest = self.size or DEFAULT_SEEDED_MAX

        def next_length() -> int:
            return rng.randint(1, largest) if rng is not None else largest

        buffer = bytearray()
        wanted = next_length()
        for piece in pieces:
            if not isinstance(piece, bytes):
                if buffer:
                    yield bytes(buffer)
                    buffer.clear()
                yield piece
                continue
            buffer += piece
            while len(buffer) >= wanted:
                yield bytes(buffer[:wanted])
                del buffer[:wanted]
                wanted = next_length()
        if buffer:
            yield bytes(buffer)


class RealtimePacer:
    """A directive handler that sleeps until each `at` directive's offset from its creation."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self._start = time.monotonic()
        self._sleep = sleep

    def due(self, directive: Mapping[str, Any]) -> float | None:
        """When (`time.monotonic()`) an `at` directive's event is due; None for any other."""
        ms = directive.get("ms")
        if directive.get("harness") != AT or not isinstance(ms, int | float):
            return None
        return self._start + ms / 1000

    def __call__(self, directive: dict[str, Any]) -> None:
        due = self.due(directive)
        if due is not None and (wait := due - time.monotonic()) > 0:
            self._sleep(wait)


class AsyncPacer(RealtimePacer):
    """The same pacing for a reader on an event loop, which must never block: the handler
    notes when the next piece is due, and the reader awaits `wait()` before handing it on."""

    def __init__(self) -> None:
        super().__init__()
        self._due: float | None = None

    def __call__(self, directive: dict[str, Any]) -> None:
        self._due = self.due(directive) or self._due

    async def wait(self) -> None:
        """Sleep until the piece noted last is due (at once if none is, or it is past)."""
        import asyncio  # here: replay without a loop (`harness replay`) never loads it

        due, self._due = self._due, None
        await asyncio.sleep(0 if due is None else max(due - time.monotonic(), 0))


#: The read timeout a replayed client has unless told otherwise: the SDK's own (600 s).
#: A stall longer than the read timeout ends the stream in `httpx2.ReadTimeout`.
DEFAULT_READ_TIMEOUT: Final = 600.0


def read_timed_out() -> Exception:
    """What httpx raises when a server sends nothing for longer than the read timeout."""
    import httpx2

    return httpx2.ReadTimeout("The read operation timed out")


def connection_cut() -> Exception:
    """What httpx raises when a server drops the connection in the middle of a body."""
    import httpx2

    return httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body"
    )


@dataclass(slots=True)
class PlannedResponse:
    """A status, headers, and the body as pieces to write in order."""

    status: int
    headers: dict[str, str]
    body: Iterator[Piece]


def sse_pieces(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    host: Host | None = None,
    delimited: Delimited | None = None,
) -> Iterator[Piece]:
    """The cassette's events as SSE bytes, one piece an event, with its stalls and cuts;
    with `realtime`, a stall until each `at` offset from the first piece asked for; on a
    `host` with frames of its own (Bedrock's), each event in its frame instead, a cut
    `after_bytes` falling inside the frame; `delimited` (Gemini's streamed JSON array),
    each event its value, the opening before the first, the separator before each
    other, the closing after the last unless the stream is cut.

    Other directives go to `on_directive` as they are reached. A kept cassette without
    directives is answered from its SSE bytes as they are (`KeptCassette.plain_sse`).
    """
    encode = host.encode if host is not None else None
    if delimited is not None:
        return _delimited(cassette, on_directive, realtime, delimited)
    if encode is None and isinstance(cassette, KeptCassette) and cassette.plain_sse is not None:
        return iter(cassette.plain_sse)
    frames = framed(cassette.dialect.framing, host.name if host is not None else None)
    return _sse_pieces(cassette, on_directive, realtime, encode, frames)


def _delimited(
    cassette: Cassette, on_directive: DirectiveHandler, realtime: bool, delimited: Delimited
) -> Iterator[Piece]:
    """The events as one `Delimited` body (see `sse_pieces`)."""
    first = True

    def encode(data: dict[str, Any]) -> bytes:
        nonlocal first
        before, first = (delimited.opening if first else delimited.separator), False
        return before + delimited.encode(data)

    for piece in _sse_pieces(cassette, on_directive, realtime, encode):
        yield piece
        if isinstance(piece, Cut):
            return
    yield (delimited.opening if first else b"") + delimited.closing


def _sse_pieces(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    realtime: bool,
    encode: Callable[[dict[str, Any]], bytes] | None = None,
    frames: Framed | None = None,
) -> Iterator[Piece]:
    pacer = RealtimePacer() if realtime else None
    done = cassette.dialect.framing.done
    cut_at: int | None = None
    frame_fault: str | None = None
    for line in cassette.lines():
        data = line.data
        encoded = None
        if line.kind == "event":
            encoded = cassette.sse(line) if encode is None else encode(data)
        if encoded is None and done is not None and data["harness"] == DONE:
            encoded = done  # the provider's end-of-body line: bytes, as an event's
        if encoded is not None:
            if frame_fault is not None:
                encoded, ends = broken_frame(encoded, frame_fault)
                frame_fault = None
                if ends:  # the body ends inside the frame: no cut, the answer is over
                    yield encoded
                    return
            if cut_at is not None:
                yield encoded[:cut_at]
                yield Cut()
                return
            yield encoded
            continue
        name = data["harness"]
        if name == FRAME:
            if frames is None:
                raise ReplayError(f"{cassette.path}:{line.number}: {UNFRAMED}")
            if "fault" in data:
                frame_fault = str(data["fault"])
            else:
                yield own_frame(data)
        elif name == STALL:
            yield Stall(int(data["ms"]))
        elif name == CUT:
            if "after_bytes" not in data:
                yield Cut()
                return
            cut_at = int(data["after_bytes"])
        else:
            if pacer is not None and (due := pacer.due(data)) is not None:
                wait_ms = round((due - time.monotonic()) * 1000)
                if wait_ms > 0:
                    yield Stall(wait_ms, paced=True)
            on_directive(data)
    if cut_at is not None:  # a mid-event cut with no event after it: cut at the end
        yield Cut()


def unframed_line(cassette: Cassette, host: str | None) -> int | None:
    """The number of `cassette`'s first `frame` line if it is served as SSE on `host`
    (None: the direct API), which has no frame to break; else None."""
    if isinstance(cassette, KeptCassette) and cassette.plain_sse is not None:
        return None
    if framed(cassette.dialect.framing, host) is not None:
        return None
    for line in cassette.lines():
        if line.kind == "directive" and line.data["harness"] == FRAME:
            return line.number
    return None


def _check_framed(cassette: Cassette, host: Host | None) -> None:
    """`ReplayError` when a cassette with `frame` lines is asked for where it is served
    as SSE: at once, not mid-answer."""
    number = unframed_line(cassette, host.name if host is not None else None)
    if number is not None:
        raise ReplayError(f"{cassette.path}:{number}: {UNFRAMED}")


def _http_error(cassette: Cassette) -> dict[str, Any] | None:
    """The cassette's `http_error` line, if its answer is one (it stands before any event)."""
    for line in cassette.lines():
        if line.kind == "event":
            return None
        if line.data["harness"] == HTTP_ERROR:
            return line.data
    return None


def _json_body(value: Any) -> Iterator[Piece]:
    yield json.dumps(value, ensure_ascii=False).encode()


def _error_response(status: int, body: Any, headers: dict[str, str]) -> PlannedResponse:
    return PlannedResponse(status, {**JSON_HEADERS, **headers}, _json_body(body))


def _message_pieces(cassette: Cassette) -> PlannedResponse:
    """The non-streaming answer: the JSON the events fold into (a `Message`, a
    `chat.completion`, a `response`), after any stall; a cut drops it half-sent."""
    events: list[dict[str, Any]] = []
    before: list[Piece] = []
    cut = False
    for line in cassette.lines():
        if line.kind == "event":
            events.append(line.data)
        elif line.data["harness"] == STALL:
            before.append(Stall(int(line.data["ms"])))
        elif line.data["harness"] == CUT:
            cut = True
            break
    try:
        message = cassette.dialect.framing.answer(events)
    except APIErrorEvent as error:  # an API error line: the HTTP error it stands for
        return _error_response(error.status_code or 500, error.body, {})
    except ValueError as error:
        raise ReplayError(
            f"{cassette.path}: cannot answer a non-streaming request: {error}"
        ) from None
    body = json.dumps(message, ensure_ascii=False).encode()
    tail: list[Piece] = [body[: len(body) // 2], Cut()] if cut else [body]
    return PlannedResponse(200, dict(JSON_HEADERS), iter([*before, *tail]))


def replay_error_response(
    error: Exception, found: Provider | None = None, path: str = ""
) -> PlannedResponse:
    """How a transport or `harness serve` answers a request the cassettes cannot (`error`:
    a `ReplayError`, a name no cassette has): a 404 the SDK does not retry, in the error
    shape of the host whose paths `path` is at (Bedrock's at any `/model/{id}/...`:
    `error_answer_at`), else of the provider `found` the request is for (its framing's
    `error_answer`; Anthropic's when it has none), whose message is the error's, so the
    code under test fails with that line whichever SDK reads it (boto3 reads a message
    only where Bedrock puts one, google-genai a status only where Google does)."""
    message = f"stream-harness: {error}"
    answer = error_answer_at(path, found)
    body = (
        answer(404, message)
        if answer is not None
        else {"type": "error", "error": {"type": "not_found_error", "message": message}}
    )
    return _error_response(404, body, {"x-should-retry": "false"})


def plan_response(
    cassette: Cassette,
    *,
    stream: bool,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    realtime: bool = False,
    host: Host | None = None,
    delimited: Delimited | None = None,
) -> PlannedResponse:
    """The answer the API would give a request that `cassette` recorded the answer to.

    `stream` is whether the request streams (its own `"stream"` field, or what its path
    says: `Framing.streamed`); `realtime` paces a stream at its
    recorded `at` offsets; `host` is where the request went (None: the direct API), whose
    framing a stream travels in; `delimited` a stream framed otherwise than as SSE
    (Gemini's streamed JSON array). A non-streaming answer that cannot
    be built from the events raises `ReplayError`; a bad cassette raises `CassetteError`.
    """
    error = _http_error(cassette)
    if error is not None:
        headers = {str(k).lower(): str(v) for k, v in (error.get("headers") or {}).items()}
        return _error_response(int(error["status"]), error.get("body"), headers)
    if not stream:
        planned = _message_pieces(cassette)
        planned.body = chunking.cut(planned.body)
        return planned
    _check_framed(cassette, host)
    pieces = sse_pieces(cassette, on_directive, realtime=realtime, host=host, delimited=delimited)
    kind = (
        delimited.content_type if delimited is not None else cassette.dialect.framing.content_type
    )
    kind = host.content_type if host is not None else kind
    headers = {"content-type": kind} if kind is not None else dict(SSE_HEADERS)
    return PlannedResponse(200, headers, chunking.cut(pieces))
