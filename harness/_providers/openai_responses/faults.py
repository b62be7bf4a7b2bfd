"""Responses' fault rows: a good `response.*` stream broken the ways `ResponsesAdapter` must catch.

A stream here is a cassette's event lines, each with its `type` and `sequence_number`.
Every row but `sequence_gap` numbers the events it keeps or adds again from the good
stream's first number, so that the adapter meets the fault itself and not a gap. A call is a
`function_call` output item: its `output_item.added`, its `function_call_arguments`
deltas and `.done`, its `output_item.done` (where it is yielded). Every row's expected
outcome is a code of the Responses table (`errors`) or `api_error:<code>`.

A cut is the stream ending after some event before its terminal one: whether a call is
open or not, `missing_response_completed` (the end rule reads the terminal event only).
The wire rows are `fault_rows.wire_rows`, given a 500 and a 429 in OpenAI's error shape
(`openai_shared`: the same answers as Chat's).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from harness._json import dump_line
from harness._providers.fault_rows import Events, Fault, wire_rows, without
from harness._providers.openai_responses.errors import PROVIDER
from harness._providers.openai_shared import HTTP_429, HTTP_500

__all__ = ["CATALOGUE", "PROVIDER"]

_CREATED: Final = "response.created"
_COMPLETED: Final = "response.completed"
_ADDED: Final = "response.output_item.added"
_ITEM_DONE: Final = "response.output_item.done"
_ARGUMENTS_DELTA: Final = "response.function_call_arguments.delta"
_ARGUMENTS_DONE: Final = "response.function_call_arguments.done"
#: the events before the terminal one that carry the response, and its id
_OPENING: Final = ("response.created", "response.queued", "response.in_progress")


# -- reading a stream -----------------------------------------------------------------------


def _positions(events: Events, kind: str) -> list[int]:
    return [position for position, event in enumerate(events) if event.get("type") == kind]


def _first(events: Events, kind: str) -> int | None:
    positions = _positions(events, kind)
    return positions[0] if positions else None


def _renumbered(broken: Events, good: Events) -> Events:
    """`broken` (a copy of `good`, changed) with its sequence numbers counted again from
    the first number of `good`; none at all if `good` is unnumbered (as the API's streams
    before mid-2025)."""
    numbered = [line for line in broken if "type" in line and "harness" not in line]
    if not _is_numbered(good):
        for line in numbered:
            line.pop("sequence_number", None)
        return broken
    start = next((line["sequence_number"] for line in good if "sequence_number" in line), 0)
    for offset, line in enumerate(numbered):
        line["sequence_number"] = start + offset
    return broken


def _is_numbered(events: Events) -> bool:
    return any(line.get("sequence_number") is not None for line in events)


def _inserted(events: Events, at: int, *lines: dict[str, Any]) -> Events:
    broken = copy.deepcopy(events)
    broken[at:at] = [{**line, "sequence_number": 0} for line in lines]
    return _renumbered(broken, events)


def _fresh_index(events: Events) -> int:
    indexes = [e["output_index"] for e in events if isinstance(e.get("output_index"), int)]
    return max(indexes, default=-1) + 1


@dataclass(slots=True)
class _Call:
    """Where one `function_call` item's events sit in the list."""

    index: int
    added: int
    deltas: list[int] = field(default_factory=list)
    arguments_done: int | None = None
    done: int | None = None


def _calls(events: Events) -> list[_Call]:
    """The function_call items in the order they were added."""
    calls: dict[int, _Call] = {}
    for position, event in enumerate(events):
        kind, index = event.get("type"), event.get("output_index")
        if not isinstance(index, int):
            continue
        if kind == _ADDED and event.get("item", {}).get("type") == "function_call":
            calls[index] = _Call(index, position)
        elif index not in calls:
            continue
        elif kind == _ARGUMENTS_DELTA:
            calls[index].deltas.append(position)
        elif kind == _ARGUMENTS_DONE:
            calls[index].arguments_done = position
        elif kind == _ITEM_DONE:
            calls[index].done = position
    return list(calls.values())


def _joined(events: Events, call: _Call) -> str:
    return "".join(str(events[position].get("delta", "")) for position in call.deltas)


def _open_call_counts(events: Events) -> Iterator[int]:
    """After each event, how many function_call items are open."""
    opened: set[Any] = set()
    for event in events:
        kind, index = event.get("type"), event.get("output_index")
        if kind == _ADDED and event.get("item", {}).get("type") == "function_call":
            opened.add(index)
        elif kind == _ITEM_DONE:
            opened.discard(index)
        yield len(opened)


