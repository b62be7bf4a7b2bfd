"""Anthropic's Messages API as import and export read and write it.

Which exchange is a Messages call (`POST .../v1/messages`, Vertex AI's `:rawPredict` and
`:streamRawPredict`), an SSE body's events (the one decoder, `harness._providers.sse`), a
JSON `Message` as the events a stream of it carries, and the call a vcrpy export makes.
`RECORDED` is all of it, as `harness._interop.dialects` reads it.
"""

from __future__ import annotations

from typing import Any, Final

from harness._exceptions import ANTHROPIC
from harness._providers.anthropic.message import events_from_message
from harness._providers.recorded import Recorded
from harness._providers.sse import encode_event, events_from_body

__all__ = [
    "API_URL",
    "RECORDED",
    "REQUEST_HEADERS",
    "answer_lines",
    "exported_call",
    "is_call",
    "model_of",
    "request_of",
    "sse_body",
    "stream_lines",
]

API_URL: Final = "https://api.anthropic.com/v1/messages"
REQUEST_HEADERS: Final = {"anthropic-version": ["2023-06-01"]}


def is_call(method: str, path: str) -> bool:
    return method == "POST" and (
        path.endswith("/v1/messages") or path.endswith((":rawPredict", ":streamRawPredict"))
    )


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request a cassette keeps: the (redacted) body."""
    return body


def stream_lines(body: bytes) -> list[dict[str, Any]]:
    """The events of an SSE body, as the SDK's own SSE reader splits them."""
    return events_from_body(body)


def answer_lines(message: Any) -> list[dict[str, Any]]:
    """The events synthesised from a JSON `Message`; `ValueError` (the reason) for other JSON."""
    if not isinstance(message, dict) or message.get("type") != "message":
        kind = message.get("type") if isinstance(message, dict) else type(message).__name__
        raise ValueError(f"the JSON response is a {kind!r}, not a Message")
    try:
        return events_from_message(message)
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(f"the Message cannot be replayed as a stream: {error}") from None


def model_of(lines: list[dict[str, Any]]) -> Any:
    """The model the stream names (in its `message_start`), if any."""
    start = lines[0].get("message") if lines and lines[0].get("type") == "message_start" else None
    return start.get("model") if isinstance(start, dict) else None


def exported_call(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays (the request a
    cassette keeps, with `model` filled in, and `stream: true`)."""
    return "POST", API_URL, {**request, "stream": True}


def sse_body(lines: list[dict[str, Any]]) -> bytes:
    """The events framed as the API frames them."""
    return b"".join(encode_event(event) for event in lines if "harness" not in event)


#: The Messages API, as import and export read and write it.
RECORDED: Final = Recorded(
    provider=ANTHROPIC,
    call="Messages",
    answer="a Message",
    http_errors=False,  # as before OpenAI: `status 529` is listed as skipped
    is_call=is_call,
    request_of=request_of,
    stream_lines=stream_lines,
    answer_lines=answer_lines,
    model_of=model_of,
    exported_call=exported_call,
    request_headers=REQUEST_HEADERS,
    sse_body=sse_body,
)
