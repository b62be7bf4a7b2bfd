"""`ModelClient`s over OpenAI's `AsyncOpenAI`: Chat Completions and Responses.

`OpenAIChatModelClient` and `OpenAIResponsesModelClient` do for OpenAI what
`AnthropicModelClient` does for the Messages API: the loop's messages and tool
definitions become the API's request (its provider's `conversation` module, read through
the registry), the request is sent with `stream=True`, and the SDK's chunk or event
objects go through the provider's strict adapter (which reads them as their lines'
dicts), the abort signal answered as `adapted` answers it (`DialectModelClient`). The
loop does not change: it sees the same internal events from either. The SDK is imported
only when a client is created without one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from harness._providers.openai_chat.errors import PROVIDER as CHAT
from harness._providers.openai_responses.errors import PROVIDER as RESPONSES
from harness.agent.dialect import DialectModelClient

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["DEFAULT_OPENAI_MODEL", "OpenAIChatModelClient", "OpenAIResponsesModelClient"]

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"


class _OpenAIModelClient(DialectModelClient["AsyncOpenAI"]):
    """What both clients share: the SDK, and its default model."""

    DEFAULT_MODEL = DEFAULT_OPENAI_MODEL

    def _new_sdk(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI

        return AsyncOpenAI()


class OpenAIChatModelClient(_OpenAIModelClient):
    """`ModelClient` over `AsyncOpenAI().chat.completions` (created from the environment
    when not given)."""

    PROVIDER = CHAT
    #: the SDK's stream consumes `data: [DONE]` and ends: the adapter is told it came
    DRIVER_OPTIONS: ClassVar[dict[str, Any]] = {"done_at_end": True}

    async def _open(self, params: dict[str, Any]) -> Any:
        return await self._sdk().chat.completions.create(**params, stream=True)


class OpenAIResponsesModelClient(_OpenAIModelClient):
    """`ModelClient` over `AsyncOpenAI().responses` (created from the environment when
    not given)."""

    PROVIDER = RESPONSES

    async def _open(self, params: dict[str, Any]) -> Any:
        return await self._sdk().responses.create(**params, stream=True)
