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
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from harness._providers.bedrock_converse.adapter import EXCEPTIONS, event_name, is_client_tool
from harness._providers.bedrock_converse.errors import PROVIDER
from harness._providers.bedrock_converse.framing import encode_event, error_body
from harness._providers.fault_rows import DONE, Events, Fault, http_error, wire_rows, without

__all__ = ["CATALOGUE", "PROVIDER"]


# -- reading a stream -----------------------------------------------------------------------


def _named(events: Events, name: str) -> list[int]:
    return [at for at, line in enumerate(events) if "harness" not in line and name in line]


def _first(events: Events, name: str) -> int | None:
    found = _named(events, name)
    return found[0] if found else None


def _tool_blocks(events: Events) -> list[tuple[int, int]]:
    """(position of the start, index) of each client tool block, in order."""
    found = []
    for at in _named(events, "contentBlockStart"):
        event = events[at]["contentBlockStart"]
        use = event.get("start", {}).get("toolUse")
        if is_client_tool(use):
            found.append((at, event.get("contentBlockIndex")))
    return found


def _deltas(events: Events, index: object, kind: str = "toolUse") -> list[int]:
    return [
        at
        for at in _named(events, "contentBlockDelta")
        if events[at]["contentBlockDelta"].get("contentBlockIndex") == index
        and kind in events[at]["contentBlockDelta"].get("delta", {})
    ]


def _block_stop(events: Events, index: object) -> int | None:
    found = [
        at
        for at in _named(events, "contentBlockStop")
        if events[at]["contentBlockStop"].get("contentBlockIndex") == index
    ]
    return found[0] if found else None


def _inserted(events: Events, at: int, *lines: dict[str, Any]) -> Events:
    broken = copy.deepcopy(events)
    broken[at:at] = list(lines)
    return broken


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}


def _indexes(events: Events) -> list[int]:
    found = {
        events[at][name].get("contentBlockIndex")
        for name in ("contentBlockStart", "contentBlockDelta")
        for at in _named(events, name)
    }
    return [index for index in found if isinstance(index, int)]


def _with_stop(events: Events, reason: str) -> Events | None:
    at = _first(events, "messageStop")
    if at is None:
        return None
    broken = copy.deepcopy(events)
    broken[at]["messageStop"]["stopReason"] = reason
    return broken


def _with_input(events: Events, text: str) -> Events | None:
    """The first tool block's input replaced by `text`, in one delta after its start."""
    blocks = _tool_blocks(events)
    if not blocks:
        return None
    at, index = blocks[0]
    broken = without(events, set(_deltas(events, index)))
    broken.insert(at + 1, _delta(index, {"toolUse": {"input": text}}))
    return broken


# -- the faults -------------------------------------------------------------------------------


def drop_message_start(events: Events) -> Events | None:
    at = _first(events, "messageStart")
    return without(events, {at}) if at is not None and len(events) > 1 else None


def repeat_message_start(events: Events) -> Events | None:
    at = _first(events, "messageStart")
    if at is None or at + 1 >= len(events):
        return None
    return _inserted(events, at + 2, copy.deepcopy(events[at]))


def orphan_tool_delta(events: Events) -> Events | None:
    at = _first(events, "messageStart")
    if at is None:
        return None
    fresh = max(_indexes(events), default=-1) + 1
    return _inserted(events, at + 1, _delta(fresh, {"toolUse": {"input": '{"city": '}}))


def repeat_tool_start(events: Events) -> Events | None:
    blocks = _tool_blocks(events)
    if not blocks:
        return None
    at, _ = blocks[0]
    again = copy.deepcopy(events[at])
    again["contentBlockStart"]["start"]["toolUse"]["toolUseId"] += "Again"
    return _inserted(events, at + 1, again)


def text_in_tool_block(events: Events) -> Events | None:
    blocks = _tool_blocks(events)
    if not blocks:
        return None
    at, index = blocks[0]
    return _inserted(events, at + 1, _delta(index, {"text": "not input"}))


def truncate_tool_json(events: Events) -> Events | None:
    for _, index in _tool_blocks(events):
        text = "".join(
            events[at]["contentBlockDelta"]["delta"]["toolUse"].get("input") or ""
            for at in _deltas(events, index)
        ).rstrip()
        if not text:
            continue
        cut = text[: max(1, len(text) // 2)]
        try:
            json.loads(cut)
        except ValueError:
            broken = without(events, set(_deltas(events, index)))
            start = next(at for at, found in _tool_blocks(broken) if found == index)
            broken.insert(start + 1, _delta(index, {"toolUse": {"input": cut}}))
            return broken
    return None


def tool_input_nan(events: Events) -> Events | None:
    return _with_input(events, '{"city": NaN}')


def tool_input_list(events: Events) -> Events | None:
    return _with_input(events, "[1]")


def drop_tool_stop(events: Events) -> Events | None:
    blocks = _tool_blocks(events)
    if not blocks:
        return None
    at = _block_stop(events, blocks[0][1])
    return None if at is None else without(events, {at})


def drop_message_stop(events: Events) -> Events | None:
    found = set(_named(events, "messageStop"))
    return without(events, found) if found else None


def cut_connection(events: Events) -> Events | None:
    """The stream ends after the middle-most event before messageStop."""
    begin, end = _first(events, "messageStart"), _first(events, "messageStop")
    if begin is None or end is None or end - begin < 2:
        return None
    return copy.deepcopy(events[: (begin + 1 + end) // 2 + 1])


def stop_max_tokens(events: Events) -> Events | None:
    return _with_stop(events, "max_tokens")


def stop_guardrail_intervened(events: Events) -> Events | None:
    return _with_stop(events, "guardrail_intervened")


def end_turn_despite_tool_calls(events: Events) -> Events | None:
    return _with_stop(events, "end_turn") if _tool_blocks(events) else None


def tool_use_without_tool_calls(events: Events) -> Events | None:
    """stopReason tool_use, and every client tool block removed."""
    broken = _with_stop(events, "tool_use")
    if broken is None:
        return None
    for _, index in _tool_blocks(events):
        drop = {at for at, _ in _tool_blocks(broken) if _ == index}
        drop |= set(_deltas(broken, index))
        stop = _block_stop(broken, index)
        broken = without(broken, drop | ({stop} if stop is not None else set()))
    return broken


def delta_after_stop(events: Events) -> Events | None:
    at = _first(events, "messageStop")
    if at is None:
        return None
    return _inserted(events, at + 1, _delta(0, {"text": "late"}))


def metadata_twice(events: Events) -> Events | None:
    at, stop = _first(events, "metadata"), _first(events, "messageStop")
    if at is None or stop is None or at < stop:
        return None
    return _inserted(events, at + 1, copy.deepcopy(events[at]))


def _exception(name: str) -> Callable[[Events], Events | None]:
    def derive(events: Events) -> Events | None:
        begin, end = _first(events, "messageStart"), _first(events, "messageStop")
        if begin is None or end is None:
            return None
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
        f"a {name} event (an exception frame) in the middle of the stream",
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
