"""ConverseStream's fault rows: a good event stream broken the ways `ConverseAdapter` must catch.

A stream here is a cassette's lines: one-key event dicts (`messageStart`,
`contentBlockStart`, `contentBlockDelta`, `contentBlockStop`, `messageStop`,
`metadata`), keyed by `contentBlockIndex`. A client tool block is opened by a
`contentBlockStart` whose `start.toolUse` has no `type`; text blocks have no start.
Every row's expected outcome is a code of the table (`errors`), `api_error:<name>` for
the five exceptions Bedrock ends a stream with, or `done` for what is read and not
refused (Bedrock's `p` padding, no metadata, an empty text delta). The wire rows are
`fault_rows.wire_rows`, given a 500 and a 429 in Bedrock's error shape (`message`,
`__type`, and the `x-amzn-ErrorType` header botocore reads).

The rows read a stream as the adapter does, so that any stream it completes derives
(a row that finds nothing to break is left out): a line is the event `event_name`
names, a value that is no object is an empty event, an index is keyed by
`harness._events.block_key` (a list or object index included), and a tool block is the
events between its start and its stop.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness._events import block_key
from harness._providers.bedrock_converse.adapter import EXCEPTIONS, event_name, is_client_tool
from harness._providers.bedrock_converse.errors import PROVIDER
from harness._providers.bedrock_converse.framing import encode_event, error_body
from harness._providers.fault_rows import DONE, Events, Fault, http_error, wire_rows, without

__all__ = ["CATALOGUE", "PROVIDER"]


# -- reading a stream -----------------------------------------------------------------------


def _event(line: dict[str, Any], name: str) -> dict[str, Any]:
    """The event `name` of a line that is one (an empty one where its value is no object)."""
    event = line.get(name)
    return event if isinstance(event, dict) else {}


def _named(events: Events, name: str) -> list[int]:
    return [
        at for at, line in enumerate(events) if "harness" not in line and event_name(line) == name
    ]


def _first(events: Events, name: str) -> int | None:
    found = _named(events, name)
    return found[0] if found else None


@dataclass(slots=True)
class _Tool:
    """Where one client tool block's events sit: its start, its deltas, its stop."""

    #: its `contentBlockIndex` as the line holds it, and as the adapter keys it
    index: Any
    key: Any
    start: int
    deltas: list[int] = field(default_factory=list)
    stop: int | None = None


def _tools(events: Events) -> list[_Tool]:
    """The client tool blocks in opening order, each with the events of its index while
    it is open (as the adapter pairs them)."""
    tools: list[_Tool] = []
    open_tools: dict[Any, _Tool] = {}
    for at, line in enumerate(events):
        name = event_name(line) if "harness" not in line else ""
        if name not in ("contentBlockStart", "contentBlockDelta", "contentBlockStop"):
            continue
        event = _event(line, name)
        index = event.get("contentBlockIndex")
        key = block_key(index)
        if name == "contentBlockStart":
            start = event.get("start")
            use = start.get("toolUse") if isinstance(start, dict) else None
            if is_client_tool(use) and key not in open_tools:
                open_tools[key] = _Tool(copy.deepcopy(index), key, at)
                tools.append(open_tools[key])
        elif key in open_tools:
            if name == "contentBlockDelta":
                open_tools[key].deltas.append(at)
            else:
                open_tools.pop(key).stop = at
    return tools


def _input(line: dict[str, Any]) -> str:
    """The input text a tool block's delta carries (none where it is no text)."""
    delta = _event(line, "contentBlockDelta").get("delta")
    use = delta.get("toolUse") if isinstance(delta, dict) else None
    piece = use.get("input") if isinstance(use, dict) else None
    return piece if isinstance(piece, str) else ""


def _inserted(events: Events, at: int, *lines: dict[str, Any]) -> Events:
    broken = copy.deepcopy(events)
    broken[at:at] = list(lines)
    return broken


