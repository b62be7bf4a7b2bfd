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

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Final

from harness._cassette.codec import Cassette, CassetteLine, DirectiveHandler
from harness._directives import CUT, DONE, HTTP_ERROR, STALL
from harness._events import ModelEvent
from harness._exceptions import APIErrorEvent
from harness._providers import provider
from harness._replay.plan import AsyncPacer, connection_cut, read_timed_out

__all__ = [
    "SKIP",
    "aprovider_events",
    "aprovider_items",
    "item_reader",
    "provider_events",
    "provider_items",
]


#: What `item_reader`'s function gives for a line the adapter is not fed.
SKIP: Final = object()


def item_reader(
    kind: str, on_directive: DirectiveHandler, read_timeout: float | None
) -> Callable[[CassetteLine], Any]:
    """The one step from a line of a `kind` (provider) cassette to what its adapter is fed
    (`SKIP`: nothing), shared by `provider_items` and the trace; raises as a live client
    would."""

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
            # only a dialect that ends with `data: [DONE]` has the line (the codec checks)
            return provider(kind).module("adapter").DONE
        on_directive(data)
        return SKIP

    return item_of


def provider_items(
    cassette: Cassette, on_directive: DirectiveHandler, read_timeout: float | None
) -> Iterator[Any]:
    """The cassette's `data` objects as its adapter reads them (a `done` line as Chat's
    `[DONE]`); raises as a live client would at an `http_error`, a `cut` or a long stall."""
    item_of = item_reader(cassette.provider, on_directive, read_timeout)
    for line in cassette.lines():
        item = item_of(line)
        if item is not SKIP:
            yield item


def provider_events(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    read_timeout: float | None,
    *,
    profile: str | None = None,
) -> Iterator[ModelEvent]:
    """Internal events of an OpenAI cassette, lazily, through its provider's adapter, with
    what the header's request implies (Chat's forced `tool_choice`, a Responses resume's
    `starting_after`: `Provider.request_options`), under the compatible-server
    `profile` if given (`ValueError` if unknown)."""
    found = provider(cassette.provider)
    options = {**found.request_options(cassette.header), **found.adapter_options(profile)}
    return found.to_model_events(provider_items(cassette, on_directive, read_timeout), **options)


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


def aprovider_items(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    read_timeout: float | None,
    *,
    realtime: bool = False,
) -> AsyncIterator[Any]:
    """`provider_items` for an async reader (agent session replay feeds them to the
    adapter itself): with `realtime`, each awaited to its `at` offset."""
    return _items(cassette, on_directive, read_timeout, realtime)


def aprovider_events(
    cassette: Cassette,
    on_directive: DirectiveHandler,
    read_timeout: float | None,
    *,
    realtime: bool = False,
) -> AsyncIterator[ModelEvent]:
    """The async driver over the same items (with `realtime`, each awaited to its `at`
    offset without blocking the event loop), with what the header's request implies."""
    found = provider(cassette.provider)
    return found.ato_model_events(
        _items(cassette, on_directive, read_timeout, realtime),
        **found.request_options(cassette.header),
    )
