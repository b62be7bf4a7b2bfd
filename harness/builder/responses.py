"""`ResponsesStreamBuilder`: a raw OpenAI Responses stream in a few lines.

    stream = (
        ResponsesStreamBuilder()                       # response.created, in_progress
        .reasoning(0, "The user asks for a capital.")
        .message(1, "Paris is ", "the capital.")
        .call(2, "get_weather", {"city": "Paris"}, call_id="call_01Paris")
        .completed(usage=True)                         # its response's output: the items
    )
    stream.write("responses.jsonl", "what it shows")

Each line is a Responses event as the API's SSE `data` carries it, numbered in turn
(`sequence_number`, from 0). High-level calls write every event of a whole output item
the way the API sends it: `message` (`output_item.added`, `content_part.added`, an
`output_text.delta` a piece, `output_text.done`, `content_part.done`,
`output_item.done`), `refusal` (the same with a `refusal` part and `refusal.delta` /
`refusal.done`), `call` (a `function_call` item, `function_call_arguments.delta` a piece,
`.done`, the done item's final `arguments`), `reasoning` (a `reasoning` item and its
summary part's events); and the endings `completed`, `incomplete` and `failed`, whose
response carries the items done so far as its `output`. Low-level calls place one line
each, for broken streams: `event` (numbered), `lifecycle`, `item_added`, `item_done`,
`text_delta`, `arguments_delta`, `error`, `directive`, `raw` (as it is: unnumbered).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, Self

from harness.builder.base import Builder, split_json

__all__ = ["ResponsesStreamBuilder"]

DEFAULT_MODEL: Final = "gpt-4.1-mini"


class ResponsesStreamBuilder(Builder):
    """Accumulates Responses events; every method returns the builder for chaining."""

    provider = "openai-responses"

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        response_id: str = "resp_HarnessSynthetic",
        start: bool = True,
    ) -> None:
        super().__init__(model=model)
        self.response_id = response_id
        self._sequence = 0
        self._calls_opened = 0
        #: output index -> the item done there, which a response past `in_progress` carries
        self._output: dict[int, dict[str, Any]] = {}
        if start:
            self.lifecycle("response.created", "in_progress", output=[])
            self.lifecycle("response.in_progress", "in_progress", output=[])

    # -- low level: one event each --------------------------------------------------------

    def event(self, kind: str, **fields: Any) -> Self:
        """An event of type `kind`, numbered next (`sequence_number`), with `fields`."""
        self.raw({"type": kind, "sequence_number": self._sequence, **fields})
        self._sequence += 1
        if kind == "response.output_item.done":
            self._output[fields["output_index"]] = fields["item"]
        return self

    def response(self, status: str, **fields: Any) -> dict[str, Any]:
        """The response object a lifecycle event carries: its `output` the items done so far,
        in output order, as the API's terminal events carry them (readers such as
        pydantic-ai's take them there)."""
        return {
            "id": self.response_id,
            "object": "response",
            "model": self.model,
            "status": status,
            "output": [self._output[index] for index in sorted(self._output)],
            **fields,
        }

    def lifecycle(self, kind: str, status: str, **fields: Any) -> Self:
        """A lifecycle event (`response.created`, `.completed`, ...) with its response."""
        return self.event(kind, response=self.response(status, **fields))

    def item_added(self, index: int, item: dict[str, Any]) -> Self:
        return self.event("response.output_item.added", output_index=index, item=item)

    def item_done(self, index: int, item: dict[str, Any]) -> Self:
        return self.event("response.output_item.done", output_index=index, item=item)

    def text_delta(self, index: int, item_id: str, delta: str, *, content_index: int = 0) -> Self:
        at = {"item_id": item_id, "output_index": index, "content_index": content_index}
        return self.event("response.output_text.delta", **at, delta=delta)

    def arguments_delta(self, index: int, item_id: str, delta: str) -> Self:
        at = {"item_id": item_id, "output_index": index}
        return self.event("response.function_call_arguments.delta", **at, delta=delta)

    def error(
        self,
        code: str = "server_error",
        message: str = "The server had an error.",
        *,
        param: object = None,
    ) -> Self:
        """An `error` event mid-stream (the SDK raises `APIError` for it)."""
        return self.event("error", code=code, message=message, param=param)

    # -- high level: a whole output item or ending -----------------------------------------

    def _part(self, index: int, ident: str, kind: str, field: str, pieces: Sequence[str]) -> Self:
        """A message item at `index` whose one content part (`output_text` or `refusal`)
        holds `pieces`, every event of it."""
        item = {
            "type": "message",
            "id": ident,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        at = {"item_id": ident, "output_index": index}
        text = "".join(pieces)
        empty: dict[str, Any] = {"type": kind, field: ""}
        if kind == "output_text":
            empty["annotations"] = []
        self.item_added(index, item)
        self.event("response.content_part.added", **at, content_index=0, part=empty)
        event = "response.output_text" if kind == "output_text" else "response.refusal"
        for piece in pieces:
            self.event(f"{event}.delta", **at, content_index=0, delta=piece)
        self.event(f"{event}.done", **at, content_index=0, **{field: text})
        full = {**empty, field: text}
        self.event("response.content_part.done", **at, content_index=0, part=full)
        return self.item_done(index, {**item, "status": "completed", "content": [full]})

    def message(self, index: int, *pieces: str, id: str = "msg_HarnessSynthetic") -> Self:
        """A message item at `index`: one `output_text` part, its text in `pieces`."""
        return self._part(index, id, "output_text", "text", pieces)

    def refusal(self, index: int, *pieces: str, id: str = "msg_HarnessRefusal") -> Self:
        """A message item at `index` whose one part is a refusal: the strict adapter's
        `refusal` by default."""
        return self._part(index, id, "refusal", "refusal", pieces)

    def call(
        self,
        index: int,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        call_id: str | None = None,
        id: str | None = None,
        pieces: int | Sequence[int] = 2,
        final: str | None = None,
    ) -> Self:
        """A `function_call` item at `index`: its arguments (a dict as JSON, or the text as it
        is) in `pieces` deltas (an empty one is not sent), `.done`, then the done item with
        its final `arguments` (`final`: other arguments than the deltas', for a broken stream).
        `id` is the item's (`fc_...`), `call_id` the one a tool's result names."""
        self._calls_opened += 1
        call_id = call_id or f"call_HarnessSynthetic{self._calls_opened:02d}x{index}"
        ident = id or f"fc_{call_id.removeprefix('call_')}"
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        item = {
            "type": "function_call",
            "id": ident,
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        self.item_added(index, item)
        for part in split_json(text, pieces):
            if part:
                self.arguments_delta(index, ident, part)
        at = {"item_id": ident, "output_index": index}
        self.event("response.function_call_arguments.done", **at, arguments=text)
        ended = text if final is None else final
        return self.item_done(index, {**item, "arguments": ended, "status": "completed"})

    def reasoning(self, index: int, *pieces: str, id: str = "rs_HarnessSynthetic") -> Self:
        """A reasoning item at `index` with one summary part, its text in `pieces` (the
        adapter passes it over)."""
        item: dict[str, Any] = {"type": "reasoning", "id": id, "summary": []}
        at = {"item_id": id, "output_index": index, "summary_index": 0}
        text = "".join(pieces)
        self.item_added(index, item)
        empty = {"type": "summary_text", "text": ""}
        self.event("response.reasoning_summary_part.added", **at, part=empty)
        for piece in pieces:
            self.event("response.reasoning_summary_text.delta", **at, delta=piece)
        self.event("response.reasoning_summary_text.done", **at, text=text)
        full = {**empty, "text": text}
        self.event("response.reasoning_summary_part.done", **at, part=full)
        return self.item_done(index, {**item, "summary": [full]})

    def completed(self, *, usage: bool = False) -> Self:
        """`response.completed`, its response's `output` the items done (and `usage`)."""
        fields: dict[str, Any] = {}
        if usage:
            fields["usage"] = {
                "input_tokens": 25,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 9,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 34,
            }
        return self.lifecycle("response.completed", "completed", **fields)

    def incomplete(self, reason: str = "max_output_tokens") -> Self:
        """`response.incomplete`: the answer was cut (the adapter's `response_incomplete`)."""
        details = {"reason": reason}
        return self.lifecycle("response.incomplete", "incomplete", incomplete_details=details)

    def failed(
        self, code: str = "server_error", message: str = "The model failed to answer."
    ) -> Self:
        """`response.failed` with the response's error."""
        error = {"code": code, "message": message}
        return self.lifecycle("response.failed", "failed", error=error)

    def _take(self, event: dict[str, Any]) -> None:
        """A merged block's event, numbered again in this stream (a directive as it is)."""
        if "sequence_number" not in event or "type" not in event:
            self.raw(event)
            return
        fields = {key: value for key, value in event.items() if key != "type"}
        kind = event["type"]
        del fields["sequence_number"]
        self.event(kind, **fields)

    def _merged(self, blocks: Sequence[ResponsesStreamBuilder]) -> None:
        self._calls_opened += sum(block._calls_opened for block in blocks)
