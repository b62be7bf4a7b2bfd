"""Replay through the SDK's real wire path: SSE bytes, cut into chunks, read by the SDK.

A cassette's events are encoded as the API sends them (`event: <type>\\ndata: <json>\\n\\n`
per event; each event ends with the blank line the SDK needs to emit it), optionally
re-cut into chunks at arbitrary byte offsets (mid-line, mid-UTF-8 character), and served
to a real `anthropic.Anthropic` or `AsyncAnthropic` through an in-process `httpx2`
transport: no socket is opened. The adapter then reads the SDK's own stream, so the
SDK's SSE decoder, JSON parsing and `error`-event handling all run, as in a live call.

The answer is planned by `harness._replay.plan` (HTTP errors, cuts and stalls included)
and carried out here by `ReplayTransport`; `{"harness": "at", "ms": N}` offsets are
slept to when a `RealtimePacer` is given. An OpenAI cassette takes the same transport
under an `openai.OpenAI` instead (`harness._replay.readers`): `replay_events` and the
outcome functions here read the cassette's header and send it there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import TYPE_CHECKING, Any, Final

import httpx2

from harness._cassette.codec import (
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._events import ModelEvent
from harness._exceptions import ANTHROPIC, CassetteError, InputError, ReplayError
from harness._modes import Via
from harness._providers.anthropic.adapter import ato_model_events, to_model_events
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
from harness._replay.replayer import Replayer

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

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

BASE_URL: Final = "https://api.anthropic.com"


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
    does not retry, carrying the `ReplayError`'s line); an unusable cassette raises its
    `CassetteError` from the body, so a streaming reader gets it unwrapped.
    """

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    def _respond(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        try:
            planned = self.replayer.respond(
                request.method, request.url.path, request.headers, body, dict(request.url.params)
            )
        except ReplayError as error:
            planned = replay_error_response(error)
        except CassetteError as error:  # kept in the replayer's errors, raised from the body
            planned = PlannedResponse(200, {}, _raising(error))
        timeout = request.extensions.get("timeout", {}).get("read")
        return httpx2.Response(
            planned.status,
            headers=planned.headers,
            stream=_PlannedStream(planned.body, timeout),
            request=request,
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, request.read())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, await request.aread())


def _request() -> dict[str, Any]:
    """A minimal streamed Messages request; the transport ignores it.

    The model is not the cassette's: the SDK warns on a deprecated model name at request
    time, and a replay of an old recording must not.
    """
    return {
        "model": "harness-replay",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "replay"}],
        "stream": True,
    }


def _client(transport: ReplayTransport, read_timeout: float | None) -> Anthropic:
    from anthropic import Anthropic

    return Anthropic(
        api_key="replay-only",
        base_url=BASE_URL,
        max_retries=0,
        timeout=read_timeout,
        http_client=httpx2.Client(transport=transport, base_url=BASE_URL),
    )


def _async_client(transport: ReplayTransport, read_timeout: float | None) -> AsyncAnthropic:
    from anthropic import AsyncAnthropic

    return AsyncAnthropic(
        api_key="replay-only",
        base_url=BASE_URL,
        max_retries=0,
        timeout=read_timeout,
        http_client=httpx2.AsyncClient(transport=transport, base_url=BASE_URL),
    )


def _transport(
    source: CassetteSource, chunking: Chunking, on_directive: DirectiveHandler, realtime: bool
) -> ReplayTransport:
    """The one replay's transport, its options given to the replayer when it is made."""
    replayer = Replayer(
        [read_cassette(source)],
        match_on=None,
        chunking=chunking,
        realtime=realtime,
        on_directive=on_directive,
    )
    return ReplayTransport(replayer)


