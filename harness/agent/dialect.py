"""What a model client over one registered provider's dialect is: the base the OpenAI,
Bedrock Converse and Gemini clients share.

A `DialectModelClient` names its provider (`PROVIDER`, a cassette header's `provider`)
and asks the registry for the rest: the provider's `conversation` module turns the
loop's messages and tool definitions into the API's request (`request_params`: as a
cassette's header keeps it, `model` in it), and its strict adapter's async driver reads
the SDK's stream (`adapted`, the abort signal answered). A subclass says only how its
SDK's client is made from the environment (`_new_sdk`, the SDK imported then and only
then) and how a request is sent to it (`_open`: a stream to iterate and `close()`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, ClassVar, Generic, TypeVar

from harness._events import ModelEvent
from harness._providers import provider
from harness.agent.client import ModelRequest, adapted
from harness.agent.messages import messages_to_api

__all__ = ["DialectModelClient"]

SDKClient = TypeVar("SDKClient")


class DialectModelClient(Generic[SDKClient]):
    """`ModelClient` over `client` (made from the environment when not given) speaking
    the dialect of the provider `PROVIDER`; `model` the API's name of the model (the
    class's `DEFAULT_MODEL` when not given), `max_tokens` sent only when set."""

    #: the registry's name of the provider (a cassette header's `provider`)
    PROVIDER: ClassVar[str]
    #: the model asked for when none is given
    DEFAULT_MODEL: ClassVar[str]
    #: the keywords its adapter's async driver is called with
    DRIVER_OPTIONS: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        client: SDKClient | None = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._client = client
        self.model = model or self.DEFAULT_MODEL
        self.max_tokens = max_tokens

    def _sdk(self) -> SDKClient:
        if self._client is None:
            self._client = self._new_sdk()
        return self._client

    def _new_sdk(self) -> SDKClient:
        """The SDK's client as the environment configures it (the SDK imported here)."""
        raise NotImplementedError

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request a turn sends for `request`, as its provider's `conversation`
        module writes it (a cassette header's `request`: without `stream`)."""
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

    async def _open(self, params: dict[str, Any]) -> Any:
        """The SDK's stream for `params` (iterated, then `await`ed `close()`)."""
        raise NotImplementedError

    def _driver(self, items: AsyncIterator[Any]) -> AsyncIterator[ModelEvent]:
        return provider(self.PROVIDER).ato_model_events(items, **self.DRIVER_OPTIONS)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        sdk_stream = await self._open(self.request_params(request))
        async for event in adapted(sdk_stream, request.signal, self._driver):
            yield event
