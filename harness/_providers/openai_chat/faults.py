"""Chat Completions' fault rows: a good chunk stream broken the ways `ChatAdapter` must catch.

A stream here is a cassette's lines: `chat.completion.chunk` dicts, an `{"error": ...}`
line, and the `{"harness": "done"}` line that is `data: [DONE]`, which the rows drop or
move like any chunk. Chat has no start event (the first chunk's `role` piece is passed
over), so no row drops one. A call is opened by a piece with its `index`, `id` and
`function.name`; later pieces of that index add `arguments`. Every row's expected
outcome is a code of the Chat table (`errors`), `api_error:<type>`, or `done` for the
one tolerated deviation (the same id and name repeated on every piece of a call).

A cut is the stream ending after some line before `[DONE]`: with no call open (none
opened, or the finish seen) it gives `missing_done`; with a call open and no finish,
`unfinished_tool_calls`. The wire rows are `fault_rows.wire_rows`, given a 500 and a
429 in OpenAI's error shape.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness._directives import DONE as DONE_LINE
from harness._events import block_key
from harness._json import dump_line
from harness._providers.fault_rows import DONE, Events, Fault, wire_rows, without
from harness._providers.openai_chat.errors import PROVIDER
from harness._providers.openai_shared import HTTP_429, HTTP_500, error_body

__all__ = ["CATALOGUE", "PROVIDER"]

# -- reading a stream -----------------------------------------------------------------------


def _is_done(line: dict[str, Any]) -> bool:
    return line.get("harness") == DONE_LINE


def _choice(line: dict[str, Any]) -> dict[str, Any] | None:
    """Choice 0 of an answer chunk (not the usage chunk, a filter chunk or another line)."""
    choices = line.get("choices")
    if "harness" in line or line.get("object") == "" or not isinstance(choices, list):
        return None
    first = choices[0] if choices else None
    return first if isinstance(first, dict) and first.get("index") == 0 else None


def _choices(events: Events) -> list[tuple[int, dict[str, Any]]]:
    """Choice 0 of each answer chunk, with the chunk's position."""
    found = ((position, _choice(line)) for position, line in enumerate(events))
    return [(position, choice) for position, choice in found if choice is not None]


def _answer(events: Events) -> list[int]:
    """The positions of choice 0's chunks."""
    return [position for position, _ in _choices(events)]


def _delta(line: dict[str, Any]) -> dict[str, Any]:
    """Choice 0's delta (empty where there is none, or it is no object, as the adapter
    reads it)."""
    delta = (_choice(line) or {}).get("delta")
    return delta if isinstance(delta, dict) else {}


def _pieces(line: dict[str, Any]) -> list[dict[str, Any]]:
    pieces = _delta(line).get("tool_calls")
    return (
        [piece for piece in pieces if isinstance(piece, dict)] if isinstance(pieces, list) else []
    )


def _function(piece: dict[str, Any], *, made: bool = False) -> dict[str, Any]:
    """A piece's `function` (empty where there is none, or it is no object; with `made`,
    an empty one put in its place)."""
    function = piece.get("function")
    if not isinstance(function, dict):
        function = {}
        if made:
            piece["function"] = function
    return function


def _finish(events: Events) -> int | None:
    """The position of the chunk giving choice 0's finish_reason."""
    given = (p for p, choice in _choices(events) if choice.get("finish_reason") is not None)
    return next(given, None)


def _done(events: Events) -> int | None:
    return next((position for position, line in enumerate(events) if _is_done(line)), None)


@dataclass(slots=True)
class _Call:
    """Where one call's pieces sit: the opening chunk, then the later ones."""

    index: int
    id: str
    name: str
    start: int
    later: list[int] = field(default_factory=list)


def _calls(events: Events) -> list[_Call]:
    """The tool calls in opening order."""
    calls: dict[int, _Call] = {}
    for position, line in enumerate(events):
        for piece in _pieces(line):
            index = piece.get("index")
            if not isinstance(index, int):
                continue
            if index in calls:
                calls[index].later.append(position)
            else:
                name = _function(piece).get("name")
                calls[index] = _Call(index, str(piece.get("id")), str(name), position)
    return list(calls.values())


