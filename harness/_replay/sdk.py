"""Replay through the SDK's real wire path: SSE bytes, cut into chunks, read by the SDK.

A cassette's events are encoded as the API sends them (for Messages `event: <type>\\ndata:
<json>\\n\\n` per event; each event ends with the blank line the SDK needs to emit it: its
provider's `framing`), optionally re-cut into chunks at arbitrary byte offsets
(mid-line, mid-UTF-8 character), and served to a real client of the cassette's
provider's SDK (`anthropic.Anthropic`, `openai.OpenAI`, or their async twins) through an
in-process `httpx2` transport: no socket is opened. The adapter then reads the SDK's own
stream, so the SDK's SSE decoder, JSON parsing and `error`-event handling all run, as in
a live call (`harness._replay.readers`, through the provider's `reading`).

The answer is planned by `harness._replay.plan` (HTTP errors, cuts and stalls included)
and carried out here by `ReplayTransport`; `{"harness": "at", "ms": N}` offsets are
slept to when a `RealtimePacer` is given. `replay_events` and the outcome functions here
read the cassette's header once and go the way its provider says.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx2

from harness._cassette.codec import (
    Cassette,
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._events import ModelEvent
from harness._exceptions import CassetteError, InputError, ReplayError
from harness._modes import Via
from harness._providers import Provider
from harness._providers.wire import request_path
from harness._replay.direct import Outcome, acollect, areplay, collect, replay
from harness._replay.plan import (
    DEFAULT_READ_TIMEOUT,
    Chunking,
    Piece,
    PlannedResponse,
    Stall,
    connection_cut,
    read_timed_out,
    replay_error_response,
)
from harness._replay.replayer import Replayer, provider_at

__all__ = [
    "ReplayTransport",
    "aoutcome_via_sdk",
    "areplay_events",
    "areplay_via_sdk",
    "async_sdk_stream",
    "outcome_via_sdk",
    "replay_events",
    "replay_via_sdk",
    "sdk_stream",
]


class _PlannedStream(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body carrying out a plan's pieces for a sync or an async reader.

    A `Stall` sleeps; when the request's read timeout is shorter, it waits that long and
    raises `ReadTimeout`, as a socket would. A `Cut` raises `RemoteProtocolError` with the
    message httpx gives when a real server drops the connection mid-body.
    """

    def __init__(self, pieces: Iterator[Piece], read_timeout: float | None) -> None:
        self._pieces = pieces
        self._read_timeout = read_timeout

    def _wait(self, piece: Piece) -> tuple[float, bool]:
        """What a piece that is not bytes asks of either reader: the seconds to wait, and
        whether a read timeout follows them; a cut raises at once."""
        if not isinstance(piece, Stall):
            raise connection_cut()
        seconds = piece.ms / 1000
        timeout = self._read_timeout
        if timeout is not None and timeout < seconds:
            return timeout, True
        return seconds, False

    def __iter__(self) -> Iterator[bytes]:
        for piece in self._pieces:
            if isinstance(piece, bytes):  # almost every piece: one step, in one generator
                yield piece
                continue
            seconds, timed_out = self._wait(piece)
            time.sleep(seconds)
            if timed_out:
                raise read_timed_out()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            if isinstance(piece, bytes):
                yield piece
                continue
            seconds, timed_out = self._wait(piece)
            await asyncio.sleep(seconds)
            if timed_out:
                raise read_timed_out()


def _raising(error: Exception) -> Iterator[Piece]:
    raise error
    yield b""  # pragma: no cover - makes this a generator: the error comes at the first read


class ReplayTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An in-process transport: each request is answered by `replayer`, no socket opened.

    A request the cassettes cannot answer gets `replay_error_response` (a 404 the SDK
    does not retry, carrying the `ReplayError`'s line, in the error shape its SDK reads:
    the path's, else that of the cassettes' provider); an unusable cassette raises its
    `CassetteError` from the body, so a streaming reader gets it unwrapped.
    """

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    def _respond(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        path = request_path(request.url.raw_path)
        try:
            planned = self.replayer.respond(
                request.method, path, request.headers, body, dict(request.url.params)
            )
        except ReplayError as error:
            planned = replay_error_response(error, provider_at(path) or self._read_as(), path)
        except CassetteError as error:  # kept in the replayer's errors, raised from the body
            planned = PlannedResponse(200, {}, _raising(error))
        timeout = request.extensions.get("timeout", {}).get("read")
        return httpx2.Response(
            planned.status,
            headers=planned.headers,
            stream=_PlannedStream(planned.body, timeout),
            request=request,
        )

    def _read_as(self) -> Provider | None:
        """The provider whose SDK reads this transport's answers, for a refusal at a path
        of no provider's (google-genai's `countTokens`): its cassettes' (one client reads
        one SDK's), so that the SDK reads the refusal's status and message."""
        cassettes = self.replayer.cassettes
        return cassettes[0].dialect if cassettes else None

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, request.read())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, await request.aread())


def _later(make: Callable[[], Iterator[Any]]) -> Iterator[Any]:
    """What `make()` gives, made at the first read: a cassette that cannot be read raises
    there, as a stream read from a socket would."""
    yield from make()


async def _alater(make: Callable[[], AsyncIterator[Any]]) -> AsyncIterator[Any]:
    """`_later` for an async stream."""
    async for item in make():
        yield item


def sdk_stream(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    """The SDK's own stream for the cassette (for Messages its `RawMessageStreamEvent`s),
    read by the sync client of its provider's SDK (whose timeout is `read_timeout`: a
    longer stall waits that long, then `ReadTimeout`)."""
    from harness._replay.readers import items

    return _later(
        lambda: items(read_cassette(source), chunking, on_directive, realtime, read_timeout)
    )


def async_sdk_stream(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[Any]:
    """The same stream read by the SDK's async client."""
    from harness._replay.readers import aitems

    return _alater(
        lambda: aitems(read_cassette(source), chunking, on_directive, realtime, read_timeout)
    )