def sdk_stream(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Generator[Any, None, None]:
    """The SDK's own stream of `RawMessageStreamEvent`s for the cassette, sync client
    (whose timeout is `read_timeout`: a longer stall waits that long, then `ReadTimeout`)."""
    client = _client(_transport(source, chunking, on_directive, realtime), read_timeout)
    try:
        yield from client.messages.create(**_request())
    finally:
        client.close()


async def async_sdk_stream(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncGenerator[Any, None]:
    """The same stream read by `AsyncAnthropic`."""
    client = _async_client(_transport(source, chunking, on_directive, realtime), read_timeout)
    try:
        stream = await client.messages.create(**_request())
        async for event in stream:
            yield event
    finally:
        await client.close()


def replay_via_sdk(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[ModelEvent]:
    """Internal events of the cassette, read through the SDK's wire path."""
    stream = sdk_stream(
        source, chunking, on_directive, realtime=realtime, read_timeout=read_timeout
    )
    return to_model_events(stream)


def areplay_via_sdk(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[ModelEvent]:
    """The async driver over `AsyncAnthropic`'s stream."""
    stream = async_sdk_stream(
        source, chunking, on_directive, realtime=realtime, read_timeout=read_timeout
    )
    return ato_model_events(stream)


def outcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the sync SDK client to the end; a `CassetteError` still raises."""
    cassette, is_openai = _opened(source, None)
    if is_openai:
        return collect(replay_events(cassette, via=Via.SDK, chunking=chunking))
    stream = sdk_stream(cassette, chunking)
    with contextlib.closing(stream):
        return collect(to_model_events(stream))


async def aoutcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the async SDK client to the end."""
    cassette, is_openai = _opened(source, None)
    if is_openai:
        return await acollect(areplay_events(cassette, via=Via.SDK, chunking=chunking))
    stream = async_sdk_stream(cassette, chunking)
    async with contextlib.aclosing(stream):
        return await acollect(ato_model_events(stream))


def _path(via: str | Via, chunking: Chunking, reader: str | None = None) -> Via:
    """Which path a replay takes; `InputError` for chunking or a reader without the wire path."""
    path = Via.parse(via)
    if path is Via.DIRECT and chunking != Chunking():
        raise InputError("chunking applies to via='sdk' only")
    if path is Via.DIRECT and reader is not None:
        raise InputError("reader applies to via='sdk' only")
    return path


def _opened(source: CassetteSource, reader: str | None) -> tuple[CassetteSource, bool]:
    """The cassette, opened once, and whether it is an OpenAI one (read through
    `harness._replay.readers`); an Anthropic one has the one reader (`InputError`).
    A header that cannot be read leaves `source` as it is: its error raises as the
    Anthropic path raises it, at the first read."""
    try:
        cassette = read_cassette(source)
    except CassetteError:
        return source, False
    if cassette.provider != ANTHROPIC:
        return cassette, True
    if reader not in (None, "create"):
        raise InputError(f"an Anthropic cassette is replayed through create() only, not {reader!r}")
    return cassette, False


def replay_events(
    source: CassetteSource,
    *,
    via: str | Via = Via.DIRECT,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    on_directive: DirectiveHandler = pass_over,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    reader: str | None = None,
) -> Iterator[ModelEvent]:
    """A cassette's internal events, lazily: the one replay entry point.

    `via="direct"` builds the SDK's event objects from the lines; `via="sdk"` sends the
    bytes through a real client, cut as `chunking` says. `realtime` sleeps until each
    `at` directive's offset; `on_directive` is called with each directive line the path
    does not carry out itself. Raises as the live stream would: a stall longer than
    `read_timeout` seconds (the SDK's own 600 s by default) ends in `ReadTimeout`, at once
    directly, after `read_timeout` seconds through the SDK.

    An OpenAI cassette goes through `openai.OpenAI`; `reader` picks the SDK's reader:
    `"create"` (the default: the iteration of `create(stream=True)`) or `"stream"` (its
    helper, `chat.completions.stream()` / `responses.stream()`).
    """
    if _path(via, chunking, reader) is Via.SDK:
        cassette, is_openai = _opened(source, reader)
        if is_openai:
            from harness._replay.readers import replay_openai_via_sdk

            return replay_openai_via_sdk(
                read_cassette(cassette),
                chunking,
                on_directive,
                realtime=realtime,
                read_timeout=read_timeout,
                reader=reader or "create",
            )
        return replay_via_sdk(
            cassette, chunking, on_directive, realtime=realtime, read_timeout=read_timeout
        )
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
) -> AsyncIterator[ModelEvent]:
    """`replay_events` for the async driver (`ato_model_events`), with the same options;
    `realtime` waits without blocking the event loop."""
    if _path(via, chunking, reader) is Via.SDK:
        cassette, is_openai = _opened(source, reader)
        if is_openai:
            from harness._replay.readers import areplay_openai_via_sdk

            return areplay_openai_via_sdk(
                read_cassette(cassette),
                chunking,
                on_directive,
                realtime=realtime,
                read_timeout=read_timeout,
                reader=reader or "create",
            )
        return areplay_via_sdk(
            cassette, chunking, on_directive, realtime=realtime, read_timeout=read_timeout
        )
    return areplay(source, on_directive, realtime=realtime, read_timeout=read_timeout)
