"""The hostile files of issue 14, one test each: one line and an honest exit, never a traceback.

Exit 1 means only "a stream failed"; an unusable input or a harness bug is 2. What is
printed is valid for its format (JSON lines parse; text is UTF-8) and never carries a
terminal control sequence from a cassette, model text or a tool result.
"""

from __future__ import annotations

import asyncio
import json
import operator
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT

from harness import Cassette, write_cassette
from harness._exceptions import CassetteError, InputError
from harness._hosts import framed
from harness._json import MAX_NESTING
from harness._providers import provider, providers
from harness._providers.frame_rows import FRAME_ROWS
from harness._replay.clients import DIRECT
from harness._replay.direct import acollect, collect, replay_outcome
from harness._replay.sdk import areplay_events, replay_events
from harness._testing.coverage import outcome_code
from harness.agent.session import write_session
from harness.builder import StreamBuilder
from harness_cli.main import cli

ESC = "\x1b"
#: Clear the screen, retitle the window, reverse the text that follows.
TERMINAL_ATTACK = f"{ESC}[2J{ESC}]0;owned\x07\u202e\x9b31m"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def tool_stream(partial_json: str, *, name: str = "read", text: str = "") -> StreamBuilder:
    builder = StreamBuilder()
    if text:
        builder.text(0, text)
    builder.tool_start(1, name, id="toolu_1").json_delta(1, partial_json).block_stop(1)
    return builder.stop("tool_use")


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def one_line(result: Result) -> str:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("via", ["direct", "sdk"])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_lone_surrogate_in_tool_input_is_printed_escaped(
    tmp_path: Path, via: str, output_format: str
) -> None:
    cassette = tmp_path / "surrogate.jsonl"
    tool_stream('{"path": "a\\ud800b"}').write(cassette, "lone surrogate")
    result = run("replay", "--via", via, "--format", output_format, cassette)
    assert result.exit_code == 0, result.output
    assert "a\\ud800b" in result.stdout
    if output_format == "json":
        first = json.loads(result.stdout.splitlines()[0])
        assert first["call"]["input"] == {"path": "a\ud800b"}


COMMANDS = ["replay", "replay-json", "replay-sdk", "faults", "diff", "validate"]


def run_command(command: str, cassette: Path, tmp_path: Path) -> Result:
    if command.startswith("replay"):
        via = ["--via", "sdk"] if command == "replay-sdk" else []
        output = ["--format", "json"] if command == "replay-json" else []
        return run("replay", *via, *output, cassette)
    if command == "faults":
        return run("faults", cassette, "--out", tmp_path / "broken")
    if command == "diff":
        return run("diff", cassette, cassette)
    return run("validate", cassette)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_payload_nested_to_the_limit_is_replayed_and_written(
    tmp_path: Path, command: str
) -> None:
    builder = StreamBuilder().text(0, "deep").stop()
    events = builder.events()
    events[0]["message"]["metadata"] = nested(MAX_NESTING - 2)  # the line: 254 levels
    cassette = tmp_path / "deep.jsonl"
    write_cassette(cassette, events)
    result = run_command(command, cassette, tmp_path)
    assert result.exit_code == 0, result.output
    if command == "replay-sdk":
        assert result.stdout.splitlines() == ['text        "deep"', "done"]
    elif command == "faults":
        written = sorted((tmp_path / "broken").rglob("*.jsonl"))
        assert written
        for path in written:  # each reads back (http_529's answer holds no event)
            Cassette(path).validate()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_payload_nested_past_the_limit_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    events = StreamBuilder().text(0, "deep").stop().events()
    deep = json.dumps(nested(MAX_NESTING - 1))  # orjson.dumps stops past 254 levels
    lines = [json.dumps(event) for event in events]
    lines[0] = lines[0][:-2] + ', "metadata": ' + deep + "}}"
    cassette = tmp_path / "deeper.jsonl"
    cassette.write_text("\n".join(lines) + "\n")
    result = run_command(command, cassette, tmp_path)
    assert result.exit_code == 2
    assert one_line(result) == f"{cassette}:1: nested deeper than 254 levels, the limit"


