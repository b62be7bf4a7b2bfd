"""Chat Completions on the wire: where a stream is asked for and how its lines are framed.

`PATH` is the endpoint a client posts a `stream=True` request to; `frame(line)` is one
`data` object as the SSE bytes the API sends (`data: {...}`, no `event:` name: an
`{"error": ...}` line is framed the same way), and `DONE_FRAME` is the `data: [DONE]`
that ends the body (a cassette's `{"harness": "done"}` line). Read by `harness conform
--serve` (harness._testing.served_cases).
"""

from __future__ import annotations

from typing import Any, Final

import orjson

__all__ = ["DONE_FRAME", "PATHS", "frame"]

#: The endpoints a streamed answer of this dialect is asked for at (method, path).
PATHS: Final = (("POST", "/v1/chat/completions"),)
#: The end of the body: `data: [DONE]`.
DONE_FRAME: Final = b"data: [DONE]\n\n"


def frame(line: dict[str, Any]) -> bytes:
    """One `data` object as its SSE event."""
    return b"data: " + orjson.dumps(line) + b"\n\n"