def replay_via_sdk(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[ModelEvent]:
    """Internal events of the cassette, read through the SDK's wire path."""
    from harness._replay.readers import replay_via_client

    return _later(
        lambda: replay_via_client(
            read_cassette(source),
            chunking,
            on_directive,
            realtime=realtime,
            read_timeout=read_timeout,
        )
    )


def areplay_via_sdk(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[ModelEvent]:
    """The async driver over the SDK's async client's stream."""
    from harness._replay.readers import areplay_via_client

    return _alater(
        lambda: areplay_via_client(
            read_cassette(source),
            chunking,
            on_directive,
            realtime=realtime,
            read_timeout=read_timeout,
        )
    )


def outcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the sync SDK client to the end; a `CassetteError` still raises."""
    return collect(replay_events(source, via=Via.SDK, chunking=chunking))


async def aoutcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the async SDK client to the end."""
    return await acollect(areplay_events(source, via=Via.SDK, chunking=chunking))


def _path(
    via: str | Via, chunking: Chunking, reader: str | None = None, host: str | None = None
) -> Via:
    """Which path a replay takes; `InputError` for chunking, a reader or a host without
    the wire path."""
    path = Via.parse(via)
    if path is Via.DIRECT and chunking != Chunking():
        raise InputError("chunking applies to via='sdk' only")
    if path is Via.DIRECT and reader is not None:
        raise InputError("reader applies to via='sdk' only")
    if path is Via.DIRECT and host is not None:
        raise InputError("host applies to via='sdk' only")
    return path


def _opened(source: CassetteSource, reader: str | None) -> tuple[Cassette, Provider] | None:
    """The cassette, opened once, and the provider its header names, whose readers
    `reader` must be one of (`InputError`); None for a header that cannot be read: its
    error raises as the default provider's path raises it, at the first read."""
    from harness._replay.readers import check_reader

    try:
        cassette = read_cassette(source)
    except CassetteError:
        return None
    found = cassette.dialect
    if reader is not None:
        check_reader(found, reader)
    return cassette, found


def _via_sdk(
    source: CassetteSource,
    reader: str | None,
    asynchronous: bool,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    realtime: bool,
    read_timeout: float | None,
    host: str | None = None,
) -> Any:
    from harness._replay.readers import areplay_via_client, replay_via_client

    opened = _opened(source, reader)
    if opened is None:  # raises at the first read, as a stream read from a socket would
        replay_of = areplay_via_sdk if asynchronous else replay_via_sdk
        return replay_of(
            source, chunking, on_directive, realtime=realtime, read_timeout=read_timeout
        )
    cassette, found = opened
    replay_with = areplay_via_client if asynchronous else replay_via_client
    return replay_with(
        cassette,
        chunking,
        on_directive,
        realtime=realtime,
        read_timeout=read_timeout,
        reader=reader or found.readers[0],
        host=host,
    )


def replay_events(
    source: CassetteSource,
    *,
    via: str | Via = Via.DIRECT,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    on_directive: DirectiveHandler = pass_over,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    reader: str | None = None,
    host: str | None = None,
) -> Iterator[ModelEvent]:
    """A cassette's internal events, lazily: the one replay entry point.

    `via="direct"` builds the SDK's event objects from the lines; `via="sdk"` sends the
    bytes through a real client, cut as `chunking` says. `realtime` sleeps until each
    `at` directive's offset; `on_directive` is called with each directive line the path
    does not carry out itself. Raises as the live stream would: a stall longer than
    `read_timeout` seconds (the SDK's own 600 s by default) ends in `ReadTimeout`, at once
    directly, after `read_timeout` seconds through the SDK.

    Through the SDK, the cassette goes to a client of its provider's SDK (an OpenAI one to
    `openai.OpenAI`); `reader` picks the SDK's reader: `"create"` (the default, every
    dialect's: the iteration of `create(stream=True)`) or, for OpenAI's, `"stream"` (its
    helper, `chat.completions.stream()` / `responses.stream()`). `host` picks where it
    is served (`bedrock`, `vertex`: `AnthropicBedrock` reading Bedrock's frames,
    `AnthropicVertex`; `direct`); None, the host the cassette's header names, else the
    direct API (`harness._replay.readers.sdk_on`).
    """
    if _path(via, chunking, reader, host) is Via.SDK:
        events: Iterator[ModelEvent] = _via_sdk(
            source, reader, False, chunking, on_directive, realtime, read_timeout, host
        )
        return events
    return replay(source, on_directive, realtime=realtime, read_timeout=read_timeout)


def areplay_events(
    source: CassetteSource,
    *,
    via: str | Via = Via.DIRECT,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    on_directive: DirectiveHandler = pass_over,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    reader: str | None = None,
    host: str | None = None,
) -> AsyncIterator[ModelEvent]:
    """`replay_events` for the async driver (`ato_model_events`), with the same options;
    `realtime` waits without blocking the event loop."""
    if _path(via, chunking, reader, host) is Via.SDK:
        events: AsyncIterator[ModelEvent] = _via_sdk(
            source, reader, True, chunking, on_directive, realtime, read_timeout, host
        )
        return events
    return areplay(source, on_directive, realtime=realtime, read_timeout=read_timeout)
