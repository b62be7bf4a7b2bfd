"""Responses on the wire: where a stream is asked for and how its events are framed.

`PATHS` are the endpoints a streamed answer is asked for at: `POST /v1/responses`
(`stream: true`) and the resume, `GET /v1/responses/{id}?stream=true&starting_after=N`.
`frame(line)` is one event as the SSE bytes the API sends: `event: <type>` then
`data: {...}`. The dialect has no `[DONE]` (`DONE_FRAME` is None). Read by `harness
conform --serve` (harness._testing.served_cases).
"""

from __future__ import annotations

from typing import Any, Final

import orjson

__all__ = ["DONE_FRAME", "PATHS", "frame"]

#: The endpoints a streamed answer of this dialect is asked for at (method, path).
PATHS: Final = (("POST", "/v1/responses"), ("GET", "/v1/responses/{id}"))
#: No `data: [DONE]` ends a Responses body.
DONE_FRAME: Final = None


def frame(line: dict[str, Any]) -> bytes:
    """One event as its SSE event, named by its `type`."""
    kind = line.get("type")
    named = f"event: {kind}\n".encode() if isinstance(kind, str) else b""
    return named + b"data: " + orjson.dumps(line) + b"\n\n"
