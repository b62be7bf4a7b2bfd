"""Real Anthropic clients whose HTTP goes to cassettes: your own code under record/replay.

    client = cassette_client("cassettes/two_tools.jsonl")
    summary = summarize(client)                  # your code: messages.stream(), create(), ...
    assert captured_requests(client)[0].json["model"] == "claude-sonnet-5"

`cassette_client` returns an `anthropic.Anthropic` (`async_cassette_client` an
`AsyncAnthropic`) built with `http_client=httpx2.Client(transport=ReplayTransport(...))`:
every request is answered in-process by a `Replayer`, one response a request, in order,
from one cassette, several, or a session folder (`turn-NN.jsonl`). A request with
`"stream": true` gets the cassette's SSE stream; one without gets the `Message` JSON the
events fold into, so one cassette serves `create()`, `create(stream=True)` and
`messages.stream()`. HTTP errors, cuts and stalls in the cassette reach the SDK as a live
server's would; the SDK's own retries run (its default `max_retries`, 2), so a session
`[529, 529, stream]` is retried through, at the `retry-after-ms` the cassettes give.

Running out of responses, or a request that differs from the recorded one on the
`match_on` fields, answers a 404 the SDK does not retry, whose message is the
`ReplayError`'s one line; `replay_errors(client)` keeps them, for a test to fail on even
when the code swallowed the exception. The API key is a dummy: nothing leaves the process.

Cassettes whose header names an OpenAI provider (`openai-chat`, `openai-responses`) get
an `openai.OpenAI` (`AsyncOpenAI`) instead, with the same options: Chat and Responses
streams in their own framing, a non-streaming request the `chat.completion` or
`response` the events fold into, Responses' resume `GET /v1/responses/{id}` answered
from the cassette holding that response. One client speaks one SDK: Anthropic and
OpenAI cassettes in one call are an `InputError` (the two OpenAI dialects may be mixed:
one `OpenAI` calls both). `sdk="openai"` (or `"anthropic"`) says which is wanted, checked
against the cassettes, and is what type checkers read the client's type from.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, overload

import httpx2

from harness._cassette.codec import Cassette, CassetteSource
from harness._exceptions import ANTHROPIC, HarnessError, InputError
from harness._replay.cache import kept_cassettes
from harness._replay.plan import Chunking
from harness._replay.replayer import DEFAULT_MATCH_ON, CapturedRequest, Replayer
from harness._replay.sdk import BASE_URL, ReplayTransport

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic
    from openai import AsyncOpenAI, OpenAI

    from harness._record.live import RecordingTransport

    #: Any client made here (what `captured_requests` and the others take).
    AnyClient: TypeAlias = Anthropic | AsyncAnthropic | OpenAI | AsyncOpenAI

__all__ = [
    "BASE_URL_VARIABLES",
    "DEFAULT_MATCH_ON",
    "DUMMY_API_KEY",
    "KEY_VARIABLES",
    "SDK",
    "Cassettes",
    "ClientKind",
    "async_cassette_client",
    "async_kind",
    "async_recording_client",
    "captured_requests",
    "cassette_client",
    "client_replayer",
    "live_api_key",
    "recording_client",
    "recording_client_of",
    "replay_errors",
    "share_source",
    "sync_kind",
]

#: One cassette (a path or a `Cassette`), a session folder, or a sequence of them, in order.
Cassettes: TypeAlias = "CassetteSource | Sequence[CassetteSource]"
#: The key every cassette client sends: never a credential, never accepted by the live API.
DUMMY_API_KEY: Final = "harness-replay-no-key"
#: Which SDK's client a cassette client is.
SDK: TypeAlias = Literal["anthropic", "openai"]
#: The base URL an OpenAI cassette client has unless given one.
OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
#: What a live (recording) client of each SDK reads from the environment: the key that opts
#: in to the billed calls, and the base URL it is sent to when one is set.
KEY_VARIABLES: Final[dict[str, str]] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
}
BASE_URL_VARIABLES: Final[dict[str, str]] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}

#: What answers each client made here: its `Replayer`, or a recording client's transport
#: (both keep `requests` and `errors`).
_SOURCES: weakref.WeakKeyDictionary[Any, Replayer | RecordingTransport] = (
    weakref.WeakKeyDictionary()
)


def _sources(cassettes: Cassettes) -> list[Cassette]:
    """Each source read once and kept (`KeptCassette`): a client answers from the same
    small cassette again and again, so it is not re-read, re-validated and re-encoded
    each time, and a bad line fails when the client is made. A path is kept for the
    session, shared by every client while the file is unchanged (`harness._replay.cache`);
    a source named several times is kept once; `-` is standard input, read once."""
    listed = [cassettes] if isinstance(cassettes, str | os.PathLike | Cassette) else cassettes
    return kept_cassettes(list(listed))


def _replayer(
    cassettes: Cassettes,
    chunking: Chunking,
    realtime: bool,
    match_on: Sequence[str] | None,
) -> Replayer:
    if isinstance(match_on, str):
        raise InputError(f"match_on takes a sequence of field names, not the string {match_on!r}")
    return Replayer(_sources(cassettes), match_on=match_on, chunking=chunking, realtime=realtime)


def _options(options: dict[str, Any], base_url: str) -> dict[str, Any]:
    for refused in ("api_key", "auth_token", "http_client"):
        if refused in options:
            raise InputError(f"a cassette client sets {refused} itself; it cannot be given")
    return {"base_url": base_url, **options}


def _sdk_of(replayer: Replayer, wanted: str | None) -> str:
    """Which SDK answers the replayer's cassettes: `openai` when their headers name an
    OpenAI provider, else `anthropic`; `InputError` for a mix, or for `wanted` otherwise."""
    if wanted not in (None, "anthropic", "openai"):
        raise InputError(f"sdk must be 'anthropic' or 'openai', not {wanted!r}")
    found = {
        "anthropic" if cassette.provider == ANTHROPIC else "openai"
        for cassette in replayer.cassettes
    }
    if len(found) > 1:
        names = sorted({cassette.provider for cassette in replayer.cassettes})
        raise InputError(
            f"the cassettes are of providers {', '.join(names)}: one client speaks one SDK "
            "(make a client for each)"
        )
    sdk = found.pop() if found else (wanted or "anthropic")
    if wanted not in (None, sdk):
        raise InputError(f"sdk={wanted!r}, but the cassettes are {sdk} ones")
    return sdk


def _client(kind: ClientKind, used: Replayer, base_url: str, options: dict[str, Any]) -> Any:
    http_client = kind.http_client(transport=ReplayTransport(used), base_url=base_url)
    client = kind.sdk(api_key=DUMMY_API_KEY, http_client=http_client, **_options(options, base_url))
    _SOURCES[client] = used
    return client


@overload
def cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["openai"],
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> OpenAI: ...
@overload
def cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> Anthropic: ...


def cassette_client(
    cassettes: Cassettes,
    *,
    sdk: SDK | None = None,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
    replayer: Replayer | None = None,
    **options: Any,
) -> Anthropic | OpenAI:
    """An `anthropic.Anthropic` answering each request from the next cassette, or an
    `openai.OpenAI` for OpenAI cassettes (their headers say; `sdk` checks it, and types it).

    `chunking` cuts the bytes (`Chunking(size=..., seed=...)`), `realtime` sleeps to the
    recorded `at` offsets, `match_on` names the request fields compared with a cassette's
    recorded request (None: no matching; the default, the provider's own). Other keywords
    go to the client (`max_retries`, `timeout`, `default_headers`). `replayer` shares one
    `Replayer` (and its order) between clients; the cassette options are then its own.
    """
    used = replayer or _replayer(cassettes, chunking, realtime, match_on)
    if _sdk_of(used, sdk) == "openai":
        return _client(openai_sync_kind(), used, OPENAI_BASE_URL, options)  # type: ignore[no-any-return]
    return _client(sync_kind(), used, BASE_URL, options)  # type: ignore[no-any-return]


@overload
def async_cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["openai"],
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AsyncOpenAI: ...
@overload
def async_cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AsyncAnthropic: ...


def async_cassette_client(
    cassettes: Cassettes,
    *,
    sdk: SDK | None = None,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
    replayer: Replayer | None = None,
    **options: Any,
) -> AsyncAnthropic | AsyncOpenAI:
    """The same as `cassette_client`, as an `anthropic.AsyncAnthropic` (`openai.AsyncOpenAI`)."""
    used = replayer or _replayer(cassettes, chunking, realtime, match_on)
    if _sdk_of(used, sdk) == "openai":
        return _client(openai_async_kind(), used, OPENAI_BASE_URL, options)  # type: ignore[no-any-return]
    return _client(async_kind(), used, BASE_URL, options)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ClientKind:
    """The sync or the async family of a live client: the SDK's client class, the httpx2
    client and transport it runs on. Code that builds either takes one of these, never an
    `asynchronous` flag."""

    sdk: Callable[..., Any]
    http_client: Callable[..., Any]
    transport: Callable[[], httpx2.BaseTransport | httpx2.AsyncBaseTransport]
    #: which SDK it is (its key and base URL variables: `KEY_VARIABLES`, `BASE_URL_VARIABLES`)
    name: SDK = "anthropic"


def sync_kind() -> ClientKind:
    """`anthropic.Anthropic` over `httpx2.Client`."""
    import anthropic

    return ClientKind(anthropic.Anthropic, httpx2.Client, httpx2.HTTPTransport)


def async_kind() -> ClientKind:
    """`anthropic.AsyncAnthropic` over `httpx2.AsyncClient`."""
    import anthropic

    return ClientKind(anthropic.AsyncAnthropic, httpx2.AsyncClient, httpx2.AsyncHTTPTransport)


def openai_sdk() -> ModuleType:
    """The `openai` package, imported here, when an SDK object is made: it is the `openai`
    extra's, not a dependency, so without it an `InputError` says which extra to install."""
    try:
        import openai
    except ModuleNotFoundError as error:
        if error.name != "openai":
            raise
        raise InputError(
            'openai: the SDK is not installed; pip install "stream-harness[openai]"'
        ) from None
    return openai


def openai_sync_kind() -> ClientKind:
    """`openai.OpenAI` over `httpx2.Client` (the SDK imported here, when one is made)."""
    openai = openai_sdk()
    return ClientKind(openai.OpenAI, httpx2.Client, httpx2.HTTPTransport, "openai")


def openai_async_kind() -> ClientKind:
    """`openai.AsyncOpenAI` over `httpx2.AsyncClient`."""
    openai = openai_sdk()
    return ClientKind(openai.AsyncOpenAI, httpx2.AsyncClient, httpx2.AsyncHTTPTransport, "openai")


def recording_client_of(
    kind: ClientKind,
    paths: Sequence[str | os.PathLike[str]],
    session: str | os.PathLike[str] | None,
    api_key: str | None,
    base_url: str | None,
    description: str,
    requests: list[CapturedRequest] | None,
    written: list[str] | None,
    options: dict[str, Any],
) -> Any:
    """`recording_client` or `async_recording_client`, as `kind` says (all arguments given),
    or an `openai.OpenAI` / `AsyncOpenAI` for `openai_sync_kind()` / `openai_async_kind()`:
    the key from the kind's variable (`OPENAI_API_KEY`) unless given, the base URL from its
    `OPENAI_BASE_URL` when set and none is given."""
    from harness._record.live import RecordingTransport

    key = api_key or live_api_key(kind.name)
    base_url = base_url or os.environ.get(BASE_URL_VARIABLES[kind.name]) or None
    transport = RecordingTransport(
        kind.transport(),
        paths,
        session=session,
        description=description,
        requests=requests,
        written=written,
    )
    http_client = kind.http_client(transport=transport)
    client = kind.sdk(api_key=key, base_url=base_url, http_client=http_client, **options)
    _SOURCES[client] = transport
    return client


def live_api_key(sdk: SDK) -> str:
    """The key a live client of `sdk` records with (`KEY_VARIABLES`): the opt-in to a
    billed recording; `InputError` in one line naming the variable without it."""
    variable = KEY_VARIABLES[sdk]
    key = os.environ.get(variable)
    if not key:
        raise InputError(
            f"{variable} is not set: recording calls the live API (and is billed); set it to opt in"
        )
    return key


def recording_client(
    paths: Sequence[str | os.PathLike[str]],
    *,
    session: str | os.PathLike[str] | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    description: str = "Recorded through a cassette client",
    requests: list[CapturedRequest] | None = None,
    written: list[str] | None = None,
    **options: Any,
) -> Anthropic:
    """A live client (the key from `ANTHROPIC_API_KEY` unless given) that writes each answer
    to the next of `paths`, then `session/turn-NN.jsonl`: the cassette clients' record modes.

    Opt-in and billed: `InputError` without a key. Streams keep their events, a
    non-streaming `Message` is kept as the events of its stream, an HTTP error as an
    `http_error` line; requests are captured and stored without credentials (into
    `requests` if given), and each file written is appended to `written` if given.
    `async_recording_client` is the same as an `AsyncAnthropic` (the keyword
    `asynchronous=True` of 0.1 still gives one, with a `DeprecationWarning`).
    """
    given = (paths, session, api_key, base_url, description, requests, written, options)
    if "asynchronous" in options:
        from harness._deprecated import warn_keyword

        warn_keyword("recording_client", "asynchronous")
        if options.pop("asynchronous"):
            return recording_client_of(async_kind(), *given)  # type: ignore[no-any-return]
    client: Anthropic = recording_client_of(sync_kind(), *given)
    return client


def async_recording_client(
    paths: Sequence[str | os.PathLike[str]],
    *,
    session: str | os.PathLike[str] | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    description: str = "Recorded through a cassette client",
    requests: list[CapturedRequest] | None = None,
    written: list[str] | None = None,
    **options: Any,
) -> AsyncAnthropic:
    """The same as `recording_client`, as an `anthropic.AsyncAnthropic`."""
    given = (paths, session, api_key, base_url, description, requests, written, options)
    client: AsyncAnthropic = recording_client_of(async_kind(), *given)
    return client


def share_source(client: AnyClient, copy: AnyClient) -> None:
    """`copy` (a client made from `client`, e.g. by `harness.strict`) answers from the same
    cassettes: `captured_requests` and `replay_errors` of either see both."""
    source = _SOURCES.get(client)
    if source is not None:
        _SOURCES[copy] = source


def client_replayer(client: AnyClient) -> Replayer:
    """The `Replayer` behind a cassette client; `InputError` for any other client."""
    source = _SOURCES.get(client)
    if isinstance(source, Replayer):
        return source
    raise InputError(
        f"{type(client).__name__} was not made by cassette_client or async_cassette_client"
    )


def captured_requests(client: AnyClient) -> Sequence[CapturedRequest]:
    """Every request the client sent, in order: method, path, headers and JSON body,
    credentials removed. A read-only view: it grows as the code sends more."""
    return _source(client).requests


def replay_errors(client: AnyClient) -> list[HarnessError]:
    """What the cassettes could not answer (`ReplayError`: used up, or a mismatch), or a
    recording client could not record (`RecordError`), in order."""
    return list(_source(client).errors)


def _source(client: AnyClient) -> Replayer | RecordingTransport:
    try:
        return _SOURCES[client]
    except (KeyError, TypeError):
        raise InputError(f"{type(client).__name__} was not made by a cassette client") from None
