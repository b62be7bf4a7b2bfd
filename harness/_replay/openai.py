"""Direct replay of an OpenAI cassette: its lines, as the dicts they hold, to its dialect's adapter.

A cassette whose header names `"provider": "openai-chat"` or `"openai-responses"` holds
the SSE `data` objects of one such answer, in order. Replay hands each event line's dict
to the provider's adapter (`harness._providers`) as it is: the adapters read dicts, so
no SDK object is built and no SDK is imported. The directives the direct reader acts on
do what they do for an Anthropic cassette (an `http_error` line and an API error are the
`APIErrorEvent` replay reports as `api_error:<type>`, `cut` drops the connection, a
`stall` past the read timeout is the client's `ReadTimeout`), and `{"harness": "done"}`
is Chat's `data: [DONE]` (docs/cassettes.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any, Final, Protocol

from harness._cassette.codec import Cassette, CassetteLine, DirectiveHandler
from harness._cassette.directives import CUT, DONE, HTTP_ERROR, STALL
from harness._events import ModelEvent
from harness._exceptions import APIErrorEvent
from harness._providers.openai_chat import adapter as chat, tracing as chat_tracing
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses import adapter as responses, tracing as responses_tracing
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES
from harness._replay.plan import AsyncPacer, connection_cut, read_timed_out

__all__ = [
    "DRIVERS",
    "MACHINES",
    "SKIP",
    "Machine",
    "aprovider_events",
    "item_reader",
    "provider_events",
    "provider_items",
]

SyncDriver = Callable[[Iterable[Any]], Iterator[ModelEvent]]
AsyncDriver = Callable[[AsyncIterable[Any]], AsyncIterator[ModelEvent]]

#: provider -> its adapter's (sync, async) drivers, which take the `data` objects in order
DRIVERS: Final[Mapping[str, tuple[SyncDriver, AsyncDriver]]] = {
    OPENAI_CHAT: (chat.to_model_events, chat.ato_model_events),
    OPENAI_RESPONSES: (responses.to_model_events, responses.ato_model_events),
}


class Machine(Protocol):
    """What the trace reads of an OpenAI adapter: `feed`, `finish`, the open calls."""

    def feed(self, item: Any) -> list[ModelEvent]: ...
    def finish(self) -> list[ModelEvent]: ...


#: provider -> (a new adapter, its open tool calls / output items, how a row names a line)
MACHINES: Final[
    Mapping[
        str,
        tuple[
            Callable[[], Machine],
            Callable[[Any], tuple[int, ...]],
            Callable[[dict[str, Any], object], tuple[str, int | None, str, object]],
        ],
    ]
] = {
    OPENAI_CHAT: (chat.ChatAdapter, lambda machine: machine.open_tool_calls, chat_tracing.describe),
    OPENAI_RESPONSES: (
        responses.ResponsesAdapter,
        lambda machine: machine.open_output_items,
        responses_tracing.describe,
    ),
}

#: What `item_reader`'s function gives for a line the adapter is not fed.
SKIP: Final = object()


def item_reader(
    on_directive: DirectiveHandler, read_timeout: float | None
) -> Callable[[CassetteLine], Any]:
    """The one step from an OpenAI cassette line to what its adapter is fed (`SKIP`: nothing),
    shared by `provider_items` and the trace; raises as a live client would."""

    def item_of(line: CassetteLine) -> Any:
        data = line.data
        if line.kind == "event":
            return data
        name = data["harness"]
        if name == HTTP_ERROR:
            raise APIErrorEvent(data["body"], int(data["status"]))
        if name == CUT:
            raise connection_cut()
        if name == STALL:
            if read_timeout is not None and data["ms"] / 1000 > read_timeout:
                raise read_timed_out()
            return SKIP  # no clock on this path: a shorter stall changes nothing
        if name == DONE:
            return chat.DONE
        on_directive(data)
        return SKIP

    return item_of


def provider_items(
    cassette: Cassette, on_directive: DirectiveHandler, read_timeout: float | None
) -> Iterator[Any]:
    """The cassette's `data` objects as its adapter reads them (a `done` line as Chat's
    `[DONE]`); raises as a live client would at an `http_error`, a `cut` or a long stall."""
    item_of = item_reader(on_directive, read_timeout)
    for line in cassette.lines():
        item = item_of(line)
        if item is not SKIP:
            yield item


def provider_events(
    cassette: Cassette, on_directive: DirectiveHandler, read_timeout: float | None
) -> Iterator[ModelEvent]:
    """Internal events of an OpenAI cassette, lazily, through its provider's adapter."""
    drive, _ = DRIVERS[cassette.provider]
    return drive(provider_items(cassette, on_directive, read_timeout))


async def _items(
    cassette: Cassette, on_directive: DirectiveHandler, read_timeout: float | None, realtime: bool
) -> AsyncIterator[Any]:
    if not realtime:
        for item in provider_items(cassette, on_directive, read_timeout):
            yield item
        return
    pacer = AsyncPacer()

    def handle(directive: dict[str, Any]) -> None:
        pacer(directive)
        on_directive(directive)

    for item in provider_items(cassette, handle, read_timeout):
        await pacer.wait()
        yield item


def aprovider_events(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    read_timeout: float | None,
    *,
    realtime: bool = False,
) -> AsyncIterator[ModelEvent]:
    """The async driver over the same items (with `realtime`, each awaited to its `at`
    offset without blocking the event loop)."""
    _, drive = DRIVERS[cassette.provider]
    return drive(_items(cassette, on_directive, read_timeout, realtime))
