"""OpenAI's SSE framing, both dialects: an event's data read as the `openai` SDK reads it,
and an event written as the API writes it.

The SDK's `Stream` reads each event's `data` alone (the `event:` name is passed over: both
dialects carry the kind inside the data): one starting `[DONE]` is the sentinel that ends
the body, any other must be JSON (strict here: what becomes a cassette line), an object.
The lines of the body are split by the one SSE decoder (`harness._providers.sse.sse_fields`);
this module reads what they carry. Writing frames a `data` object as the API does:
`data: <json>` and a blank line, after an `event: <type>` line for a Responses event.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from harness._json import dump_line
from harness._terminal import printable

__all__ = ["DONE_DATA", "Item", "data_frame", "read_data"]

#: The `data` of the sentinel that ends a Chat Completions body, as the API sends it.
DONE_DATA: Final = b"[DONE]"
#: An event's data as read: its object, or `DONE_DATA`.
Item = dict[str, Any] | bytes


def read_data(data: bytes, number: int) -> Item:
    """Event `number`'s data as the SDK reads it; `ValueError` (the reason) when it is
    neither the sentinel nor a JSON object."""
    if data.startswith(DONE_DATA):
        return DONE_DATA
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"event {number} is not JSON: {error}") from None
    if not isinstance(event, dict):
        raise ValueError(f"event {number} is not a JSON object")
    return event


def data_frame(item: Item, *, named: bool) -> bytes:
    """One event as the API frames it: `data: <json>` (after `event: <type>` when `named`,
    as Responses events are) and the blank line; `DONE_DATA` as `data: [DONE]`."""
    if isinstance(item, bytes):
        return b"data: " + item + b"\n\n"
    head = b""
    if named and isinstance(item.get("type"), str):
        head = b"event: " + printable(item["type"]).encode() + b"\n"
    return head + b"data: " + dump_line(item) + b"\n\n"