def test_a_line_nested_past_the_readers_limit_is_one_line_exit_2(tmp_path: Path) -> None:
    cassette = tmp_path / "deeper.jsonl"
    cassette.write_text('{"type": "ping", "x": ' + "[" * 2000 + "]" * 2000 + "}\n")
    for command in ("validate", "replay"):
        result = run(command, cassette)
        assert result.exit_code == 2
        assert one_line(result).startswith(f"{cassette}:1: not valid JSON")


@pytest.mark.parametrize("ms", [10**30, 1e308, -5, "soon"])
def test_realtime_with_an_absurd_offset_is_one_line_exit_2(tmp_path: Path, ms: Any) -> None:
    builder = StreamBuilder().directive("at", ms=ms).text(0, "hi").stop()
    cassette = tmp_path / "late.jsonl"
    builder.write(cassette, "an offset no clock can wait for")
    result = run("replay", "--realtime", cassette)
    assert result.exit_code == 2
    assert one_line(result) == (
        f"{cassette}:3: an at directive needs ms, a number of milliseconds from 0 to 86400000"
    )


def test_a_deep_session_json_is_one_line_exit_2(tmp_path: Path) -> None:
    session = write_session(
        tmp_path / "s", [("hi", StreamBuilder().text(0, "hi").stop())], prompt="x"
    )
    (session / "session.json").write_text("[" * 100_000 + "]" * 100_000)
    result = run("agent", session, "--root", tmp_path)
    assert result.exit_code == 2
    assert one_line(result) == f"{session / 'session.json'}: not valid JSON: nested too deeply"


def test_an_unexpected_failure_is_one_line_exit_2_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: str) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("harness_cli.replay.Cassette", broken)
    result = run("replay", tmp_path / "x.jsonl")
    assert result.exit_code == 2
    assert one_line(result) == "harness replay: internal error: ZeroDivisionError: a bug"


# -- terminal safety --------------------------------------------------------------------------


def assert_terminal_safe(text: str) -> None:
    for character in (ESC, "\x07", "\u202e", "\x9b"):
        assert character not in text, repr(text)


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_replay_escapes_control_characters_from_the_cassette(
    tmp_path: Path, output_format: str
) -> None:
    builder = tool_stream(
        json.dumps({"path": TERMINAL_ATTACK}), name=f"read{ESC}[8m", text=TERMINAL_ATTACK
    )
    cassette = tmp_path / "attack.jsonl"
    builder.write(cassette, "escape sequences in text, tool name and input")
    result = run("replay", "--format", output_format, cassette)
    assert result.exit_code == 0, result.output
    assert_terminal_safe(result.output)
    assert "\\u001b[2J" in result.stdout
    if output_format == "json":
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        assert lines[0] == {"type": "text", "text": TERMINAL_ATTACK}


def test_replay_escapes_control_characters_in_an_api_error(tmp_path: Path) -> None:
    builder = StreamBuilder().text(0, "hi")
    builder.error("overloaded_error", TERMINAL_ATTACK)
    cassette = tmp_path / "error.jsonl"
    builder.write(cassette, "an error message with escape sequences")
    result = run("replay", "--via", "sdk", cassette)
    assert result.exit_code == 1
    assert_terminal_safe(result.output)


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_agent_transcript_escapes_model_text_and_file_contents(
    tmp_path: Path, output_format: str
) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (root / "evil.md").write_text(f"line one\n{TERMINAL_ATTACK}\nline three\n")
    turns = [
        (
            "read",
            StreamBuilder()
            .text(0, TERMINAL_ATTACK)
            .tool(1, "read", {"path": "evil.md"})
            .stop("tool_use"),
        ),
        ("done", StreamBuilder().text(0, "ok").stop()),
    ]
    session = write_session(tmp_path / "session", turns, prompt="read evil.md")
    result = run("agent", session, "--root", root, "--format", output_format)
    assert result.exit_code == 0, result.output
    assert_terminal_safe(result.output)
    if output_format == "json":
        answered = json.loads(result.stdout)["messages"][2]["content"][0]["content"]
        assert answered == f"line one\n{TERMINAL_ATTACK}\nline three\n"
    else:
        assert "line three" in result.stdout.splitlines()[-3]


