"""`harness validate` warns where replay would refuse a cassette that does not say it is
meant to fail, so its "ok" never comes before replay's refusal (docs/replay.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ERRORS_FOLDERS, LIBRARY

from harness import ChatStreamBuilder, ResponsesStreamBuilder, StreamBuilder, replay_outcome
from harness._testing.coverage import outcome_code
from harness_cli.main import cli

PROFILES = Path(__file__).parent / "data" / "profiles"
ERROR_CASSETTES = sorted(
    path for folder in ERRORS_FOLDERS.values() for path in folder.glob("*.jsonl")
)


def run(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["validate", *args], input=input)


@pytest.mark.parametrize(
    "path", ERROR_CASSETTES, ids=[f"{p.parent.parent.name}/{p.name}" for p in ERROR_CASSETTES]
)
def test_out_of_its_errors_folder_each_error_cassette_warns_with_the_code_replay_gives(
    tmp_path: Path, path: Path
) -> None:
    """Copied where its name says nothing, a library cassette replay refuses is warned of
    with replay's code; one ending in an API error (what it says happens) is not."""
    loose = tmp_path / path.name
    shutil.copyfile(path, loose)
    code = outcome_code(replay_outcome(loose))
    result = run(str(loose))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{loose}: ok, ")
    refusals = [line for line in result.stderr.splitlines() if "warning: replay fails" in line]
    if code.startswith("api_error:"):
        assert refusals == []
    else:
        (refusal,) = refusals
        assert f": {code}: " in refusal
    assert run(str(path)).stderr.count("warning: replay fails") == 0  # in errors/, by name


def test_the_library_and_the_profile_cassettes_validate_without_a_refusal_warned() -> None:
    result = run(str(LIBRARY), str(PROFILES))
    assert result.exit_code == 0
    assert "replay fails" not in result.stderr
    assert result.stderr  # the Anthropic block numbering warnings stay


def test_a_broken_stream_warns_at_its_line_with_the_header_that_would_silence_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cut.jsonl"
    ChatStreamBuilder().tool(0, "get_weather", '{"city": ').stop().write(path, "cut JSON")
    result = run(str(path))
    assert (result.exit_code, result.stdout) == (0, f"{path}: ok, 5 events\n")
    assert result.stderr == (
        f"{path}:6: warning: replay fails here: invalid_tool_json: OpenAI stream protocol "
        "error: tool call 0 had arguments that are not JSON (mark a cassette meant to fail "
        'with "expect": "invalid_tool_json" in its header)\n'
    )


def test_expect_in_the_header_silences_its_own_code_only(tmp_path: Path) -> None:
    builder = ResponsesStreamBuilder().message(0, "Paris is").incomplete()
    meant = tmp_path / "meant.jsonl"
    builder.write(meant, "cut", expect="response_incomplete")
    assert run(str(meant)).stderr == ""
    other = tmp_path / "other.jsonl"
    builder.write(other, "cut", expect="refusal")
    (warning,) = run(str(other)).stderr.splitlines()
    assert warning.startswith(f"{other}:10: warning: replay fails here: response_incomplete: ")
    assert warning.endswith("(its header expects refusal)")


def test_a_failure_only_the_end_reveals_is_warned_at_the_last_line(tmp_path: Path) -> None:
    path = tmp_path / "unstopped.jsonl"
    StreamBuilder().text(0, "Hi").write(path, "no message_stop")
    (warning,) = run(str(path)).stderr.splitlines()
    assert warning.startswith(f"{path}:5: warning: replay fails at the end: missing_message_stop")


def test_the_header_request_is_read_as_replay_reads_it(tmp_path: Path) -> None:
    """A forced tool_choice lets a call finish with `stop`: replay gives done, and validate
    says nothing."""
    path = tmp_path / "forced.jsonl"
    request = {"model": "m", "messages": [], "tool_choice": "required"}
    ChatStreamBuilder().tool(0, "f", {}).stop("stop").write(path, "forced", request=request)
    assert outcome_code(replay_outcome(path)) == "done"
    assert run(str(path)).stderr == ""


def test_standard_input_is_checked_in_its_one_pass() -> None:
    lines = ChatStreamBuilder().text("Paris.").finish("stop").events()
    header = {"cassette": 1, "provider": "openai-chat"}
    text = "".join(json.dumps(line) + "\n" for line in [header, *lines])
    result = run("-", input=text.encode())
    assert result.exit_code == 0
    assert result.stdout == "<stdin>: ok, 3 events\n"
    assert result.stderr.startswith("<stdin>:4: warning: replay fails at the end: missing_done: ")
