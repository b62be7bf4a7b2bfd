"""The `openai` SDK's two Responses readers, as the events they hand the adapter.

`create`: `client.responses.create(stream=True)`, whose iteration yields every event
object as its line held it. `stream`: the helper `client.responses.stream(...)`, which
yields the same events after its accumulator (`ResponseStreamState`) has read each, so
what it raises itself (`RuntimeError: Didn't receive a response.completed event.`, ...)
comes first. The client is given (sync or async); nothing here imports the SDK, and the
request is a minimal one the replay transport answers from the cassette.

`USER_READERS` are the two as a user's code calls them (the helper read to its final
`response`), by the names docs/sdk-readers.md gives them, and `SAMPLES` the library's
good cassettes they are served the fault rows of (`harness doctor`). Direct replay
feeds the adapter the lines' dicts (`direct_builders`); an error line the SDK raised is
handed back as its line (`error_line`).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Final

from harness._providers.openai_shared import direct_builders as _direct, error_line
from harness._providers.wire import DirectBuilders

__all__ = [
    "DRIVER_OPTIONS",
    "READERS",
    "REQUEST",
    "SAMPLES",
    "USER_READERS",
    "acreate_items",
    "astream_items",
    "create_items",
    "direct_builders",
    "error_line",
    "stream_items",
]

#: The SDK's readers of a stream (docs/replay.md): the iteration of `create(stream=True)`
#: (the default), and the helper `stream()`.
READERS: Final = ("create", "stream")
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


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    """What direct replay feeds the adapter: each line's dict (whatever `sdk_objects`
    says: the adapter reads dicts, and the SDK is never imported for it)."""
    return _direct()


#: The library's good cassettes (a text answer, one with tool calls) `USER_READERS` are
#: served the fault rows of, under the harness's cassette library.
SAMPLES: Final = ("openai/responses/text.jsonl", "openai/responses/parallel_tools.jsonl")


def _drain(client: Any) -> None:
    for _ in client.responses.create(**REQUEST, stream=True):
        pass


def _final(client: Any) -> None:
    with client.responses.stream(**REQUEST) as stream:
        stream.get_final_response()


#: Reader name -> how a user's code reads the stream with a client (docs/sdk-readers.md:
#: the raw iteration, and the helper read to its final object).
USER_READERS: Final[dict[str, Callable[[Any], None]]] = {
    "responses.create(stream=True)": _drain,
    "responses.stream()": _final,
}
