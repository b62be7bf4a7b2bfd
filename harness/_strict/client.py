"""`harness.strict(client)`: an SDK client of the same class whose answers pass the adapter.

The copy (`client.with_middleware(...)`) is the original with one SDK middleware more,
which sees each attempt's answer before the SDK reads a byte of it: a Messages stream
gets its body replaced by the same body read through a `StreamGuard` (the one
`StrictTransport` uses), a non-streaming `Message` is checked whole. An error raised
there, or from the body, is a `StreamProtocolError` that is also the SDK's `APIError`
(`harness._strict.sdk_errors`), which every release of the SDK hands the caller as it
is, neither retried nor wrapped. Everything else (the HTTP client, its
transport, proxies and hooks, retries, timeouts, headers, a cassette client's requests
and errors) is the original's.

The SDK's clients on a host take it too (`AnthropicBedrock`, `AnthropicVertex` and their
async twins: the default provider's `Provider.hosted`), with the same middleware: a
Vertex stream is the same SSE at another path, a Bedrock stream is read frame by frame
(`harness._hosts.bedrock.FramedReader`), its frames handed on as they came.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import httpx2

from harness._exceptions import InputError
from harness._hosts import hosted_at
from harness._providers.anthropic.guard import AnthropicReader
from harness._providers.wire import request_path
from harness._replay.clients import share_source
from harness._strict.guard import check_answer
from harness._strict.policy import completing_stop_reasons
from harness._strict.sdk_errors import raised_as_sdk_errors
from harness._strict.transport import answer_kind, guarded_body, unencoded_headers

if TYPE_CHECKING:
    from anthropic import (
        Anthropic,
        AnthropicBedrock,
        AnthropicVertex,
        AsyncAnthropic,
        AsyncAnthropicBedrock,
        AsyncAnthropicVertex,
    )
    from anthropic._middleware import AsyncCallNext, CallNext
    from anthropic._request import APIRequest
    from anthropic._response import APIResponse, AsyncAPIResponse
    from google.genai import Client as GenaiClient
    from openai import AsyncOpenAI, OpenAI

    from harness._providers.sdk import Sdk

__all__ = ["strict"]

Client = TypeVar(
    "Client",
    "Anthropic",
    "AsyncAnthropic",
    "OpenAI",
    "AsyncOpenAI",
    "AnthropicBedrock",
    "AsyncAnthropicBedrock",
    "AnthropicVertex",
    "AsyncAnthropicVertex",
    "GenaiClient",
)


def _checked_kind(request: APIRequest, response: Any) -> str | None:
    """ "stream" or "message" for a Messages answer the rules check, None for any other:
    by whether the SDK reads it as a stream (`request.stream`), as the SDK does."""
    http = response.http_response
    path = request.url.partition("?")[0]
    return answer_kind(request.method, path, http.status_code, stream=request.stream)


def _guard_stream(http: httpx2.Response, stop_reasons: Collection[str]) -> None:
    """Swap the body of a stream the SDK has read none of for the guarded one (read in
    the framing of the host it came from, if its own: Bedrock's)."""
    unread = httpx2.Response(
        http.status_code, headers=http.headers, stream=http.stream, request=http.request
    )
    hosted = hosted_at(request_path(http.request.url.raw_path))
    framed = hosted.host.reader if hosted is not None else None
    reader = None if framed is None else framed(AnthropicReader(stop_reasons=stop_reasons))
    http.stream = guarded_body(unread, stop_reasons, reader=reader)
    http.headers = httpx2.Headers(unencoded_headers(unread))
    if hasattr(http, "_content"):
        # Read already (a transport that answered with bytes: httpx's `MockTransport`
        # with `content=`, respx): the SDK would read those bytes, past the guard.
        del http._content
        http.is_stream_consumed = http.is_closed = False


def _check(body: bytes, http: httpx2.Response, stop_reasons: Collection[str]) -> None:
    with raised_as_sdk_errors(http.request):
        check_answer(body, http.headers.get("content-type", ""), stop_reasons=stop_reasons)


def _middleware(stop_reasons: Collection[str]) -> Any:
    """The SDK middleware that guards each answer (made here: it needs the SDK)."""
    from anthropic._middleware import Middleware

    class StrictAnswers(Middleware):
        """Each Messages answer read by the adapter's rules before the SDK reads it."""

        def handle(self, request: APIRequest, call_next: CallNext) -> APIResponse[Any]:
            response = call_next(request)
            kind = _checked_kind(request, response)
            if kind == "stream":
                _guard_stream(response.http_response, stop_reasons)
            elif kind == "message":
                _check(response.http_response.read(), response.http_response, stop_reasons)
            return response

        async def handle_async(
            self, request: APIRequest, call_next: AsyncCallNext
        ) -> AsyncAPIResponse[Any]:
            response = await call_next(request)
            kind = _checked_kind(request, response)
            if kind == "stream":
                _guard_stream(response.http_response, stop_reasons)
            elif kind == "message":
                _check(await response.http_response.aread(), response.http_response, stop_reasons)
            return response

    return StrictAnswers()


def strict(
    client: Client, *, allow_stop_reasons: Collection[str] = (), profile: str | None = None
) -> Client:
    """A copy of `client` (`anthropic.Anthropic` or `AsyncAnthropic`, `openai.OpenAI` or
    `AsyncOpenAI`) whose every answer the guard checks is checked by the provider's
    adapter before the SDK reads it; see docs/strict.md.

    A violation raises `StreamProtocolError` from the stream (or from `create()`), so the
    SDK and any framework above it raise before the event that would complete the broken
    answer. `allow_stop_reasons` widens the stop reasons that complete an answer: for
    Messages `end_turn` and `tool_use` (e.g. `{"max_tokens"}` for code that handles
    truncation), for Chat Completions the finish reasons `stop` and `tool_calls` (e.g.
    `{"length"}`), for Responses the `incomplete_details.reason`s of a
    `response.incomplete` (none by default, e.g. `{"max_output_tokens"}`).

    `profile` names a compatible server (`"vllm"`, `"gemini"`, ...: docs/profiles.md)
    whose Chat Completions deviations are read into OpenAI's form and handed on so; an
    OpenAI client's Responses answers keep the default. `ValueError` (`InputError`) for
    an unknown name or an Anthropic client.
    """
    if isinstance(allow_stop_reasons, str) or not isinstance(allow_stop_reasons, Iterable):
        raise InputError(
            f"allow_stop_reasons takes a collection of stop reasons, not {allow_stop_reasons!r}"
        )
    allow_stop_reasons = tuple(allow_stop_reasons)
    for reason in allow_stop_reasons:
        if not isinstance(reason, str):
            raise InputError(f"allow_stop_reasons takes stop reasons (strings), not {reason!r}")
    if profile is not None:
        from harness._providers import check_profile

        try:
            check_profile(profile)
        except ValueError as error:
            raise InputError(str(error)) from None
        if not _reads_profiles(client):
            raise InputError(
                f"profile {profile!r}: profiles are for {_profiled_names()} streams: "
                f"harness.strict takes one with {_profiled_clients()}"
            )
    sdk = _sdk_without_middleware(client)
    if sdk is not None:
        from harness._strict.http_client import strict_http

        copy = strict_http(client, sdk, allow_stop_reasons, profile)
        share_source(cast(Any, client), cast(Any, copy))
        return cast(Client, copy)
    if not _takes_middleware(client):
        from harness._strict.hooks import strict_through_hooks

        hooked = strict_through_hooks(client, allow_stop_reasons)
        if hooked is not None:
            return cast(Client, hooked)
        raise InputError(
            f"harness.strict takes an anthropic.Anthropic or AsyncAnthropic (or the same on "
            f"Bedrock or Vertex: AnthropicBedrock, AnthropicVertex), or one of "
            f"{_other_clients()}, not {type(client).__name__}"
        )
    stop_reasons = completing_stop_reasons(allow_stop_reasons)
    guarded: Client = cast(Any, client).with_middleware(_middleware(stop_reasons))
    share_source(cast(Any, client), cast(Any, guarded))
    return guarded


def _sdk_without_middleware(client: object) -> Sdk | None:
    """The SDK `client` is a client of (`openai.OpenAI`, `genai.Client`; told without
    importing the SDK: a client of it means it is loaded) when the guard wraps its HTTP
    client, as for the SDKs that have no middleware of their own; else None."""
    from harness._providers import sdks

    middleware = _middleware_sdk()
    return next(
        (sdk for sdk in sdks() if sdk.package != middleware and sdk.is_client(client)), None
    )


def _other_clients() -> str:
    """`openai.OpenAI, openai.AsyncOpenAI, ..., a boto3 bedrock-runtime client`: the clients
    of the SDKs without middleware, each as its provider words it when it guards them
    through the SDK's own hooks."""
    from harness._providers import sdks
    from harness._strict.hooks import hooked_clients

    middleware = _middleware_sdk()
    hooked = hooked_clients()
    names = [
        hooked.get(sdk.package) or f"{sdk.package}.{name}"
        for sdk in sdks()
        if sdk.package != middleware
        for name in sdk.clients
    ]
    return ", ".join(dict.fromkeys(names))


def _takes_middleware(client: object) -> bool:
    """Whether `client` is a client of the default provider's SDK, on the direct API or a
    host (`Provider.hosted`): one `harness.strict`'s middleware goes into."""
    from harness._exceptions import ANTHROPIC
    from harness._providers import provider

    found = provider(ANTHROPIC)
    found.sdk.module()  # loaded: its classes are looked up, not imported
    return any(sdk.is_client(client) for sdk in (found.sdk, *found.hosted.values()))


def _middleware_sdk() -> str:
    """The package of the SDK whose clients take `harness.strict`'s middleware: the
    default provider's (`anthropic`, `with_middleware`)."""
    from harness._exceptions import ANTHROPIC
    from harness._providers import provider

    return provider(ANTHROPIC).sdk.package


def _profiled() -> list[Any]:
    from harness._providers import providers

    return [found for found in providers() if found.has_profiles]


def _reads_profiles(client: object) -> bool:
    """Whether `client` is a client of the SDK of a provider that has profiles."""
    return any(found.sdk.is_client(client) for found in _profiled())


def _profiled_names() -> str:
    return ", ".join(found.name for found in _profiled())


def _profiled_clients() -> str:
    """`an openai.OpenAI or AsyncOpenAI`: the clients of the providers that have profiles."""
    named = {found.sdk.package: found.sdk for found in _profiled()}
    return " or ".join(
        f"an {sdk.package}.{sdk.clients[0]} or {sdk.clients[1]}" for sdk in named.values()
    )
