"""The Anthropic adapter's fast path (a line's dict: a text delta, a piece of an open tool
block's JSON, read in `feed` itself) gives what the rules give, event for event and
error for error.

The oracle is the same lines fed as light views (`EventView`), which `feed` reads through
the rules alone, as it reads the SDK's objects. Each case changes one line in a way that
one of the fast path's checks must see (a key missing, a `delta` that is not a dict, a
bool or a float where an int belongs, a piece that is not a string, a block not open),
or feeds it where the machine is not reading (before the start, after the stop, after
an error, after the finish).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from conftest import library_streams
from hypothesis import given, settings, strategies as st

from harness._events import ModelEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import StreamProtocolError
from harness._providers.anthropic.adapter import StreamAdapter
from harness._providers.anthropic.guard import TEXT_DELTA
from harness._views import EventView
from harness.builder import StreamBuilder

Change = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class SubDict(dict[str, Any]):
    """A dict of a class of its own: a view reads it, as a part, as an empty object."""


def outcome(adapter: StreamAdapter, items: Iterable[Any]) -> list[Any]:
    """What each `feed` and the `finish` returned or raised (an error with its cause)."""
    seen: list[Any] = []
    for step in [*(lambda item=item: adapter.feed(item) for item in items), adapter.finish]:
        try:
            events: list[ModelEvent] = step()
        except (StreamProtocolError, RuntimeError) as error:
            cause = error.__cause__
            seen.append((type(error).__name__, str(error), None if cause is None else str(cause)))
        else:
            seen.append(events)
    return seen


def agree(lines: list[dict[str, Any]], **options: Any) -> list[Any]:
    """The outcome over the lines' dicts, checked against the outcome over their views."""
    ours = outcome(StreamAdapter(**options), copy.deepcopy(lines))
    theirs = outcome(StreamAdapter(**options), [EventView(line) for line in lines])
    assert ours == theirs
    return ours


@pytest.mark.parametrize("lines", library_streams())
@pytest.mark.parametrize("text", [True, False], ids=["text", "no-text"])
def test_every_library_stream_reads_alike_as_dicts_and_as_views(
    lines: list[dict[str, Any]], text: bool
) -> None:
    agree(lines, text=text)


def good() -> list[dict[str, Any]]:
    """A text block of two deltas (lines 2-3), then a tool block of three pieces (6-8)."""
    builder = StreamBuilder().text(0, "Hello", " world").tool_start(1, "read", id="t1")
    for piece in ['{"path": ', '"a', '"}']:
        builder.json_delta(1, piece)
    return builder.block_stop(1).stop("tool_use").events()


