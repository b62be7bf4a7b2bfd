"""`harness replay` and `harness validate` through click's CliRunner, as docs/replay.md says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import LIBRARY

from harness.builder import StreamBuilder
from harness_cli.main import cli

ERRORS = LIBRARY / "errors"
PREFIX = "Anthropic stream protocol error: "

#: One cassette per row of the error table, and the message its row says it must end with.
ROWS = {
    "orphan_json_delta": "input_json_delta arrived without an open tool_use block at index 1",
    "duplicate_tool_start": "duplicate tool_use start for block 1",
    "invalid_tool_json": "tool_use block 0 had invalid input_json_delta JSON",
    "non_object_tool_input": "tool_use block 0 returned non-object input",
    "unclosed_tool_blocks": "stream ended with unclosed tool_use block(s): 3, 1",
    "missing_message_stop": "stream ended before message_stop",
    "missing_stop_reason": "message_delta did not provide a stop_reason",
    "unsupported_stop_reason": "stop_reason max_tokens is not supported",
    "end_turn_with_tool_calls": "stop_reason end_turn arrived with 2 tool call(s)",
    "tool_use_without_tool_calls": "stop_reason tool_use arrived without a tool call",
    "missing_message_start": "stream began with content_block_start instead of message_start",
    "event_after_message_stop": "content_block_start arrived after message_stop",
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def json_lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


# -- exit status -------------------------------------------------------------------------------


@pytest.mark.slow
def test_replay_exits_0_when_every_stream_ends_in_done() -> None:
    happy = [str(LIBRARY / name) for name in ("interleaved.jsonl", "text_only.jsonl")]
    result = run("replay", *happy)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_replay_exits_1_when_any_stream_ends_in_an_error() -> None:
    result = run(
        "replay", str(LIBRARY / "text_only.jsonl"), str(ERRORS / "missing_stop_reason.jsonl")
    )
    assert result.exit_code == 1
    assert result.stderr == ""


def test_replay_exits_2_when_any_cassette_is_unusable_even_if_others_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{\n")
    result = run("replay", str(ERRORS / "missing_stop_reason.jsonl"), str(broken))
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"{broken}:1: not valid JSON: unexpected end of data: line 2 column 1 (char 2)\n"
    )


# -- default output ----------------------------------------------------------------------------


def test_default_output_is_one_readable_line_an_event() -> None:
    result = run("replay", str(LIBRARY / "interleaved.jsonl"))
    assert result.stdout.splitlines() == [
        'text        "I\'ll read both files"',
        'text        " at once."',
        'tool_call   read toolu_01T1x1fJ34qAmk2tNTrN7Up6 {"path": "notes/a.md"}',
        'tool_call   read toolu_01GcQvRvBoCBcPoAW6VyJCrk {"path": "notes/b.md"}',
        "done",
    ]


def test_default_output_puts_the_error_last() -> None:
    result = run("replay", str(ERRORS / "orphan_json_delta.jsonl"))
    assert result.stdout.splitlines()[-1] == (
        f"error       orphan_json_delta: {PREFIX}{ROWS['orphan_json_delta']}"
    )


# -- --format json -----------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(ROWS))
def test_json_output_ends_with_the_protocol_error_of_each_row(code: str) -> None:
    result = run("replay", "--format", "json", str(ERRORS / f"{code}.jsonl"))
    assert result.exit_code == 1
    *events, last = json_lines(result)
    assert last == {"type": "protocol_error", "code": code, "message": PREFIX + ROWS[code]}
    assert all(event["type"] in ("text", "tool_call") for event in events)


def test_json_output_of_a_done_stream_follows_section_1() -> None:
    result = run("replay", "--format", "json", str(LIBRARY / "interleaved.jsonl"))
    assert json_lines(result) == [
        {"type": "text", "text": "I'll read both files"},
        {"type": "text", "text": " at once."},
        {
            "type": "tool_call",
            "call": {
                "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "name": "read",
                "input": {"path": "notes/a.md"},
            },
        },
        {
            "type": "tool_call",
            "call": {
                "id": "toolu_01GcQvRvBoCBcPoAW6VyJCrk",
                "name": "read",
                "input": {"path": "notes/b.md"},
            },
        },
        {"type": "done"},
    ]


def test_json_output_ends_an_api_error_event_with_an_api_error_line() -> None:
    result = run("replay", "--format", "json", str(ERRORS / "overloaded_error.jsonl"))
    assert result.exit_code == 1
    assert json_lines(result) == [
        {"type": "text", "text": "Let me think"},
        {"type": "api_error", "error_type": "overloaded_error", "message": "Overloaded"},
    ]


def test_json_lines_carry_the_cassette_path_as_given_when_there_are_several() -> None:
    first = str(LIBRARY / "zero_argument_tool.jsonl")
    second = str(ERRORS / "missing_message_stop.jsonl")
    result = run("replay", "--format", "json", first, second)
    assert json_lines(result) == [
        {
            "type": "tool_call",
            "call": {"id": "toolu_01Vb6TqHnW2sXcJk9LmPzRaE", "name": "list_files", "input": {}},
            "cassette": first,
        },
        {"type": "done", "cassette": first},
        {"type": "text", "text": "Almost done", "cassette": second},
        {
            "type": "protocol_error",
            "code": "missing_message_stop",
            "message": PREFIX + "stream ended before message_stop",
            "cassette": second,
        },
    ]


def test_a_folder_means_every_cassette_below_it_sorted() -> None:
    result = run("replay", "--format", "json", str(ERRORS))
    given = [line["cassette"] for line in json_lines(result)]
    expected = sorted(str(path) for path in ERRORS.rglob("*.jsonl"))
    assert list(dict.fromkeys(given)) == expected


def test_a_single_cassette_has_no_cassette_key() -> None:
    result = run("replay", "--format", "json", str(LIBRARY / "text_only.jsonl"))
    assert all("cassette" not in line for line in json_lines(result))


# -- bad input: exit 2 and one PATH:LINE: reason line, never a traceback -----------------------

EVENTS = StreamBuilder().text(0, "Hi").stop().events()
GOOD_LINES = [json.dumps(event) for event in EVENTS]
HEADER = json.dumps({"cassette": 1, "description": "late header"})


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        pytest.param(b"{oops\n", 1, "not valid JSON", id="not-json"),
        pytest.param(
            b'["a", "list"]\n', 1, "expected a JSON object, got list", id="json-not-object"
        ),
        pytest.param(
            (GOOD_LINES[0] + '\n{"type": "message_begin"}\n').encode(),
            2,
            "event line does not match the cassette schema: ['type']: 'message_begin' is not",
            id="unknown-event-type",
        ),
        pytest.param(
            (GOOD_LINES[0] + '\n{"type": "content_block_stop"}\n').encode(),
            2,
            "event line does not match the cassette schema: 'index' is a required property",
            id="missing-index",
        ),
        pytest.param(b"", 1, "cassette holds no stream events", id="empty-file"),
        pytest.param(
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
            1,
            "not UTF-8 text (byte 0x89 at column 1)",
            id="binary-garbage",
        ),
        pytest.param(
            "\n".join([*GOOD_LINES[:2], HEADER, *GOOD_LINES[2:]]).encode(),
            3,
            "a cassette header may only be on line 1",
            id="header-not-on-line-1",
        ),
    ],
)
@pytest.mark.parametrize("command", ["replay", "validate"])
def test_unusable_cassette_gives_exit_2_and_one_line(
    tmp_path: Path, command: str, content: bytes, line: int, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    result = run(command, str(path))
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"{path}:{line}: {reason}")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["replay", "validate"])
def test_unreadable_path_gives_exit_2_and_one_line(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.jsonl"
    result = run(command, str(missing))
    assert result.exit_code == 2
    assert result.stderr == f"{missing}:1: cannot read: No such file or directory\n"


# -- validate ------------------------------------------------------------------------------------


def test_validate_accepts_the_whole_library_without_replaying_it() -> None:
    result = run("validate", str(LIBRARY))
    assert result.exit_code == 0, result.stderr
    checked = [line.split(": ok, ")[0] for line in result.stdout.splitlines()]
    assert checked == sorted(str(path) for path in LIBRARY.rglob("*.jsonl"))


def test_default_output_heads_each_of_several_cassettes_with_its_path() -> None:
    first, second = str(LIBRARY / "zero_argument_tool.jsonl"), str(LIBRARY / "text_only.jsonl")
    lines = run("replay", first, second).stdout.splitlines()
    assert [line for line in lines if line.startswith("== ")] == [f"== {first}", f"== {second}"]
    assert lines.index(f"== {second}") == lines.index("done") + 1


@pytest.mark.parametrize("command", ["replay", "validate", "coverage"])
def test_a_folder_named_jsonl_below_a_folder_is_looked_into_not_read(
    tmp_path: Path, command: str
) -> None:
    # `harness faults GOOD --out runs/GOOD.jsonl` leaves such a folder: it was read as a
    # cassette, `runs/good.jsonl:1: cannot read: a folder, not a cassette file`, exit 2.
    inside = tmp_path / "runs" / "good.jsonl"
    inside.mkdir(parents=True)
    (inside / "text_only.jsonl").write_bytes((LIBRARY / "text_only.jsonl").read_bytes())
    result = run(command, str(tmp_path / "runs"))
    assert "cannot read" not in result.stderr
    assert result.exit_code == (1 if command == "coverage" else 0), result.output
    # replay names no cassette of one; validate and coverage name it
    assert ("done\n" if command == "replay" else "good.jsonl/text_only.jsonl") in result.output


@pytest.mark.parametrize("command", ["replay", "validate"])
def test_a_folder_without_cassettes_gives_exit_2(tmp_path: Path, command: str) -> None:
    result = run(command, str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path}: no *.jsonl cassettes found\n"


def test_validate_warns_at_the_line_of_a_block_index_gap_and_exits_0() -> None:
    result = run("validate", str(LIBRARY / "interleaved.jsonl"))
    assert result.exit_code == 0
    assert result.stdout == f"{LIBRARY / 'interleaved.jsonl'}: ok, 16 events\n"
    assert result.stderr == (
        f"{LIBRARY / 'interleaved.jsonl'}:10: warning: block index 3 skips 2: the live API "
        "numbers blocks 0..n-1 in order, and messages.stream() relies on it\n"
    )


def test_validate_warns_about_a_block_opened_again_or_out_of_order(tmp_path: Path) -> None:
    path = tmp_path / "reused.jsonl"
    (
        StreamBuilder()
        .text(0, "a")
        .text(2, "b")
        .text(1, "c")
        .text(1, "d")
        .stop()
        .write(path, "indexes 0, 2, 1, 1")
    )
    result = run("validate", str(path))
    assert result.exit_code == 0
    assert [line.split(": warning: ")[1].split(":")[0] for line in result.stderr.splitlines()] == [
        "block index 2 skips 1",
        "block index 1 out of order",
        "block index 1 opened again",
    ]


def test_validate_is_silent_about_the_realistic_library_cassettes() -> None:
    paths = [str(LIBRARY / name) for name in ("two_tools.jsonl", "parallel_tools.jsonl")]
    result = run("validate", *paths)
    assert (result.exit_code, result.stderr) == (0, "")


def test_harness_help_says_what_the_tool_is_for_every_provider() -> None:
    """The first words an OpenAI user reads name their APIs too, not one SDK's."""
    result = CliRunner().invoke(cli, ["--help"], catch_exceptions=False)
    about = " ".join(result.output.split("Options:")[0].split("\n", 2)[2].split())
    assert about == (
        "Record/replay testing harness for LLM streaming code, one wire dialect a provider "
        "(docs/providers.md). Its providers: anthropic, openai-chat, openai-responses, "
        "bedrock-converse and gemini."
    )
