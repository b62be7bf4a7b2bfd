"""Gemini as import and export read and write it: the call, its body, its answer.

A Gemini call is a `POST` at one of its endpoints (the Gemini API's or Vertex's
`:streamGenerateContent` / `:generateContent`, any host). The request kept is the body
as its path and query say it (`request_of`): the model the path names (`model`), and for
a stream `stream` (which a cassette does not keep: the proxy reads the answer as a stream
by it) and, for a stream not asked as SSE, `"alt": "json"` (the API's default framing:
the streamed JSON array). Its body becomes the cassette's lines whichever framing it came in:
SSE (`alt=sse`: each `data` object a line) or the streamed JSON array (each element a
line, `harness._providers.jsonarray`); a body that is neither is refused (`ValueError`,
naming why). A plain answer (one `GenerateContentResponse`) is the one chunk a stream of
it carries. Export writes the lines back in the framing the request names
(`exported_call`, `stream_body`: SSE unless `alt` is `json`), at the Gemini API's path,
or Vertex's for a cassette whose header names that host (`VERTEX_URL`).
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlsplit

import orjson

from harness._providers.gemini.errors import PROVIDER
from harness._providers.gemini.framing import ARRAY, ENDPOINTS, encode_chunk, host_at, model_at
from harness._providers.jsonarray import MAX_ELEMENT, ArrayDecoder, ArrayError, elements_from_body
from harness._providers.recorded import Recorded
from harness._providers.sse import FieldsDecoder, sse_fields
from harness._providers.wire import at_endpoint

__all__ = [
    "API_URL",
    "RECORDED",
    "VERTEX_URL",
    "answer_lines",
    "exported_call",
    "is_call",
    "request_of",
    "stream_body",
    "stream_lines",
]

#: The streamed call an export writes: the Gemini API's, and Vertex's (a placeholder
#: project and the `global` location where the recorded call named its own).
API_URL: Final = "https://generativelanguage.googleapis.com/v1beta/models/{model}"
VERTEX_URL: Final = (
    "https://aiplatform.googleapis.com/v1beta1/projects/a-project/locations/global"
    "/publishers/google/models/{model}"
)
#: The request's `alt` for the streamed JSON array (the API's default framing).
ARRAY_ALT: Final = "json"


def is_call(method: str, path: str) -> bool:
    return method == "POST" and at_endpoint(ENDPOINTS, path)


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request as its path and query say it: the body, with the model the path names
    and, for a stream, `"stream": true`, and `"alt": "json"` where it was answered with
    the streamed JSON array (without `alt=sse`: the API's default)."""
    try:
        parts = urlsplit(uri)
        query = dict(parse_qsl(parts.query))
    except ValueError:
        return body
    path = parts.path
    model = model_at(path)
    kept = dict(body) if model is None else {"model": model, **body}
    if path.endswith(":streamGenerateContent"):
        kept["stream"] = True
        if query.get("alt") != "sse":
            kept["alt"] = ARRAY_ALT
    return kept


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


class StreamReader:
    """A streamed body read as it arrives, in whichever framing it came: the first byte
    that is not white space says which (`[`: the JSON array, read by `ArrayDecoder`;
    else SSE, by `FieldsDecoder`); `feed` and `finish` give the chunks. `ValueError`
    (an `ArrayError` naming its code, an `SSEFormatError`) for a body that is neither."""

    def __init__(self, max_line: int | None = None) -> None:
        self._max = max_line
        self._decoder: ArrayDecoder | FieldsDecoder | None = None

    def feed(self, piece: bytes) -> list[Any]:
        if self._decoder is None:
            head = piece.lstrip()
            if not head:
                return []
            if head[:1] == b"[":
                limit = self._max or MAX_ELEMENT
                self._decoder = ArrayDecoder(max_element=limit)
            else:
                self._decoder = FieldsDecoder(max_line=self._max)
        return self._lines(self._decoder.feed(piece))

    def finish(self) -> list[Any]:
        if self._decoder is None:
            return []
        return self._lines(self._decoder.finish() or [])

    def _lines(self, read: list[dict[str, Any]]) -> list[Any]:
        if isinstance(self._decoder, ArrayDecoder):
            return read
        return field_lines([(event["name"], event["data"]) for event in read])


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


def _is_array(request: dict[str, Any]) -> bool:
    return request.get("alt") == ARRAY_ALT


def exported_call(
    request: dict[str, Any], host: str | None = None
) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays: the stream, at the
    Gemini API's path (Vertex's for `host` `vertex`), `?alt=sse` unless the request was
    answered with the array."""
    model = quote(str(request.get("model") or "gemini-2.5-flash"), safe="")
    body = {key: value for key, value in request.items() if key not in ("model", "alt")}
    url = (VERTEX_URL if host == "vertex" else API_URL).format(model=model)
    query = "" if _is_array(request) else "?alt=sse"
    return "POST", f"{url}:streamGenerateContent{query}", body


def sse_body(lines: list[Any]) -> bytes:
    """The chunks as `alt=sse` sends them."""
    return b"".join(encode_chunk(line) for line in lines if isinstance(line, dict))


def stream_body(lines: list[Any], request: dict[str, Any]) -> tuple[bytes, str]:
    """The chunks in the framing `request` was answered in, and its content type: the
    streamed JSON array (`alt` `json`) as the API sends it, else SSE."""
    chunks = [line for line in lines if isinstance(line, dict)]
    if not _is_array(request):
        return sse_body(chunks), "text/event-stream"
    elements = ARRAY.separator.join(ARRAY.encode(chunk) for chunk in chunks)
    return ARRAY.opening + elements + ARRAY.closing, ARRAY.content_type


def exported(
    request: dict[str, Any], host: str | None, lines: list[Any]
) -> tuple[str, str, dict[str, Any] | None, bytes, str]:
    """The call an export writes (`exported_call`, at the header's host) and its answer
    in the framing the request names (`stream_body`)."""
    method, uri, body = exported_call(request, host)
    answer, content_type = stream_body(lines, request)
    return method, uri, body, answer, content_type


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
    stream_reader=StreamReader,
    host_of=host_at,
    exported=exported,
)
