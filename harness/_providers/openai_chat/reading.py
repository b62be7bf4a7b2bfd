"""The `openai` SDK's two Chat Completions readers, as the chunks they hand the adapter.

`create`: `client.chat.completions.create(stream=True)`, whose iteration yields each
`ChatCompletionChunk` and consumes `data: [DONE]` (the driver then feeds `DONE` at the
end: `to_model_events(..., done_at_end=True)`). `stream`: the helper
`client.chat.completions.stream(...)`, whose `chunk` events carry the same chunks after
its accumulator (`ChatCompletionStreamState`) has read them, so what it raises itself
(`LengthFinishReasonError`, ...) comes first. The client is given (sync or async);
nothing here imports the SDK, and the request is a minimal one the replay transport
answers from the cassette.

`USER_READERS` are the two as a user's code calls them (the helper read to its final
`chat.completion`), by the names docs/sdk-readers.md gives them, and `SAMPLES` the
library's good cassettes they are served the fault rows of (`harness doctor`). Direct
replay feeds the adapter the lines' dicts, a `done` line as `DONE` (`direct_builders`);
an error line the SDK raised is handed back as its line (`error_line`).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Final

from harness._providers.openai_chat.adapter import DONE
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
REQUEST: Final = {"model": "harness-replay", "messages": [{"role": "user", "content": "replay"}]}


def create_items(client: Any) -> Iterator[Any]:
    """The chunks of `chat.completions.create(stream=True)`."""
    yield from client.chat.completions.create(**REQUEST, stream=True)


def stream_items(client: Any) -> Iterator[Any]:
    """The chunks of the `chat.completions.stream()` helper's `chunk` events."""
    with client.chat.completions.stream(**REQUEST) as stream:
        events = iter(stream)
        while (event := _quiet(events.__next__)) is not _END:
            if event.type == "chunk":
                yield event.chunk


#: what `_quiet` returns once the helper's events are exhausted
_END: Final = object()


def _quiet(step: Callable[[], Any]) -> Any:
    """The helper's next event, or `_END`: its accumulator dumps each chunk with
    pydantic's serializer warnings for a value of another type than the SDK declares (a
    list `content`), which say nothing the adapter does not (`non_string_content`), so
    they are silenced for that step alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            return step()
        except StopIteration:
            return _END


async def _aquiet(step: Callable[[], Awaitable[Any]]) -> Any:
    """`_quiet` for the async helper (`StopAsyncIteration` ends it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            return await step()
        except StopAsyncIteration:
            return _END


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    """`create_items` through an `AsyncOpenAI`."""
    async for chunk in await client.chat.completions.create(**REQUEST, stream=True):
        yield chunk


async def astream_items(client: Any) -> AsyncIterator[Any]:
    """`stream_items` through an `AsyncOpenAI`."""
    async with client.chat.completions.stream(**REQUEST) as stream:
        events = aiter(stream)
        while (event := await _aquiet(events.__anext__)) is not _END:
            if event.type == "chunk":
                yield event.chunk


#: What the adapter's driver is given: the iteration consumed `[DONE]`, so it is fed at the end.
DRIVER_OPTIONS: Final = {"done_at_end": True}


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    """What direct replay feeds the adapter: each line's dict (whatever `sdk_objects`
    says: the adapter reads dicts, the SDK is never imported for it), `done` as `DONE`."""
    return _direct(DONE)


#: The library's good cassettes (a text answer, one with tool calls) `USER_READERS` are
#: served the fault rows of, under the harness's cassette library.
SAMPLES: Final = ("openai/chat/text.jsonl", "openai/chat/parallel_tools.jsonl")


def _drain(client: Any) -> None:
    for _ in client.chat.completions.create(**REQUEST, stream=True):
        pass


def _final(client: Any) -> None:
    with client.chat.completions.stream(**REQUEST) as stream:
        stream.get_final_completion()


#: Reader name -> how a user's code reads the stream with a client (docs/sdk-readers.md:
#: the raw iteration, and the helper read to its final object).
USER_READERS: Final[dict[str, Callable[[Any], None]]] = {
    "chat.completions.create(stream=True)": _drain,
    "chat.completions.stream()": _final,
}
