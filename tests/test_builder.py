"""The stream builder writes streams the way the API sends them, and interleaves blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import (
    Cassette,
    DoneEvent,
    InputError,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    replay_events,
)
from harness.builder import StreamBuilder, split_json


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (1, ['{"a": 1}']),
        (3, ['{"a', '": ', "1}"]),
        ([2, 5], ['{"', 'a":', " 1}"]),
        (100, list('{"a": 1}')),
    ],
    ids=["whole", "three-near-equal", "at-offsets", "more-pieces-than-characters"],
)
def test_split_json_cuts_without_losing_a_character(
    pieces: int | list[int], expected: list[str]
) -> None:
    assert split_json('{"a": 1}', pieces) == expected


def test_a_tool_block_opens_with_the_apis_empty_delta_then_its_pieces() -> None:
    events = StreamBuilder(start=False).tool(2, "read", {"path": "a"}, pieces=2, id="t").events()
    assert [event["type"] for event in events] == [
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
    ]
    parts = [event["delta"]["partial_json"] for event in events[1:4]]
    assert parts[0] == ""
    assert json.loads("".join(parts)) == {"path": "a"}
    assert {event["index"] for event in events} == {2}


def test_interleave_follows_the_order_and_keeps_each_blocks_own_order() -> None:
    a = StreamBuilder(start=False).text(0, "x")
    b = StreamBuilder(start=False).text(1, "y")
    merged = StreamBuilder(start=False).interleave([a, b], order=[1, 0, 1, 0, 0, 1]).events()
    assert merged[:3] == [b.events()[0], a.events()[0], b.events()[1]]
    assert [e for e in merged if e["index"] == 0] == a.events()
    assert [e for e in merged if e["index"] == 1] == b.events()


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (
            [1, 0, 1],
            "interleave: order (3 positions for 6 events) must name each block once for each "
            "of its events: block 0 has 3 and is named 1, block 1 has 3 and is named 2",
        ),
        (
            [0, 0, 0, 0, 1, 1, 1],
            "interleave: order (7 positions for 6 events) must name each block once for each "
            "of its events: block 0 has 3 and is named 4",
        ),
        (
            [0, 0, 0, 1, 1, 1, 2],
            "interleave: order names block 2, not a position of the 2 blocks",
        ),
        (
            [0, 0, 0, 1, 1, -1],
            "interleave: order names block -1, not a position of the 2 blocks",
        ),
    ],
    ids=["shorter", "longer", "past-the-last-block", "negative"],
)
def test_interleave_refuses_an_order_that_does_not_name_every_event_once(
    order: list[int], message: str
) -> None:
    a = StreamBuilder(start=False).text(0, "x")
    b = StreamBuilder(start=False).text(1, "y")
    builder = StreamBuilder(start=False)
    with pytest.raises(InputError) as raised:
        builder.interleave([a, b], order=order)
    assert str(raised.value) == message
    assert builder.events() == []  # nothing added before the order was checked


def test_an_interleaved_stream_written_as_a_cassette_replays_in_stop_order(
    tmp_path: Path,
) -> None:
    a = StreamBuilder(start=False).tool(1, "read", {"path": "a.md"}, id="toolu_a")
    b = StreamBuilder(start=False).tool(2, "read", {"path": "b.md"}, id="toolu_b")
    path = tmp_path / "two.jsonl"
    (
        StreamBuilder()
        .text(0, "Reading.")
        .interleave([a, b], order=[0, 1, 1, 1, 1, 0, 0, 0])
        .stop("tool_use")
        .write(path, "two reads")
    )
    assert Cassette(path).header == {
        "cassette": 1,
        "description": "two reads",
        "source": "synthetic",
        "model": StreamBuilder().model,
    }
    assert list(replay_events(path)) == [
        TextEvent("Reading."),
        ToolCallEvent(ToolCall("toolu_b", "read", {"path": "b.md"})),
        ToolCallEvent(ToolCall("toolu_a", "read", {"path": "a.md"})),
        DoneEvent(),
    ]
