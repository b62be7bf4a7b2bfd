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

The client is the one of the cassettes' provider's SDK (`Provider.sdk`, resolved from
each cassette's header): cassettes whose header names an OpenAI provider (`openai-chat`,
`openai-responses`) get an `openai.OpenAI` (`AsyncOpenAI`) instead, with the same
options: Chat and Responses streams in their own framing, a non-streaming request the
`chat.completion` or `response` the events fold into, Responses' resume
`GET /v1/responses/{id}` answered from the cassette holding that response. One client
speaks one SDK: Anthropic and OpenAI cassettes in one call are an `InputError` (two
dialects of one SDK may be mixed: one `OpenAI` calls both). `sdk="openai"` (or
`"anthropic"`, any registered provider's SDK package) says which is wanted, checked
against the cassettes, and is what type checkers read the client's type from.

`host="bedrock"` or `"vertex"` gives the client of the cassettes' dialect on that host
instead (the provider says which: `Provider.hosted`; Anthropic's `AnthropicBedrock`,
`AnthropicVertex`), built with dummy credentials passed explicitly (a Bedrock API key
and region, no AWS session; a Google access token, project and region), so nothing is
read from the user's AWS or Google configuration; it answers in-process too, Bedrock's
streams in AWS event-stream frames. A cassette whose header names its host (`"host":
"bedrock"`) gets that host's client by default; `host="direct"` asks for the direct
API's whatever the header says.

Every client is built by its SDK's description (`harness._providers.sdk.Sdk`: its
classes, its base URL, how it is built around an HTTP client), over the family a
`ClientKind` names (sync or async); a live one's key and base URL come from the
variables that SDK reads (`ClientEnv`).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, overload

import httpx2

from harness._cassette.codec import Cassette, CassetteSource
from harness._exceptions import ANTHROPIC, HarnessError, InputError
from harness._providers import provider, sdks
from harness._providers.sdk import Sdk
from harness._replay.cache import kept_cassettes
from harness._replay.plan import Chunking
from harness._replay.replayer import (
    DEFAULT_MATCH_ON,
    CapturedRequest,
    Replayer,
    cassette_sources,
)
from harness._replay.sdk import ReplayTransport

if TYPE_CHECKING:
    from anthropic import (
        Anthropic,
        AnthropicBedrock,
        AnthropicVertex,
        AsyncAnthropic,
        AsyncAnthropicBedrock,
        AsyncAnthropicVertex,
    )
    from openai import AsyncOpenAI, OpenAI

    from harness._record.live import RecordingTransport

    #: Any client made here (what `captured_requests` and the others take).
    AnyClient: TypeAlias = (
        Anthropic
        | AsyncAnthropic
        | OpenAI
        | AsyncOpenAI
        | AnthropicBedrock
        | AsyncAnthropicBedrock
        | AnthropicVertex
        | AsyncAnthropicVertex
    )

__all__ = [
    "DEFAULT_MATCH_ON",
    "DIRECT",
    "DUMMY_API_KEY",
    "HOST",
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
    "sdk_choices",
    "sdk_named",
    "share_source",
    "sync_kind",
]

#: One cassette (a path or a `Cassette`), a session folder, or a sequence of them, in order.
Cassettes: TypeAlias = "CassetteSource | Sequence[CassetteSource]"
#: The key every cassette client sends: never a credential, never accepted by the live API.
DUMMY_API_KEY: Final = "harness-replay-no-key"
#: Which SDK's client a cassette client is, as type checkers read `sdk=` (the built-in
#: providers' SDK packages; at run time any registered provider's SDK package is taken).
SDK: TypeAlias = Literal["anthropic", "openai"]
#: Where a cassette client's requests go, as type checkers read `host=` (the direct API,
#: or a host of `harness._hosts`; None: the cassettes' header's, else the direct API).
HOST: TypeAlias = Literal["direct", "bedrock", "vertex"]
#: The `host=` asking for the direct API's client whatever the cassettes' header says.
DIRECT: Final = "direct"

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
    return kept_cassettes(cassette_sources(cassettes))


def _replayer(
    cassettes: Cassettes,
    chunking: Chunking,
    realtime: bool,
    match_on: Sequence[str] | None,
    given: Replayer | None,
) -> Replayer:
    if given is not None:
        if not isinstance(given, Replayer):
            raise InputError(f"replayer takes a harness.Replayer, not {type(given).__name__}")
        return given
    return Replayer(_sources(cassettes), match_on=match_on, chunking=chunking, realtime=realtime)


def _options(options: dict[str, Any], base_url: str) -> dict[str, Any]:
    for refused in ("api_key", "auth_token", "http_client"):
        if refused in options:
            raise InputError(f"a cassette client sets {refused} itself; it cannot be given")
    return {"base_url": base_url, **options}


def _sdks() -> dict[str, Sdk]:
    """Each registered provider's SDK by its package's name, in the registry's order."""
    return {sdk.package: sdk for sdk in sdks()}