def _with_arguments(events: Events, text: str, call: _Call | None = None) -> Events | None:
    """A call's arguments (by default the first call's) replaced by `text` wherever the
    stream carries them: one delta, the `.done` event and the done item."""
    if call is None:
        calls = [found for found in _calls(events) if found.done is not None]
        if not calls:
            return None
        call = calls[0]
    if call.done is None:
        return None
    broken = copy.deepcopy(events)
    if call.arguments_done is not None:
        broken[call.arguments_done]["arguments"] = text
    broken[call.done]["item"]["arguments"] = text
    item_id = events[call.added].get("item", {}).get("id")
    delta = {
        "type": _ARGUMENTS_DELTA,
        "sequence_number": 0,
        "item_id": item_id,
        "output_index": call.index,
        "delta": text,
    }
    at = call.deltas[0] if call.deltas else call.added + 1
    broken = without(broken, set(call.deltas))
    broken.insert(at, delta)
    return _renumbered(broken, events)


def _replaced_terminal(events: Events, kind: str, **response: Any) -> Events | None:
    """`response.completed` turned into `kind`, its response updated with `response`."""
    at = _first(events, _COMPLETED)
    if at is None:
        return None
    broken = copy.deepcopy(events)
    broken[at]["type"] = kind
    broken[at].setdefault("response", {}).update(response)
    return broken


# -- the faults -------------------------------------------------------------------------------


def drop_response_created(events: Events) -> Events | None:
    positions = set(_positions(events, _CREATED))
    return _renumbered(without(events, positions), events) if positions else None


def drop_response_completed(events: Events) -> Events | None:
    positions = set(_positions(events, _COMPLETED))
    return _renumbered(without(events, positions), events) if positions else None


def event_after_response_completed(events: Events) -> Events | None:
    at = _first(events, _COMPLETED)
    if at is None:
        return None
    late = {
        "type": _ADDED,
        "output_index": _fresh_index(events),
        "item": {"type": "message", "id": "msg_HarnessLate", "role": "assistant", "content": []},
    }
    return _inserted(events, at + 1, late)


def repeat_output_item(events: Events) -> Events | None:
    at = _first(events, _ADDED)
    if at is None:
        return None
    return _inserted(events, at + 1, copy.deepcopy(events[at]))


def orphan_delta(events: Events) -> Events | None:
    at = _first(events, _CREATED)
    if at is None:
        return None
    orphan = {
        "type": _ARGUMENTS_DELTA,
        "item_id": "fc_HarnessOrphan",
        "output_index": _fresh_index(events),
        "delta": '{"path": ',
    }
    return _inserted(events, at + 1, orphan)


