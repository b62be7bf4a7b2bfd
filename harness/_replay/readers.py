"""Replay of an OpenAI cassette through the real `openai` SDK: its bytes, its readers.

The cassette's events go out as its dialect's SSE bytes (its provider's `framing`),
cut as a `Chunking` says, through the in-process `ReplayTransport` to an `openai.OpenAI`
or `AsyncOpenAI` (no socket, a dummy key, no retries), whose own SSE decoder, JSON
parsing and stream reader run; the adapter reads the SDK objects it hands on, told what
the cassette header's request implies, as direct replay tells it (a forced
`tool_choice`, a resume's `starting_after`: `Provider.request_options`). Each
dialect has two readers (`READERS`): `create`, the iteration of `create(stream=True)`,
and `stream`, the SDK's helper (`chat.completions.stream()`, `responses.stream()`),
which accumulates the answer itself and so may raise first (docs/replay.md).

An error line mid-stream is raised by the SDK as `openai.APIError` before any reader
sees it; it is handed to the adapter as the line it was (`{"error": body}`), so that the
outcome's code is the one direct replay gives. A dropped or timed-out body is the SDK's
`APIConnectionError` / `APITimeoutError`, reported by the transport error under it
(`harness._replay.direct.failure_to_json`). The SDK is imported here, at the first call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Any, Final

from harness._cassette.codec import Cassette, DirectiveHandler
from harness._events import ModelEvent
from harness._exceptions import InputError
from harness._providers import provider as provider_of
from harness._replay.clients import ClientKind, openai_async_kind, openai_sdk, openai_sync_kind
from harness._replay.plan import Chunking
from harness._replay.replayer import Replayer

__all__ = [
    "BASE_URL",
    "READERS",
    "areplay_openai_via_sdk",
    "client_events",
    "replay_openai_via_sdk",
]

#: The base URL an OpenAI client is given: requests go to `/v1/...` on it.
BASE_URL: Final = "https://api.openai.com/v1"
#: The reader a replay goes through unless told (the iteration of `create(stream=True)`).
DEFAULT_READER: Final = "create"


def _reading(name: str) -> ModuleType:
    """The dialect's reading module (`create` and `stream` readers, driver options)."""
    return provider_of(name).module("reading")


#: The readers each OpenAI dialect is replayed through.
READERS: Final = ("create", "stream")


def _reader(provider: str, reader: str, *, asynchronous: bool) -> Callable[[Any], Any]:
    if reader not in READERS:
        raise InputError(f"reader must be one of {', '.join(READERS)}, not {reader!r}")
    module = _reading(provider)
    return getattr(module, f"{'a' if asynchronous else ''}{reader}_items")  # type: ignore[no-any-return]


def _driver_options(cassette: Cassette) -> dict[str, Any]:
    """What the adapter is told for a cassette read through the SDK: what its header's
    request implies, as direct replay is told (a forced `tool_choice`, a resume's
    `starting_after`), and what the reader asks (Chat's `[DONE]`, consumed by the SDK)."""
    name = cassette.provider
    return {**provider_of(name).request_options(cassette.header), **_reading(name).DRIVER_OPTIONS}


def _replayer(
    cassette: Cassette, chunking: Chunking, on_directive: DirectiveHandler, realtime: bool
) -> Replayer:
    return Replayer(
        [cassette], match_on=None, chunking=chunking, realtime=realtime, on_directive=on_directive
    )


def _client(kind: ClientKind, replayer: Replayer, read_timeout: float | None) -> Any:
    """An OpenAI client of `kind` answered by `replayer` in-process: a dummy key, no
    retries (the plan is played once), the read timeout a stall is measured against."""
    from harness._replay.sdk import ReplayTransport

    http_client = kind.http_client(transport=ReplayTransport(replayer), base_url=BASE_URL)
    return kind.sdk(
        api_key="replay-only",
        base_url=BASE_URL,
        max_retries=0,
        timeout=read_timeout,
        http_client=http_client,
    )


def _line_of(openai: ModuleType, error: Exception) -> dict[str, Any] | None:
    """The error line the SDK raised `error` for mid-stream, or None for any other error."""
    if isinstance(error, openai.APIStatusError | openai.APIConnectionError):
        return None
    if isinstance(error, openai.APIError):
        return {"error": error.body}
    return None


def _read(openai: ModuleType, items: Iterator[Any]) -> Iterator[Any]:
    """The items a reader yields, an error line the SDK raised for handed on as its line."""
    try:
        yield from items
    except Exception as error:
        line = _line_of(openai, error)
        if line is None:
            raise
        yield line


def client_events(client: Any, provider: str, reader: str = DEFAULT_READER) -> Iterator[ModelEvent]:
    """Internal events of one streamed request `client` (an `openai.OpenAI` whose transport
    answers from cassettes of `provider`) makes through `reader`; the client stays open."""
    read = _reader(provider, reader, asynchronous=False)
    drive = provider_of(provider).to_model_events
    items = _read(openai_sdk(), read(client))
    return drive(items, **_reading(provider).DRIVER_OPTIONS)


def _items(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    realtime: bool,
    read_timeout: float | None,
    reader: str,
) -> Iterator[Any]:
    openai = openai_sdk()
    read = _reader(cassette.provider, reader, asynchronous=False)
    replayer = _replayer(cassette, chunking, on_directive, realtime)
    client = _client(openai_sync_kind(), replayer, read_timeout)
    try:
        yield from _read(openai, read(client))
    finally:
        client.close()


async def _aitems(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    realtime: bool,
    read_timeout: float | None,
    reader: str,
) -> AsyncIterator[Any]:
    openai = openai_sdk()
    read = _reader(cassette.provider, reader, asynchronous=True)
    replayer = _replayer(cassette, chunking, on_directive, realtime)
    client = _client(openai_async_kind(), replayer, read_timeout)
    try:
        async for item in read(client):
            yield item
    except Exception as error:
        line = _line_of(openai, error)
        if line is None:
            raise
        yield line
    finally:
        await client.close()


def replay_openai_via_sdk(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    *,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
) -> Iterator[ModelEvent]:
    """Internal events of an OpenAI cassette, read by `openai.OpenAI` through `reader`."""
    _reader(cassette.provider, reader, asynchronous=False)  # a bad reader fails here, at once
    drive = provider_of(cassette.provider).to_model_events
    items = _items(cassette, chunking, on_directive, realtime, read_timeout, reader)
    return drive(items, **_driver_options(cassette))


def areplay_openai_via_sdk(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    *,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
) -> AsyncIterator[ModelEvent]:
    """The same through `openai.AsyncOpenAI` and the async driver."""
    _reader(cassette.provider, reader, asynchronous=True)
    drive = provider_of(cassette.provider).ato_model_events
    items = _aitems(cassette, chunking, on_directive, realtime, read_timeout, reader)
    return drive(items, **_driver_options(cassette))