def sdk_choices() -> str:
    """The SDK packages `sdk=` takes, as a message lists them: `'anthropic' or 'openai'`."""
    return " or ".join(repr(package) for package in _sdks())


def sdk_named(name: object, what: str = "sdk") -> Sdk:
    """The SDK of package `name` (`anthropic`, `openai`: a registered provider's);
    `InputError` naming the known ones for any other (`what` says where it was given)."""
    known = _sdks()
    if not isinstance(name, str) or name not in known:
        raise InputError(f"{what} must be {sdk_choices()}, not {name!r}")
    return known[name]


def _sdk_of(replayer: Replayer, wanted: str | None) -> Sdk:
    """Which SDK answers the replayer's cassettes: the one their headers' provider is read
    with (`Provider.sdk`), else `wanted`, else the default provider's; `InputError` for a
    mix, or for `wanted` otherwise."""
    asked = None if wanted is None else sdk_named(wanted)
    found = {cassette.dialect.sdk.package: cassette.dialect.sdk for cassette in replayer.cassettes}
    if len(found) > 1:
        names = sorted({cassette.provider for cassette in replayer.cassettes})
        raise InputError(
            f"the cassettes are of providers {', '.join(names)}: one client speaks one SDK "
            "(make a client for each)"
        )
    sdk = found.popitem()[1] if found else (asked or provider(ANTHROPIC).sdk)
    if asked is not None and asked.package != sdk.package:  # an SDK is its package
        raise InputError(f"sdk={wanted!r}, but the cassettes are {sdk.package} ones")
    return sdk


def _hosted_sdk(replayer: Replayer, sdk: Sdk, host: str | None) -> Sdk:
    """The SDK client answering on `host` (None: the cassettes' header's, if they agree;
    `DIRECT` or none: `sdk`, the direct API's); `InputError` for a host the cassettes'
    provider is not served on."""
    if host is None:
        named = {cassette.host for cassette in replayer.cassettes}
        host = named.pop() if len(named) == 1 else None
        if host is None:
            return sdk
    if host == DIRECT:
        return sdk
    dialects = {cassette.dialect.name: cassette.dialect for cassette in replayer.cassettes}
    if not dialects:
        dialects = {found.name: found for found in [provider(ANTHROPIC)]}
    hosted = [found.hosted.get(host) for found in dialects.values()]
    if not hosted or None in hosted:
        names = ", ".join(sorted(dialects))
        served = sorted({name for found in dialects.values() for name in found.hosted})
        api = f"its own API ({DIRECT!r})"
        told = f"served on {', '.join(served)} or {api}" if served else f"served on {api} alone"
        raise InputError(f"host={host!r}: the cassettes' dialect ({names}) is {told}")
    found = hosted[0]
    assert found is not None
    return found


def _client(sdk: Sdk, used: Replayer, asynchronous: bool, options: dict[str, Any]) -> Any:
    kind = ClientKind(sdk, asynchronous=asynchronous)
    http_client = kind.http_client(transport=ReplayTransport(used), base_url=sdk.base_url)
    given = _options(options, sdk.base_url)
    client = kind.client(http_client, api_key=DUMMY_API_KEY, **given)
    _SOURCES[client] = used
    return client


