"""Cassettes for `httpx` (v1) clients: litellm and plain-httpx code answered in-process.

The SDK speaks `httpx2`; litellm, and code of one's own, speak `httpx`. `HTTPXReplayTransport`
is `ReplayTransport` behind an `httpx` face: each request is handed to a `ReplayTransport`
as the `httpx2` request it is, and its answer comes back as an `httpx` response whose body
is read through, the transport errors of the plan (a cut, a stall past the read timeout)
raised as `httpx`'s classes of the same name. One `Replayer` decides, as for the SDK.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import httpx
import httpx2

from harness._replay.replayer import Replayer
from harness._replay.sdk import ReplayTransport

__all__ = ["HTTPXReplayTransport"]


@contextlib.contextmanager
def _as_httpx(request: httpx.Request) -> Iterator[None]:
    """An `httpx2` transport error raised as the `httpx` one of the same name."""
    try:
        yield
    except httpx2.TransportError as error:
        kind = getattr(httpx, type(error).__name__, httpx.TransportError)
        raise kind(str(error), request=request) from error


class _Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An `httpx2` response's body, for an `httpx` reader."""

    def __init__(self, response: httpx2.Response, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx(self._request):
            yield from self._response.iter_raw()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx(self._request):
            async for chunk in self._response.aiter_raw():
                yield chunk

    def close(self) -> None:
        self._response.close()

    async def aclose(self) -> None:
        await self._response.aclose()


def _request(request: httpx.Request, body: bytes) -> httpx2.Request:
    return httpx2.Request(
        request.method,
        str(request.url),
        headers=request.headers.multi_items(),
        content=body,
        extensions=request.extensions,
    )


def _response(answer: httpx2.Response, request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        answer.status_code,
        headers=answer.headers.multi_items(),
        stream=_Body(answer, request),
        request=request,
    )


class HTTPXReplayTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An in-process `httpx` transport: each request answered by `replayer`, as
    `ReplayTransport` answers an `httpx2` one."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer
        self._inner = ReplayTransport(replayer)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self._inner.handle_request(_request(request, request.read()))
        return _response(answer, request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        answer = await self._inner.handle_async_request(_request(request, body))
        return _response(answer, request)
