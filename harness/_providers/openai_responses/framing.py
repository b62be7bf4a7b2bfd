"""How a Responses cassette goes over the wire: streamed, resumed, or not streamed.

Streamed, each event line is `event: <type>\\ndata: <json>\\n\\n`, as the API names every
event. Not streamed, the answer is the `response` of the stream's terminal event
(`response.completed`, `.incomplete` or `.failed`), its `output` filled from the
`response.output_item.done` items when the terminal event carried none
(`response_from_events`). An error event (flat `{"type": "error", "code", "message"}`, or
nested `{"error": {...}}`) answers as the HTTP error it stands for (raised as
`APIErrorEvent`, body `{"error": {"message", "type", "param", "code"}}`).

A resumed stream (`GET /v1/responses/{id}?stream=true&starting_after=N`) is answered
from the cassette whose response has that id: its lines from the first event past
sequence N on (`resumed_lines`; directives before that event, an earlier cut among them,
were the first answer's). Replay's transports read them as `FRAMING`
(`harness._providers.wire.Framing`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final, TypeVar

from harness._exceptions import APIErrorEvent
from harness._json import dump_line
from harness._providers.openai_shared import error_answer, error_status
from harness._providers.wire import Framing, Line
from harness._terminal import printable

__all__ = [
    "ENDPOINT",
    "FRAMING",
    "MATCH_ON",
    "encode_event",
    "error_body",
    "response_from_events",
    "response_id",
    "resume_target",
    "resumed_lines",
]

#: The path a Responses request is POSTed to.
ENDPOINT: Final = "/v1/responses"
#: The request fields a replayed request is compared on by default.
MATCH_ON: Final = ("model", "input", "instructions", "tools")
_RESUME: Final = re.compile(r"(?:/[^/]+)*/responses/([^/]+)")
_TERMINAL: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})


L = TypeVar("L", bound=Line)


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API frames it: `event: <type>`, its data, the closing blank line."""
    kind = printable(str(event.get("type"))).encode()
    return b"event: " + kind + b"\ndata: " + dump_line(event) + b"\n\n"


def error_body(event: dict[str, Any]) -> dict[str, Any] | None:
    """The HTTP error body an error event stands for; None for any other event."""
    nested = event.get("error")
    if event.get("type") == "error":
        code = event.get("code")
        return {
            "error": {
                "message": event.get("message"),
                "type": code if isinstance(code, str) and code else "server_error",
                "param": event.get("param"),
                "code": code,
            }
        }
    if isinstance(nested, dict) and "response" not in event:
        return {"error": nested}
    return None


def response_from_events(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `response` a non-streaming request gets for these events; an error event
    raises `APIErrorEvent`, a stream without a terminal event `ValueError`."""
    done: dict[int, Any] = {}
    for event in events:
        body = error_body(event)
        if body is not None:
            raise APIErrorEvent(body, error_status(body["error"]))
        kind = event.get("type")
        if kind == "response.output_item.done" and isinstance(event.get("output_index"), int):
            done[event["output_index"]] = event.get("item")
        if kind in _TERMINAL and isinstance(event.get("response"), dict):
            response: dict[str, Any] = copy.deepcopy(event["response"])
            if not response.get("output"):
                response["output"] = copy.deepcopy([done[index] for index in sorted(done)])
            return response
    raise ValueError("the stream holds no response.completed (nor .incomplete, .failed)")


def response_id(events: Iterable[dict[str, Any]]) -> str | None:
    """The id of the response the events are of (its first lifecycle event's)."""
    for event in events:
        response = event.get("response")
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            return str(response["id"])
    return None


def resume_target(method: str, path: str) -> str | None:
    """The response id a request resumes (`GET /v1/responses/{id}`), else None."""
    found = _RESUME.fullmatch(path)
    return found.group(1) if method.upper() == "GET" and found else None


def resumed_lines(lines: Iterable[L], after: int) -> Iterator[L]:
    """The lines a stream resumed after sequence number `after` answers with."""
    started = False
    for line in lines:
        if not started and line.kind == "event":
            number = line.data.get("sequence_number")
            started = isinstance(number, int) and number > after
        if started:
            yield line


#: The Responses wire, as replay reads it (`provider("openai-responses").framing`).
FRAMING: Final = Framing(
    encode_event,
    response_from_events,
    MATCH_ON,
    endpoints=(ENDPOINT,),
    resume_target=resume_target,
    response_id=response_id,
    resumed_lines=resumed_lines,
    error_answer=error_answer,
)
