"""How a Messages stream is read: the SDK's reader over a client, and direct replay's feed.

`create` is the one reader (`READERS`): the iteration of `client.messages.create(
stream=True)`, each event the SDK's own object, its `error` event raised as the SDK's
`APIStatusError` (`error_line` hands nothing back: the adapter never meets the line).
The client is given (sync or async); the request is a minimal one the replay transport
answers from the cassette, whose model is none (the SDK warns on a deprecated model name
at request time, and a replay of an old recording must not).

`USER_READERS` are how a user's code reads a stream with a client, by the name
docs/sdk-readers.md gives each (the raw iteration, and the helper read to its final
`Message`), and `SAMPLES` the library's good cassettes they are served the fault rows
of (`harness doctor`, `harness._testing.sdk_behaviour`).

Direct replay (no client) feeds the adapter what the SDK's stream would have handed it,
`direct_builders(sdk_objects)`: the SDK's own event objects (built as fast as
`construct` builds them, equal to the SDK's) and its `APIStatusError` for an `error`
event or an `http_error` line (made by the SDK's own factory, on a 200 answer mid-stream);
or, where nothing of the SDK reaches user code, each line's own dict (which the adapter
reads as its light view, `harness._views`, reads it: what the SDK's object would hold)
and `APIErrorEvent`s, without the SDK. Either way `ping` is passed over, as the SDK
passes it. The SDK is imported only for its objects, on first use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from harness._exceptions import APIErrorEvent
from harness._providers.eventstream import FrameError
from harness._providers.wire import DirectBuilders
from harness._redact import excerpt

if TYPE_CHECKING:
    from anthropic import Anthropic

__all__ = [
    "DRIVER_OPTIONS",
    "READERS",
    "REQUEST",
    "SAMPLES",
    "USER_READERS",
    "acreate_items",
    "create_items",
    "direct_builders",
    "error_line",
]

#: The SDK's readers of a stream: the iteration of `messages.create(stream=True)` alone.
READERS: Final = ("create",)
#: The request every replay sends (the transport answers it from the cassette).
REQUEST: Final = {
    "model": "harness-replay",
    "max_tokens": 1,
    "messages": [{"role": "user", "content": "replay"}],
    "stream": True,
}
#: What the adapter's driver is told of a stream read through the SDK: nothing more.
DRIVER_OPTIONS: Final[dict[str, Any]] = {}
#: The library's good cassettes (a text answer, one with tool calls) `USER_READERS` are
#: served the fault rows of, under the harness's cassette library.
SAMPLES: Final = ("text_only.jsonl", "two_tools.jsonl")
#: A user's request: enough tokens for the final message.
_USER_REQUEST: Final = {
    "model": "harness-replay",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "replay"}],
}


def _drain(client: Any) -> None:
    for _ in client.messages.create(**_USER_REQUEST, stream=True):
        pass


def _final(client: Any) -> None:
    with client.messages.stream(**_USER_REQUEST) as stream:
        stream.get_final_message()


#: Reader name -> how a user's code reads the stream with a client.
USER_READERS: Final[dict[str, Callable[[Any], None]]] = {
    "messages.create(stream=True)": _drain,
    "messages.stream()": _final,
}
#: Where the SDK's own error factory believes the stream came from.
_API_URL: Final = "https://api.anthropic.com/v1/messages"


#: What the SDK hands on as it came where an event's JSON is no object (`AnthropicBedrock`
#: reads a chunk's bytes so): never an event of its.
_NO_EVENT: Final = (list, str, int, float, type(None))


def _event(event: Any) -> Any:
    """An event the SDK handed on; JSON that is no object, which `AnthropicBedrock` hands
    on from a chunk as it is, is refused as direct replay and the guard refuse the frame
    that carried it (`FrameError` `bad_frame`), never fed to the adapter."""
    if isinstance(event, _NO_EVENT):
        shown = excerpt(repr(event))
        raise FrameError("bad_frame", f"a chunk's event is not a JSON object: {shown}")
    return event


def create_items(client: Any) -> Iterator[Any]:
    """The events of `messages.create(stream=True)`, the stream closed at the end."""
    with client.messages.create(**REQUEST) as stream:
        for event in stream:
            yield _event(event)


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` through an `AsyncAnthropic`."""
    stream = await client.messages.create(**REQUEST)
    async with stream:
        async for event in stream:
            yield _event(event)


def error_line(error: Exception) -> dict[str, Any] | None:
    """The line an error the SDK raised mid-stream stood for, to hand the adapter: none,
    the Messages adapter is handed the SDK's error itself."""
    return None


def _fed(build: Callable[[dict[str, Any]], Any], api_error: Callable[..., Exception]) -> Any:
    """What one event line becomes: None for a `ping` (the SDK yields nothing), the
    `error` event's error raised, any other event built."""

    def event(data: dict[str, Any]) -> Any:
        kind = data["type"]
        if kind == "ping":
            return None
        if kind == "error":
            raise api_error(data)
        return build(data)

    return event


@cache
def _sdk_builders() -> DirectBuilders:
    """The SDK's way: its event objects, its `APIStatusError`. Made once: the client's
    construction loads the CA bundle (~0.1 s), every replay reuses it, and only a cassette
    with an `error` event makes it."""
    import httpx2
    from anthropic import Anthropic

    from harness._providers.anthropic.construct import event_builder

    @cache
    def client() -> Anthropic:
        # Never sent anything: it only lends the SDK's own error factory.
        return Anthropic(api_key="replay-only", base_url=_API_URL.removesuffix("/v1/messages"))

    request = httpx2.Request("POST", _API_URL)
    sse = {"content-type": "text/event-stream"}
    mid_stream = httpx2.Response(200, headers=sse, request=request)

    def api_error(body: dict[str, Any], status: int | None = None, headers: Any = None) -> Any:
        """An `error` event (on the 200 stream), or an `http_error` line's status."""
        response = mid_stream
        if status is not None:
            response = httpx2.Response(status, headers=headers or {}, json=body, request=request)
        return client()._make_status_error(f"{body}", body=body, response=response)

    # equal to the SDK's construct_type(RawMessageStreamEvent), faster
    return DirectBuilders(_fed(event_builder(), api_error), api_error)


def _view_error(body: dict[str, Any], status: int | None = None, headers: Any = None) -> Exception:
    """`APIErrorEvent` where its failure line is certainly the SDK error's: the body names
    the error's type and message; otherwise the SDK's own error (its class names it)."""
    details = body.get("error")
    if isinstance(details, dict) and "type" in details and "message" in details:
        return APIErrorEvent(body, 200 if status is None else status)
    return _sdk_builders().api_error(body, status, headers)


def _line(data: dict[str, Any]) -> dict[str, Any]:
    """The line's own object: the adapter reads a `dict` as its view would (no view built,
    nor anything else, for each event)."""
    return data


#: Without the SDK: the lines' dicts, `APIErrorEvent`s.
VIEW_BUILDERS: Final = DirectBuilders(_fed(_line, _view_error), _view_error)


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    """What direct replay feeds the adapter: the SDK's objects, or the lines' dicts."""
    return _sdk_builders() if sdk_objects else VIEW_BUILDERS
