"""Replay a cassette through the adapter, from its lines, as a live stream would go.

The raw lines become what the cassette's provider's adapter reads, in the form its SDK
would hand it, as the provider says (`Provider.reading.direct_builders`), with the same
rules:
- for Messages, the SDK's own event objects, exactly as `anthropic.Stream` builds them
  for a live stream (`sdk_events`): `ping` is skipped, an `error` event raises the SDK's
  `APIStatusError` (built by the SDK's own `make_status_error`, on a 200 response, as
  mid-stream), and every other event becomes what the SDK's `construct_type` with
  `RawMessageStreamEvent` makes of it (built faster, and equal: see
  `harness._providers.anthropic.construct`). The Python API (`replay_outcome`,
  `replay_events`) hands these to user code, so it keeps them;
- or light views over the parsed lines (`event_views`, `harness._views`), where nothing
  of the SDK reaches user code (`harness replay`, `coverage`, `faults`, `diff`): the SDK
  is not imported. An `error` event raises `APIErrorEvent`, whose `failure_to_json`
  line is the one the SDK's error gives (an `http_error` body without an error type
  and message, which the SDK's error class would name, is built by the SDK still);
- for an OpenAI dialect, each line's dict as it is, either way (its adapter reads dicts,
  no SDK object is built, no SDK imported): an `http_error` line is the `APIErrorEvent`
  replay reports as `api_error:<type>`, and `{"harness": "done"}` is Chat's
  `data: [DONE]` (docs/cassettes.md).
The SDK is imported on first use, never by `import harness`. The provider is the one
the cassette's header names (`Cassette.dialect`), resolved once.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from harness._cassette.codec import (
    STDIN_NAME,
    Cassette,
    CassetteLine,
    CassetteSource,
    DirectiveHandler,
    pass_over,
    read_cassette,
)
from harness._directives import CUT, DONE, FRAME, HTTP_ERROR, STALL
from harness._events import ModelEvent, event_to_json
from harness._exceptions import (
    ANTHROPIC,
    APIErrorEvent,
    CassetteError,
    StreamProtocolError,
    error_chain,
)
from harness._hosts import framed
from harness._providers import Provider, provider, sdk_classes
from harness._providers.eventstream import FrameError, is_sdk_frame_error
from harness._providers.frame_rows import UNFRAMED, Framed, FramedReplay
from harness._replay.plan import (
    DEFAULT_READ_TIMEOUT,
    AsyncPacer,
    RealtimePacer,
    connection_cut,
    read_timed_out,
)

if TYPE_CHECKING:
    from anthropic import APIStatusError

__all__ = [
    "SKIP",
    "Outcome",
    "acollect",
    "aprovider_items",
    "areplay",
    "asdk_events",
    "collect",
    "event_views",
    "failure_code",
    "failure_to_json",
    "feed_reader",
    "is_stream_failure",
    "line_reader",
    "mark_refused",
    "provider_items",
    "refused_by_sdk",
    "replay",
    "replay_outcome",
    "sdk_events",
]

#: What `line_reader`'s function gives for a line the adapter is not fed.
SKIP: Final = None


def _dialect(found: Provider | str | None) -> Provider:
    """The provider asked for: the default one for None, a name resolved."""
    if found is None:
        return provider(ANTHROPIC)
    return provider(found) if isinstance(found, str) else found


def line_reader(
    on_directive: DirectiveHandler = pass_over,
    *,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    dialect: Provider | str | None = None,
    frames: Framed | None = None,
    path: str = "<stream>",
) -> Callable[[CassetteLine], Any | None]:
    """The one step from a line of a `dialect` cassette (the default provider's if None)
    to what its SDK's stream makes of it, shared by every direct path and the trace
    (`harness._testing.trace`, through `feed_reader`).

    The function returned gives a line's item (an event object, a view, a dict: the
    provider's `direct_builders(sdk_objects)` build it), or None (`SKIP`) for a line the
    stream yields nothing for (a `ping`, a directive passed over), and raises as a live
    client would: the API's error at an error event or an `http_error` line,
    `RemoteProtocolError` at a `cut` (an event cut mid-way is never emitted by the SDK's
    SSE decoder), `ReadTimeout` at a `stall` longer than `read_timeout` seconds (this path
    has no clock: a shorter stall changes nothing, a longer one is known at once to end
    as the client's timeout would; None: no timeout). A stream in event-stream `frames`
    reads its `frame` lines through them (`FramedReplay`): a `FrameError` where a reader
    of the frames meets a bad or cut one, the API's error at an exception frame; read as
    SSE, a `frame` line is a `CassetteError` at `path`'s line. With `sdk_objects=False` no
    SDK is imported (see the module).
    """
    builders = _dialect(dialect).reading.direct_builders(sdk_objects)
    build, api_error, done = builders.event, builders.api_error, builders.done
    in_frames = FramedReplay(frames) if frames is not None else None

    def event_of(line: CassetteLine) -> Any | None:
        data = line.data
        if line.kind == "directive":
            name = data["harness"]
            if name == FRAME:
                if in_frames is None:
                    raise CassetteError(path, line.number, UNFRAMED)
                read = in_frames.directive(data)
                return build(read[0]) if read else None
            if name == HTTP_ERROR:
                raise api_error(data["body"], int(data["status"]), data.get("headers"))
            if name == CUT:
                raise connection_cut()
            if name == STALL:
                if read_timeout is not None and data["ms"] / 1000 > read_timeout:
                    raise read_timed_out()
                return None  # no clock on this path: a shorter stall changes nothing
            if name == DONE and done is not None:
                # only a dialect that ends with `data: [DONE]` has the line (the codec checks)
                return done
            on_directive(data)
            return None
        return build(data if in_frames is None else in_frames.event(data))

    return event_of


def feed_reader(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    sdk_objects: bool = True,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Callable[[CassetteLine], Any]:
    """The one step from a line of `cassette` to what its provider's adapter is fed,
    `SKIP` for nothing (`line_reader`, an OpenAI dialect's dicts whatever `sdk_objects`
    says): its header's provider, its `frame` lines read through the frames it travels
    in on its header's host (`harness._hosts.framed`). Direct replay reads by it, and so
    does a caller that feeds the adapter itself (the trace, validate's rule check)."""
    return line_reader(
        on_directive,
        sdk_objects=sdk_objects,
        read_timeout=read_timeout,
        dialect=cassette.dialect,
        frames=framed(cassette.dialect.framing, cassette.host),
        path=str(cassette.path),
    )


def provider_items(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    *,
    sdk_objects: bool = True,
) -> Iterator[Any]:
    """The cassette's stream as its provider's adapter is fed it (`feed_reader`); raises
    as a live client would at an API error, a `cut` or a long stall."""
    event_of = feed_reader(
        cassette, on_directive, sdk_objects=sdk_objects, read_timeout=read_timeout
    )
    for line in cassette.lines():
        event = event_of(line)
        if event is not None:
            yield event


def sdk_events(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    """The cassette's events as its SDK's stream yields them (for Messages the SDK's
    objects); raises as a live client would: `APIStatusError` at an `error` event or an
    `http_error` line, `RemoteProtocolError` at a `cut` (an event cut mid-way is never
    emitted by the SDK's SSE decoder), `ReadTimeout` at a stall longer than
    `read_timeout` (`line_reader`)."""
    return provider_items(cassette, on_directive, read_timeout, sdk_objects=True)


def event_views(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> Iterator[Any]:
    """The same stream as `sdk_events`, as `EventView`s, without the SDK: `APIErrorEvent`
    at an `error` event or an `http_error` line (see the module)."""
    return provider_items(cassette, on_directive, read_timeout, sdk_objects=False)


def _paced(pacer: RealtimePacer, on_directive: DirectiveHandler) -> DirectiveHandler:
    """A handler that paces `at` lines with `pacer`, then hands every directive on."""

    def handle(directive: dict[str, Any]) -> None:
        pacer(directive)
        on_directive(directive)

    return handle


async def aprovider_items(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    *,
    realtime: bool = False,
    sdk_objects: bool = True,
) -> AsyncIterator[Any]:
    """`provider_items` for an async reader (agent session replay feeds them to the
    adapter itself): with `realtime`, each awaited to its `at` offset without blocking
    the event loop."""
    if not realtime:
        for item in provider_items(cassette, on_directive, read_timeout, sdk_objects=sdk_objects):
            yield item
        return
    pacer = AsyncPacer()
    handler = _paced(pacer, on_directive)
    for item in provider_items(cassette, handler, read_timeout, sdk_objects=sdk_objects):
        await pacer.wait()
        yield item


def asdk_events(
    cassette: Cassette,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[Any]:
    """`sdk_events` for an async reader: the same step, and with `realtime` each event
    is awaited to its `at` offset without blocking the event loop."""
    return aprovider_items(cassette, on_directive, read_timeout, realtime=realtime)


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

    The cassette's provider's adapter reads it (its header's `provider`), told what the
    header's request implies (Chat's forced `tool_choice`, a Responses resume's
    `starting_after`: `Provider.request_options`), under the compatible-server `profile`
    if given (`ValueError` if unknown, or for a provider that has none).
    `sdk_objects=False` feeds the adapter light views and never imports the SDK: for
    callers that hand no error object on (an API error is then an `APIErrorEvent`).
    """
    cassette = read_cassette(source)
    found = cassette.dialect
    handler = _paced(RealtimePacer(), on_directive) if realtime else on_directive
    options = {**found.request_options(cassette.header), **found.adapter_options(profile)}
    items = provider_items(cassette, handler, read_timeout, sdk_objects=sdk_objects)
    return found.to_model_events(items, **options)


def areplay(
    source: CassetteSource,
    on_directive: DirectiveHandler = pass_over,
    *,
    realtime: bool = False,
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
) -> AsyncIterator[ModelEvent]:
    """The async driver over the same steps (the provider's `ato_model_events`)."""
    cassette = read_cassette(source)
    found = cassette.dialect
    items = aprovider_items(cassette, on_directive, read_timeout, realtime=realtime)
    return found.ato_model_events(items, **found.request_options(cassette.header))


@dataclass(slots=True)
class Outcome:
    """What a stream came to: the events yielded, then the error that ended it (or None)."""

    events: list[ModelEvent] = field(default_factory=list)
    error: StreamProtocolError | APIStatusError | APIErrorEvent | FrameError | None = None
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
    (the SDK's, or `APIErrorEvent`), a bad frame, or the connection failing (dropped,
    timed out) as a live one can. Imports nothing: an SDK error exists only once the SDK
    is loaded."""
    if isinstance(error, StreamProtocolError | APIErrorEvent | FrameError):
        return True
    if _is_connection_failure(error):
        return True
    return isinstance(error, sdk_classes("APIStatusError"))


def _is_connection_failure(error: BaseException) -> bool:
    """The transport failing, as the HTTP library or the SDK says, or the bytes it carried
    not being event-stream frames, as botocore (reading them in `AnthropicBedrock` and
    boto3) refuses them: `connection_error:ChecksumMismatch`; or the SDK refusing what
    they carried (`refused_by_sdk`), named by its class the same way: what a live client
    would have got from a broken stream."""
    return (
        _is_transport_error(error)
        or isinstance(error, sdk_classes("APIConnectionError"))
        or is_sdk_frame_error(error)
        or refused_by_sdk(error)
    )


#: The attribute `mark_refused` sets on an SDK's error: the harness's, never the SDK's.
_REFUSED: Final = "_harness_refused_stream"


def mark_refused(error: BaseException) -> None:
    """Say that `error`, raised by an SDK's own code reading an answer it was served, is
    the SDK refusing that stream (its parser over an event of the wrong shape, a helper
    over a stream it cannot complete): a stream failure, `connection_error:<its class>`.
    Only the reader of a replay through the SDK can tell (`harness._replay.readers`);
    the error stays the SDK's own, as a live client raises it."""
    setattr(error, _REFUSED, True)


def refused_by_sdk(error: BaseException) -> bool:
    """Whether `error` is an SDK's refusal of the stream it was served (`mark_refused`)."""
    return getattr(error, _REFUSED, False) is True


def _is_transport_error(error: BaseException) -> bool:
    """Whether `error` is the HTTP library's own (`httpx2`'s or `httpx`'s) transport error."""
    return any(
        http is not None and isinstance(error, http.TransportError)
        for http in (sys.modules.get("httpx2"), sys.modules.get("httpx"))
    )


def _flat_error(error: BaseException) -> bool:
    """Whether `error` is the API error of an SDK whose error's body is the error object
    itself (the `openai` SDK's)."""
    return isinstance(error, sdk_classes("APIError", flat_error_body=True))


def transport_error(error: BaseException) -> BaseException:
    """The error a connection failure is named by: the HTTP library's transport error
    (`RemoteProtocolError`, `ReadTimeout`) in its chain, whichever SDK and release
    wrapped it (`APIConnectionError`, `APITimeoutError`, or none); `error` itself when
    its chain holds none (an SDK's connection error of its own making)."""
    return next((link for link in error_chain(error) if _is_transport_error(link)), error)


#: The internal events' classes, which `collect` holds an outcome's events to.
_MODEL_EVENTS: Final = typing.get_args(ModelEvent)


def _not_a_stream(function: str, events: object, kind: str = "an iterable") -> TypeError:
    """The `TypeError` of a `function` given `events` that are no stream of events."""
    return TypeError(
        f"{function} takes {kind} of internal events (to_model_events' or replay_events'),"
        f" not {type(events).__name__}"
    )


def _not_an_event(function: str, number: int, event: object) -> TypeError:
    """The `TypeError` of event `number` (from 1) of a stream, which is no internal event."""
    return TypeError(
        f"{function} takes internal events (TextEvent, ToolCallEvent, DoneEvent), and event"
        f" {number} is {type(event).__name__}"
    )


def collect(events: Iterable[ModelEvent]) -> Outcome:
    """Run `events` to the end into an `Outcome`; any error but a stream failure propagates.
    `TypeError` for what is no iterable, and at the first item that is no internal event."""
    if not isinstance(events, Iterable) or isinstance(events, str | bytes | Mapping):
        raise _not_a_stream("collect", events)
    return _collected(events, "collect")


def collected(events: Iterable[ModelEvent]) -> Outcome:
    """`collect` for the harness's own adapters' events (a replay's), which need no check."""
    return _collected(events, None)


def _collected(events: Iterable[ModelEvent], checked_for: str | None) -> Outcome:
    """`events` run to the end into an `Outcome`, each checked to be an internal event
    where `checked_for` names the function asked (`_not_an_event`)."""
    outcome = Outcome()
    try:
        for event in events:
            if checked_for is not None and not isinstance(event, _MODEL_EVENTS):
                raise _not_an_event(checked_for, len(outcome.events) + 1, event)
            outcome.events.append(event)
    except Exception as error:
        if not is_stream_failure(error):
            raise
        outcome.error = error  # type: ignore[assignment]
    return outcome


async def acollect(events: AsyncIterable[ModelEvent]) -> Outcome:
    """`collect` for an async stream of internal events (`TypeError` for a sync one)."""
    if not isinstance(events, AsyncIterable):
        raise _not_a_stream("acollect", events, "an async iterable")
    outcome = Outcome()
    try:
        async for event in events:
            if not isinstance(event, _MODEL_EVENTS):
                raise _not_an_event("acollect", len(outcome.events) + 1, event)
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
    outcome = collected(replay(cassette, sdk_objects=sdk_objects, profile=profile))
    if cassette.path != STDIN_NAME:
        outcome.source = cassette.path
    return outcome


def _not_an_error(function: str, error: object) -> TypeError:
    """The `TypeError` of a `function` given what is no exception."""
    return TypeError(
        f"{function} takes the exception a stream ended with (an Outcome's error), not "
        f"{type(error).__name__}"
    )


def failure_code(error: BaseException | None) -> str | None:
    """A stream failure's name: its error-table code, `api_error:<error.type>` or
    `connection_error:<transport error class>`; None for any other exception, or None
    (an outcome without error). `TypeError` for anything else."""
    if not isinstance(error, BaseException):
        if error is None:
            return None
        raise _not_an_error("failure_code", error)
    protocol = protocol_error(error)
    if protocol is not None:
        return protocol.code
    frame = frame_error(error)
    if frame is not None:
        return frame.code
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


def frame_error(error: BaseException) -> FrameError | None:
    """The bad or cut frame that ended a stream in event-stream frames (`bad_frame`,
    `truncated_frame`): `error`, or the one in its chain."""
    return next((link for link in error_chain(error) if isinstance(link, FrameError)), None)


def failure_to_json(error: BaseException) -> dict[str, Any]:
    """The `protocol_error`, `api_error` or `connection_error` line (docs/replay.md) of an
    error that ended a stream (a bad frame's is a `protocol_error` of its framing);
    `TypeError` for what is no exception."""
    if not isinstance(error, BaseException):
        raise _not_an_error("failure_to_json", error)
    protocol = protocol_error(error) or frame_error(error)
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
        details = body if isinstance(body, dict) and _flat_error(error) else {}
    return {
        "type": "api_error",
        "error_type": str(details.get("type", type(error).__name__)),
        "message": str(details.get("message", error)),
    }
