"""`ModelClient`s over OpenAI's `AsyncOpenAI`: Chat Completions and Responses.

`OpenAIChatModelClient` and `OpenAIResponsesModelClient` do for OpenAI what
`AnthropicModelClient` does for the Messages API: the loop's messages and tool
definitions become the API's request (its provider's `conversation` module, read through
the registry), the request is sent with `stream=True`, and the SDK's chunk or event
objects go through the provider's strict adapter (which reads them as their lines'
dicts), the abort signal answered as `adapted` answers it. The loop does not change:
it sees the same internal events from either. The SDK is imported only when a client
is created without one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar

from harness._events import ModelEvent
from harness._providers import provider
from harness._providers.openai_chat.errors import PROVIDER as CHAT
from harness._providers.openai_responses.errors import PROVIDER as RESPONSES
from harness.agent.client import ModelRequest, adapted
from harness.agent.messages import messages_to_api

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["DEFAULT_OPENAI_MODEL", "OpenAIChatModelClient", "OpenAIResponsesModelClient"]

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"


class _OpenAIModelClient:
    """What both clients share; each names its provider and how it calls the SDK."""

    #: the registry's name of the provider (a cassette header's `provider`)
    PROVIDER: ClassVar[str]
    #: the keywords its adapter's async driver is called with
    DRIVER_OPTIONS: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        model: str = DEFAULT_OPENAI_MODEL,
        max_tokens: int | None = None,
    ) -> None:
        self._client = client
        self.model = model
        self.max_tokens = max_tokens

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI()
        return self._client

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for `request` (without `stream`)."""
        params: dict[str, Any] = (
            provider(self.PROVIDER)
            .module("conversation")
            .request_params(
                model=self.model,
                system=request.system,
                messages=messages_to_api(request.messages),
                tools=[tool.to_api() for tool in request.tools],
                max_tokens=self.max_tokens,
            )
        )
        return params

    async def _create(self, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _driver(self, items: AsyncIterator[Any]) -> AsyncIterator[ModelEvent]:
        return provider(self.PROVIDER).ato_model_events(items, **self.DRIVER_OPTIONS)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        sdk_stream = await self._create(self.request_params(request))
        async for event in adapted(sdk_stream, request.signal, self._driver):
            yield event


class OpenAIChatModelClient(_OpenAIModelClient):
    """`ModelClient` over `AsyncOpenAI().chat.completions` (created from the environment
    when not given)."""

    PROVIDER = CHAT
    #: the SDK's stream consumes `data: [DONE]` and ends: the adapter is told it came
    DRIVER_OPTIONS: ClassVar[dict[str, Any]] = {"done_at_end": True}

    async def _create(self, params: dict[str, Any]) -> Any:
        return await self._sdk().chat.completions.create(**params, stream=True)


class OpenAIResponsesModelClient(_OpenAIModelClient):
    """`ModelClient` over `AsyncOpenAI().responses` (created from the environment when
    not given)."""

    PROVIDER = RESPONSES

    async def _create(self, params: dict[str, Any]) -> Any:
        return await self._sdk().responses.create(**params, stream=True)
