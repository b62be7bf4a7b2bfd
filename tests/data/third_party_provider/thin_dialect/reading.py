"""How `thin_sdk` reads a stream (`create`, its `stream()` call), and direct replay's feed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Final

from harness._exceptions import APIErrorEvent
from harness._providers.wire import DirectBuilders

READERS: Final = ("create",)
REQUEST: Final = {"model": "harness-replay", "input": "replay"}
DRIVER_OPTIONS: Final[dict[str, Any]] = {}


def create_items(client: Any) -> Iterator[Any]:
    yield from client.stream(**REQUEST)


async def acreate_items(client: Any) -> AsyncIterator[Any]:
    async for line in client.stream(**REQUEST):
        yield line


def error_line(error: Exception) -> dict[str, Any] | None:
    return None  # the SDK hands an error line on as a line: the adapter raises for it


def _line(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _http_error(body: Any, status: int | None = None, headers: Any = None) -> APIErrorEvent:
    return APIErrorEvent(body, 200 if status is None else status)


def direct_builders(sdk_objects: bool) -> DirectBuilders:
    return DirectBuilders(_line, _http_error)
