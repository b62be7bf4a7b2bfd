"""Anthropic's fault rows: a good Messages stream broken the ways its adapter must catch.

Every row derives one broken variant from a good stream's raw event list (one that
replays to `done`), or says it does not apply (no tool block: no tool faults). The
expected outcome is a code of the adapter's error table (`errors`), or
`api_error:<error.type>` for a mid-stream API `error` event, which the SDK raises as
`APIStatusError`. `harness.faults` is the public module: its `CATALOGUE` is this one.

A cut connection is represented by the stream simply ending after some event, which is
what the adapter sees when the server closes the connection mid-stream without an error
event: with no tool block open at the cut it must give `missing_message_stop`; inside a
tool block, `unclosed_tool_blocks` (open blocks are checked first at the end). The wire
rows are built by `harness._providers.fault_rows.wire_rows`, given the 529 and 429
answers in Anthropic's error shape.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness._providers.anthropic.framing import encode_event
from harness._providers.fault_rows import Events, Fault, http_error, wire_rows, without

__all__ = ["CATALOGUE", "HTTP_429", "HTTP_529"]


# -- reading a stream -----------------------------------------------------------------------


def _is_json_delta(event: dict[str, Any]) -> bool:
    return (
        event.get("type") == "content_block_delta"
        and event.get("delta", {}).get("type") == "input_json_delta"
    )


@dataclass(slots=True)
class _Tool:
    """Where one `tool_use` block's events sit in the list."""

    index: int
    start: int
    deltas: list[int] = field(default_factory=list)
    stop: int | None = None


def _tools(events: Events) -> list[_Tool]:
    """The `tool_use` blocks in opening order, with the positions of their events."""
    tools: list[_Tool] = []
    open_tools: dict[int, _Tool] = {}
    for position, event in enumerate(events):
        kind, index = event.get("type"), event.get("index")
        if not isinstance(index, int):
            continue
        if kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
            open_tools[index] = _Tool(index, position)
            tools.append(open_tools[index])
        elif _is_json_delta(event) and index in open_tools:
            open_tools[index].deltas.append(position)
        elif kind == "content_block_stop" and index in open_tools:
            open_tools.pop(index).stop = position
    return tools


def _json_text(events: Events, tool: _Tool) -> str:
    return "".join(events[position]["delta"]["partial_json"] for position in tool.deltas)


def _positions(events: Events, kind: str) -> list[int]:
    return [position for position, event in enumerate(events) if event.get("type") == kind]


def _fresh_index(events: Events) -> int:
    indexes = [event["index"] for event in events if isinstance(event.get("index"), int)]
    return max(indexes, default=-1) + 1


def _with_stop_reason(events: Events, stop_reason: str | None) -> Events | None:
    positions = _positions(events, "message_delta")
    if not positions:
        return None
    broken = copy.deepcopy(events)
    for position in positions:
        broken[position]["delta"]["stop_reason"] = stop_reason
    return broken


def _with_tool_json(events: Events, text: str) -> Events | None:
    """The first tool's JSON replaced by `text`, sent as one delta where its first one was."""
    tools = _tools(events)
    if not tools:
        return None
    tool = tools[0]
    delta = {
        "type": "content_block_delta",
        "index": tool.index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }
    at = tool.deltas[0] if tool.deltas else tool.start + 1
    broken = without(events, set(tool.deltas))
    broken.insert(at, delta)
    return broken


def _open_tool_counts(events: Events) -> Iterator[int]:
    """After each event, how many `tool_use` blocks are open."""
    open_indexes: set[int] = set()
    for event in events:
        kind = event.get("type")
        if kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
            open_indexes.add(event["index"])
        elif kind == "content_block_stop":
            open_indexes.discard(event["index"])
        yield len(open_indexes)


# -- the faults -------------------------------------------------------------------------------


def drop_message_start(events: Events) -> Events | None:
    positions = set(_positions(events, "message_start"))
    return without(events, positions) if positions else None


def drop_message_stop(events: Events) -> Events | None:
    positions = set(_positions(events, "message_stop"))
    return without(events, positions) if positions else None


