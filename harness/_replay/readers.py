"""Replay of a cassette through its provider's real SDK: its bytes, its readers.

The cassette's events go out as its dialect's SSE bytes (its provider's `framing`), cut
as a `Chunking` says, through the in-process `ReplayTransport` to a client of the
provider's SDK (`Provider.sdk`: `anthropic.Anthropic`, `openai.OpenAI`, or their async
twins; no socket, a dummy key, no retries), whose own SSE decoder, JSON parsing and
stream reader run; the adapter reads the objects it hands on, told what the cassette
header's request implies, as direct replay tells it (a forced `tool_choice`, a resume's
`starting_after`: `Provider.request_options`). Which readers a dialect has is its own
(`Provider.readers`, its `reading` module): `create`, the iteration of
`create(stream=True)` (every dialect's, the default), and for OpenAI's `stream`, the
SDK's helper (`chat.completions.stream()`, `responses.stream()`), which accumulates the
answer itself and so may raise first (docs/replay.md).

A cassette is read on a host (`host`: `bedrock`, `vertex`, or `direct`; None, the host
its header names, else the direct API) by the client its provider says reads it there
(`Provider.hosted`: `AnthropicBedrock`, `AnthropicVertex`, built with dummy
credentials): the replayer answers at that host's path, in its framing (Bedrock's
event-stream frames, cut as anywhere at any byte), and the same reader reads the SDK's
stream.

An error line mid-stream that the SDK raises before any reader sees it (the `openai`
SDK's `APIError`) is handed to the adapter as the line it was (its reading's
`error_line`), so that the outcome's code is the one direct replay gives; Anthropic's
SDK error for an `error` event is the outcome's error itself. A dropped or timed-out
body is the SDK's `APIConnectionError` / `APITimeoutError`, reported by the transport
error under it (`harness._replay.direct.failure_to_json`). Any other error is told apart
by whose code raised it, one rule for every SDK (`_handed_on`): the SDK's own, reading
the answer it was served, is its refusal of the stream (`connection_error:<its class>`);
ours (a cassette line that cannot be read, a bug) is raised as it was, unwrapped. The
SDK is imported here, at the first call.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import AsyncIterator, Callable, Iterator
from itertools import dropwhile
from typing import Any, Final

from harness._cassette.codec import Cassette, DirectiveHandler
from harness._events import ModelEvent
from harness._exceptions import CassetteError, InputError, error_chain
from harness._providers import Provider, provider
from harness._providers.frame_rows import UNFRAMED
from harness._providers.sdk import Sdk
from harness._replay.clients import DIRECT, ClientKind, client_replayer
from harness._replay.direct import is_stream_failure, mark_refused
from harness._replay.plan import Chunking, unframed_line
from harness._replay.replayer import Replayer

__all__ = [
    "DEFAULT_READER",
    "aitems",
    "areplay_via_client",
    "check_reader",
    "client_events",
    "items",
    "replay_via_client",
    "sdk_on",
]

#: The reader a replay goes through unless told (the iteration of `create(stream=True)`).
DEFAULT_READER: Final = "create"


def check_reader(found: Provider, reader: str) -> None:
    """`InputError` (one line) unless `reader` is one of the dialect's readers."""
    readers = found.readers
    if reader in readers:
        return
    if len(readers) == 1:
        raise InputError(
            f"a cassette of {found.sdk.named} is replayed through {readers[0]}() only, "
            f"not {reader!r}"
        )
    raise InputError(f"reader must be one of {', '.join(readers)}, not {reader!r}")


def sdk_on(cassette: Cassette, host: str | None) -> Sdk:
    """The SDK client reading `cassette` on `host` (None: its header's host, else the
    direct API's); `InputError` in one line for a host its dialect is not served on."""
    found = cassette.dialect
    named = host or cassette.host or DIRECT
    if named == DIRECT:
        return found.sdk
    sdk = found.hosted.get(named)
    if sdk is None:  # said as `harness faults --list --host` and a header's host say it
        raise InputError(f"host {named!r}: {found.not_served_on(named)}")
    return sdk