def truncate_tool_json(events: Events) -> Events | None:
    """Cut the first call's arguments (that has any) in half, everywhere it carries them."""
    for call in _calls(events):
        text = _joined(events, call).rstrip()
        if not text or call.done is None:
            continue
        cut = text[: max(1, len(text) // 2)]
        try:
            json.loads(cut)
        except ValueError:
            return _with_arguments(events, cut, call)
    return None


def tool_input_nan(events: Events) -> Events | None:
    return _with_arguments(events, '{"path": NaN}')


def tool_input_null(events: Events) -> Events | None:
    return _with_arguments(events, "null")


def tool_input_list(events: Events) -> Events | None:
    return _with_arguments(events, "[1]")


def _carried(events: Events, call: _Call) -> str | None:
    """The arguments the stream carries before the call's done item: its deltas joined,
    else its `.done` event's (None: neither, so nothing a done item could contradict)."""
    if call.deltas:
        return _joined(events, call)
    found = (
        events[call.arguments_done].get("arguments") if call.arguments_done is not None else None
    )
    return found if isinstance(found, str) else None


def arguments_mismatch(events: Events) -> Events | None:
    calls = [
        call
        for call in _calls(events)
        if call.done is not None and _carried(events, call) is not None
    ]
    if not calls:
        return None
    call = calls[0]
    broken = copy.deepcopy(events)
    other = "{}" if _carried(events, call) != "{}" else '{"other": true}'
    broken[call.done]["item"]["arguments"] = other  # type: ignore[index]
    return broken


def output_mismatch(events: Events) -> Events | None:
    """The terminal event's output says another answer than the stream: the first
    message's text (`Paris.` -> `Rome.`), or, in an answer without text, the first
    function_call's arguments; the events before it are the good stream's."""
    at = _first(events, _COMPLETED)
    output = events[at].get("response", {}).get("output") if at is not None else None
    if at is None or not isinstance(output, list):
        return None
    broken = copy.deepcopy(events)
    items = [item for item in broken[at]["response"]["output"] if isinstance(item, dict)]
    for item in items:
        content = item.get("content") if item.get("type") == "message" else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "output_text" and part.get("text"):
                part["text"] = "Rome." if part["text"] != "Rome." else "Paris."
                return broken
    for item in items:
        if item.get("type") == "function_call" and isinstance(item.get("arguments"), str):
            item["arguments"] = "{}" if item["arguments"] != "{}" else '{"other": true}'
            return broken
    return None


def drop_tool_done(events: Events) -> Events | None:
    dones = [call.done for call in _calls(events) if call.done is not None]
    return _renumbered(without(events, {dones[0]}), events) if dones else None


def response_incomplete(events: Events) -> Events | None:
    return _replaced_terminal(
        events,
        "response.incomplete",
        status="incomplete",
        incomplete_details={"reason": "max_output_tokens"},
    )


def response_failed(events: Events) -> Events | None:
    return _replaced_terminal(
        events,
        "response.failed",
        status="failed",
        error={"code": "server_error", "message": "The server had an error."},
    )


def server_error_mid_stream(events: Events) -> Events | None:
    start, end = _first(events, _CREATED), _first(events, _COMPLETED)
    if start is None or end is None:
        return None
    error = {
        "type": "error",
        "code": "server_error",
        "message": "The server had an error while processing your request.",
        "param": None,
    }
    return _inserted(events, min(max(start + 1, len(events) // 2), end), error)


def _cut_where(events: Events, inside_call: bool) -> Events | None:
    """End the stream after the middle-most event with (or without) a call open."""
    start, end = _first(events, _CREATED), _first(events, _COMPLETED)
    if start is None or end is None:
        return None
    ends = [
        position + 1
        for position, open_count in enumerate(_open_call_counts(events))
        if start <= position < end and (open_count > 0) == inside_call
    ]
    if not ends:
        return None
    cut = min(ends, key=lambda candidate: (abs(candidate - len(events) / 2), candidate))
    return copy.deepcopy(events[:cut])


def cut_connection(events: Events) -> Events | None:
    return _cut_where(events, inside_call=False)


def cut_connection_in_tool(events: Events) -> Events | None:
    return _cut_where(events, inside_call=True)


def sequence_gap(events: Events) -> Events | None:
    """The middle event's sequence_number one too high, and every later one's with it;
    in an unnumbered stream, the middle event numbered (the others are not)."""
    ends = _span(events)
    if ends is None or ends[1] - ends[0] < 2:
        return None
    broken = copy.deepcopy(events)
    middle = (ends[0] + 1 + ends[1]) // 2
    if not _is_numbered(events):
        broken[middle]["sequence_number"] = middle
        return broken
    for event in broken[middle:]:
        if isinstance(event.get("sequence_number"), int):
            event["sequence_number"] += 1
    return broken


def _response_id(event: dict[str, Any]) -> Any:
    response = event.get("response")
    return response.get("id") if isinstance(response, dict) else None


def inconsistent_response(events: Events) -> Events | None:
    """response.completed's id changed: where an event before it named the response's id
    (the first id named is the one every later event must carry)."""
    at = _first(events, _COMPLETED)
    if at is None or all(
        event.get("type") not in _OPENING or _response_id(event) is None for event in events[:at]
    ):
        return None
    broken = copy.deepcopy(events)
    response = broken[at].setdefault("response", {})
    response["id"] = f"{response.get('id')}Other"
    return broken


def refusal(events: Events) -> Events | None:
    at = _first(events, _CREATED)
    if at is None:
        return None
    index, item_id = _fresh_index(events), "msg_HarnessRefusal"
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    return _inserted(
        events,
        at + 1,
        {
            "type": _ADDED,
            "output_index": index,
            "item": {"type": "message", "id": item_id, "role": "assistant", "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "refusal", "refusal": ""},
        },
        {"type": "response.refusal.delta", **where, "delta": "I can't help with that."},
    )


def unsupported_output_item(events: Events) -> Events | None:
    at = _first(events, _CREATED)
    if at is None:
        return None
    item = {
        "type": "computer_call",
        "id": "cu_HarnessFault",
        "call_id": "call_HarnessComputer",
        "status": "in_progress",
    }
    return _inserted(
        events, at + 1, {"type": _ADDED, "output_index": _fresh_index(events), "item": item}
    )


def _span(events: Events) -> tuple[int, int] | None:
    """Where the response begins and ends: response.created and response.completed."""
    start, end = _first(events, _CREATED), _first(events, _COMPLETED)
    return (start, end) if start is not None and end is not None else None


def _wire_size(event: dict[str, Any]) -> int:
    # `event: <type>`, `data: <json>`, the blank line: the named events' framing
    return len(b"event: " + str(event["type"]).encode() + b"\ndata: " + dump_line(event) + b"\n\n")


CATALOGUE: tuple[Fault, ...] = (
    Fault(
        "drop_response_created",
        "missing_response_created",
        "response.created removed: the stream begins with a later event",
        drop_response_created,
    ),
    Fault(
        "drop_response_completed",
        "missing_response_completed",
        "response.completed removed: the stream ends after the last output item",
        drop_response_completed,
    ),
    Fault(
        "event_after_response_completed",
        "event_after_response_completed",
        "an output_item.added appended after response.completed",
        event_after_response_completed,
    ),
    Fault(
        "repeat_output_item",
        "duplicate_output_item",
        "the first output item's output_item.added sent twice",
        repeat_output_item,
    ),
    Fault(
        "orphan_delta",
        "orphan_delta",
        "a function_call_arguments.delta at an output index no item was added at, "
        "right after response.created",
        orphan_delta,
    ),
    Fault(
        "truncate_tool_json",
        "invalid_tool_json",
        "the arguments of the first function_call that has any cut in half, "
        "in its delta, its .done and its done item alike",
        truncate_tool_json,
    ),
    Fault(
        "tool_input_nan",
        "invalid_tool_json",
        'the first function_call\'s arguments replaced by `{"path": NaN}`: '
        "JSON has no NaN (RFC 8259)",
        tool_input_nan,
    ),
    Fault(
        "tool_input_null",
        "non_object_tool_input",
        "the first function_call's arguments replaced by `null`",
        tool_input_null,
    ),
    Fault(
        "tool_input_list",
        "non_object_tool_input",
        "the first function_call's arguments replaced by `[1]`",
        tool_input_list,
    ),
    Fault(
        "arguments_mismatch",
        "arguments_mismatch",
        "the first function_call's done item carries other arguments than its deltas",
        arguments_mismatch,
    ),
    Fault(
        "output_mismatch",
        "output_mismatch",
        "response.completed's output says another answer: the first message's text "
        "replaced (Rome.), or without one the first function_call's arguments",
        output_mismatch,
    ),
    Fault(
        "drop_tool_done",
        "unfinished_output_items",
        "the first function_call's output_item.done removed",
        drop_tool_done,
    ),
    Fault(
        "response_incomplete",
        "response_incomplete",
        "response.completed replaced by response.incomplete (max_output_tokens)",
        response_incomplete,
    ),
    Fault(
        "response_failed",
        "response_failed",
        "response.completed replaced by response.failed (server_error)",
        response_failed,
    ),
    Fault(
        "server_error_mid_stream",
        "api_error:server_error",
        "an error event (server_error) in the middle of the stream",
        server_error_mid_stream,
    ),
    Fault(
        "cut_connection",
        "missing_response_completed",
        "the stream ends mid-way, after an event with no function_call open",
        cut_connection,
    ),
    Fault(
        "cut_connection_in_tool",
        "missing_response_completed",
        "the stream ends mid-way, inside a function_call item",
        cut_connection_in_tool,
    ),
    Fault(
        "sequence_gap",
        "sequence_gap",
        "the middle event's sequence_number skips one",
        sequence_gap,
    ),
    Fault(
        "inconsistent_response",
        "inconsistent_response",
        "response.completed carries another response id than response.created",
        inconsistent_response,
    ),
    Fault(
        "refusal",
        "refusal",
        "a message item whose refusal part sends a refusal.delta, right after response.created",
        refusal,
    ),
    Fault(
        "unsupported_output_item",
        "unsupported_output_item",
        "a computer_call output item added right after response.created",
        unsupported_output_item,
    ),
    *wire_rows(
        (
            "http_500",
            "api_error:server_error",
            "an HTTP 500 server_error answer instead of a stream (x-should-retry: false)",
            HTTP_500,
        ),
        HTTP_429,
        _span,
        _wire_size,
    ),
)
