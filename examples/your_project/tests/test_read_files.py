"""A project's own test of its agent's stream, replayed from cassettes by stream-harness."""

import pytest

from harness import Outcome, ToolCallEvent


def read_paths(outcome: Outcome) -> list[str]:
    return [e.call.input["path"] for e in outcome.events if isinstance(e, ToolCallEvent)]


@pytest.mark.cassette("interleaved")
def test_both_files_are_read(harness_replay: Outcome) -> None:
    assert harness_replay.error is None
    assert read_paths(harness_replay) == ["notes/a.md", "notes/b.md"]


@pytest.mark.cassette("broken/interleaved.truncate_tool_json")
def test_both_files_are_read_from_a_stream_with_cut_tool_json(harness_replay: Outcome) -> None:
    assert harness_replay.error is None
    assert read_paths(harness_replay) == ["notes/a.md", "notes/b.md"]
