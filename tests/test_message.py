"""One cassette, two shapes: the `Message` of a stream and the stream of a `Message` agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, sdk_message

from harness import read_cassette, replay_outcome
from harness._providers.anthropic.message import (
    StreamErrorEvent,
    events_from_message,
    message_from_events,
)
from harness.builder import StreamBuilder

GOOD = sorted(path for path in LIBRARY.glob("*.jsonl"))


def _events(path: Path) -> list[dict[str, Any]]:
    return list(read_cassette(path).events())


def _contiguous(events: list[dict[str, Any]]) -> bool:
    indexes = {e["index"] for e in events if e["type"] == "content_block_start"}
    return indexes == set(range(len(indexes)))


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_the_message_of_a_library_stream_is_what_the_sdk_accumulates(path: Path) -> None:
    events = _events(path)
    if not _contiguous(events):
        pytest.skip("block indexes with a gap: the SDK's accumulator cannot fold them")
    ours = message_from_events(events)
    sdk = sdk_message(events)
    assert [b["type"] for b in ours["content"]] == [b["type"] for b in sdk["content"]]
    for mine, theirs in zip(ours["content"], sdk["content"], strict=True):
        for field in ("text", "input", "name", "id", "thinking", "signature"):
            assert mine.get(field) == theirs.get(field), field
    assert ours["stop_reason"] == sdk["stop_reason"]
    assert ours["usage"]["output_tokens"] == sdk["usage"]["output_tokens"]


def test_blocks_come_in_index_order_and_tool_inputs_are_parsed_at_any_index() -> None:
    message = message_from_events(_events(LIBRARY / "interleaved.jsonl"))
    assert [block["type"] for block in message["content"]] == ["text", "tool_use", "tool_use"]
    assert [block["input"] for block in message["content"][1:]] == [
        {"path": "notes/a.md"},
        {"path": "notes/b.md"},
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["content"][0]["text"] == "I'll read both files at once."


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_a_message_streamed_again_replays_to_the_same_outcome(path: Path, tmp_path: Path) -> None:
    from harness import write_cassette

    message = message_from_events(_events(path))
    again = tmp_path / "again.jsonl"
    write_cassette(again, events_from_message(message))
    assert message_from_events(_events(again)) == message
    original, replayed = replay_outcome(path), replay_outcome(again)
    assert replayed.error is None and original.error is None
    joined = "".join(e.text for e in original.events if e.type == "text")
    assert "".join(e.text for e in replayed.events if e.type == "text") == joined
    assert [e for e in replayed.events if e.type == "tool_call"] == [
        e for e in original.events if e.type == "tool_call"
    ]


def test_an_error_event_becomes_the_http_status_the_api_would_answer() -> None:
    with pytest.raises(StreamErrorEvent) as raised:
        message_from_events(_events(LIBRARY / "errors" / "overloaded_error.jsonl"))
    assert raised.value.status == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize(
    ("builder", "reason"),
    [
        (StreamBuilder(start=False).text(0, "Hi").stop(), "not message_start"),
        (StreamBuilder().json_delta(2, "{}").stop(), "never started"),
        (
            StreamBuilder().tool_start(1, "read").json_delta(1, "{not json").block_stop(1).stop(),
            "not JSON",
        ),
    ],
    ids=["no-start", "delta-at-no-block", "broken-tool-json"],
)
def test_what_the_api_could_not_have_sent_cannot_be_folded(
    builder: StreamBuilder, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        message_from_events(builder.events())
