"""The thin dialect's adapter: lines (dicts) in, the three internal events out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from harness._events import DoneEvent, ModelEvent, TextEvent, ToolCall, ToolCallEvent, tool_input
from harness._exceptions import APIErrorEvent, StreamProtocolError
from thin_dialect.errors import PROVIDER


class ThinAdapter:
    """One stream: a text line is text, a call line a call, the end line checks the reason."""

    def __init__(self) -> None:
        self.calls = 0
        self.ended = False

    def feed(self, line: Any) -> list[ModelEvent]:
        kind = line.get("kind")
        if self.ended:
            raise StreamProtocolError("line_after_end", provider=PROVIDER, kind=kind)
        if kind == "error":
            raise APIErrorEvent({"error": line.get("error")}, 200)
        if kind == "text":
            return [TextEvent(str(line.get("text", "")))]
        if kind == "call":
            index, self.calls = self.calls, self.calls + 1
            try:
                value = json.loads(line.get("arguments") or "{}")
            except ValueError:
                raise StreamProtocolError(
                    "invalid_tool_json", provider=PROVIDER, index=index
                ) from None
            arguments = tool_input(value, index, provider=PROVIDER)
            return [ToolCallEvent(ToolCall(str(line["id"]), str(line["name"]), arguments))]
        if kind == "end":
            reason = line.get("reason")
            if reason != ("calls" if self.calls else "stop"):
                raise StreamProtocolError(
                    "wrong_reason", provider=PROVIDER, reason=reason, count=self.calls
                )
            self.ended = True
            return [DoneEvent()]
        return []  # a kind it does not know: passed over

    def finish(self) -> list[ModelEvent]:
        if not self.ended:
            raise StreamProtocolError("missing_end", provider=PROVIDER)
        return []


def to_model_events(events: Iterable[Any], **options: Any) -> Iterator[ModelEvent]:
    adapter = ThinAdapter()
    for event in events:
        yield from adapter.feed(event)
    yield from adapter.finish()


async def ato_model_events(events: AsyncIterable[Any], **options: Any) -> AsyncIterator[ModelEvent]:
    adapter = ThinAdapter()
    async for event in events:
        for model_event in adapter.feed(event):
            yield model_event
    for model_event in adapter.finish():
        yield model_event
