"""`StrictTransport`: the guard as an HTTP transport, for `httpx2` and `httpx` alike.

It wraps another transport (a socket's, a cassette's) and passes
every request on. The answer of a successful `POST .../v1/messages` comes back checked:

- the answer to a request for a stream (`"stream": true` in its body, whatever the
  answer's content type: the SDK reads it as SSE) has its body read through a
  `StreamGuard`, event by event; a violation raises `StreamProtocolError` from the body,
  where the client's reader gets it (the SDK raises it as it is, from the stream it
  iterates);
- any other is read and checked whole, as the SDK reads it (`check_answer`), before it
  is returned;
  an error raised inside a transport reaches the SDK's caller as an
  `APIConnectionError` from it, after the SDK's retries (`harness.strict`, which puts
  the guard in an SDK middleware instead, raises it as it is).

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
import orjson

from harness._inflate import Inflater, normal_coding
from harness._strict.guard import (
    StreamGuard,
    aguarded,
    check_answer,
    guarded,
)
from harness._strict.policy import completing_stop_reasons

__all__ = [
    "StrictTransport",
    "answer_kind",
    "asks_for_stream",
    "guarded_body",
    "unencoded_headers",
]

MESSAGES_SUFFIX: Final = "/v1/messages"
#: Headers that describe the body as it was sent: it is handed on decoded.
_ENCODING_HEADERS: Final = frozenset({"content-encoding", "content-length"})


def answer_kind(method: str, path: str, status: int, *, stream: bool) -> str | None:
    """ "stream" or "message" for a successful answer to `POST .../v1/messages` that the
    guard checks, None for any other (the transport's, the SDK middleware's and the
    proxy's one test). As the SDK reads it: by whether the request asked for a stream
    (`stream`), whatever the answer's content type says."""
    if method.upper() != "POST" or not path.endswith(MESSAGES_SUFFIX):
        return None
    if not 200 <= status < 300:
        return None
    return "stream" if stream else "message"


def asks_for_stream(content: bytes) -> bool:
    """Whether a Messages request's JSON body asks for a stream (`"stream": true`)."""
    if content.find(b'"stream"') < 0:
        return False
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _checked_kind(request: Any, response: Any) -> str | None:
    try:
        content = request.content
    except Exception:  # a streamed request body, not read: no SDK sends one
        content = b""
    return answer_kind(
        request.method,
        request.url.path,
        response.status_code,
        stream=asks_for_stream(content),
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

        def __iter__(self) -> Iterator[bytes]:
            return guarded(_chunks(self._response), self._guard)  # a layer fewer a chunk

        def __aiter__(self) -> AsyncIterator[bytes]:
            return aguarded(_achunks(self._response), self._guard)

        def close(self) -> None:
            self._response.close()

        async def aclose(self) -> None:
            await self._response.aclose()

    return GuardedBody


def guarded_body(response: Any, stop_reasons: Collection[str]) -> Any:
    """The body of an SSE `response` (of `httpx2` or `httpx`), decoded and read through a
    new `StreamGuard`: a stream to hand on in its place, with `unencoded_headers`."""
    body = _body_class(type(response).__module__.partition(".")[0])
    return body(response, StreamGuard(stop_reasons=stop_reasons))


class StrictTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """A transport whose Messages answers pass the adapter's rules; see the module docstring.

    `allow_stop_reasons` widens the stop reasons that complete a message (the default:
    `end_turn`, `tool_use`), e.g. `{"max_tokens"}` for code that handles truncation.
    """

    def __init__(self, inner: Any, *, allow_stop_reasons: Collection[str] = ()) -> None:
        self.inner = inner
        self.stop_reasons = completing_stop_reasons(allow_stop_reasons)

    def handle_request(self, request: Any) -> Any:
        response = self.inner.handle_request(request)
        kind = _checked_kind(request, response)
        if kind == "stream":
            return self._guarded(request, response)
        if kind == "message":
            response.read()
            check_answer(response.content, _content_type(response), stop_reasons=self.stop_reasons)
        return response

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.inner.handle_async_request(request)
        kind = _checked_kind(request, response)
        if kind == "stream":
            return self._guarded(request, response)
        if kind == "message":
            await response.aread()
            check_answer(response.content, _content_type(response), stop_reasons=self.stop_reasons)
        return response

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _guarded(self, request: Any, response: Any) -> Any:
        return type(response)(
            response.status_code,
            headers=unencoded_headers(response),
            stream=guarded_body(response, self.stop_reasons),
            request=request,
            extensions=response.extensions,
        )
