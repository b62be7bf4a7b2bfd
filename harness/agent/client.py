"""The model client seam: a request in, internal `ModelEvent`s out.

`ModelClient` is all the agent loop knows of a model. `AnthropicModelClient` is the one
place that talks to the Anthropic SDK: it maps the loop's messages and tool definitions
to the Messages API parameters, streams, and runs the strict adapter over the SDK's
events (the OpenAI clients, `harness.agent.openai_client`, do the same through
`adapted`). The client may be any of the SDK's async Messages clients: `AsyncAnthropic`,
or `AsyncAnthropicBedrock` / `AsyncAnthropicVertex` for Claude on Amazon Bedrock or
Google Vertex (the same events, whatever framing carried them). It answers the abort
signal: the moment the signal is set it stops waiting for the next event and closes the
SDK stream (and with it the HTTP response).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from harness._events import ModelEvent
from harness._providers.anthropic.adapter import ato_model_events
from harness.agent.messages import Message, messages_to_api
from harness.agent.signal import AbortSignal
from harness.agent.tools import ToolDefinition

if TYPE_CHECKING:
    from typing import TypeAlias

    from anthropic import AsyncAnthropic, AsyncAnthropicBedrock, AsyncAnthropicVertex

    #: The SDK's async clients whose `messages.create` streams Messages events.
    AsyncMessagesClient: TypeAlias = AsyncAnthropic | AsyncAnthropicBedrock | AsyncAnthropicVertex

__all__ = ["AnthropicModelClient", "ModelClient", "ModelRequest", "adapted", "request_params"]

DEFAULT_MODEL = "claude-sonnet-5"


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model turn: the system prompt, the conversation so far, the tools, the signal."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolDefinition]
    signal: AbortSignal | None = None


class ModelClient(Protocol):
    """Streams one turn as internal events; raises `StreamProtocolError` on a broken stream."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


def request_params(request: ModelRequest, *, model: str, max_tokens: int) -> dict[str, Any]:
    """The `messages.create` keyword arguments for a request (without `stream`)."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages_to_api(request.messages),
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [tool.to_api() for tool in request.tools]
    return params


class AnthropicModelClient:
    """`ModelClient` over `AsyncAnthropic` (created from the environment when not given),
    or over `AsyncAnthropicBedrock` / `AsyncAnthropicVertex` given (`model` is then the
    host's name for it: a Bedrock model id, a Vertex model name)."""

    def __init__(
        self,
        client: AsyncMessagesClient | None = None,
        *,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 4096,
    ) -> None:
        self._client = client
        self.model = model
        self.max_tokens = max_tokens

    def _sdk(self) -> AsyncMessagesClient:
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic()
        return self._client

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        params = request_params(request, model=self.model, max_tokens=self.max_tokens)
        sdk_stream = await self._sdk().messages.create(**params, stream=True)
        async for event in adapted(sdk_stream, request.signal, ato_model_events):
            yield event


async def adapted(
    sdk_stream: Any,
    signal: AbortSignal | None,
    driver: Callable[[AsyncIterator[Any]], AsyncIterator[ModelEvent]],
) -> AsyncGenerator[ModelEvent, None]:
    """An SDK stream's events through an adapter's async `driver`, answering `signal`;
    the SDK stream is closed (and with it the HTTP response) however it ends."""
    try:
        async for event in driver(_until_aborted(sdk_stream, signal)):
            yield event
    except _StreamAborted:
        return  # cut short: no end-of-stream checks, no done; the loop sees the signal
    finally:
        await sdk_stream.close()


class _StreamAborted(Exception):
    """Raised from inside the adapter's input so that the adapter is never finished."""


async def _until_aborted(events: Any, signal: AbortSignal | None) -> AsyncIterator[Any]:
    """The SDK's events until the stream ends or the signal is set, whichever comes first.

    Each wait for the next event races the signal, so an abort is answered even while
    the provider is silent; the event being waited for is then cancelled. On abort it
    raises `_StreamAborted`: a cut-short stream must not meet the end-of-stream rules.
    """
    iterator = aiter(events)
    if signal is None:
        async for event in iterator:
            yield event
        return
    loop = asyncio.get_running_loop()
    aborted: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not aborted.done():
            aborted.set_result(None)

    unsubscribe = signal.on_abort(wake)
    pending: asyncio.Future[Any] | None = None
    try:
        while True:
            if signal.aborted:
                raise _StreamAborted
            pending = asyncio.ensure_future(anext(iterator))
            await asyncio.wait({pending, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not pending.done():
                raise _StreamAborted
            try:
                event = pending.result()
            except StopAsyncIteration:
                return
            yield event
    finally:
        unsubscribe()
        aborted.cancel()
        if pending is not None and not pending.done():
            pending.cancel()
            await asyncio.wait({pending})
        if pending is not None and not pending.cancelled():
            pending.exception()  # retrieved: a late failure of a cancelled read is moot