def setting(at: int, *path: str, value: Any = None, delete: bool = False) -> Change:
    """Line `at`'s value at `path` set to `value` (or deleted)."""

    def change(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        target = lines[at]
        for key in path[:-1]:
            target = target[key]
        if delete:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return lines

    return change


def moving(at: int, to: int) -> Change:
    """Line `at` moved to before line `to`."""

    def change(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        line = lines.pop(at)
        lines.insert(to, line)
        return lines

    return change


TEXT, PIECE = 3, 7
CHANGES: dict[str, Change] = {
    "as sent": lambda lines: lines,
    "text missing": setting(TEXT, "delta", "text", delete=True),
    "text null": setting(TEXT, "delta", "text", value=None),
    "text a number": setting(TEXT, "delta", "text", value=5),
    "text empty": setting(TEXT, "delta", "text", value=""),
    "delta missing": setting(TEXT, "delta", delete=True),
    "delta a list": setting(TEXT, "delta", value=[]),
    "delta null": setting(TEXT, "delta", value=None),
    "delta a string": setting(TEXT, "delta", value="text_delta"),
    "delta a dict subclass": setting(TEXT, "delta", value=SubDict(type="text_delta", text="x")),
    "delta type missing": setting(TEXT, "delta", "type", delete=True),
    "delta of another type": setting(TEXT, "delta", "type", value="thinking_delta"),
    "event type missing": setting(TEXT, "type", delete=True),
    "event of another type": setting(TEXT, "type", value="message_delta"),
    "text delta at a tool block": setting(
        PIECE, "delta", value={"type": "text_delta", "text": "x"}
    ),
    "piece at a text block": setting(TEXT, "delta", value={"type": "input_json_delta"}),
    "piece missing": setting(PIECE, "delta", "partial_json", delete=True),
    "piece null": setting(PIECE, "delta", "partial_json", value=None),
    "piece a number": setting(PIECE, "delta", "partial_json", value=7),
    "piece a list": setting(PIECE, "delta", "partial_json", value=["a"]),
    "index missing": setting(PIECE, "index", delete=True),
    "index a bool": setting(PIECE, "index", value=True),
    "index a float": setting(PIECE, "index", value=1.0),
    "index a string": setting(PIECE, "index", value="1"),
    "index null": setting(PIECE, "index", value=None),
    "index never opened": setting(PIECE, "index", value=5),
    "index negative": setting(PIECE, "index", value=-1),
    "index large": setting(PIECE, "index", value=10**30),
    "index a list": setting(PIECE, "index", value=[1]),
    "index an object": setting(PIECE, "index", value={"index": 1}),
    "piece after its block's stop": moving(PIECE, 9),
    "text before the start": moving(TEXT, 0),
    "text after the stop": moving(TEXT, 11),
    "piece after the stop": moving(PIECE, 11),
    "extra keys": setting(TEXT, "delta", "citations", value=[]),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
@pytest.mark.parametrize("text", [True, False], ids=["text", "no-text"])
def test_each_check_of_the_fast_path_leaves_the_line_to_the_rules(
    change: Change, text: bool
) -> None:
    lines = change(good())
    assert len(lines) == 12
    agree(lines, text=text)


def test_the_fast_path_yields_the_texts_and_the_call_of_a_good_stream() -> None:
    seen = agree(good())
    texts = [events for events in seen if events and isinstance(events[0], TextEvent)]
    assert texts == [[TextEvent("Hello")], [TextEvent(" world")]]
    calls = [events for events in seen if events and isinstance(events[0], ToolCallEvent)]
    assert calls == [[ToolCallEvent(ToolCall("t1", "read", {"path": "a"}))]]


def test_after_an_error_or_the_finish_a_line_reads_as_a_view_does() -> None:
    lines = good()
    broken = [*lines[:PIECE], {**lines[PIECE], "index": 5}, lines[TEXT], lines[PIECE]]
    seen = agree(broken)
    assert [step[0] for step in seen[-4:]] == ["StreamProtocolError"] * 4
    adapter = StreamAdapter()
    for line in lines:
        adapter.feed(line)
    adapter.finish()
    with pytest.raises(RuntimeError, match="already called"):
        adapter.feed(lines[TEXT])


def test_an_error_raised_early_by_check_end_stops_the_fast_path() -> None:
    lines = good()
    adapter = StreamAdapter()
    adapter.feed(lines[0])
    with pytest.raises(StreamProtocolError, match="before message_stop"):
        adapter.check_end()
    with pytest.raises(StreamProtocolError, match="before message_stop"):
        adapter.feed(lines[TEXT])


def test_the_guards_stand_in_reads_as_a_text_delta() -> None:
    lines = good()
    stand_in = [
        TEXT_DELTA if line.get("delta", {}).get("type") == "text_delta" else line for line in lines
    ]
    assert agree(stand_in, text=False) == agree(lines, text=False)


def test_a_dict_of_a_class_of_its_own_is_read_by_its_attributes_as_before() -> None:
    """Not by its keys: it has no `type` attribute, so it is an event of no type, passed
    over mid-stream (its text delta is not read)."""
    adapter = StreamAdapter()
    adapter.feed(good()[0])
    assert adapter.feed(SubDict(good()[TEXT])) == []


KINDS = st.sampled_from(
    [
        "content_block_delta",
        "content_block_start",
        "content_block_stop",
        "message_delta",
        "message_start",
        "message_stop",
        "ping",
        "other",
    ]
)
INDEXES = st.sampled_from([0, 1, 2, True, 1.0, None, "0", -1])
VALUES = st.one_of(
    st.none(), st.integers(-2, 2), st.text(max_size=3), st.sampled_from(["{", "}", '"a"'])
)
PARTS: st.SearchStrategy[Any] = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [
                    "text_delta",
                    "input_json_delta",
                    "thinking_delta",
                    "tool_use",
                    "server_tool_use",
                    "text",
                ]
            )
        },
        optional={
            "text": VALUES,
            "partial_json": VALUES,
            "stop_reason": st.sampled_from(["end_turn", "tool_use", None]),
            "id": VALUES,
            "name": VALUES,
            "input": st.sampled_from([{}, {"a": 1}, None, []]),
        },
    ),
    st.sampled_from([None, [], "text_delta", 3]),
)
LINES = st.fixed_dictionaries(
    {"type": KINDS}, optional={"index": INDEXES, "delta": PARTS, "content_block": PARTS}
)


@settings(deadline=None)
@given(
    head=st.lists(LINES, max_size=4),
    tail=st.lists(LINES, max_size=12),
    text=st.booleans(),
)
@pytest.mark.slow
def test_any_lines_read_alike_as_dicts_and_as_views(
    head: list[dict[str, Any]], tail: list[dict[str, Any]], text: bool
) -> None:
    start = {"type": "message_start", "message": {"id": "m", "content": []}}
    agree([*head, start, *tail], text=text)