def _delta(index: Any, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": copy.deepcopy(index), "delta": delta}}


def _indexes(events: Events) -> list[int]:
    """The whole-number indexes any block start or delta names."""
    found = {
        block_key(_event(events[at], name).get("contentBlockIndex"))
        for name in ("contentBlockStart", "contentBlockDelta")
        for at in _named(events, name)
    }
    return [index for index in found if isinstance(index, int)]


def _with_stop(events: Events, reason: str) -> Events | None:
    at = _first(events, "messageStop")
    if at is None:
        return None
    broken = copy.deepcopy(events)
    if not isinstance(broken[at]["messageStop"], dict):
        broken[at]["messageStop"] = {}
    broken[at]["messageStop"]["stopReason"] = reason
    return broken


def _with_input(events: Events, text: str) -> Events | None:
    """The first tool block's input replaced by `text`, in one delta after its start."""
    tools = _tools(events)
    if not tools:
        return None
    tool = tools[0]
    broken = without(events, set(tool.deltas))
    broken.insert(tool.start + 1, _delta(tool.index, {"toolUse": {"input": text}}))
    return broken


# -- the faults -------------------------------------------------------------------------------


def drop_message_start(events: Events) -> Events | None:
    at = _first(events, "messageStart")
    return without(events, {at}) if at is not None and len(events) > 1 else None


def repeat_message_start(events: Events) -> Events | None:
    span = _span(events)
    if span is None:
        return None
    begin, end = span
    return _inserted(events, min(begin + 2, end), copy.deepcopy(events[begin]))


def orphan_tool_delta(events: Events) -> Events | None:
    at = _first(events, "messageStart")
    if at is None:
        return None
    fresh = max(_indexes(events), default=-1) + 1
    return _inserted(events, at + 1, _delta(fresh, {"toolUse": {"input": '{"city": '}}))


def repeat_tool_start(events: Events) -> Events | None:
    tools = _tools(events)
    if not tools:
        return None
    at = tools[0].start
    again = copy.deepcopy(events[at])
    use = again["contentBlockStart"]["start"]["toolUse"]
    if isinstance(use.get("toolUseId"), str):
        use["toolUseId"] += "Again"
    return _inserted(events, at + 1, again)


def text_in_tool_block(events: Events) -> Events | None:
    tools = _tools(events)
    if not tools:
        return None
    return _inserted(events, tools[0].start + 1, _delta(tools[0].index, {"text": "not input"}))


def truncate_tool_json(events: Events) -> Events | None:
    for tool in _tools(events):
        text = "".join(_input(events[at]) for at in tool.deltas).rstrip()
        if not text:
            continue
        cut = text[: max(1, len(text) // 2)]
        try:
            json.loads(cut)
        except ValueError:
            broken = without(events, set(tool.deltas))
            broken.insert(tool.start + 1, _delta(tool.index, {"toolUse": {"input": cut}}))
            return broken
    return None


def tool_input_nan(events: Events) -> Events | None:
    return _with_input(events, '{"city": NaN}')


def tool_input_list(events: Events) -> Events | None:
    return _with_input(events, "[1]")


def drop_tool_stop(events: Events) -> Events | None:
    tools = _tools(events)
    stop = tools[0].stop if tools else None
    return None if stop is None else without(events, {stop})


def drop_message_stop(events: Events) -> Events | None:
    found = set(_named(events, "messageStop"))
    return without(events, found) if found else None


def cut_connection(events: Events) -> Events | None:
    """The stream ends after the middle-most event before messageStop."""
    span = _span(events)
    if span is None or span[1] - span[0] < 2:
        return None
    begin, end = span
    return copy.deepcopy(events[: (begin + 1 + end) // 2 + 1])


def stop_max_tokens(events: Events) -> Events | None:
    return _with_stop(events, "max_tokens")


def stop_guardrail_intervened(events: Events) -> Events | None:
    return _with_stop(events, "guardrail_intervened")


def end_turn_despite_tool_calls(events: Events) -> Events | None:
    return _with_stop(events, "end_turn") if _tools(events) else None


def tool_use_without_tool_calls(events: Events) -> Events | None:
    """stopReason tool_use, and every client tool block removed."""
    broken = _with_stop(events, "tool_use")
    if broken is None:
        return None
    drop: set[int] = set()
    for tool in _tools(events):
        drop |= {tool.start, *tool.deltas, *([] if tool.stop is None else [tool.stop])}
    return without(broken, drop)


def delta_after_stop(events: Events) -> Events | None:
    at = _first(events, "messageStop")
    if at is None:
        return None
    return _inserted(events, at + 1, _delta(0, {"text": "late"}))


def metadata_twice(events: Events) -> Events | None:
    stop = _first(events, "messageStop")
    after = [at for at in _named(events, "metadata") if stop is not None and at > stop]
    if not after:
        return None
    return _inserted(events, after[0] + 1, copy.deepcopy(events[after[0]]))


def _exception(name: str) -> Callable[[Events], Events | None]:
    def derive(events: Events) -> Events | None:
        span = _span(events)
        if span is None:
            return None
        begin, end = span
        at = max(begin + 1, (begin + end) // 2)
        return [*copy.deepcopy(events[:at]), {name: {"message": f"A {name} occurred."}}]

    derive.__name__ = name
    return derive


def padding(events: Events) -> Events | None:
    """Bedrock's `p` padding field in every event (read, not refused)."""
    broken = copy.deepcopy(events)
    for line in broken:
        name = event_name(line) if "harness" not in line else ""
        if name and name not in EXCEPTIONS and isinstance(line[name], dict):
            line[name]["p"] = "abcdefghijklmnop"
    return broken


def drop_metadata(events: Events) -> Events | None:
    found = set(_named(events, "metadata"))
    return without(events, found) if found else None


def _span(events: Events) -> tuple[int, int] | None:
    """Where the answer begins and ends: messageStart and messageStop."""
    begin, end = _first(events, "messageStart"), _first(events, "messageStop")
    return (begin, end) if begin is not None and end is not None else None


def _wire_size(line: dict[str, Any]) -> int:
    return len(encode_event(line))


def _http(status: int, name: str, message: str) -> dict[str, Any]:
    body = error_body(name, message)
    return http_error(status, body, {"x-amzn-errortype": body["__type"]})


_EXCEPTION_ROWS = tuple(
    Fault(
        f"{name}_mid_stream",
        f"api_error:{name}",
        f"{'an' if name[0] in 'aeiou' else 'a'} {name} event (an exception frame) in the "
        "middle of the stream",
        _exception(name),
    )
    for name in EXCEPTIONS
)

CATALOGUE: tuple[Fault, ...] = (
    Fault(
        "drop_message_start", "missing_message_start", "messageStart removed", drop_message_start
    ),
    Fault(
        "repeat_message_start",
        "duplicate_message_start",
        "messageStart sent again after the first event after it",
        repeat_message_start,
    ),
    Fault(
        "orphan_tool_delta",
        "orphan_tool_delta",
        "a toolUse input delta at an index no toolUse start opened, right after messageStart",
        orphan_tool_delta,
    ),
    Fault(
        "repeat_tool_start",
        "duplicate_block_start",
        "the first tool block's contentBlockStart sent again while it is open",
        repeat_tool_start,
    ),
    Fault(
        "text_in_tool_block",
        "delta_kind_mismatch",
        "a text delta at the first tool block's index, right after its start",
        text_in_tool_block,
    ),
    Fault(
        "truncate_tool_json",
        "invalid_tool_json",
        "the input of the first tool block that has any cut in half",
        truncate_tool_json,
    ),
    Fault(
        "tool_input_nan",
        "invalid_tool_json",
        'the first tool block\'s input replaced by `{"city": NaN}`: JSON has no NaN',
        tool_input_nan,
    ),
    Fault(
        "tool_input_list",
        "non_object_tool_input",
        "the first tool block's input replaced by `[1]`",
        tool_input_list,
    ),
    Fault(
        "drop_tool_stop",
        "unfinished_tool_blocks",
        "the first tool block's contentBlockStop removed: messageStop finds it open",
        drop_tool_stop,
    ),
    Fault(
        "drop_message_stop",
        "missing_message_stop",
        "messageStop removed (metadata still comes)",
        drop_message_stop,
    ),
    Fault(
        "cut_connection",
        "missing_message_stop",
        "the stream ends mid-way, before messageStop and metadata",
        cut_connection,
    ),
    Fault(
        "stop_max_tokens",
        "unsupported_stop_reason",
        "stopReason set to max_tokens (the answer was cut)",
        stop_max_tokens,
    ),
    Fault(
        "stop_guardrail_intervened",
        "unsupported_stop_reason",
        "stopReason set to guardrail_intervened (a guardrail replaced the answer)",
        stop_guardrail_intervened,
    ),
    Fault(
        "end_turn_despite_tool_calls",
        "end_turn_with_tool_calls",
        "stopReason set to end_turn in a stream with client tool calls",
        end_turn_despite_tool_calls,
    ),
    Fault(
        "tool_use_without_tool_calls",
        "tool_use_without_tool_calls",
        "stopReason set to tool_use and every client tool block removed",
        tool_use_without_tool_calls,
    ),
    Fault(
        "delta_after_stop",
        "event_after_stop",
        "a text delta right after messageStop",
        delta_after_stop,
    ),
    Fault(
        "metadata_twice",
        "event_after_stop",
        "the metadata event after messageStop sent twice",
        metadata_twice,
    ),
    *_EXCEPTION_ROWS,
    Fault(
        "padding",
        DONE,
        "Bedrock's p padding field in every event (read, not refused: still done)",
        padding,
    ),
    Fault(
        "drop_metadata",
        DONE,
        "the metadata event removed (read, not refused: still done)",
        drop_metadata,
    ),
    *wire_rows(
        (
            "http_500",
            "api_error:InternalServerException",
            "an HTTP 500 InternalServerException answer instead of a stream",
            _http(500, "internalServerException", "The server had an error."),
        ),
        _http(429, "throttlingException", "Too many requests, please wait."),
        _span,
        _wire_size,
    ),
)
