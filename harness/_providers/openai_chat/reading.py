"""The `openai` SDK's two Chat Completions readers, as the chunks they hand the adapter.

`create`: `client.chat.completions.create(stream=True)`, whose iteration yields each
`ChatCompletionChunk` and consumes `data: [DONE]` (the driver then feeds `DONE` at the
end: `to_model_events(..., done_at_end=True)`). `stream`: the helper
`client.chat.completions.stream(...)`, whose `chunk` events carry the same chunks after
its accumulator (`ChatCompletionStreamState`) has read them, so what it raises itself
(`LengthFinishReasonError`, ...) comes first. The client is given (sync or async);
nothing here imports the SDK, and the request is a minimal one the replay transport
answers from the cassette.
"""

from __future__ import annotations

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
REQUEST: Final = {"model": "harness-replay", "messages": [{"role": "user", "content": "replay"}]}


def create_items(client: Any) -> Iterator[Any]:
    """The chunks of `chat.completions.create(stream=True)`."""
    yield from client.chat.completions.create(**REQUEST, stream=True)


def stream_items(client: Any) -> Iterator[Any]:
    """The chunks of the `chat.completions.stream()` helper's `chunk` events."""
    with client.chat.completions.stream(**REQUEST) as stream:
        for event in stream:
            if event.type == "chunk":
                yield event.chunk


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` through an `AsyncOpenAI`."""
    async for chunk in await client.chat.completions.create(**REQUEST, stream=True):
        yield chunk


async def astream_items(client: Any) -> AsyncIterator[Any]:
    """`stream_items` through an `AsyncOpenAI`."""
    async with client.chat.completions.stream(**REQUEST) as stream:
        async for event in stream:
            if event.type == "chunk":
                yield event.chunk


#: What the adapter's driver is given: the iteration consumed `[DONE]`, so it is fed at the end.
DRIVER_OPTIONS: Final = {"done_at_end": True}
