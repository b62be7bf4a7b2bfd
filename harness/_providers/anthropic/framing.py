"""How an Anthropic stream event goes over the wire: an SSE event named by its `type`.

`event: <type>`, `data: <json>` and the blank line that ends it, as the API sends each
event and the SDK needs it to emit one (`harness._cassette.sse` reads the same bytes
back). A `type` that would break the line is shown printable (`harness._terminal`).
"""

from __future__ import annotations

from typing import Any

from harness._json import dump_line
from harness._terminal import printable

__all__ = ["encode_event"]


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API's SSE framing carries it, closing blank line included."""
    kind = printable(str(event["type"])).encode()
    return b"event: " + kind + b"\ndata: " + dump_line(event) + b"\n\n"
