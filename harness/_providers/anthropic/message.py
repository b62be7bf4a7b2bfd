"""One answer, two shapes: a stream's events and the `Message` JSON a non-streaming call gets.

`message_from_events` folds a cassette's events into the `Message` the API returns for
`messages.create()` without `stream` (content blocks in index order, tool inputs parsed,
text and thinking joined, `stop_reason`, `stop_sequence`, `usage` merged), so one
cassette serves streaming and non-streaming calls alike. `events_from_message` goes the
other way, for a recorded or imported non-streaming response: the events a stream of
that message would have carried (one delta a block), so it replays like any cassette.

Only what the API itself would send can be folded: a stream that breaks the protocol
(no `message_start`, a tool's JSON that does not parse, a delta at no block) raises
`ValueError` naming what is wrong, and an `error` event raises `StreamErrorEvent`,
which the caller answers as the HTTP error the API gives a non-streaming call.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any, Final

from harness._providers.anthropic.adapter import PASSED_OVER

__all__ = [
    "STATUS_OF_ERROR_TYPE",
    "StreamErrorEvent",
    "events_from_message",
    "message_from_events",
]

#: The HTTP status the API answers with for each `error.type` of its error JSON.
STATUS_OF_ERROR_TYPE: Final = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class StreamErrorEvent(Exception):
    """The stream holds an `error` event: a non-streaming call gets it as an HTTP error."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        error = body.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        self.status = STATUS_OF_ERROR_TYPE.get(str(kind), 500)
        super().__init__(f"stream error event {kind}")


def _fold_delta(block: dict[str, Any], delta: dict[str, Any], json_parts: list[str]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + str(delta.get("text", ""))
    elif kind == "input_json_delta":
        json_parts.append(str(delta.get("partial_json", "")))
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def message_from_events(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `Message` JSON of a stream's events; see the module docstring for what raises."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    json_parts: dict[int, list[str]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "error":
            raise StreamErrorEvent(event)
        if kind == "message_start":
            message = copy.deepcopy(event.get("message") or {})
            continue
        if kind in PASSED_OVER:  # `ping`, Vertex's `vertex_event`
            continue
        if message is None:
            raise ValueError(f"the stream begins with {kind}, not message_start")
        index: int = event.get("index", -1)
        if kind == "content_block_start":
            blocks[index] = copy.deepcopy(event.get("content_block") or {})
            json_parts[index] = []
        elif kind == "content_block_delta":
            if index not in blocks:
                raise ValueError(f"a delta arrived at block {index}, which was never started")
            _fold_delta(blocks[index], event.get("delta") or {}, json_parts[index])
        elif kind == "content_block_stop" and index in blocks and "".join(json_parts[index]):
            try:
                blocks[index]["input"] = json.loads("".join(json_parts[index]))
            except ValueError:
                raise ValueError(f"tool block {index}'s input is not JSON") from None
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            for field in ("stop_reason", "stop_sequence"):
                if field in delta:
                    message[field] = delta[field]
            usage = event.get("usage")
            if isinstance(usage, dict):
                message.setdefault("usage", {}).update(usage)
    if message is None:
        raise ValueError("the stream holds no message_start")
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def events_from_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a stream of `message` carries: start, one delta a block, stop, the end."""
    start = {key: value for key, value in message.items() if key != "content"}
    usage = dict(start.get("usage") or {})
    output_tokens = usage.get("output_tokens", 0)
    start.update(content=[], stop_reason=None, stop_sequence=None, usage=usage)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message.get("content") or []):
        opened, delta = _split_block(block)
        events.append({"type": "content_block_start", "index": index, "content_block": opened})
        for piece in delta:
            events.append({"type": "content_block_delta", "index": index, "delta": piece})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": message.get("stop_reason"),
                "stop_sequence": message.get("stop_sequence"),
            },
            "usage": {"output_tokens": output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return events


def _split_block(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block as its start event carries it, and the deltas that complete it."""
    kind = block.get("type")
    if kind == "text":
        opened = {**block, "text": ""}
        opened.pop("citations", None)
        deltas = [{"type": "text_delta", "text": block.get("text", "")}]
        deltas += [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
        return opened, deltas
    if kind == "tool_use":
        text = json.dumps(block.get("input", {}), ensure_ascii=False)
        return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": text}]
    if kind == "thinking":
        opened = {**block, "thinking": "", "signature": ""}
        return opened, [
            {"type": "thinking_delta", "thinking": block.get("thinking", "")},
            {"type": "signature_delta", "signature": block.get("signature", "")},
        ]
    return dict(block), []  # redacted thinking, server tool blocks: complete at their start
