"""The `openai` SDK's two Responses readers, as the events they hand the adapter.

`create`: `client.responses.create(stream=True)`, whose iteration yields every event
object as its line held it. `stream`: the helper `client.responses.stream(...)`, which
yields the same events after its accumulator (`ResponseStreamState`) has read each, so
what it raises itself (`RuntimeError: Didn't receive a response.completed event.`, ...)
comes first. The client is given (sync or async); nothing here imports the SDK, and the
request is a minimal one the replay transport answers from the cassette.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final

__all__ = [
    "DRIVER_OPTIONS",
    "REQUEST",
    "acreate_items",
    "astream_items",
    "create_items",
    "stream_items",
]

#: The request every replay sends (the transport answers it from the cassette).
REQUEST: Final = {"model": "harness-replay", "input": "replay"}


def create_items(client: Any) -> Iterator[Any]:
    """The events of `responses.create(stream=True)`."""
    yield from client.responses.create(**REQUEST, stream=True)


def _quiet(event: Any) -> Any:
    """The helper's event as the adapter reads it: a lifecycle event's `ParsedResponse`
    dumps with pydantic's serializer warnings (a parsed subclass where the union names
    the plain one), which say nothing about the stream, so they are read here, silenced."""
    if getattr(event, "response", None) is None:
        return event
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return event.to_dict()


def stream_items(client: Any) -> Iterator[Any]:
    """The events of the `responses.stream()` helper."""
    with client.responses.stream(**REQUEST) as stream:
        for event in stream:
            yield _quiet(event)


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` through an `AsyncOpenAI`."""
    async for event in await client.responses.create(**REQUEST, stream=True):
        yield event


async def astream_items(client: Any) -> AsyncIterator[Any]:
    """`stream_items` through an `AsyncOpenAI`."""
    async with client.responses.stream(**REQUEST) as stream:
        async for event in stream:
            yield _quiet(event)


#: What the adapter's driver is given (nothing: every event reaches it).
DRIVER_OPTIONS: Final[dict[str, object]] = {}
