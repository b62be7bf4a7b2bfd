"""The demo cassette replays to two calls in stop order, then done."""

from __future__ import annotations

from conftest import LIBRARY

from harness import DoneEvent, TextEvent, ToolCall, ToolCallEvent, replay_events


def test_interleaved_demo_cassette_yields_calls_in_stop_order() -> None:
    events = list(replay_events(LIBRARY / "interleaved.jsonl"))
    assert events == [
        TextEvent("I'll read both files"),
        TextEvent(" at once."),
        ToolCallEvent(ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read", {"path": "notes/a.md"})),
        ToolCallEvent(ToolCall("toolu_01GcQvRvBoCBcPoAW6VyJCrk", "read", {"path": "notes/b.md"})),
        DoneEvent(),
    ]
