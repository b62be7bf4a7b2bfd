"""How a Gemini cassette goes over the wire: SSE or a streamed JSON array, or one answer.

The paths (`ENDPOINTS`, under any base URL's path) name the model and say whether the
answer streams: the Gemini API's `/{version}/models/{model}:streamGenerateContent` and
Vertex's `/{version}/projects/{project}/locations/{location}/publishers/google/models/
{model}:streamGenerateContent` stream, the same with `:generateContent` answer once.

A streamed answer's framing is the request's `alt` query parameter's:
- `alt=sse` (what google-genai asks for): each chunk `data: <json>\\r\\n\\r\\n`, no
  `event:` line and no end marker (`encode_chunk`);
- without it, one JSON array, `[`, the chunks separated by `\\n,\\r\\n`, `\\n]`
  (`harness._providers.jsonarray`), under `application/json`.
Not streamed, the chunks fold into the one `GenerateContentResponse` `generateContent`
answers (`response_from_chunks`): candidate 0's parts in order, consecutive text parts
(and consecutive thought parts) joined, its `finishReason`, the last `usageMetadata`,
`modelVersion` and `responseId`. An `{"error": ...}` chunk answers as the HTTP error its
`code` says (raised as `APIErrorEvent`, its body the chunk), as the API answers one.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import unquote

from harness._exceptions import APIErrorEvent
from harness._json import dump_line
from harness._providers import jsonarray
from harness._providers.wire import Delimited, Framing

__all__ = [
    "ENDPOINTS",
    "FRAMING",
    "MATCH_ON",
    "STATUS_OF",
    "encode_chunk",
    "error_answer",
    "host_at",
    "model_at",
    "response_from_chunks",
    "streamed",
]

_API: Final = "/{version}/models/{model}"
_VERTEX: Final = (
    "/{version}/projects/{project}/locations/{location}/publishers/google/models/{model}"
)
#: The paths a request is POSTed to: streamed first, then answered once.
ENDPOINTS: Final = (
    f"{_API}:streamGenerateContent",
    f"{_VERTEX}:streamGenerateContent",
    f"{_API}:generateContent",
    f"{_VERTEX}:generateContent",
)
#: A call's path, the model it names and whether it is Vertex's (a `project` group).
_CALL: Final = re.compile(
    r"(?:/projects/(?P<project>[^/]+)/locations/[^/]+/publishers/google)?"
    r"/models/(?P<model>[^/:]+):(?:stream)?[Gg]enerateContent\Z"
)
#: The host name a cassette's header gives a call at Vertex's path.
VERTEX: Final = "vertex"


def model_at(path: str) -> str | None:
    """The model a call's path names (`gemini-2.5-flash`), None for a path of no call."""
    match = _CALL.search(path)
    return None if match is None else unquote(match["model"])


def host_at(path: str) -> str | None:
    """`vertex` for a call at Vertex's path, None at the Gemini API's (or any other)."""
    match = _CALL.search(path)
    return VERTEX if match is not None and match["project"] is not None else None


#: The request fields a replayed request is compared on by default.
MATCH_ON: Final = ("contents", "tools", "systemInstruction")

#: An error's status name -> the HTTP status the API answers it with.
STATUS_OF: Final[dict[str, int]] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
#: HTTP status -> the status name the API gives it (the first of `STATUS_OF` for each).
_NAME_OF: Final = {status: name for name, status in reversed(STATUS_OF.items())}


def encode_chunk(data: dict[str, Any]) -> bytes:
    """One chunk as `alt=sse` carries it: `data: <json>`, then a blank line (CRLF, as the API)."""
    return b"data: " + dump_line(data) + b"\r\n\r\n"


def _element(data: dict[str, Any]) -> bytes:
    return dump_line(data)


#: The streamed JSON array a request without `alt=sse` is answered with.
ARRAY: Final = Delimited(
    jsonarray.CONTENT_TYPE, _element, jsonarray.OPENING, jsonarray.SEPARATOR, jsonarray.CLOSING
)


def streamed(path: str, query: Mapping[str, str]) -> Delimited | bool:
    """How a request to `path` is answered: False (once, `:generateContent`), True (SSE,
    `alt=sse`), or the streamed JSON array."""
    if not path.endswith(":streamGenerateContent"):
        return False
    return True if query.get("alt") == "sse" else ARRAY


def error_status(error: object) -> int:
    """The HTTP status of an error chunk's `error` (its `code`, else its `status` name's)."""
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
        return code
    return STATUS_OF.get(str(error.get("status")), 500)


def error_answer(status: int, message: str) -> dict[str, Any]:
    """The error JSON the API refuses a request with (`harness serve`'s own refusals)."""
    name = _NAME_OF.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    return {"error": {"code": status, "message": message, "status": name}}


def _fold_parts(parts: list[dict[str, Any]], new: Any) -> None:
    """`new` parts appended to `parts`, a text part joined to a text part before it of the
    same kind (thought or not) that carries nothing else."""
    for part in new if isinstance(new, list) else []:
        if not isinstance(part, dict):
            continue
        last = parts[-1] if parts else None
        if (
            last is not None
            and set(last) <= {"text", "thought"}
            and set(part) <= {"text", "thought"}
            and isinstance(last.get("text"), str)
            and isinstance(part.get("text"), str)
            and bool(last.get("thought")) == bool(part.get("thought"))
        ):
            last["text"] += part["text"]
        elif part != {"text": ""}:
            parts.append(copy.deepcopy(part))


def response_from_chunks(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `GenerateContentResponse` a `generateContent` request gets for these chunks; an
    error chunk raises `APIErrorEvent`, no chunk at all `ValueError`."""
    parts: list[dict[str, Any]] = []
    candidate: dict[str, Any] = {}
    answer: dict[str, Any] = {}
    seen = False
    for chunk in chunks:
        if chunk.get("error"):
            raise APIErrorEvent({"error": chunk["error"]}, error_status(chunk["error"]))
        seen = True
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in chunk:
                answer[key] = copy.deepcopy(chunk[key])
        candidates = chunk.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(first, dict):
            continue
        for key, value in first.items():
            if key != "content":
                candidate[key] = copy.deepcopy(value)
        content = first.get("content")
        if isinstance(content, dict):
            _fold_parts(parts, content.get("parts"))
    if not seen:
        raise ValueError("the cassette holds no GenerateContentResponse chunk to fold")
    response: dict[str, Any] = {}
    if candidate or parts:
        candidate.pop("index", None)
        response["candidates"] = [
            {"content": {"parts": parts, "role": "model"}, **candidate, "index": 0}
        ]
    return {**response, **answer}


#: The Gemini wire, as replay reads it (`provider("gemini").framing`).
FRAMING: Final = Framing(
    encode_chunk,
    response_from_chunks,
    MATCH_ON,
    endpoints=ENDPOINTS,
    streamed=streamed,
    error_answer=error_answer,
)
