"""Gemini as import and export read and write it: the call, its body, its answer.

A Gemini call is a `POST` at one of its endpoints (the Gemini API's or Vertex's
`:streamGenerateContent` / `:generateContent`, any host). Its body becomes the
cassette's lines whichever framing it came in: SSE (`alt=sse`: each `data` object a
line) or the streamed JSON array (each element a line, `harness._providers.jsonarray`);
a body that is neither is refused (`ValueError`, naming why). A plain answer (one
`GenerateContentResponse`) is the one chunk a stream of it carries. Export writes the
lines back as `alt=sse` frames them.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from harness._providers.gemini.errors import PROVIDER
from harness._providers.gemini.framing import ENDPOINTS, encode_chunk
from harness._providers.jsonarray import ArrayError, elements_from_body
from harness._providers.recorded import Recorded
from harness._providers.sse import sse_fields
from harness._providers.wire import at_endpoint

__all__ = ["API_URL", "RECORDED", "answer_lines", "is_call", "stream_lines"]

API_URL: Final = (
    "https://generativelanguage.googleapis.com/v1beta/models/{model}:streamGenerateContent?alt=sse"
)


def is_call(method: str, path: str) -> bool:
    return method == "POST" and at_endpoint(ENDPOINTS, path)


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request a cassette keeps: the (redacted) body."""
    return body


def field_lines(fields: list[tuple[str | None, bytes]]) -> list[Any]:
    """The chunks of an SSE body's events (name, data); `ValueError` names one that is
    not a JSON object."""
    lines: list[Any] = []
    for number, (_, data) in enumerate(fields, 1):
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise ValueError(f"event {number} is not JSON: {error}") from None
        if not isinstance(chunk, dict):
            raise ValueError(f"event {number} is not a JSON object")
        lines.append(chunk)
    return lines


def stream_lines(body: bytes) -> list[Any]:
    """The chunks of a whole body: a streamed JSON array, or SSE."""
    if body.lstrip()[:1] == b"[":
        try:
            return list(elements_from_body(body))
        except ArrayError as error:
            raise ValueError(f"{error.code}: {error}") from None
    return field_lines(sse_fields(body))


def answer_lines(response: Any) -> list[Any]:
    """The one chunk a `GenerateContentResponse` answer is; `ValueError` for other JSON."""
    if not isinstance(response, dict) or not (
        "candidates" in response or "promptFeedback" in response
    ):
        raise ValueError("the JSON response is not a GenerateContentResponse")
    return [response]


def model_of(lines: list[Any]) -> Any:
    """The model the first chunk names (`modelVersion`), if any."""
    return lines[0].get("modelVersion") if lines and isinstance(lines[0], dict) else None


def exported_call(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays."""
    model = str(request.get("model") or "gemini-2.5-flash")
    body = {key: value for key, value in request.items() if key != "model"}
    return "POST", API_URL.format(model=model), body


def sse_body(lines: list[Any]) -> bytes:
    """The chunks as `alt=sse` sends them."""
    return b"".join(encode_chunk(line) for line in lines if isinstance(line, dict))


#: The Gemini API, as import and export read and write it.
RECORDED: Final = Recorded(
    provider=PROVIDER,
    call="Gemini generateContent",
    answer="a GenerateContentResponse",
    http_errors=True,
    is_call=is_call,
    request_of=request_of,
    stream_lines=stream_lines,
    field_lines=field_lines,
    answer_lines=answer_lines,
    model_of=model_of,
    exported_call=exported_call,
    request_headers={},
    sse_body=sse_body,
)
