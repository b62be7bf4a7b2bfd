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

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "SSEFormatError",
    "StreamingDecoder",
    "encode_event",
    "events_from_body",
    "events_from_response",
]


class SSEFormatError(ValueError):
    """An SSE body whose `data:` field is not a stream event; the message names which."""


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API's SSE framing carries it, closing blank line included."""
    kind = str(event["type"]).encode()
    return b"event: " + kind + b"\ndata: " + orjson.dumps(event) + b"\n\n"


def _event(data: str, number: int) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SSEFormatError(f"event {number} is not JSON: {error}") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise SSEFormatError(f"event {number} is not a JSON object with a type")
    return event


def events_from_response(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    """The events of an SSE response, as they arrive; comments and empty data pass over."""
    from anthropic import Stream

    number = 0
    for sse in Stream.raw_events(response):
        if sse.data:
            number += 1
            yield _event(sse.data, number)


def events_from_body(body: bytes) -> list[dict[str, Any]]:
    """The events of a whole SSE body."""
    import httpx2

    return list(events_from_response(httpx2.Response(200, content=body)))


class StreamingDecoder:
    """Events out of an SSE body fed in pieces as they arrive (a proxy's view of a stream).

    Lines are split as the SDK splits them (`\\r\\n`, `\\n` or `\\r`), a piece may end
    anywhere (mid-line, mid-character), and each complete line goes to the SDK's own
    `SSEDecoder`, so the events are those a live client would see.
    """

    def __init__(self) -> None:
        from anthropic._streaming import SSEDecoder

        self._decoder = SSEDecoder()
        self._buffer = b""
        self._count = 0

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The events `piece` completes; `SSEFormatError` at a `data:` that is no event."""
        self._buffer += piece
        lines = self._buffer.splitlines(keepends=True)
        # A last line without its `\n` waits for more: even one ending in `\r` may be a `\r\n`.
        self._buffer = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        return self._decode(lines)

    def finish(self) -> list[dict[str, Any]]:
        """The events the end of the body completes (a last event with no closing blank line)."""
        lines = [self._buffer, b"\n"] if self._buffer else [b"\n"]
        self._buffer = b""
        return self._decode(lines)

    def _decode(self, lines: list[bytes]) -> list[dict[str, Any]]:
        events = []
        for raw in lines:
            sse = self._decoder.decode(raw.rstrip(b"\r\n").decode("utf-8", errors="replace"))
            if sse is not None and sse.data:
                self._count += 1
                events.append(_event(sse.data, self._count))
        return events