def _check_host(cassette: Cassette, host: str | None) -> None:
    """Refuse at once, in one line, a `host` (None: the cassette's own) its dialect is not
    served on (`InputError`), and a `frame` line where the stream is served as SSE, which
    has no frame to break (`CassetteError` at its line)."""
    sdk_on(cassette, host)
    named = host or cassette.host
    number = unframed_line(cassette, None if named == DIRECT else named)
    if number is not None:
        raise CassetteError(str(cassette.path), number, UNFRAMED)


def _reader(found: Provider, reader: str, *, asynchronous: bool) -> Callable[[Any], Any]:
    check_reader(found, reader)
    return getattr(found.reading, f"{'a' if asynchronous else ''}{reader}_items")  # type: ignore[no-any-return]


def _driver_options(cassette: Cassette) -> dict[str, Any]:
    """What the adapter is told for a cassette read through the SDK: what its header's
    request implies, as direct replay is told (a forced `tool_choice`, a resume's
    `starting_after`), and what the reader asks (Chat's `[DONE]`, consumed by the SDK)."""
    found = cassette.dialect
    return {**found.request_options(cassette.header), **found.reading.DRIVER_OPTIONS}


def _replayer(
    cassette: Cassette, chunking: Chunking, on_directive: DirectiveHandler, realtime: bool
) -> Replayer:
    return Replayer(
        [cassette], match_on=None, chunking=chunking, realtime=realtime, on_directive=on_directive
    )


def _client(kind: ClientKind, replayer: Replayer, read_timeout: float | None) -> Any:
    """A client of `kind` answered by `replayer` in-process: a dummy key, no retries (the
    plan is played once), the read timeout a stall is measured against."""
    from harness._replay.sdk import ReplayTransport

    base_url = kind.sdk.base_url
    http_client = kind.http_client(transport=ReplayTransport(replayer), base_url=base_url)
    return kind.client(
        http_client,
        api_key="replay-only",
        base_url=base_url,
        max_retries=0,
        timeout=read_timeout,
    )


def _read(found: Provider, items: Iterator[Any], replayer: Replayer | None) -> Iterator[Any]:
    """The items a reader yields, an error it raised told apart (`_handed_on`): the line
    it stands for yielded, else the error raised, outside the handler (an error of ours
    the SDK wrapped gets no new context)."""
    try:
        yield from items
        return
    except Exception as error:
        handed_on = _handed_on(found, error, replayer)
    if isinstance(handed_on, BaseException):
        raise handed_on
    yield handed_on


def _handed_on(found: Provider, error: Exception, replayer: Replayer | None) -> Any:
    """The line an error the SDK's reader raised mid-stream stands for (the provider's
    `error_line`), handed to the adapter as direct replay hands it; else the error to
    raise, told by whose code raised it, the same for every SDK:
    - ours (`_ours`: the transport answering, the cassette read, the provider's reading),
      whatever the SDK wrapped it in (anthropic's `APIConnectionError` wraps any error
      reading a body): a `CassetteError` is the cassette's `PATH:LINE` refusal and any
      other error but a stream failure (a `cut`, a `stall`) a bug of ours, raised as it
      was, unwrapped;
    - a stream failure as it is (the API's error, the connection failing, a bad frame);
    - else the SDK's own code raised it, reading the answer `replayer` gave it: the SDK
      refusing the stream it was served (a parser's `AttributeError` over an event of
      the wrong shape, a `JSONDecodeError`, a helper's `RuntimeError`), as it would
      refuse it live, so a stream failure named `connection_error:<its class>`
      (`mark_refused`). Raised before any answer (over the request we built), a bug.
    `replayer` None: a client over a socket (`harness serve`), whose answers came."""
    line = found.reading.error_line(error)
    if line is not None:
        return line
    packages = ("harness", found.package)
    for link in error_chain(error):
        if _ours(link, packages):
            if is_stream_failure(link):
                break
            return link
    if not is_stream_failure(error) and (replayer is None or replayer.captured):
        mark_refused(error)
    return error