@pytest.mark.parametrize("path", ["loop", "a" * 300, "bad\x00name"])
def test_read_tool_errors_never_show_the_absolute_root(tmp_path: Path, path: str) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (root / "loop").symlink_to("loop")
    turns = [
        ("read", StreamBuilder().tool(0, "read", {"path": path}).stop("tool_use")),
        ("done", StreamBuilder().text(0, "ok").stop()),
    ]
    session = write_session(tmp_path / "session", turns, prompt="read")
    result = run("agent", session, "--root", root, "--format", "json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)["messages"][2]["content"][0]
    assert answer["is_error"] is True
    assert answer["content"].startswith(f"{path}: cannot read: ")
    assert str(tmp_path) not in result.output


def test_coverage_escapes_an_api_error_type_from_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "error.jsonl"
    StreamBuilder().text(0, "hi").error(f"over{ESC}[2Jloaded", "x").write(cassette, "bad type")
    result = run("coverage", cassette)
    assert "api_error:over\\u001b[2Jloaded" in result.stdout
    assert_terminal_safe(result.output)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
def test_unicode_line_separators_do_not_split_a_json_line(tmp_path: Path, separator: str) -> None:
    cassette = tmp_path / "separator.jsonl"
    StreamBuilder().text(0, f"one{separator}two").stop().write(cassette, "a line separator")
    result = run("replay", "--format", "json", cassette)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # splits at \u2028, \u2029 and \x85 too
    assert [json.loads(line)["type"] for line in lines] == ["text", "done"]
    assert json.loads(lines[0])["text"] == f"one{separator}two"


# -- a bad line through the SDK, on every host its dialect is served on --------------------

#: (provider, host) for every registered provider and every host `--via sdk` reads it on.
SERVED = [(found.name, host) for found in providers() for host in (DIRECT, *found.hosted)]
#: A line no dialect's cassette may hold: not JSON, an unknown directive, a directive off
#: the schema (an `http_error` whose body is a list), JSON that is no object.
BAD_LINES = [
    "garbage",
    '{"harness": "nope"}',
    '{"harness": "http_error", "status": 500, "body": [1]}',
    "[1]",
]


def sample(tmp_path: Path, name: str, host: str = DIRECT, *, last: bool = False) -> Path:
    """A good library cassette of provider `name` (the first its SDK's readers are served,
    or the `last`), written under `tmp_path` as recorded on `host`."""
    samples = provider(name).reading.SAMPLES
    header, *lines = (ROOT / "cassettes" / samples[-1 if last else 0]).read_text().splitlines()
    if host != DIRECT:
        header = json.dumps({**json.loads(header), "host": host})
    path = tmp_path / f"{name}-{host}.jsonl"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def with_line(path: Path, line: str, at: int) -> Path:
    """`path` with `line` put at its line `at` (1: the header's)."""
    lines = path.read_text().splitlines()
    broken = path.with_name(f"{path.stem}.bad{at}.jsonl")
    broken.write_text("\n".join([*lines[: at - 1], line, *lines[at - 1 :]]) + "\n")
    return broken


def needs_sdk(name: str, host: str) -> None:
    found = provider(name)
    sdk = found.sdk if host == DIRECT else found.hosted[host]
    for module in (sdk.package, *sdk.requires):
        pytest.importorskip(module)


@pytest.mark.parametrize("bad", BAD_LINES, ids=["not-json", "unknown", "off-schema", "list"])
@pytest.mark.parametrize(("name", "host"), SERVED, ids=[f"{n}-{h}" for n, h in SERVED])
def test_a_bad_line_after_the_first_is_its_path_and_line_through_the_sdk_as_directly(
    tmp_path: Path, name: str, host: str, bad: str
) -> None:
    """anthropic wraps any error reading a body, the cassette's refusal of a line too, in
    `APIConnectionError`: it is still the line's `PATH:LINE: reason`, exit 2, on every
    host, wherever the line is."""
    needs_sdk(name, host)
    good = sample(tmp_path, name, host)
    for at in (2, len(good.read_text().splitlines())):
        broken = with_line(good, bad, at)
        direct = run("replay", broken)
        assert direct.exit_code == 2
        said = one_line(direct)
        assert said.startswith(f"{broken}:{at}: ")
        through = run("replay", "--via", "sdk", "--host", host, broken)
        assert through.exit_code == 2, through.output
        assert one_line(through) == said


@pytest.mark.parametrize(("name", "host"), SERVED, ids=[f"{n}-{h}" for n, h in SERVED])
def test_a_bad_line_raises_its_cassette_error_from_the_sdks_sync_and_async_replay(
    tmp_path: Path, name: str, host: str
) -> None:
    needs_sdk(name, host)
    broken = with_line(sample(tmp_path, name, host), "garbage", 3)
    pattern = f"{re.escape(str(broken))}:3: not valid JSON"
    with pytest.raises(CassetteError, match=pattern):
        collect(replay_events(broken, via="sdk", host=host))
    with pytest.raises((CassetteError, InputError)) as raised:
        asyncio.run(acollect(areplay_events(broken, via="sdk", host=host)))
    if isinstance(raised.value, CassetteError):
        assert re.match(pattern, str(raised.value))
    else:  # an SDK with no async client (boto3) says so in one line
        assert "no async client" in str(raised.value)


@pytest.mark.parametrize(("name", "host"), SERVED, ids=[f"{n}-{h}" for n, h in SERVED])
def test_a_bug_of_ours_under_the_sdk_is_an_internal_error_whatever_wraps_it(
    tmp_path: Path, name: str, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error the harness's own code raises while the SDK reads the body (here the
    replay transport's, at its first piece) is a bug, never the stream's failure: not
    the `connection_error APIConnectionError` anthropic wraps it in."""
    needs_sdk(name, host)
    from harness._replay import sdk

    planned = sdk._PlannedStream.__init__

    def divided(self: Any, pieces: Any, read_timeout: float | None) -> None:
        planned(self, map(operator.truediv, [1], [0]), read_timeout)  # raises in our frame

    monkeypatch.setattr(sdk._PlannedStream, "__init__", divided)
    result = run("replay", "--via", "sdk", "--host", host, sample(tmp_path, name, host))
    assert result.exit_code == 2, result.output
    assert one_line(result) == "harness replay: internal error: ZeroDivisionError: division by zero"


# -- the binary fault rows through every command that reads a cassette ---------------------

#: (provider, host) whose stream travels in event-stream frames there: the binary rows'.
FRAMED = [
    (name, host)
    for name, host in SERVED
    if framed(provider(name).framing, None if host == DIRECT else host) is not None
]


@pytest.mark.parametrize(("name", "host"), FRAMED, ids=[f"{n}-{h}" for n, h in FRAMED])
def test_the_binary_rows_are_traced_validated_viewed_and_diffed_as_replayed(
    tmp_path: Path, name: str, host: str
) -> None:
    """`harness faults` writes a framed stream's binary rows; every command reading a
    cassette reads their `frame` lines through the frames the stream travels in, and
    ends where direct replay ends (`bad_frame`, `truncated_frame`, `api_error:...`)."""
    good = sample(tmp_path, name, host, last=True)
    out = tmp_path / "rows"
    assert run("faults", good, "--out", out).exit_code == 0
    rows = {fault.name for fault in FRAME_ROWS}
    written = sorted(path for path in out.glob("*.jsonl") if path.stem.split(".")[-1] in rows)
    assert len(written) == len(rows)
    validated = run("validate", out)
    assert validated.exit_code == 0, validated.output
    assert run("view", out, "--out", tmp_path / "rows.html").exit_code == 0
    for path in written:
        expected = outcome_code(replay_outcome(path))
        assert expected == (Cassette(path).header or {})["expect"]
        traced = run("replay", "--trace", "--format", "json", path)
        assert traced.exit_code == (0 if expected == "done" else 1), traced.output
        last = json.loads(traced.stdout.splitlines()[-1])
        assert (last["error"] or {"code": "done"})["code"] == expected
        diffed = run("diff", "--trace", good, path)
        assert diffed.exit_code == 1, diffed.output  # they differ, where the row breaks
        assert expected in diffed.stdout
