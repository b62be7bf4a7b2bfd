"""`harness.strict(client)`: an SDK client of the same class whose answers pass the adapter.

The copy (`client.with_options(http_client=...)`) sends through the original client's
own HTTP client (`SendTransport`: its transport, proxies and hooks), wrapped in a
`StrictTransport` for the streams, and checks non-streaming `Message`s in an SDK
middleware: an error raised there reaches the caller as it is, where one raised inside
a transport would be retried and wrapped. Everything else (retries, timeouts, headers,
a cassette client's requests and errors) is the original's.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, TypeVar

import httpx2

from harness._adapter import COMPLETE_STOP_REASONS
from harness._exceptions import InputError
from harness._replay.clients import share_source
from harness._strict.guard import check_message
from harness._strict.transport import MESSAGES_SUFFIX, SendTransport, StrictTransport

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic
    from anthropic._middleware import AsyncCallNext, CallNext
    from anthropic._request import APIRequest
    from anthropic._response import APIResponse, AsyncAPIResponse

__all__ = ["strict"]

Client = TypeVar("Client", "Anthropic", "AsyncAnthropic")


def _is_message_answer(request: APIRequest, response: Any) -> bool:
    return (
        not request.stream
        and request.method.lower() == "post"
        and request.url.partition("?")[0].endswith(MESSAGES_SUFFIX)
        and response.http_response.is_success
    )


def _check(response: Any, stop_reasons: Collection[str]) -> None:
    message = response.http_response.json()
    if isinstance(message, dict) and message.get("type") == "message":
        check_message(message, stop_reasons=stop_reasons)


def _middleware(stop_reasons: Collection[str]) -> Any:
    """The SDK middleware that checks a non-streaming answer (made here: it needs the SDK)."""
    from anthropic._middleware import Middleware

    class StrictMessages(Middleware):
        """Checks each non-streaming Messages answer by the adapter's rules."""

        def handle(self, request: APIRequest, call_next: CallNext) -> APIResponse[Any]:
            response = call_next(request)
            if _is_message_answer(request, response):
                _check(response, stop_reasons)
            return response

        async def handle_async(
            self, request: APIRequest, call_next: AsyncCallNext
        ) -> AsyncAPIResponse[Any]:
            response = await call_next(request)
            if _is_message_answer(request, response):
                _check(response, stop_reasons)
            return response

    return StrictMessages()


def strict(client: Client, *, allow_stop_reasons: Collection[str] = ()) -> Client:
    """A copy of `client` (`anthropic.Anthropic` or `AsyncAnthropic`) whose every Messages
    answer is checked by the adapter before the SDK reads it; see docs/strict.md.

    A violation raises `StreamProtocolError` from the stream (or from `create()`), so the
    SDK and any framework above it raise before the event that would complete the broken
    answer. `allow_stop_reasons` widens the stop reasons that complete a message
    (`end_turn` and `tool_use`), e.g. `{"max_tokens"}` for code that handles truncation.
    """
    from anthropic import Anthropic, AsyncAnthropic

    if isinstance(allow_stop_reasons, str):
        raise InputError(
            f"allow_stop_reasons takes a collection of stop reasons, not {allow_stop_reasons!r}"
        )
    if not isinstance(client, Anthropic | AsyncAnthropic):
        raise InputError(
            f"harness.strict takes an anthropic.Anthropic or AsyncAnthropic, not "
            f"{type(client).__name__}"
        )
    stop_reasons = COMPLETE_STOP_REASONS | frozenset(allow_stop_reasons)
    transport = StrictTransport(
        SendTransport(client._client), allow_stop_reasons=stop_reasons, check_messages=False
    )
    guarded: Anthropic | AsyncAnthropic
    if isinstance(client, AsyncAnthropic):
        guarded = client.with_options(http_client=httpx2.AsyncClient(transport=transport))
    else:
        guarded = client.with_options(http_client=httpx2.Client(transport=transport))
    guarded = guarded.with_middleware(_middleware(stop_reasons))
    share_source(client, guarded)
    return guarded
