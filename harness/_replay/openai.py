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
from typing import Any, Final

from harness._cassette.codec import Cassette, DirectiveHandler
from harness._cassette.directives import CUT, DONE, HTTP_ERROR, STALL
from harness._events import ModelEvent
from harness._exceptions import APIErrorEvent
from harness._providers.openai_chat import adapter as chat
from harness._providers.openai_chat.errors import PROVIDER as OPENAI_CHAT
from harness._providers.openai_responses import adapter as responses
from harness._providers.openai_responses.errors import PROVIDER as OPENAI_RESPONSES
from harness._replay.plan import AsyncPacer, connection_cut, read_timed_out

__all__ = ["DRIVERS", "aprovider_events", "provider_events", "provider_items"]

SyncDriver = Callable[[Iterable[Any]], Iterator[ModelEvent]]
AsyncDriver = Callable[[AsyncIterable[Any]], AsyncIterator[ModelEvent]]

#: provider -> its adapter's (sync, async) drivers, which take the `data` objects in order
DRIVERS: Final[Mapping[str, tuple[SyncDriver, AsyncDriver]]] = {
    OPENAI_CHAT: (chat.to_model_events, chat.ato_model_events),
    OPENAI_RESPONSES: (responses.to_model_events, responses.ato_model_events),
}


def provider_items(
    cassette: Cassette, on_directive: DirectiveHandler, read_timeout: float | None
) -> Iterator[Any]:
    """The cassette's `data` objects as its adapter reads them (a `done` line as Chat's
    `[DONE]`); raises as a live client would at an `http_error`, a `cut` or a long stall."""
    for line in cassette.lines():
        data = line.data
        if line.kind == "event":
            yield data
            continue
        name = data["harness"]
        if name == HTTP_ERROR:
            raise APIErrorEvent(data["body"], int(data["status"]))
        if name == CUT:
            raise connection_cut()
        if name == STALL:
            if read_timeout is not None and data["ms"] / 1000 > read_timeout:
                raise read_timed_out()
            continue  # no clock on this path: a shorter stall changes nothing
        if name == DONE:
            yield chat.DONE
            continue
        on_directive(data)


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
