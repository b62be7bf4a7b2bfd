"""Responses under the guard: what completes an answer and what the request says.

`ResponsesReader` is the `AnswerReader` (`harness._providers.answers`) of one streamed
Responses answer: `OpenAIDecoder` reads the body as the openai SDK does, a
`ResponsesAdapter(text=False)` judges each event. The terminal event
(`response.completed`, `response.incomplete`, `response.failed`) completes the answer
(`responses.stream()` takes the response from it), so it and what follows wait until
the body ends; an `error` event, or an event whose `error` is set, is the API's own
report. The SDK raises its `APIError` for the second alone: the first, the documented
flat shape (`{"type": "error", "code": ..., "message": ...}`), it hands on as an event,
and code reading deltas would take the text before it for the answer. The reader hands
a flat one on with its `error` set (`rewritten`, then `encode`), as the HTTP error it
stands for has it, so the SDK raises for it too. A `data: [DONE]` (the API sends none)
ends what the SDK reads: the end rules run there, and nothing after it reaches the code.
The request decides where the stream starts (`reader_for`): a resumed
`GET /responses/{id}?stream=true&starting_after=N` starts at sequence N+1.

`check_response` checks a non-streaming `response` object by the same rules, as the
events a stream of it carries (its terminal event without the `output` those events
are made of: no stream to contradict); one still `queued` or `in_progress` (a
background request) has no verdict yet and is not checked. `claims`: a `POST
.../responses`, and a `GET .../responses/{id}` (a retrieved or resumed response) are
Responses' (`answer_check`: the body's `stream`, a GET's `stream=true`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._json import MAX_LINE_BYTES
from harness._providers.answers import API_ERROR, COMPLETING, GO, AnswerCheck, request_json
from harness._providers.openai_responses.adapter import ResponsesAdapter
from harness._providers.openai_responses.errors import PROVIDER
from harness._providers.openai_responses.framing import error_body
from harness._providers.openai_sse import OpenAIDecoder, is_done, kind_of
from harness._terminal import printable

__all__ = [
    "TERMINAL_EVENTS",
    "ResponsesReader",
    "answer_check",
    "check_response",
    "claims",
    "reader_for",
]

#: The events that end a Responses answer.
TERMINAL_EVENTS: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})
#: A retrieved (or resumed) response: `/responses/{id}`, nothing after the id.
_RESPONSE_PATH: Final = re.compile(r"/responses/[^/]+\Z")
#: A response's `status` -> the terminal event a stream of it ends with.
_TERMINAL_OF: Final = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}


class ResponsesReader:
    """One Responses stream as the guard reads it; see the module."""

    completing = "the terminal event"

    def __init__(
        self,
        *,
        allowed: Collection[str] = (),
        starting_after: int | None = None,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.decoder = OpenAIDecoder(max_line=max_line)
        self._adapter = ResponsesAdapter(
            incomplete_reasons=frozenset(allowed), starting_after=starting_after, text=False
        )
        self._terminal = "response.completed"
        #: `[DONE]` came: the SDK reads nothing after it
        self._ended = False
        self.rewritten = False

    def text_delta(self, chunk: bytes) -> bool:
        return False  # every event is read whole (`whole_event`: one split, one parse)

    def read(self, event: dict[str, Any]) -> int:
        if self._ended:
            return GO  # never read by the SDK: it waits with what came before, in order
        if is_done(event):
            self._adapter.check_end()
            self._ended = True
            return COMPLETING
        try:
            self._adapter.feed(event)
        except APIErrorEvent:
            if not event.get("error"):  # the flat shape: nested, for the SDK to raise
                body = error_body(event)
                event["error"] = None if body is None else body["error"]
                self.rewritten = True
            return API_ERROR
        kind = event.get("type")
        if kind in TERMINAL_EVENTS:
            self._terminal = str(kind)
            return COMPLETING
        return GO

    def check_end(self) -> None:
        self._adapter.check_end()

    def finish(self) -> None:
        self._adapter.finish()

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        kind = "more than the guard holds" if event is None else kind_of(event)
        return StreamProtocolError(
            "event_after_response_completed",
            provider=PROVIDER,
            event_type=kind,
            terminal=self._terminal,
        )

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """Each event as `event: <type>`, `data: <json>` and a blank line (`json`: what
        the SDK read as a number, `NaN` too, is written back as it was read)."""
        return b"".join(
            b"event: "
            + printable(kind_of(event)).encode()
            + b"\ndata: "
            + json.dumps(event, separators=(",", ":")).encode()
            + b"\n\n"
            for event in events
        )


def reader_for(
    params: Mapping[str, str],
    *,
    allowed: Collection[str] = (),
    max_line: int = MAX_LINE_BYTES,
) -> ResponsesReader:
    """The reader of an answer to a request with the query `params` (a resumed stream's
    `starting_after=N`; one that is not a number starts the stream afresh)."""
    after = params.get("starting_after")
    starting_after = int(after) if after is not None and after.isdigit() else None
    return ResponsesReader(allowed=allowed, starting_after=starting_after, max_line=max_line)


def check_response(value: object, *, allowed: Collection[str] = ()) -> None:
    """Raise `StreamProtocolError` if a non-streaming answer that is a `response` with a
    final status breaks the rules a stream of it would; any other value is not checked."""
    if type(value) is not dict or value.get("object") != "response":
        return
    terminal = _TERMINAL_OF.get(str(value.get("status")))
    if terminal is None:
        return  # queued, in progress, cancelled: no answer to judge
    adapter = ResponsesAdapter(incomplete_reasons=frozenset(allowed), text=False)
    for event in _events_of(value, terminal):
        adapter.feed(event)
    adapter.finish()


def _events_of(response: dict[str, Any], terminal: str) -> list[dict[str, Any]]:
    """The events a stream of `response` carries, numbered from 0."""
    events: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    add("response.created", response={"id": response.get("id"), "status": "in_progress"})
    output = response.get("output")
    for index, item in enumerate(output if type(output) is list else []):
        item = item if type(item) is dict else {}
        add("response.output_item.added", output_index=index, item=item)
        kind = item.get("type")
        if kind == "message":
            content = item.get("content")
            for number, part in enumerate(content if type(content) is list else []):
                part = part if type(part) is dict else {}
                add("response.content_part.added", output_index=index, content_index=number)
                if part.get("type") == "refusal":
                    add(
                        "response.refusal.delta",
                        output_index=index,
                        content_index=number,
                        delta=part.get("refusal"),
                    )
                add("response.content_part.done", output_index=index, content_index=number)
        elif kind == "function_call":
            add(
                "response.function_call_arguments.delta",
                output_index=index,
                delta=item.get("arguments"),
            )
        add("response.output_item.done", output_index=index, item=item)
    add(terminal, response={key: value for key, value in response.items() if key != "output"})
    return events


def claims(method: str, path: str) -> bool:
    """Whether a request is a Responses call (`POST .../responses`) or retrieves one
    (`GET .../responses/{id}`, a resumed stream)."""
    method = method.upper()
    if method == "POST":
        return path.endswith("/responses")
    return method == "GET" and _RESPONSE_PATH.search(path) is not None


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """How the answer to a Responses call is checked (None for another request): a
    stream as the body's `stream` (a GET's `stream=true`) says, a resumed one from
    `starting_after`; a profile is Chat's alone, not read here."""
    if not claims(method, path):
        return None
    if method.upper() == "GET":
        streams = params.get("stream") == "true"
    else:
        streams = request_json(content).get("stream") is True

    def reader() -> ResponsesReader:
        return reader_for(params, allowed=allowed)

    def check_value(value: object) -> None:
        check_response(value, allowed=allowed)

    return AnswerCheck(PROVIDER, streams, reader, check_value)
