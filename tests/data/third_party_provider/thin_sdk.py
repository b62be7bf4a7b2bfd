"""A little SDK for the thin dialect: what a third party's users read its streams with.

`ThinClient(api_key=..., base_url=..., http_client=...)` (and `AsyncThinClient`) takes an
httpx-like client, as the Anthropic and OpenAI SDKs do; `stream(**request)` POSTs the
request with `"stream": true` to `{base_url}/v1/thin` and yields each `data:` line's
object. A 429 is retried after its `retry-after-ms`, up to `max_retries` times; any
other error status raises `APIStatusError`, its `body` the API's error JSON.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

BASE_URL = "https://api.thin.example"


class APIError(Exception):
    """What the SDK raises for the API's error."""


class APIStatusError(APIError):
    def __init__(self, status_code: int, body: Any) -> None:
        super().__init__(f"{status_code}: {body}")
        self.status_code = status_code
        self.body = body


def _body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {"error": {"type": "unreadable", "message": raw.decode(errors="replace")}}


def _line(text: str) -> dict[str, Any] | None:
    return json.loads(text[5:]) if text.startswith("data:") else None


class _Base:
    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: Any = None,
        max_retries: int = 2,
        timeout: float | None = 60.0,
    ) -> None:
        self.api_key = api_key or os.environ.get("THIN_API_KEY", "")
        self.base_url = (base_url or os.environ.get("THIN_BASE_URL") or BASE_URL).rstrip("/")
        self.http_client = http_client
        self.max_retries = max_retries
        self.timeout = timeout

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        """`request`'s call: its `extra_headers` sent as headers, the rest as the body."""
        body = {key: value for key, value in request.items() if key != "extra_headers"}
        return {
            "url": f"{self.base_url}/v1/thin",
            "json": {**body, "stream": True},
            "headers": {
                "authorization": f"Bearer {self.api_key}",
                **request.get("extra_headers", {}),
            },
            "timeout": self.timeout,
        }


class ThinClient(_Base):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.http_client = self.http_client or httpx2.Client()

    def stream(self, **request: Any) -> Iterator[dict[str, Any]]:
        for attempt in itertools.count():
            with self.http_client.stream("POST", **self._request(request)) as response:
                if response.status_code == 429 and attempt < self.max_retries:
                    response.read()
                    time.sleep(float(response.headers.get("retry-after-ms", "0")) / 1000)
                    continue
                if response.status_code >= 400:
                    raise APIStatusError(response.status_code, _body(response.read()))
                for text in response.iter_lines():
                    line = _line(text)
                    if line is not None:
                        yield line
                return

    def close(self) -> None:
        self.http_client.close()

    def __enter__(self) -> ThinClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncThinClient(_Base):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.http_client = self.http_client or httpx2.AsyncClient()

    async def stream(self, **request: Any) -> AsyncIterator[dict[str, Any]]:
        for attempt in itertools.count():
            async with self.http_client.stream("POST", **self._request(request)) as response:
                if response.status_code == 429 and attempt < self.max_retries:
                    await response.aread()
                    await asyncio.sleep(float(response.headers.get("retry-after-ms", "0")) / 1000)
                    continue
                if response.status_code >= 400:
                    raise APIStatusError(response.status_code, _body(await response.aread()))
                async for text in response.aiter_lines():
                    line = _line(text)
                    if line is not None:
                        yield line
                return

    async def close(self) -> None:
        await self.http_client.aclose()
