"""Server-sent events: cassette events to the API's SSE bytes, and SSE bytes back to events.

Encoding frames each event as the API does (`event: <type>`, `data: <json>`, a blank
line). Decoding uses the SDK's own SSE reader (`anthropic.Stream.raw_events`), so a body
is split exactly as a live client would split it; each `data:` field must then be one
JSON object with a string `type` (strict JSON: no `NaN`), or `SSEFormatError` names the
event that is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from harness._json import dump_line
from harness._terminal import printable

if TYPE_CHECKING:
    import httpx2

__all__ = ["SSEFormatError", "encode_event", "events_from_body", "events_from_response"]


class SSEFormatError(ValueError):
    """An SSE body whose `data:` field is not a stream event; the message names which."""


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API's SSE framing carries it, closing blank line included."""
    kind = printable(str(event["type"])).encode()
    return b"event: " + kind + b"\ndata: " + dump_line(event) + b"\n\n"


def _event(data: str, number: int) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SSEFormatError(f"event {number} is not JSON: {error}") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise SSEFormatError(f"event {number} is not a JSON object with a type")
    return event


def events_from_response(
    response: httpx2.Response, chunks: Iterator[bytes] | None = None
) -> Iterator[dict[str, Any]]:
    """The events of an SSE response, as they arrive; comments and empty data pass over.

    `chunks` replaces the response's own byte iterator (to watch or bound it). A line
    that is not UTF-8 raises `SSEFormatError` too.
    """
    import httpx2
    from anthropic import Stream

    if chunks is not None:
        response = httpx2.Response(200, content=chunks)
    number = 0
    try:
        for sse in Stream.raw_events(response):
            if sse.data:
                number += 1
                yield _event(sse.data, number)
    except UnicodeDecodeError as error:
        raise SSEFormatError(
            f"after event {number}: a line is not UTF-8 ({error.reason})"
        ) from None


def events_from_body(body: bytes) -> list[dict[str, Any]]:
    """The events of a whole SSE body."""
    import httpx2

    return list(events_from_response(httpx2.Response(200, content=body)))