@overload
def cassette_client(
    cassettes: Cassettes,
    *,
    host: Literal["bedrock"],
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AnthropicBedrock: ...
@overload
def cassette_client(
    cassettes: Cassettes,
    *,
    host: Literal["vertex"],
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AnthropicVertex: ...
@overload
def cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["openai"],
    host: Literal["direct"] | None = ...,
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
    host: HOST | None = ...,
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
    host: HOST | None = None,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
    replayer: Replayer | None = None,
    **options: Any,
) -> Anthropic | OpenAI | AnthropicBedrock | AnthropicVertex:
    """An `anthropic.Anthropic` answering each request from the next cassette, or an
    `openai.OpenAI` for OpenAI cassettes (their headers say; `sdk` checks it, and types it).

    `chunking` cuts the bytes (`Chunking(size=..., seed=...)`), `realtime` sleeps to the
    recorded `at` offsets, `match_on` names the request fields compared with a cassette's
    recorded request (None: no matching; the default, the provider's own). `host`
    (`"bedrock"`, `"vertex"`) gives the dialect's client on that host, with dummy
    credentials (default: the host the cassettes' header names; `"direct"`: the direct
    API's whatever it names). Other keywords
    go to the client (`max_retries`, `timeout`, `default_headers`). `replayer` shares one
    `Replayer` (and its order) between clients; the cassette options are then its own.
    """
    used = _replayer(cassettes, chunking, realtime, match_on, replayer)
    found = _hosted_sdk(used, _sdk_of(used, sdk), host)
    return _client(found, used, False, options)  # type: ignore[no-any-return]


@overload
def async_cassette_client(
    cassettes: Cassettes,
    *,
    host: Literal["bedrock"],
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AsyncAnthropicBedrock: ...
@overload
def async_cassette_client(
    cassettes: Cassettes,
    *,
    host: Literal["vertex"],
    sdk: Literal["anthropic"] | None = ...,
    chunking: Chunking = ...,
    realtime: bool = ...,
    match_on: Sequence[str] | None = ...,
    replayer: Replayer | None = ...,
    **options: Any,
) -> AsyncAnthropicVertex: ...
@overload
def async_cassette_client(
    cassettes: Cassettes,
    *,
    sdk: Literal["openai"],
    host: Literal["direct"] | None = ...,
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
    host: HOST | None = ...,
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
    host: HOST | None = None,
    chunking: Chunking = Chunking(),
    realtime: bool = False,
    match_on: Sequence[str] | None = DEFAULT_MATCH_ON,
    replayer: Replayer | None = None,
    **options: Any,
) -> AsyncAnthropic | AsyncOpenAI | AsyncAnthropicBedrock | AsyncAnthropicVertex:
    """The same as `cassette_client`, as an `anthropic.AsyncAnthropic` (`openai.AsyncOpenAI`)."""
    used = _replayer(cassettes, chunking, realtime, match_on, replayer)
    found = _hosted_sdk(used, _sdk_of(used, sdk), host)
    return _client(found, used, True, options)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ClientKind:
    """The sync or the async family of a client of one SDK: its client class, the httpx2
    client and transport it runs on. Code that builds either takes one of these, never an
    `asynchronous` flag of its own."""

    #: which SDK (its classes, its key and base URL variables: `Sdk.env`)
    sdk: Sdk
    asynchronous: bool = False

    def http_client(self, **options: Any) -> Any:
        """The httpx2 client a client of this family runs on."""
        return (httpx2.AsyncClient if self.asynchronous else httpx2.Client)(**options)

    def transport(self) -> httpx2.BaseTransport | httpx2.AsyncBaseTransport:
        """A new socket transport of this family (what a live client sends through), which
        keeps no connection once an answer is read: a recording reads each whole anyway,
        and an SDK that never closes an HTTP client it was given (google-genai's `Client`,
        sync or async) then leaves no socket open, in no event loop."""
        limits = httpx2.Limits(max_keepalive_connections=0)
        if self.asynchronous:
            return httpx2.AsyncHTTPTransport(limits=limits)
        return httpx2.HTTPTransport(limits=limits)

    def live_client(self, http_client: Any, *, credentials: dict[str, Any], **options: Any) -> Any:
        """A live client of the SDK, of this family, over `http_client`, with the user's
        own `credentials` (`Sdk.live_options`: a key, or a host's cloud credentials)."""
        base_url = options.pop("base_url", None)
        return self.sdk.live_client(
            http_client,
            asynchronous=self.asynchronous,
            base_url=base_url,
            credentials=credentials,
            **options,
        )

    def client(self, http_client: Any, *, api_key: str, **options: Any) -> Any:
        """A client of the SDK, of this family, over `http_client` (`base_url` among the
        options, None: the SDK's own choice)."""
        base_url = options.pop("base_url", None)
        return self.sdk.client(
            http_client,
            asynchronous=self.asynchronous,
            api_key=api_key,
            base_url=base_url,
            **options,
        )


def sync_kind(sdk: Sdk | None = None) -> ClientKind:
    """The sync family of `sdk`'s clients (the default provider's SDK: `anthropic.Anthropic`
    over `httpx2.Client`)."""
    return ClientKind(sdk or provider(ANTHROPIC).sdk, asynchronous=False)


def async_kind(sdk: Sdk | None = None) -> ClientKind:
    """The async family (`anthropic.AsyncAnthropic` over `httpx2.AsyncClient`)."""
    return ClientKind(sdk or provider(ANTHROPIC).sdk, asynchronous=True)


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
    or a client of another SDK for its kind (`openai.OpenAI` / `AsyncOpenAI`): the key from
    the SDK's variable (`OPENAI_API_KEY`) unless given, the base URL from its
    (`OPENAI_BASE_URL`) when set and none is given. A host's client (`AnthropicBedrock`,
    `AnthropicVertex`: `kind.sdk` a provider's `hosted` one) records with the user's
    cloud credentials instead (`Sdk.live_options`), found where the SDK finds them."""
    from harness._record.live import RecordingTransport

    credentials = {"api_key": api_key} if api_key else kind.sdk.live_options()
    base_url = base_url or os.environ.get(kind.sdk.env.base_url_variable) or None
    transport = RecordingTransport(
        kind.transport(),
        paths,
        session=session,
        description=description,
        requests=requests,
        written=written,
    )
    http_client = kind.http_client(transport=transport)
    client = kind.live_client(http_client, credentials=credentials, base_url=base_url, **options)
    _SOURCES[client] = transport
    return client


def live_api_key(sdk: Sdk) -> str:
    """The key a live client of `sdk` records with (the variable its client reads): the
    opt-in to a billed recording; `InputError` in one line naming the variable without it."""
    return sdk.live_key()


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