def _made_calls(events: Events) -> bool:
    """Whether the answer made calls: any `tool_calls` piece, with an `index` or without
    (a server whose profile reads unindexed pieces, docs/profiles.md)."""
    return any(_pieces(line) for line in events)


def _open_call_counts(events: Events) -> Iterator[int]:
    """After each line, how many calls are open (opened, and no finish_reason yet); a
    piece without `index` counts by its `id` (one without either: the call it continues)."""
    opened: set[object] = set()
    finished = False
    for line in events:
        opened.update(block_key(piece.get("index", piece.get("id"))) for piece in _pieces(line))
        choice = _choice(line)
        finished = finished or (choice is not None and choice.get("finish_reason") is not None)
        yield 0 if finished else len(opened)


def _chunk(events: Events, delta: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """A chunk of the stream's completion carrying `delta` for choice `index`."""
    first = events[_answer(events)[0]]
    return {
        **{key: copy.deepcopy(value) for key, value in first.items() if key != "choices"},
        "choices": [{"index": index, "delta": delta, "finish_reason": None}],
    }


def _inserted(events: Events, at: int, *lines: dict[str, Any]) -> Events:
    broken = copy.deepcopy(events)
    broken[at:at] = list(lines)
    return broken


def _with_finish(events: Events, reason: str | None) -> Events | None:
    if _finish(events) is None:
        return None
    broken = copy.deepcopy(events)
    for _, choice in _choices(broken):
        if choice.get("finish_reason") is not None:
            choice["finish_reason"] = reason
    return broken


def _drop_pieces(line: dict[str, Any], index: int | None) -> None:
    """Remove `line`'s pieces of call `index` (None: every call's) in place."""
    delta = _delta(line)
    pieces = delta.get("tool_calls")
    kept = [
        piece
        for piece in (pieces if isinstance(pieces, list) else [])
        if index is not None and not (isinstance(piece, dict) and piece.get("index") == index)
    ]
    if kept:
        delta["tool_calls"] = kept
    else:
        delta.pop("tool_calls", None)


def _with_arguments(events: Events, text: str, call: _Call | None = None) -> Events | None:
    """A call's arguments (by default the first call's) replaced by `text`, sent in its
    opening piece; its later pieces removed."""
    if call is None:
        calls = _calls(events)
        if not calls:
            return None
        call = calls[0]
    broken = copy.deepcopy(events)
    for position in call.later:
        _drop_pieces(broken[position], call.index)
    for piece in _pieces(broken[call.start]):
        if piece.get("index") == call.index:
            _function(piece, made=True)["arguments"] = text
    return broken


def _arguments(events: Events, call: _Call) -> str:
    return "".join(
        str(_function(piece).get("arguments") or "")
        for position in [call.start, *call.later]
        for piece in _pieces(events[position])
        if piece.get("index") == call.index
    )


# -- the faults -------------------------------------------------------------------------------


def drop_done(events: Events) -> Events | None:
    positions = {position for position, line in enumerate(events) if _is_done(line)}
    return without(events, positions) if positions else None


def chunk_after_done(events: Events) -> Events | None:
    at = _done(events)
    if at is None or not _answer(events):
        return None
    return _inserted(events, at + 1, _chunk(events, {"content": "late"}))


def repeat_tool_start(events: Events) -> Events | None:
    calls = _calls(events)
    if not calls:
        return None
    call = calls[0]
    again = {
        "index": call.index,
        "id": f"{call.id}Again",
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    return _inserted(events, call.start + 1, _chunk(events, {"tool_calls": [again]}))


def orphan_arguments_delta(events: Events) -> Events | None:
    answer = _answer(events)
    if not answer:
        return None
    fresh = max((call.index for call in _calls(events)), default=-1) + 1
    orphan = {"index": fresh, "function": {"arguments": '{"path": '}}
    return _inserted(events, answer[0] + 1, _chunk(events, {"tool_calls": [orphan]}))


def tool_start_without_name(events: Events) -> Events | None:
    calls = _calls(events)
    if not calls:
        return None
    broken = copy.deepcopy(events)
    for piece in _pieces(broken[calls[0].start]):
        if piece.get("index") == calls[0].index:
            _function(piece).pop("name", None)
    return broken


def truncate_tool_json(events: Events) -> Events | None:
    """Cut the first call's arguments (that has any) in half, in its opening piece."""
    for call in _calls(events):
        text = _arguments(events, call).rstrip()
        if not text:
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


def drop_tool_finish(events: Events) -> Events | None:
    return _with_finish(events, None) if _made_calls(events) else None


def drop_finish_reason(events: Events) -> Events | None:
    return None if _made_calls(events) else _with_finish(events, None)


def finish_length(events: Events) -> Events | None:
    return _with_finish(events, "length")


def stop_despite_tool_calls(events: Events) -> Events | None:
    return _with_finish(events, "stop") if _made_calls(events) else None


def tool_calls_without_tool_calls(events: Events) -> Events | None:
    """Claim `tool_calls` with no call: every piece removed."""
    broken = _with_finish(events, "tool_calls")
    if broken is None:
        return None
    for position in _answer(broken):
        if _pieces(broken[position]):
            _drop_pieces(broken[position], None)
    return broken


def server_error_mid_stream(events: Events) -> Events | None:
    answer, done = _answer(events), _done(events)
    if not answer:
        return None
    at = max(answer[0] + 1, len(events) // 2)
    error = error_body("server_error", "The server had an error while processing your request.")
    return _inserted(events, at if done is None else min(at, done), error)


def _cut_where(events: Events, inside_call: bool) -> Events | None:
    """End the stream after the middle-most line with (or without) a call open."""
    answer, done = _answer(events), _done(events)
    if not answer or done is None:
        return None
    ends = [
        position + 1
        for position, open_count in enumerate(_open_call_counts(events))
        if answer[0] <= position < done and (open_count > 0) == inside_call
    ]
    if not ends:
        return None
    end = min(ends, key=lambda candidate: (abs(candidate - len(events) / 2), candidate))
    return copy.deepcopy(events[:end])


def cut_connection(events: Events) -> Events | None:
    return _cut_where(events, inside_call=False)


def cut_connection_in_tool(events: Events) -> Events | None:
    return _cut_where(events, inside_call=True)


def chunk_after_finish(events: Events) -> Events | None:
    at = _finish(events)
    if at is None:
        return None
    return _inserted(events, at + 1, _chunk(events, {"content": "late"}))


def second_choice(events: Events) -> Events | None:
    answer = _answer(events)
    if not answer:
        return None
    other = _chunk(events, {"role": "assistant", "content": "Another answer"}, index=1)
    return _inserted(events, answer[0] + 1, other)


def changed_completion_id(events: Events) -> Events | None:
    answer = _answer(events)
    if len(answer) < 2:
        return None
    broken = copy.deepcopy(events)
    broken[answer[1]]["id"] = f"{broken[answer[1]].get('id')}Other"
    return broken


def refusal(events: Events) -> Events | None:
    answer = _answer(events)
    if not answer:
        return None
    return _inserted(events, answer[0] + 1, _chunk(events, {"refusal": "I can't help with that."}))


def content_parts(events: Events) -> Events | None:
    """A content chunk whose text is a list of parts, as Mistral's reasoning models send it."""
    answer = _answer(events)
    if not answer:
        return None
    parts = [{"type": "text", "text": "Paris."}]
    return _inserted(events, answer[0] + 1, _chunk(events, {"content": parts}))


def repeat_call_identity(events: Events) -> Events | None:
    """Every later piece of each call repeats its id, type and name (tolerated)."""
    calls = [call for call in _calls(events) if call.later]
    if not calls:
        return None
    broken = copy.deepcopy(events)
    for call in calls:
        for position in call.later:
            for piece in _pieces(broken[position]):
                if piece.get("index") == call.index:
                    piece.update(id=call.id, type="function")
                    _function(piece, made=True)["name"] = call.name
    return broken


def _span(events: Events) -> tuple[int, int] | None:
    """Where the answer begins and ends: its first chunk and `[DONE]`."""
    answer, done = _answer(events), _done(events)
    return (answer[0], done) if answer and done is not None else None


def _wire_size(line: dict[str, Any]) -> int:
    """A chunk's bytes on the wire: `data: <json>`, then the blank line (no `event:` line)."""
    return len(b"data: " + dump_line(line) + b"\n\n")


CATALOGUE: tuple[Fault, ...] = (
    Fault("drop_done", "missing_done", "the data: [DONE] line removed", drop_done),
    Fault(
        "chunk_after_done",
        "chunk_after_done",
        "a content chunk appended after data: [DONE]",
        chunk_after_done,
    ),
    Fault(
        "repeat_tool_start",
        "duplicate_tool_call",
        "a piece re-opens the first call's index with another id",
        repeat_tool_start,
    ),
    Fault(
        "orphan_arguments_delta",
        "orphan_arguments_delta",
        "an arguments piece at an index no piece opened, right after the first chunk",
        orphan_arguments_delta,
    ),
    Fault(
        "tool_start_without_name",
        "incomplete_tool_call_start",
        "the first call's opening piece without its function name",
        tool_start_without_name,
    ),
    Fault(
        "truncate_tool_json",
        "invalid_tool_json",
        "the arguments of the first call that has any cut in half",
        truncate_tool_json,
    ),
    Fault(
        "tool_input_nan",
        "invalid_tool_json",
        'the first call\'s arguments replaced by `{"path": NaN}`: JSON has no NaN (RFC 8259)',
        tool_input_nan,
    ),
    Fault(
        "tool_input_null",
        "non_object_tool_input",
        "the first call's arguments replaced by `null`",
        tool_input_null,
    ),
    Fault(
        "tool_input_list",
        "non_object_tool_input",
        "the first call's arguments replaced by `[1]`",
        tool_input_list,
    ),
    Fault(
        "drop_tool_finish",
        "unfinished_tool_calls",
        "finish_reason set to null in a stream with tool calls: [DONE] finds them open",
        drop_tool_finish,
    ),
    Fault(
        "drop_finish_reason",
        "missing_finish_reason",
        "finish_reason set to null in a stream without tool calls",
        drop_finish_reason,
    ),
    Fault(
        "finish_length",
        "unsupported_finish_reason",
        "finish_reason set to length (max_tokens reached)",
        finish_length,
    ),
    Fault(
        "stop_despite_tool_calls",
        "stop_with_tool_calls",
        "finish_reason set to stop in a stream with tool calls",
        stop_despite_tool_calls,
    ),
    Fault(
        "tool_calls_without_tool_calls",
        "tool_calls_without_tool_calls",
        "finish_reason set to tool_calls and every tool call piece removed",
        tool_calls_without_tool_calls,
    ),
    Fault(
        "server_error_mid_stream",
        "api_error:server_error",
        'an {"error": ...} line (server_error) in the middle of the stream',
        server_error_mid_stream,
    ),
    Fault(
        "cut_connection",
        "missing_done",
        "the stream ends mid-way, after a line with no call open",
        cut_connection,
    ),
    Fault(
        "cut_connection_in_tool",
        "unfinished_tool_calls",
        "the stream ends mid-way, with a call open and no finish_reason",
        cut_connection_in_tool,
    ),
    Fault(
        "chunk_after_finish",
        "chunk_after_finish",
        "a content chunk for choice 0 after its finish_reason",
        chunk_after_finish,
    ),
    Fault(
        "second_choice",
        "multiple_choices",
        "a chunk of choice 1 (as n=2 sends) after the first chunk",
        second_choice,
    ),
    Fault(
        "changed_completion_id",
        "inconsistent_chunk",
        "the second chunk of choice 0 carries another completion id",
        changed_completion_id,
    ),
    Fault(
        "refusal",
        "refusal",
        "a delta.refusal piece after the first chunk",
        refusal,
    ),
    Fault(
        "content_parts",
        "non_string_content",
        'a content chunk whose delta.content is a list of parts ([{"type": "text", ...}]) '
        "after the first chunk",
        content_parts,
    ),
    Fault(
        "repeat_call_identity",
        DONE,
        "every later piece of a call repeats its id and name (tolerated: still done)",
        repeat_call_identity,
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
