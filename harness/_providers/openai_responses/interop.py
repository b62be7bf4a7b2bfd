"""Responses as import and export read and write it: the call, its body, its answer.

A Responses call is a `POST` whose path ends in `/responses`, on any host, or the resume
`GET .../responses/{id}?stream=true&starting_after=N`, whose request a cassette keeps as
`{"response_id": ..., "starting_after": N}` (the stream it answers starts at N+1). Its
SSE body becomes the cassette's lines as the `openai` SDK reads it
(`harness._providers.openai_framing`): each event's `data` object a line (the `event:`
name is the data's `type` again); a `[DONE]`, which the API does not send, ends the body
as it ends the SDK's reading. A plain answer (a `response` object) becomes the events a
stream of it carries: `response.created` and `response.in_progress`, each output item
added, its content parts and deltas (text, refusal, a call's arguments) and done, then
`response.completed` (or `incomplete`, `failed`, as its status says), numbered from 0.
Export writes the lines back as the API frames them (`event: <type>`, `data: <json>`).
"""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from harness._providers.openai_framing import DONE_DATA, Item, data_frame, read_data
from harness._providers.openai_responses.errors import PROVIDER
from harness._providers.recorded import Recorded
from harness._providers.sse import sse_fields

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

API_URL: Final = "https://api.openai.com/v1/responses"
REQUEST_HEADERS: Final[dict[str, list[str]]] = {}
#: The resume GET's path: `.../responses/{id}`.
_RESUME_PATH: Final = re.compile(r"/responses/([^/]+)$")
#: A finished response's status -> the event that ends its stream.
_TERMINAL: Final = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}


def is_call(method: str, path: str) -> bool:
    if method == "POST":
        return path.endswith("/responses")
    return method == "GET" and _RESUME_PATH.search(path) is not None


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request a cassette keeps: the (redacted) body of a `POST`; for the resume
    `GET`, the response's id and `starting_after` (an integer when it reads as one)."""
    if method != "GET":
        return body
    parts = urlsplit(uri)
    found = _RESUME_PATH.search(parts.path)
    request: dict[str, Any] = {"response_id": found.group(1) if found else ""}
    after = parse_qs(parts.query).get("starting_after")
    if after:
        request["starting_after"] = int(after[0]) if after[0].isdigit() else after[0]
    return request


def stream_lines(fields: list[tuple[str | None, bytes]]) -> list[Item]:
    """The items of an SSE body's events (name, data): each `data` object; `ValueError`
    names an event that is not one, or one after a `[DONE]` (the SDK stops reading there)."""
    items: list[Item] = []
    for number, (_, data) in enumerate(fields, 1):
        item = read_data(data, number)
        if isinstance(item, bytes):
            if number < len(fields):
                raise ValueError(
                    f"event {number + 1} follows data: [DONE]: it never reaches the code"
                )
            break
        items.append(item)
    return items


class _Numbered:
    """The events of one synthesised stream, numbered from 0 as they are added."""

    def __init__(self) -> None:
        self.events: list[Item] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, "sequence_number": len(self.events), **fields})


def _message(out: _Numbered, index: int, item: dict[str, Any]) -> None:
    at = {"item_id": item.get("id"), "output_index": index}
    content = item.get("content") or []
    if not isinstance(content, list):
        raise ValueError(f"output item {index} has content that is not a list")
    for number, part in enumerate(content):
        if not isinstance(part, dict):
            raise ValueError(f"output item {index} has a content part that is not an object")
        where = {**at, "content_index": number}
        kind = part.get("type")
        field = "refusal" if kind == "refusal" else "text"
        empty = {**part, field: ""} if kind in ("output_text", "refusal") else part
        out.add("response.content_part.added", **where, part=empty)
        value = part.get(field)
        if kind in ("output_text", "refusal") and isinstance(value, str):
            prefix = "response.output_text" if kind == "output_text" else "response.refusal"
            if value:
                out.add(f"{prefix}.delta", **where, delta=value)
            out.add(f"{prefix}.done", **where, **{field: value})
        out.add("response.content_part.done", **where, part=part)


def _item(out: _Numbered, index: int, item: Any) -> None:
    if not isinstance(item, dict):
        raise ValueError(f"output item {index} is not an object")
    kind = item.get("type")
    if kind == "message":
        out.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "content": []},
        )
        _message(out, index, item)
    elif kind == "function_call":
        arguments = item.get("arguments") or ""
        added = {**item, "status": "in_progress", "arguments": ""}
        out.add("response.output_item.added", output_index=index, item=added)
        at = {"item_id": item.get("id"), "output_index": index}
        if arguments:
            out.add("response.function_call_arguments.delta", **at, delta=arguments)
        out.add("response.function_call_arguments.done", **at, arguments=arguments)
    else:  # reasoning, hosted tools, custom tools: added and done whole
        out.add("response.output_item.added", output_index=index, item=item)
    out.add("response.output_item.done", output_index=index, item=item)


def answer_lines(response: Any) -> list[Item]:
    """The events of the stream a `response` answer carries; `ValueError` (the reason)
    for other JSON, or a response not finished (queued, in progress, cancelled)."""
    kind = response.get("object") if isinstance(response, dict) else type(response).__name__
    if not isinstance(response, dict) or kind != "response":
        raise ValueError(f"the JSON response is a {kind!r}, not a response")
    status = response.get("status")
    output = response.get("output")
    if status not in _TERMINAL:
        raise ValueError(f"the response is {status!r}, not finished")
    if not isinstance(output, list):
        raise ValueError("the response's output is not a list")
    start = {**response, "status": "in_progress", "output": []}
    start.pop("usage", None)
    out = _Numbered()
    out.add("response.created", response=start)
    out.add("response.in_progress", response=start)
    for index, item in enumerate(output):
        _item(out, index, item)
    out.add(_TERMINAL[status], response=response)
    return out.events


def model_of(lines: list[Item]) -> Any:
    """The model the `response.created` event names, if any."""
    first = lines[0] if lines else None
    if isinstance(first, dict) and first.get("type") == "response.created":
        response = first.get("response")
        return response.get("model") if isinstance(response, dict) else None
    return None


def exported_call(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays: the resume `GET` for
    a resumed stream's request, else the `POST` of the request with `stream: true`."""
    if "starting_after" in request and isinstance(request.get("response_id"), str):
        query = f"stream=true&starting_after={request['starting_after']}"
        return "GET", f"{API_URL}/{request['response_id']}?{query}", None
    return "POST", API_URL, {**request, "stream": True}


def sse_body(lines: list[Item]) -> bytes:
    """The events as the API sends them: `event: <type>`, `data: <json>`, a blank line."""
    return b"".join(data_frame(item, named=True) for item in lines if item != DONE_DATA)


#: The Responses API, as import and export read and write it.
RECORDED: Final = Recorded(
    provider=PROVIDER,
    call="Responses",
    answer="a response",
    http_errors=True,
    is_call=is_call,
    request_of=request_of,
    stream_lines=lambda body: stream_lines(sse_fields(body)),
    field_lines=stream_lines,
    answer_lines=answer_lines,
    model_of=model_of,
    exported_call=exported_call,
    request_headers=REQUEST_HEADERS,
    sse_body=sse_body,
)
