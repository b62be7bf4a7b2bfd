"""A deliberately lenient adapter: a typical first version that trusts the stream's framing.

It checks the tool JSON (with `json.loads`, which takes `NaN`: not strict JSON) and the
stop reason, and notices a missing `message_stop`, but not the order of events
(`message_start` first, nothing after `message_stop`), repeated or orphan tool events,
unclosed blocks, nor whether the stop reason agrees with the tool calls. The fault
catalogue finds exactly those gaps: see test_lenient_adapter.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from harness import DoneEvent, ModelEvent, StreamProtocolError, TextEvent, ToolCall, ToolCallEvent


def _tool_call(index: int, block: dict[str, str]) -> ToolCallEvent:
    try:
        value = json.loads(block["json"] or "{}")
    except ValueError:
        raise StreamProtocolError("invalid_tool_json", index=index) from None
    if not isinstance(value, dict):
        raise StreamProtocolError("non_object_tool_input", index=index)
    return ToolCallEvent(ToolCall(block["id"], block["name"], value))


def to_model_events(events: Iterable[Any]) -> Iterator[ModelEvent]:
    """Text and tool calls out of the SDK's raw stream events, then done."""
    tools: dict[int, dict[str, str]] = {}
    stop_reason = None
    stopped = False
    for event in events:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            tools[event.index] = {"id": block.id, "name": block.name, "json": ""}
        elif event.type == "content_block_delta":
            if event.delta.type == "text_delta":
                yield TextEvent(event.delta.text)
            elif event.delta.type == "input_json_delta" and event.index in tools:
                tools[event.index]["json"] += event.delta.partial_json
        elif event.type == "content_block_stop" and event.index in tools:
            yield _tool_call(event.index, tools.pop(event.index))
        elif event.type == "message_delta":
            stop_reason = event.delta.stop_reason
        elif event.type == "message_stop":
            stopped = True
    if not stopped:
        raise StreamProtocolError("missing_message_stop")
    if stop_reason not in ("end_turn", "tool_use"):
        raise StreamProtocolError("unsupported_stop_reason", stop_reason=stop_reason)
    yield DoneEvent()
