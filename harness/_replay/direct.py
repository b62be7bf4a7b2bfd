"""Replay a cassette through the adapter, from its lines, as a live stream would go.

The raw lines become what the adapter reads, in one of two forms, with the same rules:
- the SDK's own event objects, exactly as `anthropic.Stream` builds them for a live
  stream (`sdk_events`): `ping` is skipped, an `error` event raises the SDK's
  `APIStatusError` (built by the SDK's own `make_status_error`, on a 200 response, as
  mid-stream), and every other event becomes what the SDK's `construct_type` with
  `RawMessageStreamEvent` makes of it (built faster, and equal: see
  `harness._providers.anthropic.construct`). The Python API (`replay_outcome`, `replay_events`)
  hands these to user code, so it keeps them;
- light views over the parsed lines (`event_views`, `harness._views`), where nothing
  of the SDK reaches user code (`harness replay`, `coverage`, `faults`, `diff`): the SDK
  is not imported. An `error` event raises `APIErrorEvent`, whose `failure_to_json`
  line is the one the SDK's error gives (an `http_error` body without an error type
  and message, which the SDK's error class would name, is built by the SDK still).
The SDK is imported on first use, never by `import harness`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from harness._cassette.codec import (
    STDIN_NAME,
    Cassette,
    CassetteLine,
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._directives import CUT, HTTP_ERROR, STALL
from harness._events import ModelEvent, event_to_json
from harness._exceptions import ANTHROPIC, APIErrorEvent, StreamProtocolError, error_chain
from harness._providers import provider as registered
from harness._providers.anthropic.adapter import ato_model_events, to_model_events
from harness._replay.openai import SKIP, aprovider_events, item_reader, provider_events
from harness._replay.plan import (
    DEFAULT_READ_TIMEOUT,
    AsyncPacer,
    RealtimePacer,
    connection_cut,
    read_timed_out,
)
from harness._views import EventView

if TYPE_CHECKING:
    from anthropic import APIStatusError

__all__ = [
    "Outcome",
    "acollect",
    "areplay",
    "asdk_events",
    "collect",
    "event_views",
    "failure_code",
    "failure_to_json",
    "feed_reader",
    "is_stream_failure",
    "line_reader",
    "replay",
    "replay_outcome",
    "sdk_events",
]

API_URL = "https://api.anthropic.com/v1/messages"

#: (build what the adapter reads from an event line, build the error an `error` event or
#: an `http_error` line raises from its body, status and headers)
Builders = tuple[Callable[[dict[str, Any]], Any], Callable[..., Exception]]


@cache
def _sdk_builders() -> Builders:
    """(build an event object, build the APIStatusError for an `error` event), SDK's way.

    Made once: the client's construction loads the CA bundle (~0.1 s), every replay reuses
    it, and only a cassette with an `error` event makes it.
    """
    import httpx2
    from anthropic import Anthropic

    from harness._providers.anthropic.construct import event_builder

    @cache
    def client() -> Anthropic:
        # Never sent anything: it only lends the SDK's own error factory.
        return Anthropic(api_key="replay-only", base_url=API_URL.removesuffix("/v1/messages"))

    request = httpx2.Request("POST", API_URL)
    sse = {"content-type": "text/event-stream"}
    mid_stream = httpx2.Response(200, headers=sse, request=request)

    build = event_builder()  # equal to the SDK's construct_type(RawMessageStreamEvent), faster

    def api_error(body: dict[str, Any], status: int | None = None, headers: Any = None) -> Any:
        """An `error` event (on the 200 stream), or an `http_error` line's status."""
        response = mid_stream
        if status is not None:
            response = httpx2.Response(status, headers=headers or {}, json=body, request=request)
        return client()._make_status_error(f"{body}", body=body, response=response)

    return build, api_error