def _ours(error: BaseException, packages: tuple[str, ...]) -> bool:
    """Whether `error` was raised by code of `packages` (ours): its frames, the standard
    library's left out (nobody's), are all ours, or ours again below another package's
    (the SDK reading our transport's body). Frames of ours above the SDK's (the reader
    calling it) alone make it the SDK's."""
    names = [
        name
        for frame, _ in traceback.walk_tb(error.__traceback__)
        if (name := str(frame.f_globals.get("__name__", ""))).partition(".")[0]
        not in sys.stdlib_module_names
    ]
    if not names:
        return False

    def of_ours(name: str) -> bool:
        return any(name == package or name.startswith(f"{package}.") for package in packages)

    below = list(dropwhile(of_ours, names))
    return not below or any(of_ours(name) for name in below)


def client_events(
    client: Any, provider_name: str, reader: str = DEFAULT_READER
) -> Iterator[ModelEvent]:
    """Internal events of one streamed request `client` (a client of the SDK whose
    transport answers from cassettes of `provider_name`: a cassette client, or a client
    of `harness serve`) makes through `reader`; the client stays open."""
    found = provider(provider_name)
    read = _reader(found, reader, asynchronous=False)
    try:
        replayer: Replayer | None = client_replayer(client)
    except InputError:
        replayer = None  # a client over a socket
    fed = _read(found, read(client), replayer)
    return found.to_model_events(fed, **found.reading.DRIVER_OPTIONS)


def items(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
    host: str | None = None,
) -> Iterator[Any]:
    """What the SDK's `reader` hands on for the cassette, through a client made for it
    on `host` (`sdk_on`; closed at the end)."""
    found = cassette.dialect
    read = _reader(found, reader, asynchronous=False)
    replayer = _replayer(cassette, chunking, on_directive, realtime)
    client = _client(ClientKind(sdk_on(cassette, host), asynchronous=False), replayer, read_timeout)
    try:
        yield from _read(found, read(client), replayer)
    finally:
        client.close()


async def aitems(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
    host: str | None = None,
) -> AsyncIterator[Any]:
    """`items` through the SDK's async client."""
    found = cassette.dialect
    read = _reader(found, reader, asynchronous=True)
    replayer = _replayer(cassette, chunking, on_directive, realtime)
    sdk = sdk_on(cassette, host)
    client = _client(ClientKind(sdk, asynchronous=True), replayer, read_timeout)
    try:
        try:
            async for item in read(client):
                yield item
            return
        except Exception as error:
            handed_on = _handed_on(found, error, replayer)
        if isinstance(handed_on, BaseException):
            raise handed_on  # as `_read` raises it
        yield handed_on
    finally:
        await sdk.close_async(client)


def replay_via_client(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    *,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
    host: str | None = None,
) -> Iterator[ModelEvent]:
    """Internal events of a cassette, read by its provider's SDK client on `host` through
    `reader`."""
    found = cassette.dialect
    check_reader(found, reader)  # a bad reader fails here, at once
    _check_host(cassette, host)  # and a host it is not served on, at once
    read = items(cassette, chunking, on_directive, realtime, read_timeout, reader, host)
    return found.to_model_events(read, **_driver_options(cassette))


def areplay_via_client(
    cassette: Cassette,
    chunking: Chunking,
    on_directive: DirectiveHandler,
    *,
    realtime: bool,
    read_timeout: float | None,
    reader: str = DEFAULT_READER,
    host: str | None = None,
) -> AsyncIterator[ModelEvent]:
    """The same through the SDK's async client and the async driver."""
    found = cassette.dialect
    check_reader(found, reader)
    _check_host(cassette, host)
    read = aitems(cassette, chunking, on_directive, realtime, read_timeout, reader, host)
    return found.ato_model_events(read, **_driver_options(cassette))
