"""Answer to lines: how one whole live HTTP answer is kept as a cassette's lines.

The recording client (the cassette clients' record modes, `harness._record.live`) and the
recording proxy (`harness proxy`) keep every answer through `lines_of_answer`; its header
is built by the one `make_header` (`harness._cassette.codec`), as every cassette's is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from harness._directives import HTTP_ERROR
from harness._providers.anthropic.message import events_from_message
from harness._providers.sse import events_from_body

__all__ = ["RETRY_HEADERS", "lines_of_answer"]

#: Headers of an HTTP error answer a cassette keeps: the ones a client's retries read.
RETRY_HEADERS: Final = ("retry-after", "retry-after-ms", "x-should-retry")


def lines_of_answer(
    status: int, headers: Mapping[str, str], body: bytes | bytearray
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The cassette lines one whole HTTP answer becomes, and the header fields it adds.

    An SSE stream keeps its events; a non-streaming `Message` becomes the events a stream
    of it carries (`synthesized_from: "message"` in the header says so); an HTTP error
    becomes an `http_error` line with its status, its retry headers and the API's error
    JSON. Anything else raises `ValueError` saying what it is.
    """
    kept = {str(name).lower(): str(value) for name, value in headers.items()}
    if status >= 400:
        error = _json_object(body, f"the {status} answer")
        retry = {name: kept[name] for name in RETRY_HEADERS if name in kept}
        line = {"harness": HTTP_ERROR, "status": status, "headers": retry}
        return [{**line, "body": error}], {}
    if status != 200:
        raise ValueError(f"status {status} is not a Messages answer")
    if "text/event-stream" in kept.get("content-type", ""):
        events = events_from_body(bytes(body))
        if not events:
            raise ValueError("the stream held no event")
        return events, {}
    message = _json_object(body, "the answer")
    if message.get("type") != "message":
        raise ValueError("the answer is neither a stream nor a Message")
    return events_from_message(message), {"synthesized_from": "message"}


def _json_object(body: bytes | bytearray, what: str) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except ValueError:
        raise ValueError(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object")
    return value