def _view_error(body: dict[str, Any], status: int | None = None, headers: Any = None) -> Exception:
    """`APIErrorEvent` where its failure line is certainly the SDK error's: the body names
    the error's type and message; otherwise the SDK's own error (its class names it)."""
    details = body.get("error")
    if isinstance(details, dict) and "type" in details and "message" in details:
        return APIErrorEvent(body, 200 if status is None else status)
    return _sdk_builders()[1](body, status, headers)


VIEW_BUILDERS: Builders = (EventView, _view_error)


def _events(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    sdk_objects: bool,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    event_of = line_reader(on_directive, sdk_objects=sdk_objects, read_timeout=read_timeout)
    for line in cassette.lines():
        event = event_of(line)
        if event is not None:
            yield event


def line_reader(
    on_directive: DirectiveHandler = pass_over,
    *,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Callable[[CassetteLine], Any | None]:
    """The one step from a cassette line to what the SDK's stream makes of it, shared by
    `sdk_events` and the trace (`harness._testing.trace`, through `feed_reader`).

    The function returned gives a line's event object, or None for a line the stream
    yields nothing for (a `ping`, a directive passed over), and raises as a live client
    would: `APIStatusError` at an `error` event or an `http_error` line,
    `RemoteProtocolError` at a `cut` (an event cut mid-way is never emitted by the SDK's
    SSE decoder), `ReadTimeout` at a `stall` longer than `read_timeout` seconds (this path
    has no clock: a shorter stall changes nothing, a longer one is known at once to end
    as the client's timeout would; None: no timeout). With `sdk_objects=False` it gives
    `EventView`s and raises `APIErrorEvent` instead, without the SDK (see the module).
    """
    build, api_error = _sdk_builders() if sdk_objects else VIEW_BUILDERS

    def event_of(line: CassetteLine) -> Any | None:
        data = line.data
        if line.kind == "directive":
            name = data["harness"]
            if name == HTTP_ERROR:
                raise api_error(data["body"], int(data["status"]), data.get("headers"))
            if name == CUT:
                raise connection_cut()
            if name == STALL:
                if read_timeout is not None and data["ms"] / 1000 > read_timeout:
                    raise read_timed_out()
                return None  # no clock on this path: a shorter stall changes nothing
            on_directive(data)
            return None
        kind = data["type"]
        if kind == "ping":
            return None
        if kind == "error":
            raise api_error(data)
        return build(data)

    return event_of


def feed_reader(
    kind: str,
    on_directive: DirectiveHandler = pass_over,
    *,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Callable[[CassetteLine], Any]:
    """The one step from a line of a `kind` (provider) cassette to what its adapter is
    fed, `SKIP` for nothing, for a caller that feeds the adapter itself (the trace):
    `line_reader`'s for an Anthropic cassette, `item_reader`'s for an OpenAI dialect's
    (which reads dicts, whatever `sdk_objects` says)."""
    if kind != ANTHROPIC:
        return item_reader(kind, on_directive, read_timeout)
    event_of = line_reader(on_directive, sdk_objects=sdk_objects, read_timeout=read_timeout)

    def fed(line: CassetteLine) -> Any:
        event = event_of(line)
        return SKIP if event is None else event

    return fed


def sdk_events(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    """The cassette's events as the SDK's stream yields them; raises as a live client would:
    `APIStatusError` at an `error` event or an `http_error` line, `RemoteProtocolError` at
    a `cut` (an event cut mid-way is never emitted by the SDK's SSE decoder), `ReadTimeout`
    at a stall longer than `read_timeout` (`line_reader`)."""
    return _events(cassette, on_directive, True, read_timeout)


def event_views(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    """The same stream as `sdk_events`, as `EventView`s, without the SDK: `APIErrorEvent`
    at an `error` event or an `http_error` line (see the module)."""
    return _events(cassette, on_directive, False, read_timeout)


def _paced(pacer: RealtimePacer, on_directive: DirectiveHandler) -> DirectiveHandler:
    """A handler that paces `at` lines with `pacer`, then hands every directive on."""

    def handle(directive: dict[str, Any]) -> None:
        pacer(directive)
        on_directive(directive)

    return handle


async def asdk_events(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[Any]:
    """`sdk_events` for an async reader: the same step, and with `realtime` each event
    is awaited to its `at` offset without blocking the event loop."""
    if not realtime:
        for event in sdk_events(cassette, on_directive, read_timeout=read_timeout):
            yield event
        return
    pacer = AsyncPacer()
    for event in sdk_events(cassette, _paced(pacer, on_directive), read_timeout=read_timeout):
        await pacer.wait()
        yield event


def replay(
    source: CassetteSource,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    profile: str | None = None,
) -> Iterator[ModelEvent]:
    """Internal events of a cassette, lazily; raises as the live stream would. `realtime`
    sleeps until each `at` offset; every directive also goes to `on_directive`; a stall
    longer than `read_timeout` seconds is the client's `ReadTimeout` (`line_reader`).

    `sdk_objects=False` feeds the adapter `EventView`s and never imports the SDK: for
    callers that hand no error object on (an API error is then an `APIErrorEvent`). An
    OpenAI cassette (its header's `provider`) goes to its own adapter as dicts, either way
    (`harness._replay.openai`).
    """
    cassette = read_cassette(source)
    handler = _paced(RealtimePacer(), on_directive) if realtime else on_directive
    if cassette.provider != ANTHROPIC:  # an OpenAI dialect: its adapter reads the dicts
        return provider_events(cassette, handler, read_timeout, profile=profile)
    if profile is not None:
        registered(cassette.provider).adapter_options(profile)  # raises: none for it
    events = sdk_events if sdk_objects else event_views
    return to_model_events(events(cassette, handler, read_timeout=read_timeout))


def areplay(
    source: CassetteSource,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[ModelEvent]:
    """The async driver over the same steps (`ato_model_events` over `asdk_events`)."""
    cassette = read_cassette(source)
    if cassette.provider != ANTHROPIC:
        return aprovider_events(cassette, on_directive, read_timeout, realtime=realtime)
    events = asdk_events(cassette, on_directive, realtime=realtime, read_timeout=read_timeout)
    return ato_model_events(events)


@dataclass(slots=True)
class Outcome:
    """What a stream came to: the events yielded, then the error that ended it (or None)."""

    events: list[ModelEvent] = field(default_factory=list)
    error: StreamProtocolError | APIStatusError | APIErrorEvent | None = None
    #: the cassette file replayed, when there is one to replay again (a failure report
    #: names its trace); not compared: two replays of one stream are equal wherever it lives
    source: str | None = field(default=None, compare=False, repr=False)

    @property
    def completed(self) -> bool:
        return self.error is None

    def to_json_lines(self) -> list[dict[str, Any]]:
        """The JSON form `harness replay --format json` prints: events, then the failure line."""
        lines = [event_to_json(event) for event in self.events]
        if self.error is not None:
            lines.append(failure_to_json(self.error))
        return lines


def is_stream_failure(error: BaseException) -> bool:
    """Whether `error` is how a stream ends badly: the adapter's error, the API's error
    (the SDK's, or `APIErrorEvent`), or the connection failing (dropped, timed out) as a
    live one can. Imports nothing: an SDK error exists only once the SDK is loaded."""
    if isinstance(error, StreamProtocolError | APIErrorEvent):
        return True
    if _is_connection_failure(error):
        return True
    return any(
        sdk is not None and isinstance(error, sdk.APIStatusError)
        for sdk in (sys.modules.get("anthropic"), sys.modules.get("openai"))
    )


def _is_connection_failure(error: BaseException) -> bool:
    return _is_transport_error(error) or any(
        sdk is not None and isinstance(error, sdk.APIConnectionError)
        for sdk in (sys.modules.get("anthropic"), sys.modules.get("openai"))
    )


def _is_transport_error(error: BaseException) -> bool:
    """Whether `error` is the HTTP library's own (`httpx2`'s or `httpx`'s) transport error."""
    return any(
        http is not None and isinstance(error, http.TransportError)
        for http in (sys.modules.get("httpx2"), sys.modules.get("httpx"))
    )


def _openai_error(error: BaseException) -> bool:
    openai = sys.modules.get("openai")
    return openai is not None and isinstance(error, openai.APIError)


def transport_error(error: BaseException) -> BaseException:
    """The error a connection failure is named by: the HTTP library's transport error
    (`RemoteProtocolError`, `ReadTimeout`) in its chain, whichever SDK and release
    wrapped it (`APIConnectionError`, `APITimeoutError`, or none); `error` itself when
    its chain holds none (an SDK's connection error of its own making)."""
    return next((link for link in error_chain(error) if _is_transport_error(link)), error)


def collect(events: Iterable[ModelEvent]) -> Outcome:
    """Run `events` to the end into an `Outcome`; any error but a stream failure propagates."""
    outcome = Outcome()
    try:
        for event in events:
            outcome.events.append(event)
    except Exception as error:
        if not is_stream_failure(error):
            raise
        outcome.error = error  # type: ignore[assignment]
    return outcome


async def acollect(events: AsyncIterable[ModelEvent]) -> Outcome:
    """`collect` for an async stream of internal events."""
    outcome = Outcome()
    try:
        async for event in events:
            outcome.events.append(event)
    except Exception as error:
        if not is_stream_failure(error):
            raise
        outcome.error = error  # type: ignore[assignment]
    return outcome


def replay_outcome(
    source: CassetteSource, *, sdk_objects: bool = True, profile: str | None = None
) -> Outcome:
    """Replay to the end and collect the outcome; a `CassetteError` still raises.

    `sdk_objects=False`: without the SDK (`replay`), for callers that read the outcome's
    JSON lines or code only. `profile`: a Chat Completions cassette read under a
    compatible server's profile (docs/profiles.md; `ValueError` for an unknown one, or a
    cassette of a provider that has none).
    """
    cassette = read_cassette(source)
    outcome = collect(replay(cassette, sdk_objects=sdk_objects, profile=profile))
    if cassette.path != STDIN_NAME:
        outcome.source = cassette.path
    return outcome


def failure_code(error: BaseException) -> str | None:
    """A stream failure's name: its error-table code, `api_error:<error.type>` or
    `connection_error:<transport error class>`; None for anything else."""
    protocol = protocol_error(error)
    if protocol is not None:
        return protocol.code
    if is_stream_failure(error):
        line = failure_to_json(error)
        return f"{line['type']}:{line['error_type']}"
    return None


def protocol_error(error: BaseException) -> StreamProtocolError | None:
    """The adapter's error that ended a stream: `error`, or the one in its chain when an
    SDK release wrapped it (as a connection error) on its way to the caller."""
    return next(
        (link for link in error_chain(error) if isinstance(link, StreamProtocolError)), None
    )


def failure_to_json(error: BaseException) -> dict[str, Any]:
    """The `protocol_error`, `api_error` or `connection_error` line (docs/replay.md) of an
    error that ended a stream."""
    protocol = protocol_error(error)
    if protocol is not None:
        return {"type": "protocol_error", "code": protocol.code, "message": str(protocol)}
    if _is_connection_failure(error):
        reported = transport_error(error)
        return {
            "type": "connection_error",
            "error_type": type(reported).__name__,
            "message": str(reported),
        }
    body = getattr(error, "body", None)
    details = body.get("error") if isinstance(body, dict) else None
    if not isinstance(details, dict):  # the `openai` SDK's body is the error object itself
        details = body if isinstance(body, dict) and _openai_error(error) else {}
    return {
        "type": "api_error",
        "error_type": str(details.get("type", type(error).__name__)),
        "message": str(details.get("message", error)),
    }
