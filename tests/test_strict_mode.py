"""Strict mode for users' own streams: `to_model_events` over what `messages.stream()` yields.

The SDK's `MessageStream` yields the raw events plus its own derived ones (`text`,
`input_json`, `citation`, `thinking`, `signature`), and replaces `content_block_stop`
and `message_stop` by parsed events of the same `type`. The adapter dispatches on
`type`, so the derived events pass over and nothing is counted twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY

from harness import (
    Cassette,
    DoneEvent,
    StreamProtocolError,
    ToolCallEvent,
    cassette_client,
    replay_outcome,
    to_model_events,
    write_cassette,
)
from harness.builder import StreamBuilder
from harness.faults import fault_named

ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}


def strict(path: Path) -> tuple[list[Any], list[str]]:
    """The adapter's events over `messages.stream()`, and the types the stream yielded."""
    seen: list[str] = []

    def watched(stream: Any) -> Any:
        for event in stream:
            seen.append(event.type)
            yield event

    with cassette_client(path).messages.stream(**ASK) as stream:
        return list(to_model_events(watched(stream))), seen


@pytest.mark.parametrize(
    "name", ["two_tools.jsonl", "text_only.jsonl", "thinking.jsonl", "parallel_tools.jsonl"]
)
def test_the_helper_stream_gives_the_same_events_as_replay(name: str) -> None:
    events, _ = strict(LIBRARY / name)
    assert events == replay_outcome(LIBRARY / name).events


def test_derived_text_and_input_json_events_pass_over() -> None:
    events, seen = strict(LIBRARY / "two_tools.jsonl")
    assert {"text", "input_json"} <= set(seen)
    assert sum(isinstance(event, ToolCallEvent) for event in events) == 2
    assert events.count(DoneEvent()) == 1
    assert seen.count("content_block_stop") == 3 and seen.count("message_stop") == 1


def test_derived_thinking_and_signature_events_pass_over() -> None:
    events, seen = strict(LIBRARY / "thinking.jsonl")
    assert {"thinking", "signature"} <= set(seen)
    assert events == replay_outcome(LIBRARY / "thinking.jsonl").events


def test_derived_citation_events_pass_over(tmp_path: Path) -> None:
    citation = {
        "type": "char_location",
        "cited_text": "three sections",
        "document_index": 0,
        "document_title": "notes",
        "start_char_index": 9,
        "end_char_index": 23,
    }
    path = tmp_path / "cited.jsonl"
    (
        StreamBuilder()
        .block_start(0, {"type": "text", "text": "", "citations": []})
        .text_delta(0, "It has three sections.")
        .delta(0, {"type": "citations_delta", "citation": citation})
        .block_stop(0)
        .stop()
        .write(path, "a cited answer")
    )
    events, seen = strict(path)
    assert "citation" in seen
    assert events == replay_outcome(path).events


def test_strict_mode_fails_loudly_where_the_helper_accepts_a_broken_stream(tmp_path: Path) -> None:
    broken = fault_named("drop_message_stop").derive(
        list(Cassette(LIBRARY / "two_tools.jsonl").events())
    )
    path = tmp_path / "no_stop.jsonl"
    write_cassette(path, broken or [])
    with cassette_client(path).messages.stream(**ASK) as stream:
        assert stream.get_final_text()  # the SDK's helper: no complaint
    with pytest.raises(StreamProtocolError, match="stream ended before message_stop"):
        strict(path)


def test_the_sdks_accumulator_fails_on_a_block_index_gap_before_any_user_code() -> None:
    with pytest.raises(IndexError):
        strict(LIBRARY / "interleaved.jsonl")