def event_after_message_stop(events: Events) -> Events | None:
    if not _positions(events, "message_stop"):
        return None
    late = {
        "type": "content_block_start",
        "index": _fresh_index(events),
        "content_block": {"type": "text", "text": ""},
    }
    return [*copy.deepcopy(events), late]


def repeat_tool_start(events: Events) -> Events | None:
    tools = _tools(events)
    if not tools:
        return None
    broken = copy.deepcopy(events)
    broken.insert(tools[0].start + 1, copy.deepcopy(events[tools[0].start]))
    return broken


def orphan_json_delta(events: Events) -> Events | None:
    starts = _positions(events, "message_start")
    if not starts:
        return None
    orphan = {
        "type": "content_block_delta",
        "index": _fresh_index(events),
        "delta": {"type": "input_json_delta", "partial_json": '{"path": '},
    }
    broken = copy.deepcopy(events)
    broken.insert(starts[0] + 1, orphan)
    return broken


def truncate_tool_json(events: Events) -> Events | None:
    """Cut the first tool's JSON (that has any) in half; later pieces are lost."""
    for tool in _tools(events):
        text = _json_text(events, tool).rstrip()
        if not text:
            continue
        cut = text[: max(1, len(text) // 2)]
        try:
            json.loads(cut)
        except ValueError:
            broken = copy.deepcopy(events)
            remaining, dropped = len(cut), set()
            for position in tool.deltas:
                if remaining == 0:
                    dropped.add(position)
                    continue
                delta = broken[position]["delta"]
                delta["partial_json"] = delta["partial_json"][:remaining]
                remaining -= len(delta["partial_json"])
            return without(broken, dropped)
    return None


def tool_input_null(events: Events) -> Events | None:
    return _with_tool_json(events, "null")


def tool_input_nan(events: Events) -> Events | None:
    return _with_tool_json(events, '{"path": NaN}')


def tool_input_list(events: Events) -> Events | None:
    return _with_tool_json(events, "[1]")


def drop_tool_stop(events: Events) -> Events | None:
    stops = [tool.stop for tool in _tools(events) if tool.stop is not None]
    return without(events, {stops[0]}) if stops else None


def drop_stop_reason(events: Events) -> Events | None:
    return _with_stop_reason(events, None)


def stop_reason_max_tokens(events: Events) -> Events | None:
    return _with_stop_reason(events, "max_tokens")


def end_turn_despite_tools(events: Events) -> Events | None:
    return _with_stop_reason(events, "end_turn") if _tools(events) else None


def tool_use_without_tools(events: Events) -> Events | None:
    """Claim `tool_use` with no tool block: every tool block's events are removed."""
    removed: set[int] = set()
    for tool in _tools(events):
        removed.update([tool.start, *tool.deltas])
        if tool.stop is not None:
            removed.add(tool.stop)
    return _with_stop_reason(without(events, removed), "tool_use")


def overloaded_mid_stream(events: Events) -> Events | None:
    starts = _positions(events, "message_start")
    if not starts:
        return None
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    broken = copy.deepcopy(events)
    broken.insert(max(starts[0] + 1, len(events) // 2), error)
    return broken


def _cut_where(events: Events, inside_tool: bool) -> Events | None:
    """End the stream after the middle-most event with (or without) a tool block open."""
    starts, stops = _positions(events, "message_start"), _positions(events, "message_stop")
    if not starts or not stops:
        return None
    ends = [
        position + 1
        for position, open_count in enumerate(_open_tool_counts(events))
        if starts[0] <= position < stops[0] and (open_count > 0) == inside_tool
    ]
    if not ends:
        return None
    end = min(ends, key=lambda candidate: (abs(candidate - len(events) / 2), candidate))
    return copy.deepcopy(events[:end])


def cut_connection(events: Events) -> Events | None:
    return _cut_where(events, inside_tool=False)


def cut_connection_in_tool(events: Events) -> Events | None:
    return _cut_where(events, inside_tool=True)


def _http_error(status: int, error_type: str, message: str, **headers: str) -> dict[str, Any]:
    """An `http_error` directive: the API's error JSON with the given status and headers."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return http_error(status, body, {"request-id": "req_01HarnessFaultCatalogue", **headers})


#: The SDK honours `x-should-retry: false` first: the 529 reaches the code at once,
#: whatever its `max_retries`.
HTTP_529 = _http_error(529, "overloaded_error", "Overloaded", **{"x-should-retry": "false"})
#: A retry-after of 1 ms, which the SDK obeys (0 would fall back to its 0.5-8 s backoff).
HTTP_429 = _http_error(
    429,
    "rate_limit_error",
    "Number of request tokens has exceeded your per-minute rate limit",
    **{"retry-after-ms": "1", "x-should-retry": "true"},
)


def _span(events: Events) -> tuple[int, int] | None:
    """Where the message begins and ends: its message_start and message_stop."""
    starts, stops = _positions(events, "message_start"), _positions(events, "message_stop")
    return (starts[0], stops[0]) if starts and stops else None


def _encoded_size(event: dict[str, Any]) -> int:
    return len(encode_event(event))


CATALOGUE: tuple[Fault, ...] = (
    Fault(
        "drop_message_start",
        "missing_message_start",
        "message_start removed: the stream begins with a later event",
        drop_message_start,
    ),
    Fault(
        "drop_message_stop",
        "missing_message_stop",
        "message_stop removed: the stream ends after message_delta",
        drop_message_stop,
    ),
    Fault(
        "event_after_message_stop",
        "event_after_message_stop",
        "a content_block_start appended after message_stop",
        event_after_message_stop,
    ),
    Fault(
        "repeat_tool_start",
        "duplicate_tool_start",
        "the first tool block's content_block_start sent twice",
        repeat_tool_start,
    ),
    Fault(
        "orphan_json_delta",
        "orphan_json_delta",
        "an input_json_delta at an index no block ever opened, right after message_start",
        orphan_json_delta,
    ),
    Fault(
        "truncate_tool_json",
        "invalid_tool_json",
        "the JSON of the first tool that has any cut in half; its block still stops",
        truncate_tool_json,
    ),
    Fault(
        "tool_input_nan",
        "invalid_tool_json",
        'the first tool\'s JSON replaced by `{"path": NaN}`: JSON has no NaN (RFC 8259)',
        tool_input_nan,
    ),
    Fault(
        "tool_input_null",
        "non_object_tool_input",
        "the first tool's JSON replaced by `null`",
        tool_input_null,
    ),
    Fault(
        "tool_input_list",
        "non_object_tool_input",
        "the first tool's JSON replaced by `[1]`",
        tool_input_list,
    ),
    Fault(
        "drop_tool_stop",
        "unclosed_tool_blocks",
        "the first tool block's content_block_stop removed",
        drop_tool_stop,
    ),
    Fault(
        "drop_stop_reason",
        "missing_stop_reason",
        "every message_delta's stop_reason set to null",
        drop_stop_reason,
    ),
    Fault(
        "stop_reason_max_tokens",
        "unsupported_stop_reason",
        "stop_reason set to max_tokens",
        stop_reason_max_tokens,
    ),
    Fault(
        "end_turn_despite_tools",
        "end_turn_with_tool_calls",
        "stop_reason set to end_turn in a stream with tool calls",
        end_turn_despite_tools,
    ),
    Fault(
        "tool_use_without_tools",
        "tool_use_without_tool_calls",
        "stop_reason set to tool_use and every tool block removed",
        tool_use_without_tools,
    ),
    Fault(
        "overloaded_mid_stream",
        "api_error:overloaded_error",
        "an API `error` event (overloaded_error) in the middle of the stream",
        overloaded_mid_stream,
    ),
    Fault(
        "cut_connection",
        "missing_message_stop",
        "the stream ends mid-way, after an event with no tool block open",
        cut_connection,
    ),
    Fault(
        "cut_connection_in_tool",
        "unclosed_tool_blocks",
        "the stream ends mid-way, inside a tool block",
        cut_connection_in_tool,
    ),
    *wire_rows(
        (
            "http_529",
            "api_error:overloaded_error",
            "an HTTP 529 overloaded answer instead of a stream (x-should-retry: false)",
            HTTP_529,
        ),
        HTTP_429,
        _span,
        _encoded_size,
    ),
)
