"""`StrictTransport`: the guard as an HTTP transport, for `httpx2` and `httpx` alike.

It wraps another transport (a socket's, a cassette's) and passes
every request on. The answer of a successful `POST .../v1/messages` comes back checked:

- the answer to a request for a stream (`"stream": true` in its body, whatever the
  answer's content type: the SDK reads it as SSE) has its body read through a
  `StreamGuard`, event by event; a violation raises `StreamProtocolError` from the body,
  where the client's reader gets it (the SDK raises it as it is, from the stream it
  iterates);
- any other is read and checked whole, as the SDK reads it (`check_answer`), before it
  is returned.

Either way the error is also the `APIError` of each SDK loaded (`sdk_errors`), so the
SDK hands it to its caller as it is, neither retried nor wrapped as a connection error.

The body is handed on decoded (the guard reads what the client would), so the answer
loses its `content-encoding` and `content-length`; its bytes are the same. Any other
request or answer passes untouched. The same class serves `httpx2` and `httpx` (v1)
clients: the answer is built with the classes of the inner transport's response.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Collection, Iterator
from functools import cache
from typing import Any, Final

import httpx2

from harness._exceptions import ANTHROPIC, InputError
from harness._inflate import Inflater, normal_coding
from harness._providers import provider
from harness._providers.answers import AnswerReader, asks_for_stream
from harness._providers.anthropic.adapter import COMPLETE_STOP_REASONS
from harness._providers.wire import request_path
from harness._strict.dialects import (
    AnswerCheck,
    answer_check,
    check_whole,
    claimed,
    provider_of,
)
from harness._strict.guard import StreamGuard, aguarded, guarded
from harness._strict.policy import completing_stop_reasons
from harness._strict.sdk_errors import (
    aiter_as_sdk_errors,
    iter_as_sdk_errors,
    raised_as_sdk_errors,
    request_of,
)

__all__ = [
    "StrictTransport",
    "aguard_response",
    "answer_kind",
    "asks_for_stream",
    "check_for",
    "guard_response",
    "guarded_body",
    "http_library",
    "unencoded_headers",
]

#: Headers that describe the body as it was sent: it is handed on decoded.
_ENCODING_HEADERS: Final = frozenset({"content-encoding", "content-length"})


def answer_kind(method: str, path: str, status: int, *, stream: bool) -> str | None:
    """ "stream" or "message" for a successful answer to a call of the default provider's
    (`POST .../v1/messages`, as its guard `claims` it, or at a host's path: `claimed`)
    that the guard checks, None for
    any other (the transport's, the SDK middleware's and the
    proxy's one test). As the SDK reads it: by whether the request asked for a stream
    (`stream`), whatever the answer's content type says."""
    if not claimed(provider(ANTHROPIC), method, path):
        return None
    if not 200 <= status < 300:
        return None
    return "stream" if stream else "message"


def check_for(
    request: Any, response: Any, allowed: Collection[str], profile: str | None = None
) -> AnswerCheck | None:
    """How the guard checks `response` to `request` (`answer_check`), or None."""
    path = request_path(request.url.raw_path)
    found = provider_of(request.method, path)
    if found is None:
        return None  # not read further: most requests of most clients
    try:
        content = request.content
    except Exception:  # a streamed request body, not read: no SDK sends one
        content = b""
    return answer_check(
        request.method,
        path,
        request.url.params,
        content,
        response.status_code,
        allowed,
        profile=profile,
        dialect=found,
    )


def _content_type(response: Any) -> str:
    return str(response.headers.get("content-type", ""))


def unencoded_headers(response: Any) -> list[tuple[str, str]]:
    """The headers of `response` for its body handed on decoded (by `guarded_body`)."""
    return [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in _ENCODING_HEADERS
    ]


def _coding(response: Any) -> str:
    return normal_coding(str(response.headers.get("content-encoding", "")))


def _chunks(response: Any) -> Iterator[bytes]:
    """The body as the client would read it: decoded a bounded chunk at a time
    (`Inflater`: never a piece expanded whole); its stream as it is when nothing encodes
    it (a layer fewer at every chunk)."""
    coding = _coding(response)
    if coding == "identity":
        return iter(response.stream)
    return _decoded(iter(response.stream), Inflater(coding))


def _decoded(raw: Iterator[bytes], inflater: Inflater) -> Iterator[bytes]:
    for piece in raw:
        yield from inflater.decode(piece)


def _achunks(response: Any) -> AsyncIterator[bytes]:
    coding = _coding(response)
    if coding == "identity":
        return aiter(response.stream)
    return _adecoded(aiter(response.stream), Inflater(coding))


async def _adecoded(raw: AsyncIterator[bytes], inflater: Inflater) -> AsyncIterator[bytes]:
    async for piece in raw:
        for data in inflater.decode(piece):
            yield data


@cache
def _body_class(module_name: str) -> type[Any]:
    """A guarded body for responses of `httpx2` or `httpx`: each checks its own stream type."""
    module: Any = sys.modules[module_name]

    class GuardedBody(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc]
        """The inner response's decoded bytes, released as the guard accepts them."""

        def __init__(self, response: Any, guard: StreamGuard) -> None:
            self._response = response
            self._guard = guard
            self._sync: Iterator[bytes] | None = None
            self._async: AsyncIterator[bytes] | None = None

        def __iter__(self) -> Iterator[bytes]:
            # Once: a reader that iterates again (the openai SDK drains an async body
            # after `[DONE]`) finds the rest of the same one, not the body read anew.
            if self._sync is None:
                self._sync = iter_as_sdk_errors(
                    guarded(_chunks(self._response), self._guard), request_of(self._response)
                )
            return self._sync

        def __aiter__(self) -> AsyncIterator[bytes]:
            if self._async is None:
                self._async = aiter_as_sdk_errors(
                    aguarded(_achunks(self._response), self._guard), request_of(self._response)
                )
            return self._async

        def close(self) -> None:
            self._response.close()

        async def aclose(self) -> None:
            await self._response.aclose()

    return GuardedBody


def guarded_body(
    response: Any,
    stop_reasons: Collection[str] = COMPLETE_STOP_REASONS,
    *,
    reader: AnswerReader | None = None,
) -> Any:
    """The body of an SSE `response` (of `httpx2` or `httpx`), decoded and read through a
    new `StreamGuard` (with `reader`, another provider's reading; Messages' by default,
    completed by `stop_reasons`): a stream to hand on in its place, with
    `unencoded_headers`."""
    body = _body_class(http_library(response))
    return body(response, StreamGuard(stop_reasons=stop_reasons, reader=reader))


def http_library(value: Any) -> str:
    """ "httpx2" or "httpx": the library `value` (a client or a response) belongs to, told
    by its classes, not its module (the openai SDK's default HTTP client is a subclass
    defined in the SDK); `InputError` for neither."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        kinds = () if module is None else (module.Client, module.AsyncClient, module.Response)
        if isinstance(value, kinds):
            return name
    raise InputError(f"not an httpx2 or httpx client or response: a {type(value).__name__}")


def guard_response(response: Any, check: AnswerCheck) -> None:
    """Put the guard of `check` in front of a response nothing has read (as an SDK
    client's HTTP client returns it): a stream's body swapped for the guarded one, in
    place; any other read and checked whole."""
    if not check.stream:
        response.read()
        _check_whole(check, response)
        return
    _swap_body(response, check)


async def aguard_response(response: Any, check: AnswerCheck) -> None:
    """`guard_response` for an async client's response."""
    if not check.stream:
        await response.aread()
        _check_whole(check, response)
        return
    _swap_body(response, check)


def _check_whole(check: AnswerCheck, response: Any) -> None:
    """A non-streaming answer, read, checked whole; the guard's error as the SDK's own."""
    with raised_as_sdk_errors(request_of(response)):
        check_whole(check, response.content, _content_type(response))


def _swap_body(response: Any, check: AnswerCheck) -> None:
    unread = type(response)(
        response.status_code,
        headers=response.headers,
        stream=response.stream,
        request=response.request,
    )
    response.stream = guarded_body(unread, reader=check.reader())
    response.headers = type(response.headers)(unencoded_headers(unread))
    if hasattr(response, "_content"):
        # Read already (a transport that answered with bytes: httpx's `MockTransport`
        # with `content=`, respx): the SDK would read those bytes, past the guard.
        del response._content
        response.is_stream_consumed = response.is_closed = False


class StrictTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """A transport whose Messages answers pass the adapter's rules; see the module docstring.

    `allow_stop_reasons` widens the stop reasons that complete a message (the default:
    `end_turn`, `tool_use`), e.g. `{"max_tokens"}` for code that handles truncation.
    `profile` names the compatible server whose Chat Completions deviations are read
    into OpenAI's form (docs/profiles.md); `ValueError` for an unknown one.
    """

    def __init__(
        self,
        inner: Any,
        *,
        allow_stop_reasons: Collection[str] = (),
        profile: str | None = None,
    ) -> None:
        from harness._providers import check_profile

        check_profile(profile)  # an unknown name: ValueError now
        self.inner = inner
        self.profile = profile
        self.allowed = frozenset(allow_stop_reasons)
        self.stop_reasons = completing_stop_reasons(allow_stop_reasons)

    def handle_request(self, request: Any) -> Any:
        response = self.inner.handle_request(request)
        check = check_for(request, response, self.allowed, self.profile)
        if check is None:
            return response
        if check.stream:
            return self._guarded(request, response, check)
        response.read()
        _check_whole(check, response)
        return response

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.inner.handle_async_request(request)
        check = check_for(request, response, self.allowed, self.profile)
        if check is None:
            return response
        if check.stream:
            return self._guarded(request, response, check)
        await response.aread()
        _check_whole(check, response)
        return response

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _guarded(self, request: Any, response: Any, check: AnswerCheck) -> Any:
        return type(response)(
            response.status_code,
            headers=unencoded_headers(response),
            stream=guarded_body(response, reader=check.reader()),
            request=request,
            extensions=response.extensions,
        )
