"""The fault catalogue: ways a good stream breaks, each with the outcome it must produce.

Every `Fault` derives one broken variant from a good stream's raw event list (one that
replays to `done`), or says it does not apply (no tool block: no tool faults). The
expected outcome is a code of the adapter's error table, or `api_error:<error.type>` for
a mid-stream API `error` event, which the SDK raises as `APIStatusError`.

A cut connection is represented by the stream simply ending after some event, which is
what the adapter sees when the server closes the connection mid-stream without an error
event: with no tool block open at the cut it must give `missing_message_stop`; inside a
tool block, `unclosed_tool_blocks` (open blocks are checked first at the end).

The HTTP-level and wire-level rows (`wire=True`) hold directive lines the cassette format
documents, which only an HTTP transport can act on, so they are replayed through a real
SDK client (`harness.cassette_client`), never by building event objects directly:
`http_529` answers with an HTTP error instead of a stream; `http_429_then_ok` is a
two-response session (a 429 the SDK retries after `retry-after-ms`, then the good
stream: the expected outcome is `done`); `cut_mid_event` drops the connection half-way
through an event's bytes, which the SDK raises as `httpx2.RemoteProtocolError`; `stall`
sends no byte for longer than a client's read timeout, so `httpx2.ReadTimeout` fires.
Their codes: `api_error:<error.type>`, `done`, and `connection_error:<exception name>`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness._cassette.directives import CUT, HTTP_ERROR, STALL

__all__ = [
    "CATALOGUE",
    "DONE",
    "STALL_MS",
    "Fault",
    "Variant",
    "derive_variants",
    "fault_named",
]

#: Raw events, and for the wire rows directive lines among them: one response's lines.
Events = list[dict[str, Any]]

#: The outcome of a stream that completes (a row the SDK's retries recover from).
DONE = "done"
#: How long `stall` sends nothing: longer than any read timeout a test would set, and
#: than the SDK's own default (600 s), so a client timeout always fires first.
STALL_MS = 601_000


@dataclass(frozen=True, slots=True)
class Fault:
    """One row of the catalogue: `derive(events)` is the broken variant, or None if inapplicable."""

    name: str
    expect: str
    description: str
    derive: Callable[[Events], Events | None] = field(repr=False, compare=False)
    #: responses answered before the derived one (a session: `http_429_then_ok`)
    before: tuple[Events, ...] = field(default=(), repr=False, compare=False)
    #: True when the variant holds HTTP or connection directives: replay it through a client
    wire: bool = False


@dataclass(frozen=True, slots=True)
class Variant:
    """A broken stream derived from a good one, and the outcome it must replay to."""

    fault: Fault
    expected_code: str
    events: Events

    @property
    def responses(self) -> list[Events]:
        """Every response of the variant, in the order a client is answered: one, or a session."""
        return [*self.fault.before, self.events]


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


def _without(events: Events, positions: set[int]) -> Events:
    """A deep copy of `events` without the events at `positions`."""
    return [
        copy.deepcopy(event) for position, event in enumerate(events) if position not in positions
    ]


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
    broken = _without(events, set(tool.deltas))
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
    return _without(events, positions) if positions else None


def drop_message_stop(events: Events) -> Events | None:
    positions = set(_positions(events, "message_stop"))
    return _without(events, positions) if positions else None


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
            return _without(broken, dropped)
    return None


def tool_input_null(events: Events) -> Events | None:
    return _with_tool_json(events, "null")


def tool_input_nan(events: Events) -> Events | None:
    return _with_tool_json(events, '{"path": NaN}')


def tool_input_list(events: Events) -> Events | None:
    return _with_tool_json(events, "[1]")


def drop_tool_stop(events: Events) -> Events | None:
    stops = [tool.stop for tool in _tools(events) if tool.stop is not None]
    return _without(events, {stops[0]}) if stops else None


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
    return _with_stop_reason(_without(events, removed), "tool_use")


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
    return {
        "harness": HTTP_ERROR,
        "status": status,
        "headers": {"request-id": "req_01HarnessFaultCatalogue", **headers},
        "body": {"type": "error", "error": {"type": error_type, "message": message}},
    }


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


def http_529(events: Events) -> Events | None:
    return [copy.deepcopy(HTTP_529)]


def http_429_then_ok(events: Events) -> Events | None:
    return copy.deepcopy(events)


def _middle(events: Events) -> int | None:
    """The position of the middle-most event strictly between message_start and message_stop."""
    starts, stops = _positions(events, "message_start"), _positions(events, "message_stop")
    if not starts or not stops or stops[0] - starts[0] < 2:
        return None
    return (starts[0] + 1 + stops[0]) // 2


def cut_mid_event(events: Events) -> Events | None:
    """The connection drops half-way through the middle event's bytes; nothing follows."""
    at = _middle(events)
    if at is None:
        return None
    from harness._cassette.sse import encode_event

    half = len(encode_event(events[at])) // 2
    kept = copy.deepcopy(events[: at + 1])
    return [*kept[:at], {"harness": CUT, "after_bytes": half}, kept[at]]


def stall(events: Events) -> Events | None:
    at = _middle(events)
    if at is None:
        return None
    broken = copy.deepcopy(events)
    broken.insert(at, {"harness": STALL, "ms": STALL_MS})
    return broken


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
    Fault(
        "http_529",
        "api_error:overloaded_error",
        "an HTTP 529 overloaded answer instead of a stream (x-should-retry: false)",
        http_529,
        wire=True,
    ),
    Fault(
        "http_429_then_ok",
        DONE,
        "a session: an HTTP 429 with retry-after-ms 1, then the good stream; "
        "the SDK's own retry must recover",
        http_429_then_ok,
        before=([HTTP_429],),
        wire=True,
    ),
    Fault(
        "cut_mid_event",
        "connection_error:RemoteProtocolError",
        "the connection drops half-way through the middle event's bytes",
        cut_mid_event,
        wire=True,
    ),
    Fault(
        "stall",
        "connection_error:ReadTimeout",
        f"no byte for {STALL_MS} ms before the middle event, longer than the client's timeout",
        stall,
        wire=True,
    ),
)


def fault_named(name: str) -> Fault:
    """The catalogue entry called `name`; `KeyError` if there is none."""
    for fault in CATALOGUE:
        if fault.name == name:
            return fault
    raise KeyError(name)


def derive_variants(events: Events) -> list[Variant]:
    """Every applicable fault's variant of a good stream, in catalogue order.

    The input is not modified. The expectations hold for a stream that replays to `done`.
    """
    variants = []
    for fault in CATALOGUE:
        broken = fault.derive(events)
        if broken is not None:
            variants.append(Variant(fault, fault.expect, broken))
    return variants
