"""Replay through the SDK's real wire path: SSE bytes, cut into chunks, read by the SDK.

A cassette's events are encoded as the API sends them (`event: <type>\\ndata: <json>\\n\\n`
per event; each event ends with the blank line the SDK needs to emit it), optionally
re-cut into chunks at arbitrary byte offsets (mid-line, mid-UTF-8 character), and served
to a real `anthropic.Anthropic` or `AsyncAnthropic` through an in-process `httpx2`
transport: no socket is opened. The adapter then reads the SDK's own stream, so the
SDK's SSE decoder, JSON parsing and `error`-event handling all run, as in a live call.

Directive lines pass over, except `{"harness": "at", "ms": N}` (the arrival offset a
recording keeps) when a `RealtimePacer` is given: it sleeps until that offset.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import httpx2

from harness._adapter import ato_model_events, to_model_events
from harness._cassette import (
    AT_DIRECTIVE,
    Cassette,
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._events import ModelEvent
from harness._exceptions import InputError
from harness._modes import Via
from harness._replay import Outcome, acollect, areplay, collect, replay
from harness._sse import encode_event

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

__all__ = [
    "Chunking",
    "RealtimePacer",
    "aoutcome_via_sdk",
    "areplay_events",
    "areplay_via_sdk",
    "async_sdk_stream",
    "outcome_via_sdk",
    "replay_events",
    "replay_via_sdk",
    "sdk_stream",
    "sse_bytes",
]

#: Largest chunk drawn when only `--chunk-seed` is given.
DEFAULT_SEEDED_MAX: Final = 16
BASE_URL: Final = "https://api.anthropic.com"


class RealtimePacer:
    """A directive handler that sleeps until each `at` directive's offset from its creation."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self._start = time.monotonic()
        self._sleep = sleep

    def __call__(self, directive: dict[str, Any]) -> None:
        if directive.get("harness") != AT_DIRECTIVE:
            return
        ms = directive.get("ms")
        if isinstance(ms, int | float):
            wait = self._start + ms / 1000 - time.monotonic()
            if wait > 0:
                self._sleep(wait)


@dataclass(frozen=True, slots=True)
class Chunking:
    """How the byte stream is cut before the SDK reads it.

    Neither set: one chunk an event (a server flushing after each event). `size` alone:
    chunks of exactly `size` bytes (the last one shorter). `seed`: chunk lengths drawn
    from 1..`size` (default 16) by `random.Random(seed)`, the same cuts for the same seed.
    """

    size: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and self.size < 1:
            raise ValueError(f"chunk size must be at least 1, not {self.size}")

    def cut(self, pieces: Iterable[bytes]) -> Iterator[bytes]:
        """Re-cut a stream of byte pieces, lazily, holding at most one chunk."""
        if self.size is None and self.seed is None:
            yield from pieces
            return
        rng = random.Random(self.seed) if self.seed is not None else None
        largest = self.size or DEFAULT_SEEDED_MAX

        def next_length() -> int:
            return rng.randint(1, largest) if rng is not None else largest

        buffer = bytearray()
        wanted = next_length()
        for piece in pieces:
            buffer += piece
            while len(buffer) >= wanted:
                yield bytes(buffer[:wanted])
                del buffer[:wanted]
                wanted = next_length()
        if buffer:
            yield bytes(buffer)


def sse_bytes(cassette: Cassette, on_directive: DirectiveHandler = pass_over) -> Iterator[bytes]:
    """The cassette's events as SSE bytes, one piece an event; directives go to `on_directive`."""
    for line in cassette.lines():
        if line.kind == "directive":
            on_directive(line.data)
        else:
            yield encode_event(line.data)


class _ChunkStream(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body that yields pre-cut chunks to a sync or an async reader."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class CassetteTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An in-process transport answering every request with the cassette as an SSE body."""

    def __init__(
        self,
        cassette: Cassette,
        chunking: Chunking = Chunking(),
        on_directive: DirectiveHandler = pass_over,
    ) -> None:
        self.cassette = cassette
        self.chunking = chunking
        self.on_directive = on_directive

    def _respond(self, request: httpx2.Request) -> httpx2.Response:
        chunks = self.chunking.cut(sse_bytes(self.cassette, self.on_directive))
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream; charset=utf-8"},
            stream=_ChunkStream(chunks),
            request=request,
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        return self._respond(request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self._respond(request)


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


def _client(transport: CassetteTransport) -> Anthropic:
    from anthropic import Anthropic

    return Anthropic(
        api_key="replay-only",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx2.Client(transport=transport, base_url=BASE_URL),
    )


def _async_client(transport: CassetteTransport) -> AsyncAnthropic:
    from anthropic import AsyncAnthropic

    return AsyncAnthropic(
        api_key="replay-only",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport, base_url=BASE_URL),
    )


def sdk_stream(
    source: CassetteSource,
    chunking: Chunking = Chunking(),
    on_directive: DirectiveHandler = pass_over,
) -> Generator[Any, None, None]:
    """The SDK's own stream of `RawMessageStreamEvent`s for the cassette, sync client."""
    cassette = read_cassette(source)
    client = _client(CassetteTransport(cassette, chunking, on_directive))
    try:
        yield from client.messages.create(**_request())
    finally:
        client.close()


async def async_sdk_stream(
    source: CassetteSource, chunking: Chunking = Chunking()
) -> AsyncGenerator[Any, None]:
    """The same stream read by `AsyncAnthropic`."""
    cassette = read_cassette(source)
    client = _async_client(CassetteTransport(cassette, chunking))
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
) -> Iterator[ModelEvent]:
    """Internal events of the cassette, read through the SDK's wire path."""
    return to_model_events(sdk_stream(source, chunking, on_directive))


def areplay_via_sdk(
    source: CassetteSource, chunking: Chunking = Chunking()
) -> AsyncIterator[ModelEvent]:
    """The async driver over `AsyncAnthropic`'s stream."""
    return ato_model_events(async_sdk_stream(source, chunking))


def outcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the sync SDK client to the end; a `CassetteError` still raises."""
    stream = sdk_stream(source, chunking)
    with contextlib.closing(stream):
        return collect(to_model_events(stream))


async def aoutcome_via_sdk(source: CassetteSource, chunking: Chunking = Chunking()) -> Outcome:
    """Replay through the async SDK client to the end."""
    stream = async_sdk_stream(source, chunking)
    async with contextlib.aclosing(stream):
        return await acollect(ato_model_events(stream))


def replay_events(
    source: CassetteSource,
    *,
    via: str | Via = Via.DIRECT,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
) -> Iterator[ModelEvent]:
    """A cassette's internal events, lazily: the one replay entry point.

    `via="direct"` builds the SDK's event objects from the lines; `via="sdk"` sends the
    bytes through a real client, cut as `chunking` says. `realtime` sleeps until each
    `at` directive's offset. Raises as the live stream would.
    """
    on_directive: DirectiveHandler = RealtimePacer() if realtime else pass_over
    if Via.parse(via) is Via.SDK:
        return replay_via_sdk(source, chunking, on_directive)
    if chunking != Chunking():
        raise InputError("chunking applies to via='sdk' only")
    return replay(source, on_directive)


def areplay_events(
    source: CassetteSource, *, via: str | Via = Via.DIRECT
) -> AsyncIterator[ModelEvent]:
    """The async driver's view of the same cassette (`ato_model_events`)."""
    if Via.parse(via) is Via.SDK:
        return areplay_via_sdk(source)
    return areplay(source)
