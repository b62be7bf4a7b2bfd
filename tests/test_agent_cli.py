"""`harness agent`: a session replayed end to end, its transcript, and its exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import SESSIONS

from harness.agent.session import write_session
from harness.builder import StreamBuilder
from harness_cli.main import cli


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["agent", *map(str, args)], catch_exceptions=False)


def example(name: str, *options: str) -> Result:
    return run(SESSIONS / name, "--root", SESSIONS / name / "files", *options)


def report(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_an_example_session_prints_the_whole_conversation() -> None:
    result = example("read-notes")
    assert result.exit_code == 0, result.output
    notes = (SESSIONS / "read-notes" / "files" / "notes.md").read_text().splitlines()
    lines = result.stdout.splitlines()
    assert lines[0] == "user        What changed in release 0.2? See notes.md."
    assert lines[1] == "assistant   I'll read the release notes."
    assert lines[2] == 'tool_use    read {"path": "notes.md"} (toolu_01ReadNotesMd)'
    assert lines[3] == "tool_result ok (toolu_01ReadNotesMd)"
    assert [line.strip() for line in lines[4 : 4 + len(notes)]] == notes
    assert lines[-1] == "stop_reason complete (turn 2)"


def test_json_output_is_the_messages_api_shape_with_every_call_answered() -> None:
    result = example("compare-configs", "--format", "json")
    assert result.exit_code == 0, result.output
    data = report(result)
    assert data["stop_reason"] == "complete"
    messages = data["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant"] * 3
    for asked, answered in zip(messages[1::2], messages[2::2], strict=False):
        uses = [block["id"] for block in asked["content"] if block["type"] == "tool_use"]
        results = [block["tool_use_id"] for block in answered["content"]]
        assert results == uses
    staging = messages[4]["content"][0]
    assert staging == {
        "type": "tool_result",
        "tool_use_id": "toolu_01CompareStaging",
        "content": "config/staging.toml: no such file",
        "is_error": True,
    }


def test_an_aborted_session_exits_1_and_names_the_checkpoint() -> None:
    result = example("aborted-answer", "--format", "json")
    assert result.exit_code == 1
    data = report(result)
    assert (data["stop_reason"], data["checkpoint"]) == ("aborted", "after_event")
    assert data["messages"][-1]["role"] == "user"  # the partial answer was not committed


def test_a_protocol_error_exits_1_with_the_transcript_so_far(tmp_path: Path) -> None:
    broken = StreamBuilder().text(0, "Half").stop("max_tokens")
    folder = write_session(tmp_path / "s", [("truncated answer", broken)], prompt="p")
    text = run(folder, "--root", tmp_path)
    assert text.exit_code == 1
    assert text.stdout.splitlines() == [
        "user        p",
        "error       turn 1: Anthropic stream protocol error: "
        "stop_reason max_tokens is not supported",
    ]
    data = report(run(folder, "--root", tmp_path, "--format", "json"))
    assert data["stop_reason"] == "error"
    assert data["error"]["code"] == "unsupported_stop_reason"
    assert data["messages"] == [{"role": "user", "content": [{"type": "text", "text": "p"}]}]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "session.json: cannot read"),
        ("unknown-tool", "unknown tool 'shell'"),
        ("bad-cassette", "turn-01.jsonl:2: not valid JSON"),
        ("unplayed", "1 recorded turn(s) left unplayed: turn-02.jsonl"),
        ("too-few", "the loop asked for turn 2, but the session has 1 recorded turn(s)"),
    ],
)
def test_an_unusable_session_exits_2_with_one_clear_line(
    tmp_path: Path, setup: str, message: str
) -> None:
    folder = tmp_path / "s"
    answer = StreamBuilder().text(0, "ok").stop("end_turn")
    call = StreamBuilder().tool(0, "read", {"path": "x"}).stop("tool_use")
    if setup == "missing":
        folder.mkdir()
    elif setup == "unknown-tool":
        write_session(folder, [("answer", answer)], prompt="p", tools=["shell"])
    elif setup == "bad-cassette":
        write_session(folder, [("answer", answer)], prompt="p")
        lines = (folder / "turn-01.jsonl").read_text().splitlines()
        (folder / "turn-01.jsonl").write_text("\n".join([lines[0], "{nope", *lines[1:]]))
    elif setup == "unplayed":
        write_session(folder, [("answer", answer), ("extra", answer)], prompt="p")
    else:
        write_session(folder, [("one call", call)], prompt="p", max_turns=3)
    result = run(folder, "--root", tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_help_shows_an_example() -> None:
    result = CliRunner().invoke(cli, ["agent", "--help"])
    assert result.exit_code == 0
    assert "harness agent cassettes/sessions/read-notes --root" in result.stdout


def test_agent_is_listed_in_the_command_group() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert any(line.split()[:2] == ["agent", "Replay"] for line in result.stdout.splitlines())
